"""red27 R5: four of one user's slow reads (``GET usage/report`` over 300k usage rows) took every bulk request
thread for minutes; an admin's ``GET audit``, everyone's ``GET metrics`` and ``GET usage`` waited behind them
(> 225 s). One user's bulk reads now take at most half the bulk threads at once — their further reads wait for
their own — and another user's read starts at once; past 16 of one user's waiting reads, 429 with Retry-After.

``SchedApp.bulk_off_loop`` on its real thread pool; the slow reads block on events (no timing)."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.errors import BusyError
from jupyter_sched.extension.app import SchedApp
from jupyter_sched.extension.per_user_lines import BULK_WAITING_PER_USER, PerUserLines


def _app(threads: int) -> Any:
    pool = ThreadPoolExecutor(max_workers=threads)
    app = SimpleNamespace(bulk_pool=pool, _stopping=lambda: False, _threads_gone=lambda: False,
                          _bulk_lines=PerUserLines(pool, most=BULK_WAITING_PER_USER, what="page and report reads",
                                                   retry_s=2))  # the lines it shares with quick_off_loop (red37 R3)
    app.bulk_off_loop = SchedApp.bulk_off_loop.__get__(app)
    return app


def test_red27_r5_one_users_slow_reads_take_half_the_bulk_threads_and_anothers_read_starts_at_once() -> None:
    app, release = _app(4), threading.Event()
    started: list[str] = []

    def slow(name: str) -> str:
        started.append(name)
        assert release.wait(60)
        return name

    async def scenario() -> None:
        mals = [asyncio.ensure_future(app.bulk_off_loop(slow, f"mal-{i}", user="mal")) for i in range(6)]
        for _ in range(200):
            await asyncio.sleep(0.01)
            if len(started) >= 2:
                break
        await asyncio.sleep(0.1)  # had a third of mal's reads a thread, it would have started by now
        assert sorted(started) == ["mal-0", "mal-1"], started
        assert await asyncio.wait_for(app.bulk_off_loop(lambda: "audit read", user="carol"), 30) == "audit read"
        assert await asyncio.wait_for(app.bulk_off_loop(lambda: "metrics", user=None), 30) == "metrics"
        release.set()
        assert [await asyncio.wait_for(m, 30) for m in mals] == [f"mal-{i}" for i in range(6)]
        assert app._bulk_lines.of == {}  # nothing kept per user after their reads

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        app.bulk_pool.shutdown(wait=True)


def test_red27_r5_past_sixteen_waiting_reads_of_one_user_the_next_is_429() -> None:
    app, release = _app(2), threading.Event()

    async def scenario() -> None:
        waiting = [asyncio.ensure_future(app.bulk_off_loop(release.wait, 60, user="mal"))
                   for _ in range(BULK_WAITING_PER_USER)]
        await asyncio.sleep(0.05)
        with pytest.raises(BusyError) as said:
            await app.bulk_off_loop(lambda: None, user="mal")
        assert said.value.details["retry_after_s"] == 2 and "waiting for your earlier ones" in said.value.message
        assert await asyncio.wait_for(app.bulk_off_loop(lambda: "eve's", user="eve"), 30) == "eve's"
        release.set()
        await asyncio.wait_for(asyncio.gather(*waiting), 30)

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        app.bulk_pool.shutdown(wait=True)
