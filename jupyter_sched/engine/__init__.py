"""The engine (execution layer): applies the pure core's decisions through executors and the store.

:class:`Engine` is the snapshot → ``run_cycle`` → apply loop under the store's leader lock;
:class:`~.runner.EngineRunner` drives its ticks from the server's event loop. The REST API's
application services live in :mod:`jupyter_sched.services`.
"""

from typing import Any

from .clock import Clock, ManualClock, SystemClock
from .engine import CycleFunction, Engine, TickReport
from .events import EventBus, Subscription
from .runner import EngineRunner

__all__ = ["Clock", "CycleFunction", "Engine", "EngineRunner", "EventBus", "ManualClock", "Subscription",
           "SystemClock", "TickReport"]


def __getattr__(name: str) -> Any:
    # ``SchedulerService`` and ``CachedInventory`` moved to jupyter_sched.services (issue 15); the
    # old import path keeps working for scripts and tests (imported lazily: services import engine).
    if name in ("SchedulerService", "CachedInventory"):
        from .. import services

        return getattr(services, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
