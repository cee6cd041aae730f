"""A small hub in-process where one team borrows from another: the set-up the no_preempt and reclaim cool-down
tests share (newuser36 N6, s38 bulk cancel).

:func:`borrowing_world`: SchedulerService in-process (real SQLite store, real core), 4 simulated GPUs, quotas vision 3
(+1) and nlp 1 (+1); ``a`` of vision holds a 2-GPU lease and ``c`` of nlp a 2-GPU lease (one GPU borrowed), both bound
to a kernel id (leases only: no processes to start), both running, and the clock moved on 60 s.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import NamedTuple

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.store import Store
from tests.runtime.test_engine import state_of, wait_until

QUOTAS = {"quotas": [{"team": "vision", "guaranteed": 3, "borrowing_limit": 1},
                     {"team": "nlp", "guaranteed": 1, "borrowing_limit": 1}]}


class BorrowingWorld(NamedTuple):
    svc: SchedulerService
    clock: ManualClock
    held: str
    """vision's 2-GPU lease (user ``a``)."""
    borrowed: str
    """nlp's 2-GPU lease (user ``c``), one GPU of it borrowed."""


def borrowing_world(sqlite_db: str, tmp_path: Path, a: str, b: str, c: str) -> BorrowingWorld:
    """``a`` and ``b`` in vision, ``c`` in nlp; see the module docstring."""
    clock = ManualClock(datetime.now(timezone.utc).replace(microsecond=0))
    svc = SchedulerService(store=Store(sqlite_db, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0,
                           user_teams={a: "vision", b: "vision", c: "nlp"},
                           scheduling_profile=SchedulingProfile(grace_s=5, min_runtime_s=0))
    svc.set_quotas(QUOTAS, actor="admin")
    held = svc.submit({"gpus": 2, "kernel_id": "k-a"}, user=a, kind="lease")["id"]  # vision uses 2
    borrowed = svc.submit({"gpus": 2, "kernel_id": "k-c"}, user=c, kind="lease")["id"]  # nlp borrows 1
    wait_until(lambda: state_of(svc, held) == state_of(svc, borrowed) == "running", "both leases", tick=svc.tick)
    clock.advance(60)
    return BorrowingWorld(svc, clock, held, borrowed)
