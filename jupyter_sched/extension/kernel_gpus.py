"""Which GPUs a kernel process sees, at start and across restarts (case 029).

CUDA reads ``CUDA_VISIBLE_DEVICES`` once, when it initialises: *unset* means every GPU on the
machine, the *empty string* means none. ``%gpu`` sets it inside the kernel's process, so it is gone
when the kernel restarts — and a restarted kernel whose variable is unset sees every GPU, other
users' included. The fix is to decide the variable in the kernel's **launch environment**, the
only place that takes effect before any user code (and CUDA) runs:

* a new kernel on a machine whose GPUs this scheduler manages starts with
  ``CUDA_VISIBLE_DEVICES=""``: it sees no GPU until ``%gpu`` grants some;
* on restart (user-requested or the kernel manager's automatic restart after a crash) the
  kernel's live leases decide, before the new process is launched:

  - a granted lease, by default, **survives** the restart: the lease is keyed by the kernel id,
    which a restart keeps, so it stays one grant (one accounting interval, no gap, no second
    charge); the new process gets the granted UUIDs (``CUDA_DEVICE_ORDER=PCI_BUS_ID``, case 016)
    and prints ``GPU-cccc re-attached (lease l-…)`` once;
  - with ``release_gpu_on_kernel_restart`` the lease is released and the new process gets
    ``CUDA_VISIBLE_DEVICES=""`` and prints ``GPU released on restart; run %gpu to request one``;
  - a request still queued **keeps its place** (newuser39 N2: it was withdrawn, so whether a restart kept
    your GPUs depended on whether the queue had reached you yet): it stays bound to the kernel id, the
    new process prints ``lease l-… kept across the restart: pending, 1 GPU · queued #2 · … ; granted
    GPUs are set here once it starts (%gpu status sets them)`` and its magics find it by the kernel id;
    with ``release_gpu_on_kernel_restart`` it is withdrawn, its record saying ``its kernel was restarted``
    and the new process ``your queued request l-… was withdrawn when this kernel restarted``;
  - a kernel without a lease gets ``""`` again — it never inherits another kernel's GPUs;
  - when the leases cannot be read (a hub service that does not answer), the new process gets
    ``""``: a restart never widens what a kernel sees.

The notice travels in ``JUPYTER_SCHED_GPU_NOTICE``; the magics print it once in the kernel
(:func:`jupyter_sched.magics.cuda.announce_gpu_notice`).

:func:`restart_plan` is pure; :class:`KernelLeases` reads and releases leases through the same
service the REST API uses (the embedded engine or, in hub mode, the central service).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from traitlets import Bool, Enum
from traitlets.config import Configurable

from ..admission import system_caller
from ..wording.jobs import GPU_MILLI_ENV, SHARED_GPU_NOTE, granted_milli, granted_words, job_outcome

__all__ = [
    "GPU_NOTICE_ENV",
    "KernelGpuConfig",
    "KernelLeases",
    "RestartPlan",
    "hidden_gpus_env",
    "restart_plan",
]

log = logging.getLogger(__name__)

GPU_NOTICE_ENV = "JUPYTER_SCHED_GPU_NOTICE"
"""A one-line message the restarted kernel prints once (empty: none)."""
LEASE_ID_ENV = "JUPYTER_SCHED_LEASE_ID"
"""The lease whose GPUs the kernel process was launched with (empty: none)."""
_LIVE = "pending,admitted,running"


class KernelGpuConfig(Configurable):
    """How kernels see GPUs (``c.SchedApp.release_gpu_on_kernel_restart``, ``kernel_gpu_isolation``)."""

    release_gpu_on_kernel_restart = Bool(
        False,
        config=True,
        help="""Release a kernel's GPU lease when the kernel restarts. Default: False — the lease
        survives the restart and its GPUs are given to the new kernel process through its launch
        environment (before CUDA can initialise), as one grant: no gap and no second charge in
        accounting. True frees the GPUs at every restart (the new kernel starts with
        CUDA_VISIBLE_DEVICES="" and the user runs %gpu again); choose it where restarts usually
        mean "I am done with the GPU".""",
    )

    kernel_gpu_isolation = Enum(
        ["auto", "on", "off"],
        "auto",
        config=True,
        help="""Start kernels that hold no lease with CUDA_VISIBLE_DEVICES="" (no GPU visible),
        so a kernel uses only GPUs it was granted. Default: "auto" — on, except an embedded server
        whose jobs run on Kubernetes (executor = "kubernetes"), where this machine's own GPUs are
        not the scheduler's. "on" / "off" force it. Restarted kernels follow the same rule.""",
    )


@dataclass(frozen=True, slots=True)
class RestartPlan:
    """What to do before a kernel's new process is launched.

    Attributes:
        env: variables to set in the kernel's launch environment (always includes
            ``CUDA_VISIBLE_DEVICES`` when isolation is on or a lease is kept, and the notice).
        release: ids of leases to release first (policy, or requests still queued).
        notice: the one-line message the new process prints ("" for none).
    """

    env: Mapping[str, str] = field(default_factory=dict)
    release: tuple[str, ...] = ()
    notice: str = ""


def hidden_gpus_env(*, isolate: bool) -> dict[str, str]:
    """The launch environment of a kernel without a grant: ``CUDA_VISIBLE_DEVICES=""`` when isolating."""
    return {"CUDA_VISIBLE_DEVICES": ""} if isolate else {}


def _uuids(lease: Mapping[str, Any]) -> tuple[str, ...]:
    allocation = lease.get("allocation")
    if not isinstance(allocation, Mapping):
        return ()
    workers = allocation.get("workers") or []
    if workers:
        return tuple(str(u) for w in workers for u in w.get("gpu_uuids", ()))
    return tuple(str(u) for u in allocation.get("gpu_uuids", ()))


def restart_plan(leases: Sequence[Mapping[str, Any]], *, release_on_restart: bool, isolate: bool,
                 now: datetime | None = None) -> RestartPlan:
    """Decide the new process's GPUs from the kernel's live leases (see the module docstring).

    Args:
        leases: the kernel's live leases as the API shows them (``id``, ``state``, ``allocation``).
        release_on_restart: the ``release_gpu_on_kernel_restart`` policy.
        isolate: kernels without a grant see no GPU (``kernel_gpu_isolation``).
        now: for a kept queued request's ETA in its notice (None: said without "in 5m").
    """
    # a lease released but still draining (the old process's context held its GPU: red team 18, R6)
    # is not re-attached: it ends once that context is gone, as the restart makes it
    draining = [lease for lease in leases if lease.get("stop_requested")]
    granted = [lease for lease in leases if lease.get("state") in ("admitted", "running") and _uuids(lease)
               and lease not in draining]
    queued = tuple(str(lease["id"]) for lease in leases if lease not in granted and lease not in draining)
    base = {GPU_NOTICE_ENV: "", LEASE_ID_ENV: ""}
    if granted and not release_on_restart:
        lease = granted[0]
        uuids = _uuids(lease)
        milli = granted_milli(lease)  # a share is said as one, and set as a job's (new user 19, N18)
        share = f" — {SHARED_GPU_NOTE}" if milli < 1000 else ""
        notice = (f"{granted_words({**lease, 'allocation': {'gpu_uuids': list(uuids), 'gpu_milli': milli}})} "
                  f"re-attached (lease {lease['id']}){share}; CUDA_VISIBLE_DEVICES is set in this kernel")
        env = {**base, "CUDA_VISIBLE_DEVICES": ",".join(uuids), "CUDA_DEVICE_ORDER": "PCI_BUS_ID",
               GPU_NOTICE_ENV: notice, LEASE_ID_ENV: str(lease["id"]), GPU_MILLI_ENV: str(milli)}
        extra = tuple(str(other["id"]) for other in granted[1:])  # one lease per kernel; stray ones go
        return RestartPlan(env=env, release=queued + extra, notice=notice)
    if granted:
        notice = "GPU released on restart; run %gpu to request one"
        env = {**base, "CUDA_VISIBLE_DEVICES": "", GPU_NOTICE_ENV: notice}
        return RestartPlan(env=env, release=queued + tuple(str(g["id"]) for g in granted), notice=notice)
    env = {**base, **hidden_gpus_env(isolate=isolate)}
    if not queued:
        return RestartPlan(env=env)
    if release_on_restart:  # withdrawn by the policy: said here, and why on its record (KernelLeases.release)
        notice = (f"your queued request {queued[0]} was withdrawn when this kernel restarted "
                  "(release_gpu_on_kernel_restart); run %gpu request to ask again")
        return RestartPlan(env={**env, GPU_NOTICE_ENV: notice}, release=queued, notice=notice)
    # the place in the queue is kept, bound to the kernel id as a grant is (newuser39 N2); one per kernel
    kept = next(lease for lease in leases if str(lease["id"]) == queued[0])
    notice = (f"lease {kept['id']} kept across the restart: {job_outcome(kept, now)}; granted GPUs are set here "
              "once it starts (%gpu status sets them)")
    return RestartPlan(env={**env, GPU_NOTICE_ENV: notice, LEASE_ID_ENV: str(kept["id"])}, release=queued[1:],
                       notice=notice)


class KernelLeases:
    """Reads and releases a kernel's leases through the service behind the REST API.

    Args:
        service: the embedded :class:`~jupyter_sched.services.Services` (synchronous, store-backed:
            run in a worker thread, off the server's event loop) or, in hub mode, the
            ``ForwardingService`` (asynchronous HTTP to the central service).
    """

    def __init__(self, service: Any) -> None:
        self.service = service

    async def of_kernel(self, kernel_id: str) -> list[dict[str, Any]]:
        """The live leases bound to ``kernel_id``.

        Raises:
            Exception: whatever the service raises when it cannot answer (the caller fails closed).
        """
        forward = getattr(self.service, "forward", None)
        if forward is not None:
            response = await forward("GET", "leases", f"state={_LIVE}", None, None)
            response.raise_for_status()
            leases = response.json()
        else:
            leases = await asyncio.to_thread(self.service.list_jobs, user=None, state=_LIVE, kind="lease")
        return [dict(lease) for lease in leases if lease.get("kernel_id") == kernel_id]

    async def release(self, kernel_id: str, lease_ids: Sequence[str], *, reason: str) -> None:
        """Release ``lease_ids`` (all bound to ``kernel_id``) at its restart; already-ended ones are skipped.
        Each record says why (``request withdrawn by the server before any GPU was granted: its kernel was
        restarted``), not a bare "withdrawn by server" (newuser39 N2)."""
        forward = getattr(self.service, "forward", None)
        for lease_id in lease_ids:
            if forward is not None:
                done = await forward("DELETE", f"leases/{lease_id}", "why=kernel_restart", None, None)
                if getattr(done, "status_code", None) == 400:  # a central service older than the cause
                    await forward("DELETE", f"leases/{lease_id}", "", None, None)
                continue
            try:
                await asyncio.to_thread(self.service.jobs.cancel, system_caller("server"), lease_id,
                                        by="the server", why="its kernel was restarted")
                await asyncio.to_thread(self.service.store.add_event, actor="server", action="lease_released",
                                        job_id=lease_id, user=None, message=reason, details={"kernel_id": kernel_id})
            except Exception as exc:  # ended meanwhile (ConflictError) or gone: nothing to release
                log.info("jupyter_sched: lease %s of kernel %s not released: %s", lease_id, kernel_id, exc)

    async def plan(self, kernel_id: str, *, release_on_restart: bool, isolate: bool) -> RestartPlan:
        """Read the kernel's leases, release what the policy says, return the new process's env.

        Fails closed: when the leases cannot be read, the new process sees no GPU.
        """
        try:
            leases = await self.of_kernel(kernel_id)
            now = datetime.now(timezone.utc)
        except Exception:
            log.exception("jupyter_sched: cannot read the leases of kernel %s before its restart; "
                          "the new kernel process starts with no GPU visible", kernel_id)
            notice = "could not reach the GPU scheduler at restart; no GPU visible, run %gpu to request one"
            return RestartPlan(env={"CUDA_VISIBLE_DEVICES": "", GPU_NOTICE_ENV: notice, LEASE_ID_ENV: ""},
                               notice=notice)
        plan = restart_plan(leases, release_on_restart=release_on_restart, isolate=isolate, now=now)
        if plan.release:
            await self.release(kernel_id, plan.release, reason="kernel restart")
        return plan
