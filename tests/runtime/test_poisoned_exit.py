"""A job's end the database refuses never holds everyone's scheduling (red team 6), on PostgreSQL.

An executor reports what it read from files the job's owner writes (``exit.json``, the log's last
lines). A value PostgreSQL refuses — an exit code out of ``integer`` range, a NUL byte in text —
failed the write of the job's end; the engine took that for a lost database, backed off and
retried the same write every tick, so no job of anyone was decided meanwhile. The inputs found
are bounded at the executor now (``test_runas``, ``test_untrusted_job_text``); here the engine
itself is shown to record such an end without the refused details and go on.

Real parts: PostgreSQL, the real engine and core, the real :class:`LocalExecutor` running real
processes. :class:`PoisoningExecutor` wraps it at the executor boundary and reports jobs named
``poison`` as ending with an exit code no process has and a NUL in their words — what a future
executor or file format could let through.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle, Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, Job
from jupyter_sched.store import Store


class PoisoningExecutor:
    """The executor protocol around a real executor; the ends of jobs named ``poison`` are reported
    with exit code 10**30 and a NUL byte in the message."""

    name = "local"

    def __init__(self, real: LocalExecutor) -> None:
        self.real = real
        self.poisoned: set[str] = set()

    def start(self, job: Job, allocation: Allocation, run_as: RunAs | None = None) -> ExecutorHandle:
        if job.spec.name == "poison":
            self.poisoned.add(job.id)
        return self.real.start(job, allocation, run_as)

    def _poison(self, event: ExecutorEvent | None) -> ExecutorEvent | None:
        if isinstance(event, Exited) and event.job_id in self.poisoned:
            return dataclasses.replace(event, exit_code=10**30, message="a\x00b")
        return event

    def poll(self) -> list[ExecutorEvent]:
        return [e for e in map(self._poison, self.real.poll()) if e is not None]

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        self.real.stop(job_id, grace_s=grace_s, checkpoint_signal=checkpoint_signal, reason=reason)

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        return self.real.logs(job_id, offset, limit)

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        return self._poison(self.real.adopt(job, handle))  # a re-read of the same files says the same

    def tracked(self) -> frozenset[str]:
        return self.real.tracked()

    def detach(self) -> None:
        self.real.detach()


def test_an_end_the_database_refuses_is_recorded_without_it_and_the_next_job_starts(tmp_path: Path,
                                                                                      pg_url: str) -> None:
    executor = PoisoningExecutor(LocalExecutor(tmp_path / "jobs"))
    svc = SchedulerService(store=Store(pg_url), inventory=SimulatedInventory(1, node="n1"), executor=executor,
                           cycle_interval_s=0.0, stop_grace_s=2.0)
    try:
        poison = svc.submit({"name": "poison", "gpus": 1, "command": [sys.executable, "-c", "pass"]}, user="eve")
        after = svc.submit({"name": "next", "gpus": 1, "command": [sys.executable, "-c", "pass"]}, user="ana")

        def state(job_id: str) -> dict[str, Any]:
            return svc.get_job(job_id, user="admin", is_admin=True)

        deadline = time.monotonic() + 60
        while state(after["id"])["state"] not in ("succeeded", "failed"):  # needs the poisoned job's GPU
            assert time.monotonic() < deadline, (state(poison["id"]), state(after["id"]), svc.engine.database)
            svc.tick()
            time.sleep(0.05)
        ended = state(poison["id"])
        assert ended["state"] == "failed" and ended["exit_code"] is None, ended
        assert ended["message"] == "ended; what its executor reported could not be stored (the database refused it)"
        assert state(after["id"])["state"] == "succeeded"
        assert svc.engine.database is None  # never "reconnecting to the database"
    finally:
        svc.store.close()
