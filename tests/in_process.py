"""A scheduler service run in-process by a test (``SchedulerService`` with ``cycle_interval_s=0``): tick
it until something holds, and end it (its live jobs cancelled, its store closed)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def tick_until(svc: Any, what: str, done: Callable[[], bool], *, timeout_s: float = 60.0) -> None:
    """Tick ``svc`` (every 30 ms) until ``done()``; fail naming ``what`` after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        svc.tick()
        time.sleep(0.03)


def cancel_all_and_close(svc: Any, *, timeout_s: float = 30.0) -> None:
    """Cancel every live job of ``svc`` (a SchedulerService) as an admin, tick until none holds GPUs
    (at most ``timeout_s`` seconds), wait for a job definitions' firing pass its ticks started, and close its store:
    the end of a test that ran a service in-process."""
    for job in svc.list_jobs(user=None, state="pending,admitted,running"):
        try:
            svc.cancel(str(job["id"]), user="admin", is_admin=True)
        except Exception:  # ended meanwhile: nothing to cancel
            pass
    deadline = time.monotonic() + timeout_s
    while svc.list_jobs(user=None, state="admitted,running") and time.monotonic() < deadline:
        svc.tick()
        time.sleep(0.03)
    svc.services.definitions.stop_firing()  # a firing pass its last tick started ends here, not in the next test (s38-edges)
    svc.store.close()
