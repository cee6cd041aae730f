"""A full cycle steps aside while the server's web loop answers requests (issue 17).

The engine decides on a thread of its own, in pure Python, and a full cycle holds the interpreter
lock for tens to hundreds of milliseconds (about 50 ms over 1,000 pending jobs, 0.6-1.2 s over 20,000
on 5,000 nodes). The event loop that answers ``jupyter-sched status`` and the panels' polls gives
the lock up at every socket read, write and ``epoll`` — a dozen times per request — and each time
waits up to the interpreter's switch interval to get it back while the cycle runs: a status that
met a cycle during fifty panels' burst of polls waited behind the burst stretched by every one of
those waits (``benchmarks/status_bench.py``: every top-1 % sample overlapped a full cycle).

:class:`LoopWatch` knows whether the loop is *parked* — waiting in ``select`` with nothing
ready — or busy; :class:`Courtesy` is the cycle's pause (``CycleContext.pause``, called between
two jobs' visits and ETAs): while the loop is busy it blocks the engine's thread, the lock
released, until the loop parks again and stays parked ``quiet_s`` (at most ``cap_s``), then lets the cycle run at least
``slice_s`` before it steps aside again — under a load that never lets the loop park the cycle
still gets ``slice_s / (slice_s + cap_s)`` of the interpreter (about a tenth) and ends. One-job
decisions (a submit that fits, a lease) never pause: they are short and what a request waits for.

Why this and not the alternatives (CPU times, session 15):

- the cycle in a worker process, decisions committed back here: at 20,000 pending on 5,000 nodes
  the cycle (``LiveCycle``) takes 1.2 s, pickling its snapshot here 0.76 s (5.9 MB) and
  unpickling the result here 0.37 s — this process would still hold the lock 1.1 s of the 1.2 —
  and the one-job decisions (the submit fast path) need the cycle's live ledger back here: 1.5 s
  more to unpickle (16.7 MB). On the status benchmark's store (1,000 pending): 36 + 8 ms here
  against a 40 ms cycle;
- a shorter switch interval alone (``c.SchedApp.gil_switch_interval_ms``): each wait is shorter,
  but the loop still shares the lock with the cycle for the whole burst;
- ``time.sleep(0)`` between jobs alone: it hands the lock to a waiting thread at that instant
  (measured: a thread back from a 1 ms sleep beside a spinning one waited 0.07 ms at p50 instead
  of 0.7), but the loop gives it up again at its next socket call and meets the cycle again, for
  the whole burst. It is what the cycle does between jobs during its own slice while the loop
  is busy.

Measured (``status_bench --compare-setting cycle_steps_aside=false``, 6 rounds x 200, session 15,
load 3-9 on 2 shared cores): with 5,000 pending jobs, status p99 idle 15.3 ms against 18.6 off,
under the phase-locked burst 75.6 against 92.1, server CPU per request 1.25 against 1.52 ms; with
1,000 pending the figures stay within the machine's noise. Resuming in every gap of the loop
(without ``quiet_s``) measured worse idle (19.1 against 10.8 ms) and more CPU per request.

The watch wraps the loop's selector (asyncio's ``_selector``, a private attribute of the selector
event loops tornado runs on); a loop without one (another event loop implementation) gets no
watch and cycles never pause.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

__all__ = ["Courtesy", "LoopWatch"]


class _WatchedSelector:
    """The loop's selector, noting whether each ``select`` parks (see :class:`LoopWatch`)."""

    def __init__(self, selector: Any, watch: LoopWatch) -> None:
        self._selector = selector
        self._watch = watch

    def select(self, timeout: float | None = None) -> Any:
        watch = self._watch
        if (timeout is not None and timeout <= 0) or watch.off:  # callbacks ready: busy
            return self._selector.select(timeout)
        watch.parked = True
        if watch.waiting:
            watch.wake.set()
        try:
            return self._selector.select(timeout)
        finally:
            watch.parked = False
            watch.wakes += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._selector, name)


class LoopWatch:
    """Whether an asyncio selector loop is parked (waiting for I/O with nothing ready) or busy.

    Attributes:
        parked: True while the loop waits in ``select`` with no callback ready (written by the
            loop's thread, read by others).
        waiting: a thread waits in :meth:`wait_parked` (the loop then sets ``wake`` when it parks).
        thread: the loop's thread (``threading.get_ident()``): code running on it never waits for it.
        off: uninstalled (a wrapper left in a chain of several watches passes ``select`` through).
        wakes: times the loop left a parked ``select`` (to tell a loop that stayed parked from one
            that woke and parked again).
    """

    def __init__(self) -> None:
        self.parked = True
        self.wakes = 0
        self.waiting = False
        self.off = False
        self.wake = threading.Event()
        self.thread = threading.get_ident()
        self._loop: Any = None
        self._wrapper: Any = None
        self._original: Any = None

    @classmethod
    def install(cls, loop: asyncio.AbstractEventLoop) -> LoopWatch | None:
        """Watch ``loop`` (call on its thread); None for a loop without a selector to wrap."""
        selector = getattr(loop, "_selector", None)
        if selector is None or not callable(getattr(selector, "select", None)):
            return None
        watch = cls()
        watch.parked = False  # called on the loop's thread: it is running this
        watch._loop, watch._original = loop, selector
        watch._wrapper = loop._selector = _WatchedSelector(selector, watch)  # type: ignore[attr-defined]
        return watch

    def uninstall(self) -> None:
        """Give the loop its selector back (when no other watch wrapped it since); waits end at
        once from now on."""
        self.off = True
        if self._loop is not None and getattr(self._loop, "_selector", None) is self._wrapper:
            self._loop._selector = self._original
        self._loop = self._wrapper = None
        self.parked = True
        self.wake.set()

    def wait_parked(self, timeout_s: float) -> bool:
        """Block (the interpreter lock released) until the loop parks, at most ``timeout_s``; True
        when it did (or was). Never on the loop's own thread (it would wait for itself)."""
        if self.parked or self.off or threading.get_ident() == self.thread:
            return True
        self.wake.clear()
        self.waiting = True
        try:
            # the loop sets ``wake`` only when it parks after seeing ``waiting``: check again now
            return self.parked or self.wake.wait(timeout_s)
        finally:
            self.waiting = False


class Courtesy:
    """``CycleContext.pause`` for the engine's full cycles: step aside while the loop is busy.

    Args:
        watch: the server loop's :class:`LoopWatch`.
        slice_s: least seconds the cycle runs after stepping aside before it does again.
        cap_s: longest seconds one step aside lasts.
        quiet_s: the loop must stay parked this long before the cycle goes on (a request's
            stages and a client's next request come within it: one status is three requests).

    Attributes:
        pauses / paused_s: steps aside so far and the seconds they lasted (for benchmarks).
    """

    def __init__(self, watch: LoopWatch, *, slice_s: float = 0.002, cap_s: float = 0.02,
                 quiet_s: float = 0.002) -> None:
        self.watch = watch
        self.slice_s = slice_s
        self.cap_s = cap_s
        self.quiet_s = quiet_s
        self.pauses = 0
        self.paused_s = 0.0
        self._runs_until = 0.0

    def __call__(self) -> None:
        watch = self.watch
        if watch.parked or watch.off or threading.get_ident() == watch.thread:  # a cycle on the loop's own thread
            return
        now = time.monotonic()
        if now < self._runs_until:  # the cycle's own slice: the lock passes to a waiting loop at once
            time.sleep(0)
            return
        deadline = now + self.cap_s
        while (left := deadline - time.monotonic()) > 0 and watch.wait_parked(left):
            seen = watch.wakes
            time.sleep(min(self.quiet_s, max(0.0, deadline - time.monotonic())))
            if watch.parked and watch.wakes == seen:  # nothing came in meanwhile: go on
                break
        after = time.monotonic()
        self.pauses += 1
        self.paused_s += after - now
        self._runs_until = after + self.slice_s
