"""hubadmin26 B15: one never-closed usage row of a job that is not running (or not in the jobs table)
no longer bills its owner to now nor takes the later runs on its GPU off the users who ran them.

Reports, ``GET me``'s sums and fair share leave such a "runaway" row out with one warning naming
it; ``jupyter-sched doctor`` lists it first with the one ``UPDATE`` that closes it (at its job's end,
its start when unknown) and blames it, not the closed rows, for overlaps (it printed 227 DELETEs of
real history). Real SQLite store; the runaway rows are written as a crash or a restore leaves them.
"""

from __future__ import annotations

import io
import logging
import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest

from jupyter_sched.accounting.store_report import usage_report_for
from jupyter_sched.cli import doctor
from jupyter_sched.cli.main import main as cli_main
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.usage_ledger import UsageLedger
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.store import JobRecord, Store, sqlite_url
from tests.runtime.builders import T0, make_job

H = timedelta(hours=1)
NOW = T0 + 30 * H


def run_doctor(url: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["doctor", "--db", url], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def sick_store(path: Path) -> Store:
    """rl's cy: an open row on GPU-b3 since T0 of job j-open, which the jobs table does not have;
    eve's e-done succeeded at T0+2 h but its row stayed open (GPU-b2). Real runs since, closed:
    amy T0+1..3 h and bob T0+4..6 h on GPU-b3, eve's e-late T0+8..9 h on GPU-b2. amy's a-run runs
    now on GPU-b1 (open, sound)."""
    store = Store(sqlite_url(path))
    with store.transaction(now=T0) as tx:
        done = replace(make_job("e-done", user="eve", team="nlp", state=JobState.SUCCEEDED,
                                allocation=Allocation(node="n", gpu_uuids=("GPU-b2",))),
                       started_at=T0, finished_at=T0 + 2 * H, attempts=1)
        running = replace(make_job("a-run", user="amy", team="vision", state=JobState.RUNNING,
                                   allocation=Allocation(node="n", gpu_uuids=("GPU-b1",)),
                                   submitted_at=T0 + 20 * H), started_at=T0 + 20 * H, attempts=1)
        tx.insert_job(JobRecord(job=done))
        tx.insert_job(JobRecord(job=running))
        for job, user, team, gpu, start, end in (("j-open", "cy", "rl", "GPU-b3", 0, None),
                                                 ("e-done", "eve", "nlp", "GPU-b2", 0, None),
                                                 ("q-1", "amy", "vision", "GPU-b3", 1, 3),
                                                 ("q-2", "bob", "nlp", "GPU-b3", 4, 6),
                                                 ("e-late", "eve", "nlp", "GPU-b2", 8, 9),
                                                 ("a-run", "amy", "vision", "GPU-b1", 20, None)):
            tx.open_usage(job_id=job, attempt=1, user=user, team=team, kind="batch", gpus=[(gpu, "A100", 1.0)],
                          started_at=T0 + start * H)
            if end is not None:
                tx.close_usage(job, T0 + end * H)
    return store


def test_hubadmin26_b15_reports_leave_a_runaway_row_out_with_one_warning_and_bill_the_real_runs(tmp_path: Path) -> None:
    store = sick_store(tmp_path / "s.sqlite")
    service = SimpleNamespace(store=store, clock=ManualClock(NOW))
    rows = {r["user"]: r for r in usage_report_for(service, user=None, by=("user",), since=T0, until=NOW)}
    assert rows["amy"]["allocated_gpu_hours"] == 2.0 + 10.0  # q-1 whole, not "counted once, for job j-open"
    assert rows["bob"]["allocated_gpu_hours"] == 2.0
    assert rows["eve"]["allocated_gpu_hours"] == 1.0  # e-late; e-done's open row is not billed to now
    assert rows["cy"]["allocated_gpu_hours"] == 0.0  # was 30 h (T0 to now)
    for user in ("amy", "bob"):
        assert "warnings" not in rows[user], rows[user]
    (said,) = rows["cy"]["warnings"]
    assert said.startswith("usage row 1 of job j-open (attempt 1, cy) on GPU GPU-b3 is open since "
                           "2026-11-29T12:00:00Z but its job is not in the jobs table: left out"), said
    (said,) = rows["eve"]["warnings"]
    assert "of job e-done (attempt 1, eve) on GPU GPU-b2" in said and "its job is succeeded since" in said

    # GET me's and the budget warnings' sums (SQL): the runaway rows count nothing, a running job's row does
    assert store.gpu_seconds(since=T0, until=NOW, user="cy") == 0.0
    assert store.gpu_seconds(since=T0, until=NOW, user="eve") == pytest.approx(3600.0)
    assert store.gpu_seconds(since=T0, until=NOW, user="amy") == pytest.approx(12 * 3600.0)
    store.close()


def test_hubadmin26_b15_fair_share_leaves_a_runaway_row_out_and_says_so_once(tmp_path: Path,
                                                                               caplog: pytest.LogCaptureFixture) -> None:
    store = sick_store(tmp_path / "s.sqlite")
    ledger = UsageLedger(store, half_life_s=7 * 86400.0)
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.engine.usage_ledger"):
        decayed, _ = ledger.read(NOW, ())
        ledger.read(NOW + H, ())
    assert "cy" not in decayed  # was ~30 h of decayed GPU-seconds
    assert decayed["bob"] > 0 and decayed["amy"] > decayed["bob"]
    warned = [r.getMessage() for r in caplog.records if "left out" in r.getMessage()]
    assert len(warned) == 2 and any("job j-open" in w for w in warned) and any("job e-done" in w for w in warned)
    store.close()


def test_hubadmin26_b15_doctor_names_the_runaway_row_first_with_the_update_that_closes_it(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    sick_store(path).close()
    code, said = run_doctor(sqlite_url(path))
    assert code == doctor.EXIT_FOUND, said
    assert "DELETE" not in said and "overlap another" not in said, said  # the real runs are not blamed
    assert said.index("2 open usage row(s) whose job is not running (or unknown)") < said.index("quarantined"), said
    repairs = [line.split("repair: ", 1)[1] for line in said.splitlines() if line.strip().startswith("repair: ")]
    assert repairs == [
        "UPDATE usage SET ended_at = '2026-11-29T12:00:00.000000Z' WHERE id = 1 AND job_id = 'j-open' "
        "AND ended_at IS NULL;",
        "UPDATE usage SET ended_at = '2026-11-29T14:00:00.000000Z' WHERE id = 2 AND job_id = 'e-done' "
        "AND ended_at IS NULL;"], said
    assert "job j-open (attempt 1, cy) on GPU GPU-b3 open since 2026-11-29T12:00:00Z; its job is not in the jobs " \
           "table" in said
    with sqlite3.connect(path) as db:  # the admin runs them
        for statement in repairs:
            db.execute(statement)
    code, said = run_doctor(sqlite_url(path))
    assert code == doctor.EXIT_OK and "open usage row" not in said and "no usage rows overlap on a GPU" in said, said
    store = Store(sqlite_url(path))
    service = SimpleNamespace(store=store, clock=ManualClock(NOW))
    rows = {r["user"]: r for r in usage_report_for(service, user=None, by=("user",), since=T0, until=NOW)}
    assert rows["eve"]["allocated_gpu_hours"] == 2.0 + 1.0 and "warnings" not in rows["eve"]  # e-done to its end
    store.close()
