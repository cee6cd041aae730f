"""The engine (execution layer): applies the pure core's decisions through executors and the store.

:class:`SchedulerService` is the one object the REST API uses; :class:`Engine` is the
snapshot → ``run_cycle`` → apply loop under the store's leader lock.
"""

from .clock import Clock, ManualClock, SystemClock
from .engine import CycleFunction, Engine, TickReport
from .events import EventBus, Subscription
from .service import CachedInventory, SchedulerService

__all__ = ["CachedInventory", "Clock", "CycleFunction", "Engine", "EventBus", "ManualClock", "SchedulerService",
           "Subscription", "SystemClock", "TickReport"]
