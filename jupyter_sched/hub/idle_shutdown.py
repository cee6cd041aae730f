"""Hub mode: an idle kernel still on its reclaimed lease's GPU is shut down by its user's own server
(DESIGN.md *Idle reclamation*: "lease revoked and kernel's GPUs freed"; session 21).

The central service runs none of its users' kernels. Idle reclaim of a kernel's lease whose GPU still
shows the kernel's process (NVML) keeps the lease held (:mod:`jupyter_sched.engine.idle_kernels`) and,
with ``c.SchedApp.idle_kernel_action = "shutdown"``, asks for the kernel's shutdown through
:class:`HubKernelShutdown`: the request waits here until the user's server sends its next kernel report
(``PUT api/sched/kernels``, every ``kernel_report_interval_s``; :mod:`.liveness`), and the answer to that
report carries it — ``{"released": [...], "shutdown": [{"kernel_id", "lease_id", "message"}]}``. No new
port on the user's server: the server asks, the service answers. The server shuts the kernel down through
its own kernel manager, as Jupyter's culler does, and reports again (:mod:`.forward`).

Who may be asked what: a shutdown is handed only to a report whose user (from the report's hub token,
never its body) owns the lease, and only for a kernel that report lists — one user's server never learns
of, nor is asked to stop, another user's kernel. Each request is handed out once (as embedded mode asks
once). A server that does not do it (an older jupyter_sched, a hostile user) gains nothing: the lease stays
held — its GPU given to nobody else, counted as the lease's — until NVML lists no process of it, and
:data:`~jupyter_sched.engine.idle_kernels.SHUTDOWN_WAIT_S` after the request the lease says it is held and
how to free it (audited ``idle_kernel_held``), as embedded.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .liveness import KernelReports

__all__ = ["MAX_WAITING", "HubKernelShutdown", "draining"]

MAX_WAITING = 4096
"""Shutdown requests kept until a report takes them (the oldest is dropped beyond: it then holds, said)."""


def draining(lease: Mapping[str, Any]) -> bool:
    """Whether ``lease`` (``job_to_dict`` shape) was reclaimed while idle and is held until its GPU is
    free: only the engine's drain ends it (never a gone-kernel or stopped-server release)."""
    stop = lease.get("stop_requested")
    return isinstance(stop, Mapping) and stop.get("intent") == "idle"


class HubKernelShutdown:
    """The central service's :data:`~jupyter_sched.engine.idle_kernels.KernelShutdown` (module docstring).

    Args:
        reports: the user servers' latest kernel reports (which kernels a server can be asked about).
    """

    def __init__(self, reports: KernelReports) -> None:
        self._reports = reports
        self._waiting: dict[tuple[str, str], str] = {}  # (user, kernel id) -> the words the user was told
        self._lock = threading.Lock()  # asked on the engine's thread, taken on the loop

    def __call__(self, kernel_id: str, words: str, user: str = "") -> str | None:
        """Ask for ``user``'s kernel ``kernel_id``'s shutdown (called on the engine's thread, never waits):
        None once it waits for their server's next report; else why it cannot be asked (the lease holds, said)."""
        if not self._reports.lists(kernel_id, user=user):
            return (f"kernel {kernel_id} is in no recent kernel report of its user's servers, so no server can be "
                    "asked to shut it down")
        with self._lock:
            self._waiting.pop((user, kernel_id), None)
            self._waiting[(user, kernel_id)] = words[:2000]
            while len(self._waiting) > MAX_WAITING:
                del self._waiting[next(iter(self._waiting))]
        return None

    def waiting(self) -> bool:
        """Whether any request waits for a report (a report's answer reads the leases only then)."""
        return bool(self._waiting)

    def for_report(self, user: str, kernels: frozenset[str], leases: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
        """The shutdowns the server that reported ``kernels`` for ``user`` is asked for: kernels it listed,
        bound to ``user``'s own draining leases (``leases``: the user's live leases), each handed out once.

        Returns:
            ``[{"kernel_id", "lease_id", "message"}]`` (the message: what the user was told).
        """
        out: list[dict[str, str]] = []
        for lease in leases:
            kernel = str(lease.get("kernel_id") or "")
            if lease.get("user") != user or kernel not in kernels or not draining(lease):
                continue
            with self._lock:
                words = self._waiting.pop((user, kernel), None)
            if words is not None:
                out.append({"kernel_id": kernel, "lease_id": str(lease.get("id")), "message": words})
        return out
