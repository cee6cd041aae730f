"""New user 24, N1: a submit decided on the live ledger must not withdraw an admission already committed.

Two jobs submitted in the same second: the first (ml, low, 3 GPUs: it borrows one of cv's) is
admitted at once on the live ledger (:mod:`jupyter_sched.engine.incremental`) and bound; the
second (cv, 2 GPUs, within cv's guarantee) visited on that ledger found the first "fresh" there
and withdrew it — but the store had it admitted, so the guard refused the second's admission
(``admit_refused``) while the visit's audit (``admit_withdrawn`` of the first, ``admit`` of the
second) was written anyway; the full cycle then reclaimed the first and admitted the second again
(two ``admit`` rows, a withdrawal that never happened). Only a plain admission is applied from
the live ledger; anything else — a withdrawal, a preemption — is the full cycle's, and an
admission the store refuses leaves no ``admit`` row.

Real SQLite store, real core, simulated GPUs; leases (bound at once, no processes).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, check_integrity
from tests.leftovers import end_jobs
from tests.runtime.builders import T0

NEVER = [sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"]
QUOTAS = {"quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 2},
                     {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}]}


def _service(url: str, tmp_path: Path) -> SchedulerService:
    clock = ManualClock(T0)
    svc = SchedulerService(store=Store(url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=60.0,
                           user_teams={"root": ("ml", "cv")})
    svc.set_quotas(QUOTAS, actor="admin")
    return svc


def test_newuser24_n1_a_submit_on_the_live_ledger_never_withdraws_an_admission_already_made(
        sqlite_db: str, tmp_path: Path) -> None:
    svc = _service(sqlite_db, tmp_path)
    try:
        low = svc.submit({"gpus": 3, "command": NEVER, "priority": "low", "team": "ml", "time_limit_s": 600},
                         user="root")
        report = svc.tick()
        assert report.decided and report.admitted == [low["id"]]  # a full cycle admitted it; its ledger stays live
        cv = svc.submit({"gpus": 2, "command": NEVER, "team": "cv", "time_limit_s": 240}, user="root")
        svc.tick()  # the submit is visited on the live ledger: it would withdraw low there → a full cycle
        deadline = time.monotonic() + 60  # the reclaimed job's process must exit first: real time, under load
        while svc.get_job(cv["id"], user="root")["state"] != "running" and time.monotonic() < deadline:
            svc.kick()
            svc.tick()
            time.sleep(0.05)
        rows = svc.audit(limit=50)
        actions = [(e["action"], e["job_id"]) for e in reversed(rows) if e["job_id"] in (low["id"], cv["id"])]
        # low was admitted and started: the full cycle reclaims it (its first run is unprotected), a real stop;
        # nothing says it was withdrawn, and cv's admission is written once, when it was made
        assert actions == [("submit", low["id"]), ("admit", low["id"]), ("submit", cv["id"]),
                           ("reclaim", low["id"]), ("requeued", low["id"]), ("admit", cv["id"])], actions
        assert svc.get_job(cv["id"], user="root")["state"] == "running"
        assert svc.get_job(low["id"], user="root")["state"] == "pending"
        assert check_integrity(svc.store).ok
    finally:
        assert end_jobs(svc.engine.executor) == []


def test_newuser24_n1_an_admission_the_store_refuses_leaves_no_admit_row(sqlite_db: str, tmp_path: Path) -> None:
    """The whole kind: whatever decided it, an admission the over-allocation guard refuses (or a row
    changed since) is audited as ``admit_refused`` only — the core's ``admit`` record of it is not written."""
    svc = _service(sqlite_db, tmp_path)
    try:
        low = svc.submit({"gpus": 3, "command": NEVER, "priority": "low", "team": "ml", "time_limit_s": 600},
                         user="root")
        svc.tick()
        live = svc.engine.incremental.live
        assert live is not None
        cv = svc.submit({"gpus": 2, "command": NEVER, "team": "cv", "time_limit_s": 240}, user="root")
        record = svc.engine.writer.get(cv["id"])
        assert record is not None
        stale = live.decide(record.job, svc.clock.now())  # admits cv on GPUs low holds in the store
        assert stale is not None and [a.job_id for a in stale.admits] == [cv["id"]]
        admitted, _ = svc.engine.applier.apply(stale, live.snapshot, {cv["id"]: record}, incremental=True)
        assert admitted == []
        cv_rows = [e["action"] for e in svc.audit(limit=50) if e["job_id"] == cv["id"]]
        assert "admit" not in cv_rows and "admit_refused" in cv_rows, cv_rows
        assert svc.get_job(low["id"], user="root")["state"] == "running"
    finally:
        assert end_jobs(svc.engine.executor) == []
