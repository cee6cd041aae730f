"""The engine's hold on this server's kernels: their states, and the shutdown of an idle kernel
that still holds the GPU of its reclaimed lease (DESIGN.md *Idle reclamation*).

Idle reclaim revokes a kernel's lease; where the GPU's process list (NVML) still shows the
kernel's process on the GPU, the engine gives the GPU to nobody until that process lets go and,
with ``c.SchedApp.idle_kernel_action = "shutdown"`` (the default), shuts the kernel down — after
telling its user (:mod:`jupyter_sched.engine.idle_kernels`). An embedded server does that
through its own kernel manager, as Jupyter's culler does (``MappingKernelManager.shutdown_kernel``,
which emits the ``kernel_actions`` shutdown event the lease hooks listen to). The hub's central
service runs none of its users' kernels: it asks the user's own server, in the answer to that
server's kernel report, and the server shuts the kernel down the same way (jupyter_sched.hub.idle_shutdown).
"""

from __future__ import annotations

import asyncio
import logging
import math
from typing import Any

from traitlets import Enum, Float, validate
from traitlets.config import Configurable

from ..engine.idle_kernels import IDLE_KERNEL_ACTIONS, SHUTDOWN_WAIT_S
from .config import config_error
from .kernels import kernel_states

__all__ = ["NO_WAY_HUB", "IdleKernelConfig", "KernelShutdown", "connect_kernels"]

log = logging.getLogger(__name__)

NO_WAY_HUB = ("this scheduler (the hub's service) has no way to the kernels in its users' servers, so it cannot "
              "shut the kernel down")
"""Why the hub's central service would hold the GPU of an idle kernel; it asks its user's server instead
(jupyter_sched.hub.idle_shutdown, set after this by HubSchedApp)."""


class IdleKernelConfig(Configurable):
    """What idle reclaim does about a kernel that still holds its revoked lease's GPU."""

    idle_kernel_action = Enum(
        list(IDLE_KERNEL_ACTIONS),
        default_value="shutdown",
        config=True,
        help="""What is done when idle reclaim revokes a kernel's lease (idle_lease_action "release")
        and the GPU's process list (telemetry_source "nvml") still shows the kernel's process on
        the GPU — a kernel that initialised CUDA keeps its context and memory, so the GPU is not
        free. Either way the GPU is given to nobody else until that process lets go.
        Default: "shutdown": the kernel is shut down through this server's kernel manager, as
        Jupyter's culler does, after its user is told (the lease's message, a panel notice) and
        with an audit record (idle_kernel_shutdown) of the evidence. "hold": the kernel keeps
        running and the GPU stays held, its lease saying how to free it (audited
        idle_kernel_held). In hub mode (set on the central service) the user's own server shuts the
        kernel down, asked in the answer to its kernel report (every kernel_report_interval_s); a
        server that does not (an older jupyter_sched) leaves the GPU held, said after
        idle_kernel_shutdown_wait_s. Without a GPU process list an idle lease is released at once,
        as before.""",
    )

    idle_kernel_shutdown_wait_s = Float(
        SHUTDOWN_WAIT_S,
        config=True,
        help="""Seconds after an idle kernel's shutdown was asked (idle_kernel_action "shutdown"), or
        found impossible, before the lease owner's processes still on the GPU — a child the kernel
        started in its own session outlives it — are ended by the scheduler (SIGTERM, then SIGKILL);
        the lease says so meanwhile. Default: 60 s (Jupyter waits shutdown_wait_time, 5 s, before it
        kills a kernel; a GPU sample follows within telemetry_interval_s).""",
    )

    @validate("idle_kernel_shutdown_wait_s")
    def _check_shutdown_wait(self, proposal: dict[str, Any]) -> float:
        value = float(proposal["value"])
        if not (math.isfinite(value) and value > 0):
            raise config_error("idle_kernel_shutdown_wait_s", value, "must be a number of seconds > 0",
                               "set e.g. 60 (the default)")
        return value


class KernelShutdown:
    """Shut a kernel of ``serverapp`` down from the engine's thread (its loop does the work).

    Called as ``shutdown(kernel_id, words, user)`` (:data:`jupyter_sched.engine.idle_kernels.KernelShutdown`):
    answers None once the shutdown is scheduled on the server's event loop, or why it cannot be.
    Never waits: the engine thread must not block on a kernel.
    """

    def __init__(self, serverapp: Any) -> None:
        self.serverapp = serverapp

    def __call__(self, kernel_id: str, words: str, user: str = "") -> str | None:
        km = getattr(self.serverapp, "kernel_manager", None)
        if km is None or kernel_id not in km:
            return f"kernel {kernel_id} is not running on this server"
        loop = getattr(getattr(self.serverapp, "io_loop", None), "asyncio_loop", None)
        if loop is None or loop.is_closed():
            return "this server's event loop is not running"
        asyncio.run_coroutine_threadsafe(self._shutdown(km, kernel_id, words), loop)
        return None

    @staticmethod
    async def _shutdown(km: Any, kernel_id: str, words: str) -> None:
        log.warning("jupyter_sched: %s", words)
        try:
            await km.shutdown_kernel(kernel_id)
        except Exception:  # the lease stays held (its process is still on the GPU) and says so later
            log.exception("jupyter_sched: shutting down idle kernel %s failed", kernel_id)


def connect_kernels(app: Any) -> None:
    """Give the engine of ``app`` (a ``SchedApp``) this server's kernels: their states for the idle
    rules, and what is done about an idle one still on its GPU (``idle_kernel_action``). A hub
    user's server runs no engine (nothing to do); the central service's own kernel manager runs
    none of its users' kernels (their servers report them: ``jupyter_sched.hub.liveness``)."""
    services = app.services
    kernel_manager = getattr(app.serverapp, "kernel_manager", None)
    embedded = app.owns_kernels and kernel_manager is not None
    if embedded and hasattr(services, "set_kernel_source"):
        services.set_kernel_source(lambda: kernel_states(kernel_manager))
    if hasattr(services, "set_idle_kernels"):
        services.set_idle_kernels(app.idle_kernel_action, KernelShutdown(app.serverapp) if embedded else None,
                                  no_way=NO_WAY_HUB if not app.owns_kernels else "this server has no kernel manager",
                                  shutdown_wait_s=app.idle_kernel_shutdown_wait_s)
