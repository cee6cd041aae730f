"""A full cycle steps aside while the web loop answers requests (issue 17, :mod:`jupyter_sched.engine.courtesy`).

The core calls ``CycleContext.pause`` between two jobs' visits and ETAs of a full cycle (never in a
one-job decision); the engine's :class:`~jupyter_sched.engine.courtesy.Courtesy` blocks there,
the interpreter lock released, while a real asyncio loop is busy, and returns at once while it is
parked. The runner installs it on its loop and takes it off again.
"""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine.courtesy import Courtesy, LoopWatch
from jupyter_sched.model import GPU, Inventory, Job, JobSpec, Node, QuotaSet, ResourceRequest
from jupyter_sched.scheduling import Snapshot
from jupyter_sched.scheduling.live import LiveCycle
from jupyter_sched.scheduling.snapshot import UsageHistory

T0 = datetime(2026, 12, 4, 6, 0, tzinfo=timezone.utc)


def world(pending: int, gpus: int = 2) -> Snapshot:
    """``pending`` one-GPU jobs on one node of ``gpus`` GPUs: ``gpus`` admitted, the rest pended."""
    node = Node(name="n1", gpus=tuple(GPU(uuid=f"GPU-{i}", index=i, node="n1", model="A100-80GB", memory_mib=81920)
                                      for i in range(gpus)))
    jobs = tuple(Job(id=f"j{i:04d}", spec=JobSpec(name=f"j{i}", user=f"u{i % 3}", resources=ResourceRequest(gpus=1),
                                                  command=("python", "x.py")),
                     submitted_at=T0 + timedelta(seconds=i)) for i in range(pending))
    return Snapshot(now=T0 + timedelta(hours=1), inventory=Inventory(nodes=(node,)), jobs=jobs, quotas=QuotaSet(),
                    usage=UsageHistory())


def test_full_cycle_pauses_between_jobs_and_one_job_decisions_never() -> None:
    calls: list[int] = []
    live = LiveCycle(world(40), pause=lambda: calls.append(1))
    assert len(live.result.admits) == 2 and len(live.result.pending) == 38
    assert len(calls) == 40 + 38  # one per visit, one per pending job's ETA
    newcomer = Job(id="late", spec=JobSpec(name="late", user="u1", resources=ResourceRequest(gpus=1),
                                           command=("python", "x.py")), submitted_at=T0 + timedelta(minutes=30))
    assert live.decide(newcomer, T0 + timedelta(hours=1, seconds=1)) is not None
    assert len(calls) == 78  # the one-job decision did not pause


def _loop_thread() -> tuple[asyncio.AbstractEventLoop, threading.Thread, LoopWatch]:
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: list[LoopWatch | None] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        holder.append(LoopWatch.install(loop))
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(5)
    watch = holder[0]
    assert watch is not None
    return loop, thread, watch


def _busy_for(loop: asyncio.AbstractEventLoop, seconds: float, done: threading.Event) -> None:
    """Keep ``loop`` busy (never parked) for ``seconds``: 1 ms of CPU per callback, each scheduling the next."""
    end = time.monotonic() + seconds

    def chunk() -> None:
        stop = time.monotonic() + 0.001
        while time.monotonic() < stop:
            pass
        if time.monotonic() < end:
            loop.call_soon(chunk)
        else:
            done.set()

    loop.call_soon_threadsafe(chunk)


def test_courtesy_steps_aside_while_the_loop_is_busy_and_not_while_it_is_parked() -> None:
    loop, thread, watch = _loop_thread()
    try:
        deadline = time.monotonic() + 5
        while not watch.parked and time.monotonic() < deadline:  # an idle loop parks in select
            time.sleep(0.01)
        assert watch.parked
        idle = Courtesy(watch)
        LiveCycle(world(300), pause=idle)
        assert idle.pauses == 0  # nothing to step aside for

        # a busy spell, and a cycle run while it lasts; tried up to three times: on a loaded machine the loop's
        # thread may start its spell late, or the cycle outlast it (the run-1 failure of session 34, also at its start)
        for _ in range(3):
            done = threading.Event()
            busy_world = world(300)  # built before the spell begins
            _busy_for(loop, 1.0, done)
            deadline = time.monotonic() + 5
            while watch.parked and time.monotonic() < deadline:
                time.sleep(0.0005)
            courteous = Courtesy(watch, slice_s=0.001, cap_s=0.02)
            started = time.monotonic()
            live = LiveCycle(busy_world, pause=courteous)
            took = time.monotonic() - started
            assert done.wait(10)
            if courteous.pauses > 0:
                break
        assert len(live.result.pending) == 298  # it still decides everything
        assert courteous.pauses > 0 and courteous.paused_s > 0.0
        assert courteous.paused_s <= took
        # once the loop parks again, a wait returns at once (the loop woke it or it was parked already)
        time.sleep(0.05)
        assert watch.wait_parked(1.0)
    finally:
        watch.uninstall()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_a_wait_ends_when_the_loop_parks_not_at_the_cap() -> None:
    loop, thread, watch = _loop_thread()
    try:
        done = threading.Event()
        _busy_for(loop, 0.1, done)
        deadline = time.monotonic() + 5
        while watch.parked and time.monotonic() < deadline:
            time.sleep(0.0005)
        started = time.monotonic()
        assert watch.wait_parked(5.0)
        waited = time.monotonic() - started
        assert done.is_set() or watch.parked
        assert waited < 2.0  # woken by the loop parking, not the 5 s cap
    finally:
        watch.uninstall()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()


def test_uninstall_gives_the_selector_back_and_never_blocks_again() -> None:
    loop = asyncio.new_event_loop()
    try:
        original = loop._selector  # type: ignore[attr-defined]
        watch = LoopWatch.install(loop)
        assert watch is not None and loop._selector is not original  # type: ignore[attr-defined]
        watch.parked = False
        watch.uninstall()
        assert loop._selector is original  # type: ignore[attr-defined]
        started = time.monotonic()
        assert watch.wait_parked(5.0)
        assert time.monotonic() - started < 0.5
    finally:
        loop.close()


def test_a_loop_without_a_selector_gets_no_watch() -> None:
    class Other:
        pass

    assert LoopWatch.install(Other()) is None  # type: ignore[arg-type]


def test_the_runner_puts_courtesy_on_its_loop_for_full_cycles_and_takes_it_off(tmp_path: Path) -> None:
    from jupyter_sched.engine import Engine, EngineRunner
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.inventory.simulated import SimulatedInventory
    from jupyter_sched.store import Store, sqlite_url

    store = Store(sqlite_url(tmp_path / "sched.sqlite"))
    engine = Engine(store, SimulatedInventory(1, node="n1"), LocalExecutor(tmp_path / "jobs"))
    runner = EngineRunner(engine, poll_interval_s=0.05)

    async def scenario() -> tuple[object, object, object, object]:
        loop = asyncio.get_running_loop()
        own = loop._selector  # type: ignore[attr-defined]
        await runner.start()
        try:  # stopped however it ends: an engine left ticking runs on into later tests (s38-edges)
            pause, wrapped = engine.decider.pause, loop._selector  # type: ignore[attr-defined]
            while runner.last_tick is None or not runner.last_tick.decided:  # a full cycle ran with it
                await asyncio.sleep(0.01)
        finally:
            await runner.stop()
        return own, wrapped, pause, loop._selector  # type: ignore[attr-defined]

    try:
        own, wrapped, pause, after = asyncio.run(asyncio.wait_for(scenario(), 60))
    finally:
        store.close()
    assert isinstance(pause, Courtesy) and wrapped is not own
    assert after is own and engine.decider.pause is None
    assert EngineRunner(engine, courteous=False).courteous is False


def test_a_cycle_run_on_the_loops_own_thread_never_waits_for_it() -> None:
    async def scenario() -> tuple[int, float]:
        watch = LoopWatch.install(asyncio.get_running_loop())
        assert watch is not None
        try:
            assert not watch.parked  # this coroutine is running: the loop is busy
            courtesy = Courtesy(watch, cap_s=1.0)
            started = time.monotonic()
            LiveCycle(world(50), pause=courtesy)
            return courtesy.pauses, time.monotonic() - started
        finally:
            watch.uninstall()

    pauses, took = asyncio.run(scenario())
    assert pauses == 0 and took < 5.0  # 50 jobs x a 1 s cap would be 88 s


def test_two_watches_on_one_loop_come_off_in_either_order() -> None:
    for first_off in (0, 1):
        loop = asyncio.new_event_loop()
        try:
            own = loop._selector  # type: ignore[attr-defined]
            watches = [LoopWatch.install(loop), LoopWatch.install(loop)]
            assert all(w is not None for w in watches)
            for watch in (watches[first_off], watches[1 - first_off]):
                assert watch is not None
                watch.uninstall()
            chain = loop._selector  # type: ignore[attr-defined]
            while chain is not own and hasattr(chain, "_watch"):  # a wrapper left in the chain passes through
                assert chain._watch.off
                chain = chain._selector
            assert chain is own
            loop.call_soon(loop.stop)
            loop.run_forever()  # selects through whatever is left
        finally:
            loop.close()


def test_the_setting_reaches_the_runner(tmp_path: Path) -> None:
    from jupyter_sched.services import build_services
    from jupyter_sched.store import sqlite_url

    for setting, want in (({}, True), ({"cycle_steps_aside": False}, False)):
        services = build_services({"db_url": sqlite_url(tmp_path / f"s{want}.sqlite"), "inventory_source": "simulated",
                                   "simulated_gpus": 1, "log_dir": str(tmp_path / "logs"), **setting})
        try:
            assert services.runner.courteous is want
        finally:
            services.store.close()
