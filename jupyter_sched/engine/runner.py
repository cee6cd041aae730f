"""``EngineRunner``: runs an :class:`~.engine.Engine`'s ticks on one worker thread, driven from asyncio.

A tick every ``poll_interval_s`` seconds (executor events, stop plans, lease renewal), and at
once when something happened (:meth:`kick`): a submit that fits is decided incrementally in that
tick (no full cycle, no pause: issue 17); other events (cancel, finish, quota change) ask a full
cycle. There is no fixed pause: the engine itself spaces kick-triggered full cycles by
``cycle_coalesce_s`` (``Engine.cycle_gap_s``; or twice as long as the last cycle took, whichever is
longer), so a burst of 1,000 non-fitting submits causes a handful of cycles rather than one each,
and the worker thread (which holds the GIL while it decides: every store call of a request then
waits for it, up to the interpreter's 5 ms switch interval each) leaves most of the time to the
API's requests. While the database fails the runner waits out the engine's backoff.

Ticks never overlap (one worker thread); a tick that raises is retried at the next. Its traceback
is logged once per cause (the error's type and where it was raised), then every
:data:`REPEAT_EVERY` th failure in one line with the count, and once when ticks pass again: a fault
that fails every tick names itself without flooding the log (red team 21, R5: 52 tracebacks in 2
minutes, none naming the job).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import traceback
from concurrent.futures import ThreadPoolExecutor

from ..store import JobRecord
from .courtesy import Courtesy, LoopWatch
from .engine import Engine, TickReport

__all__ = ["EngineRunner"]

log = logging.getLogger(__name__)

ENGINE_THREAD_NAME = "jupyter-sched-engine"
"""The prefix of the name of the thread a started runner ticks its engine on (``jupyter-sched-engine_0``): the
tests' check that no test leaves an engine ticking into the next (``tests/engine_threads.py``) looks for it."""

REPEAT_EVERY = 100
"""A tick failing again for the same cause is said once per this many failures."""


def failure_cause(exc: BaseException) -> str:
    """``"OverflowError at eta.py:443 in order"``: the error's type and its innermost frame."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return type(exc).__name__
    last = frames[-1]
    return f"{type(exc).__name__} at {last.filename.rsplit('/', 1)[-1]}:{last.lineno} in {last.name}"


class EngineRunner:
    """Drive ``engine`` from the running asyncio loop (see module docstring).

    Args:
        engine: the engine to tick.
        poll_interval_s: seconds between ticks.
        cycle_coalesce_s: least seconds between kick-triggered full cycles (0 = a cycle per kick).
        courteous: full cycles step aside while the loop is busy answering requests
            (:mod:`.courtesy`; False: they share the interpreter with it as any thread does).
    """

    def __init__(self, engine: Engine, *, poll_interval_s: float = 1.0, cycle_coalesce_s: float = 0.1,
                 courteous: bool = True) -> None:
        self.engine = engine
        self.poll_interval_s = poll_interval_s
        engine.writer.settle_s = poll_interval_s  # a stop within one look at the work makes no attempt (N1)
        self.cycle_coalesce_s = cycle_coalesce_s
        self.last_tick: TickReport | None = None
        self._pool: ThreadPoolExecutor | None = None
        self._task: asyncio.Task[None] | None = None
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        self.courteous = courteous
        self._watch: LoopWatch | None = None
        self.failing: tuple[str, int] | None = None
        """(cause, consecutive failed ticks) while ticks fail (:func:`failure_cause`); None when the last passed."""

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stop`."""
        return self._task is not None

    async def start(self) -> None:
        """Start ticking on the running loop (idempotent)."""
        if self._task is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=ENGINE_THREAD_NAME)
        self._stopping = False
        self.engine.cycle_gap_s = self.cycle_coalesce_s
        if self.courteous:
            self._watch = LoopWatch.install(self._loop)
            self.engine.decider.pause = Courtesy(self._watch) if self._watch is not None else None
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Stop ticking and resign leadership (running local jobs keep running)."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self._watch is not None:
            self._watch.uninstall()
            self._watch = self.engine.decider.pause = None
        if self._pool is not None:
            loop = asyncio.get_running_loop()
            with contextlib.suppress(Exception):
                await loop.run_in_executor(self._pool, self.engine.resign)
            self._pool.shutdown(wait=True)
            self._pool = None

    def kick(self, event: str = "change", job_id: str | None = None, record: JobRecord | None = None) -> None:
        """Ask for a decision now (thread-safe; ``("submit", job_id, record)`` may be decided at
        once, see :meth:`Engine.kick`)."""
        self.engine.kick(event, job_id, record)
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):
                self._loop.call_soon_threadsafe(self._wake.set)

    def tick(self) -> TickReport:
        """Run one tick synchronously (tests and the simulator; not while :meth:`start` runs)."""
        self.last_tick = self.engine.tick()
        return self.last_tick

    def _failed(self, exc: Exception) -> None:
        """Say a failed tick: with its traceback once per cause, then one line every :data:`REPEAT_EVERY`."""
        cause = failure_cause(exc)
        if self.failing is None or self.failing[0] != cause:
            self.failing = (cause, 1)
            log.error("jupyter_sched engine tick failed (%s); retrying every tick — said again every %d failures",
                      cause, REPEAT_EVERY, exc_info=exc)
            return
        count = self.failing[1] + 1
        self.failing = (cause, count)
        if count % REPEAT_EVERY == 0:
            log.error("jupyter_sched engine tick failed %d times in a row (%s): %s", count, cause, exc)

    async def _run(self) -> None:
        assert self._wake is not None and self._pool is not None
        loop = asyncio.get_running_loop()
        while not self._stopping:
            try:
                self.last_tick = await loop.run_in_executor(self._pool, self.engine.tick)
            except Exception as exc:
                self._failed(exc)
            else:
                if self.failing is not None:
                    log.info("jupyter_sched engine ticks pass again (after %d failed: %s)", self.failing[1],
                             self.failing[0])
                    self.failing = None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.engine.wait_hint_s(self.poll_interval_s))
            self._wake.clear()
