"""An idle-reclaimed lease whose kernel still holds its GPU (DESIGN.md *Idle reclamation*: "lease
revoked and kernel's GPUs freed").

Idle reclaim revokes a kernel's lease; but a kernel that initialised CUDA keeps its context and
memory on the GPU after that, so the GPU is not free: given to the next job, that job finds it
occupied (session 19 leftover). Where telemetry lists each GPU's processes (NVML), an idle reclaim
of a lease whose GPU still shows a process therefore ends through the drain
(:mod:`.stops`, stop intent ``idle``): while a process of the lease is on the GPU's process list
the lease stays held — given to nobody else — and the admin's ``c.SchedApp.idle_kernel_action``
says what the scheduler does about the kernel:

- ``shutdown`` (default): its user is told first (the lease's message, which ``%gpu`` and the
  panel show, and an ``idle_warning`` event with action ``shutdown``: "kernel k-1 shut down: it
  held GPU … idle for 1h05m (…), reclaimed"), an ``idle_kernel_shutdown`` audit record keeps the
  evidence (pids and accounts on the GPU's process list, the GPUs, idle since, the rule), then the
  kernel is shut down through the server's kernel manager, as Jupyter's own culler does
  (:attr:`IdleKernels.shutdown`, installed by the extension). The lease ends once the GPU's
  process list no longer shows its process.
- ``hold``: the kernel is left running; the lease stays held with a message naming the kernel,
  its processes and how to free the GPU (audited ``idle_kernel_held``), until they let go.

The hub's central service runs none of its users' kernels: it asks the user's own server to shut
the kernel down, in the answer to that server's next kernel report (:mod:`jupyter_sched.hub.idle_shutdown`).
Where the scheduler has no way to the kernel — a kernel this server does not run, or that no report of
its user's servers lists, a lease bound to no kernel — it holds, saying why. The GPU is never handed out while a
process of the lease is on it.

With ``shutdown``, the lease owner's processes still on the GPU :attr:`IdleKernels.shutdown_wait_s` (the admin's
``c.SchedApp.idle_kernel_shutdown_wait_s``, default :data:`SHUTDOWN_WAIT_S`) after the shutdown was
asked (a child the kernel started in its own session outlives it), or after it could not be asked, or at once
once the owner's server stopped (:meth:`IdleKernels.server_gone`), are ended by the drain — SIGTERM, then
SIGKILL (:mod:`.leftovers`; red team 25, R2: a setsid child kept the GPU from everyone for as long as it lived).
Another account's process is never signalled (:mod:`.stops`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..errors import SchedError
from ..model import Job, format_duration, parse_utc
from ..model.units import clock_text
from ..reclaim.idle import KERNEL_KEPT
from ..store import JobRecord, Store
from .leftovers import owned

__all__ = ["IDLE_KERNEL_ACTIONS", "SHUTDOWN_WAIT_S", "IdleKernels", "KernelShutdown"]

log = logging.getLogger(__name__)

IDLE_KERNEL_ACTIONS = ("shutdown", "hold")
"""What ``c.SchedApp.idle_kernel_action`` may be (module docstring)."""

SHUTDOWN_WAIT_S = 60.0
"""Default seconds (``c.SchedApp.idle_kernel_shutdown_wait_s``) after a kernel shutdown was asked (or found
impossible) before the lease owner's processes still on the GPU are ended (Jupyter waits ``shutdown_wait_time``,
5 s by default, then kills the kernel; a GPU sample follows within the telemetry interval)."""

KernelShutdown = Callable[[str, str, str], "str | None"]
"""``shutdown(kernel_id, words, user)``: start shutting ``user``'s kernel down — never waiting for it
(called on the engine's thread) — after ``user`` (the lease's owner) was told ``words``. Answers None once the shutdown is under
way, else why it cannot be (``"kernel k-1 is not running on this server"``)."""

Say = Callable[[Job, str, list[int]], bool]
"""The drain's :meth:`~.stops.StopReconciler._say`: write the lease's message once per key."""

Publish = Callable[[dict[str, Any]], None]


class IdleKernels:
    """What the drain does about the kernel of an idle-reclaimed lease still on its GPU.

    Args:
        store: the store (the reclaim's audit record: its rule and idle start).
        publish: API event sink (the ``idle_warning`` event that tells the user first).

    Attributes:
        action: ``"shutdown"`` or ``"hold"`` (:data:`IDLE_KERNEL_ACTIONS`).
        shutdown: how a kernel is shut down (:data:`KernelShutdown`); None where this server has
            no way to its kernels (then it holds).
        no_way: why there is no ``shutdown``, said when it holds for that reason.
        shutdown_wait_s: seconds after a shutdown was asked (or found impossible) before the owner's
            processes still on the GPU are ended (default :data:`SHUTDOWN_WAIT_S`).
    """

    def __init__(self, store: Store, publish: Publish) -> None:
        self.store = store
        self.publish = publish
        self.action = "shutdown"
        self.shutdown: KernelShutdown | None = None
        self.no_way = "this server has no way to shut its kernel down"
        self.shutdown_wait_s = SHUTDOWN_WAIT_S
        self._asked: dict[str, datetime] = {}
        self._held: set[str] = set()
        self._reclaims: dict[str, dict[str, Any]] = {}
        self._refused: dict[str, datetime] = {}
        """When the shutdown of a lease's kernel was found impossible (its leftovers end shutdown_wait_s later)."""
        self._gone: dict[str, datetime] = {}
        """Leases whose owner's server stopped (set from the hub's thread: one dict write)."""

    def clear(self) -> None:
        """A new term: what was asked in the old one is not known any more."""
        self._asked.clear()
        self._held.clear()
        self._reclaims.clear()
        self._refused.clear()

    def server_gone(self, lease_id: str, at: datetime) -> None:
        """The owner's server of the idle-reclaimed lease ``lease_id`` stopped at ``at``: its kernel went
        with it, so whatever of the owner's is still on the GPU is ended at the next pass (red team 25, R2)."""
        self._gone.setdefault(lease_id, at)

    def end_due(self, record: JobRecord, now: datetime | None = None) -> tuple[datetime, str] | None:
        """When the drain ends the lease owner's processes still on the GPU of ``record``'s idle-reclaimed
        lease, and why (said with it, its clock as of ``now``: :func:`_clock`); None when it never does
        (``hold``, or not held yet)."""
        job = record.job
        if self.action != "shutdown":
            return None
        gone = self._gone.get(job.id)
        if gone is not None:
            return gone, f"{job.spec.user}'s server stopped at {_clock(gone, now)}"
        asked = self._asked.get(job.id)
        if asked is not None:
            return (asked + timedelta(seconds=self.shutdown_wait_s),
                    f"kernel {job.spec.kernel_id} was asked to shut down at {_clock(asked, now)}")
        refused = self._refused.get(job.id)
        if refused is not None:
            return (refused + timedelta(seconds=self.shutdown_wait_s),
                    f"its kernel could not be shut down (said at {_clock(refused, now)})")
        return None

    def held(self, record: JobRecord, gpus: str, pids: list[int], accounts: Mapping[int, str],
             now: datetime, say: Say) -> None:
        """The lease of ``record`` (released by idle reclaim) stays held: process(es) ``pids``
        (their accounts in ``accounts``) still have a context on GPU(s) ``gpus``. Shut its kernel
        down (told first, audited) or hold, per :attr:`action` (module docstring)."""
        job = record.job
        kernel = job.spec.kernel_id
        reclaim = self._reclaim_of(job)
        named = ", ".join(f"{pid} ({accounts.get(pid, 'unknown account')})" for pid in pids)
        ends = bool(owned(pids, accounts, job.spec.user))
        asked = self._asked.get(job.id)
        if asked is not None:
            if now < asked + timedelta(seconds=self.shutdown_wait_s):
                return  # shutting down: said when asked
            self._hold(job, gpus, pids, named, reclaim, now, say,
                       f"kernel {kernel} was asked to shut down at {_clock(asked, now)} but its process(es) are "
                       f"still on the GPU {self.shutdown_wait_s:g} s later", key=-5)
            return
        why = self._why_not(kernel)
        if why:
            self._refuse(job.id, now)
            self._hold(job, gpus, pids, named, reclaim, now, say, why, key=-4, ends=ends)
            return
        assert kernel is not None and self.shutdown is not None
        words = (f"kernel {kernel} shut down: it held GPU {gpus} idle for {reclaim['idle_for']} "
                 f"({reclaim['reason']}), reclaimed; the GPU goes to other work once its process(es) {named} "
                 f"let go (c.SchedApp.idle_kernel_action = 'shutdown')")
        say(job, words, [-3, *pids])  # the user is told first: the lease's message (%gpu, panel) …
        self.publish({"type": "idle_warning", "data": self._event(job, "shutdown", gpus, pids, reclaim, words)})
        self.store.add_event(actor="scheduler", action="idle_kernel_shutdown", job_id=job.id, user=job.spec.user,
                             message=words, details=self._evidence(job, gpus, pids, accounts, reclaim, now))
        self._asked[job.id] = now  # asked once: a failure below holds at the next pass, said so
        try:
            refused = self.shutdown(kernel, words, job.spec.user)
        except Exception:  # the kernel manager's failure never ends the lease: the GPU stays held
            log.exception("lease %s: shutting down its idle kernel %s failed", job.id, kernel)
            refused = f"shutting kernel {kernel} down failed (see the server log)"
        if refused:
            self._asked.pop(job.id, None)
            self._refuse(job.id, now)
            self._hold(job, gpus, pids, named, reclaim, now, say, refused, key=-4, ends=ends)
        else:
            self._held.discard(job.id)  # asked now (an earlier refusal's hold is over): its end says which

    def ended(self, record: JobRecord) -> str:
        """The message of an idle-reclaimed lease once its GPU is free (the drain ends it)."""
        job = record.job
        reason = self._reclaim_of(job)["reason"]
        asked = self._asked.pop(job.id, None)
        if job.id in self._held:  # held, said so (asked or not): nothing says the asked shutdown freed it
            how = "GPUs released once the kernel's process let go of them"
        elif asked is not None:
            how = f"kernel {job.spec.kernel_id} shut down, GPUs released"
        else:
            how = "GPUs released" + (f", {KERNEL_KEPT}" if job.spec.kernel_id and KERNEL_KEPT not in str(reason) else "")
        self._held.discard(job.id)
        self._reclaims.pop(job.id, None)
        self._refused.pop(job.id, None)
        self._gone.pop(job.id, None)
        return f"reclaimed while idle: {reason}; {how}"

    def _refuse(self, lease_id: str, now: datetime) -> None:
        """The kernel of ``lease_id`` cannot be shut down (said): its leftovers end shutdown_wait_s from the first time."""
        self._refused.setdefault(lease_id, now)

    # -- parts ---------------------------------------------------------------------------------

    def _why_not(self, kernel: str | None) -> str:
        """Why the kernel is not shut down ("" when it is to be)."""
        if self.action == "hold":
            return "this server keeps idle kernels running (c.SchedApp.idle_kernel_action = 'hold')"
        if not kernel:
            return "no kernel of this server is bound to the lease"
        if self.shutdown is None:
            return self.no_way
        return ""

    def _hold(self, job: Job, gpus: str, pids: list[int], named: str, reclaim: Mapping[str, Any], now: datetime,
              say: Say, why: str, *, key: int, ends: bool = False) -> None:
        """Say (and audit ``idle_kernel_held``, once per key and pids) that the GPU stays held; ``ends``:
        some of ``pids`` are the owner's, which the drain ends past :meth:`end_due` (said)."""
        who = f"kernel {job.spec.kernel_id}'s process(es)" if job.spec.kernel_id else "process(es)"
        due = self._refused.get(job.id) if key == -4 and self.action == "shutdown" and ends else None
        then = (f"; those of {job.spec.user}'s account still on it at "
                f"{_clock(due + timedelta(seconds=self.shutdown_wait_s), now)} are ended by the scheduler (SIGTERM, then "
                f"SIGKILL)" if due is not None else "")
        words = (f"reclaimed while idle: it held GPU {gpus} idle for {reclaim['idle_for']} ({reclaim['reason']}); "
                 f"{who} {named} still have a context on it, so the GPU stays out of use — given to nobody, "
                 f"counted as this lease's — until they let go: restart the kernel (Kernel > Restart), shut it "
                 f"down, or end the process (kill {' '.join(map(str, pids))}); {why}{then}")
        self._held.add(job.id)
        if say(job, words, [key, *pids]):
            self.publish({"type": "idle_warning", "data": self._event(job, "hold", gpus, pids, reclaim, words)})
            self.store.add_event(actor="scheduler", action="idle_kernel_held", job_id=job.id, user=job.spec.user,
                                 message=words, details={**self._evidence(job, gpus, pids, {}, reclaim, now),
                                                         "why": why})

    def _reclaim_of(self, job: Job) -> dict[str, Any]:
        """The reclaim's rule and idle time, from its ``idle_reclaim`` audit record (cached)."""
        kept = self._reclaims.get(job.id)
        if kept is not None:
            return kept
        found: dict[str, Any] = {"reason": "idle", "idle_for": "a while", "idle_since": None, "event_id": None}
        for event in self.store.list_events(job_id=job.id, action="idle_reclaim", newest_first=True, limit=1):
            try:
                since = parse_utc(event.details["idle_since"], field="idle_since")
            except (KeyError, TypeError, SchedError):
                since = None
            found = {"reason": str(event.details.get("reason") or "idle"), "idle_since": since,
                     "idle_for": format_duration((event.at - since).total_seconds()) if since else "a while",
                     "event_id": event.id}
        self._reclaims[job.id] = found
        return found

    def _event(self, job: Job, action: str, gpus: str, pids: list[int], reclaim: Mapping[str, Any],
               words: str) -> dict[str, Any]:
        """The ``idle_warning`` event's data (the shape :meth:`.idle.IdleLadders.apply` sends)."""
        return {"job_id": job.id, "user": job.spec.user, "kind": job.spec.kind.value, "stage": "reclaim",
                "action": action, "reason": reclaim["reason"], "kernel_id": job.spec.kernel_id,
                "gpu_uuids": gpus.split(", "), "pids": pids, "message": words}

    def _evidence(self, job: Job, gpus: str, pids: list[int], accounts: Mapping[int, str],
                  reclaim: Mapping[str, Any], now: datetime) -> dict[str, Any]:
        """An audit record's details: what was seen on the GPU, and the reclaim it follows."""
        since = reclaim.get("idle_since")
        return {"kernel_id": job.spec.kernel_id, "pids": pids, "accounts": {str(p): a for p, a in accounts.items()},
                "gpu_uuids": gpus.split(", "), "seen": "the GPU's process list (NVML)", "reason": reclaim["reason"],
                "idle_since": since.isoformat() if isinstance(since, datetime) else None,
                "idle_s": (now - since).total_seconds() if isinstance(since, datetime) else None,
                "reclaim_event_id": reclaim.get("event_id"), "action": self.action, "attempt": job.attempts}


def _clock(at: datetime, now: datetime | None) -> str:
    """``at`` as every server sentence writes a clock (:func:`~jupyter_sched.model.units.clock_text`, to the
    second: a shutdown's wait is seconds long): ``11:02:05 UTC`` on ``now``'s UTC day, else with its date (``Dec 7
    23:59:50 UTC`` read after midnight) — the form each reader says in its own zone (``clocks_said``, the panel's
    ``clocksAsOf``). ``now`` None: ``at``'s own day (the sentence is written at about that moment)."""
    return clock_text(at, at if now is None else now, seconds=True)
