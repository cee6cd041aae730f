"""red35 R2: one 0-GPU job stopped the engine for everyone, forever.

A job's ``exit.json`` is in its own folder, which its account writes. 60,000 bytes of ``[`` (under the 64 KiB
bound) made ``json.loads`` raise :class:`RecursionError` — not the :class:`ValueError` its reader caught as
"malformed" — on the engine's thread; the engine took the failed tick as passing and retried the same file
every tick: no job of anyone started, ended or was time-limited until an admin restarted the service. Two
fixes, each tested here with the real engine, store (SQLite) and :class:`LocalExecutor` running real processes:

* every read of JSON someone else wrote goes through :func:`jupyter_sched.untrusted_json.loads` (any failure a
  ``ValueError``); ``tests/core/test_s35_red35_r2_untrusted_json.py`` holds the other readers to it;
* the executor's poll follows each job on its own: a job whose poll raises for a reason not yet known is skipped,
  the others go on, and its third failure in a row ends it (processes killed, reported lost, GPUs back).
  The second test makes one job's poll raise with a fault put in at that one method (no file does it any more):
  the fault itself is the test's, what the engine does with it is real.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.local import POLL_FAILURES_LOST, LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store

SLEEP = [sys.executable, "-c", "import time; time.sleep(120)"]
PASS = [sys.executable, "-c", "pass"]


def _service(tmp_path: Path, sqlite_db: str) -> tuple[SchedulerService, LocalExecutor]:
    executor = LocalExecutor(tmp_path / "jobs")
    svc = SchedulerService(store=Store(sqlite_db), inventory=SimulatedInventory(1, node="n1"), executor=executor,
                           cycle_interval_s=0.0, stop_grace_s=2.0)
    return svc, executor


def _state(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


def _tick_until(svc: SchedulerService, job_id: str, states: tuple[str, ...], *, within_s: float = 60.0) -> None:
    deadline = time.monotonic() + within_s
    while _state(svc, job_id)["state"] not in states:
        assert time.monotonic() < deadline, (_state(svc, job_id), svc.engine.database)
        svc.tick()
        time.sleep(0.05)


def test_red35_r2_a_deeply_nested_exit_json_ends_its_job_and_the_next_job_starts(tmp_path: Path,
                                                                                 sqlite_db: str) -> None:
    svc, executor = _service(tmp_path, sqlite_db)
    try:
        deep = svc.submit({"name": "deep", "gpus": 1, "command": SLEEP}, user="eve")["id"]
        _tick_until(svc, deep, ("running",))
        tracked = executor._jobs[deep]
        deadline = time.monotonic() + 30
        while not (tracked.job_dir / "output.log").exists():  # its wrapper made its folder
            assert time.monotonic() < deadline, tracked.job_dir
            time.sleep(0.05)
        # what the job did as its own account: its end file nested 60,000 deep, its wrapper killed (no end of its own)
        (tracked.job_dir / "exit.json").write_text("[" * 60_000)
        wrapper = executor._root_pid(tracked)
        assert wrapper is not None
        os.killpg(os.getpgid(wrapper), signal.SIGKILL)
        after = svc.submit({"name": "next", "gpus": 1, "command": PASS}, user="ana")["id"]  # needs deep's GPU
        _tick_until(svc, after, ("succeeded", "failed"))
        assert _state(svc, after)["state"] == "succeeded"
        ended = _state(svc, deep)
        assert ended["state"] == "failed" and ended["message"].startswith("killed by SIGKILL"), ended  # its wrapper's
    finally:
        svc.store.close()


def test_red35_r2_a_job_whose_poll_keeps_raising_is_ended_alone_and_the_others_go_on(
        tmp_path: Path, sqlite_db: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    svc, executor = _service(tmp_path, sqlite_db)
    polls: list[str] = []
    real_end_of = LocalExecutor._end_of

    def end_of(self: LocalExecutor, t: Any, now: float) -> Any:
        if t.job.spec.name == "stuck":
            polls.append(t.job.id)
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")
        return real_end_of(self, t, now)

    try:
        stuck = svc.submit({"name": "stuck", "gpus": 1, "command": SLEEP}, user="eve")["id"]
        _tick_until(svc, stuck, ("running",))
        wrapper = executor._root_pid(executor._jobs[stuck])
        monkeypatch.setattr(LocalExecutor, "_end_of", end_of)
        after = svc.submit({"name": "next", "gpus": 1, "command": PASS}, user="ana")["id"]
        _tick_until(svc, after, ("succeeded", "failed"))
        assert _state(svc, after)["state"] == "succeeded"
        assert len(polls) == POLL_FAILURES_LOST, polls  # tried again, then ended: never a tick of its own forever
        lost = _state(svc, stuck)
        assert lost["state"] == "lost", lost
        assert "could not follow this job (RecursionError reading 3 polls in a row" in lost["message"], lost
        assert wrapper is not None
        deadline = time.monotonic() + 10
        while True:  # its processes were killed (the wrapper's group): nothing of it holds the GPU
            try:
                os.kill(wrapper, 0)
            except ProcessLookupError:
                break
            assert time.monotonic() < deadline, "the stuck job's wrapper still runs"
            time.sleep(0.05)
        said = [r.getMessage() for r in caplog.records if stuck in r.getMessage()]
        assert any("the others go on" in m for m in said) and any("reported lost" in m for m in said), said
        assert svc.engine.database is None
    finally:
        svc.store.close()
