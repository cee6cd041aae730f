"""Quarantine, never halt: a bad row never stops scheduling or a report (issue 17; cases 009 and 011).

Robustness halves of the handed cases (validating samples on the way in is issue 18's:
``tests/hardware``): here the bad values are already in the store, written by hand with SQL as a
truncated write, an old version or a disk fault would leave them. Real SQLite store, real core,
real engine; the report is what ``GET usage/report`` serves (``usage_report_for``) and the
doctor is the real ``jupyter-sched doctor`` entry point on the same database file.
"""

from __future__ import annotations

import io
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from jupyter_sched.accounting.store_report import usage_report_for
from jupyter_sched.cli import doctor
from jupyter_sched.cli.main import main as cli_main
from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, schema, sqlite_url
from tests.runtime.builders import T0

M = timedelta(minutes=1)


def make_service(url: str, tmp_path: Path, clock: ManualClock) -> SchedulerService:
    return SchedulerService(store=Store(url, now=clock.now), inventory=SimulatedInventory(2, node="n1"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0)


def lease(svc: SchedulerService, user: str) -> dict[str, Any]:
    job = svc.submit({"gpus": 1, "kernel_id": f"k-{user}"}, user=user, kind="lease")
    svc.tick()
    return job


def run_doctor(url: str, *args: str) -> tuple[int, str]:
    """``jupyter-sched doctor --db URL ARGS`` through the CLI's own entry point."""
    out, err = io.StringIO(), io.StringIO()
    code = cli_main(["doctor", "--db", url, *args], out=out, err=err)
    return code, out.getvalue() + err.getvalue()


def test_case_011_truncated_usage_row_never_stops_scheduling_or_reports(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock)
    ana, bob = lease(svc, "ana"), lease(svc, "bob")
    clock.advance(90 * 60)
    for job in (ana, bob):
        svc.cancel(job["id"], user=job["user"])
    svc.tick()
    with svc.store.transaction() as tx:  # row 104 of case 011: the record is cut off
        tx.conn.execute(sa.update(schema.usage).where(schema.usage.c.job_id == bob["id"])
                        .values(started_at="2026-11-29T1"))
    # scheduling goes on: the next lease is admitted and bound although fair share reads usage rows
    carl = svc.submit({"gpus": 1, "kernel_id": "k-carl"}, user="carl", kind="lease")
    report = svc.tick()
    assert report.leader and report.admitted == [carl["id"]]
    assert svc.get_job(carl["id"], user="carl")["state"] == "running"
    # the report answers; bob does not disappear: his row says what was skipped (case 011)
    rows = {r["user"]: r for r in usage_report_for(svc, user=None, by=("user",))}
    assert rows["ana"]["allocated_gpu_hours"] == 1.5 and "warnings" not in rows["ana"]
    assert rows["bob"]["allocated_gpu_hours"] == 0.0 and rows["bob"]["jobs"] == 0
    (warning,) = rows["bob"]["warnings"]
    assert f"job {bob['id']} attempt 1 GPU" in warning and "'2026-11-29T1' is unreadable" in warning
    assert "jupyter-sched doctor" in warning
    # GET me sums in the database (Store.gpu_seconds): it answers too, and skips what the rows skip
    assert svc.me("ana")["gpu_hours_7d"] == 1.5 and svc.me("bob")["gpu_hours_7d"] == 0.0
    # the doctor names the row, and a repair brings the GPU-hours back without a warning
    code, text = run_doctor(sqlite_db, "--json")
    (entry,) = json.loads(text)["quarantined"]
    assert code == doctor.EXIT_FOUND and entry["table"] == "usage" and entry["attributes"]["user"] == "bob"
    code, text = run_doctor(sqlite_db, "repair", str(entry["id"]), f"started_at={T0.strftime('%Y-%m-%dT%H:%M:%S.%fZ')}")
    assert code == doctor.EXIT_OK, text
    rows = {r["user"]: r for r in usage_report_for(svc, user=None, by=("user",))}
    assert rows["bob"]["allocated_gpu_hours"] == 1.5 and "warnings" not in rows["bob"]
    assert run_doctor(sqlite_db)[0] == doctor.EXIT_OK
    assert next(e["action"] for e in svc.audit(limit=5)) == "quarantine_repaired"


def test_case_009_bad_sample_never_stops_reports(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock)
    ana = lease(svc, "ana")
    gpu = svc.get_job(ana["id"], user="ana")["allocation"]["gpu_uuids"][0]
    clock.advance(10 * 60)
    svc.cancel(ana["id"], user="ana")
    svc.tick()
    svc.store.add_rollups([{"gpu_uuid": gpu, "minute": (T0 + m * M).isoformat(), "samples": 60,
                            "utilization_avg": 50.0, "utilization_max": 50.0} for m in range(10)], node="n1")
    with svc.store.transaction() as tx:  # GPU 4 of case 009: a reading of 101 % got into the history
        tx.conn.execute(sa.update(schema.gpu_rollups).where(schema.gpu_rollups.c.minute.like("%T12:03:%"))
                        .values(utilization_avg=101.0, utilization_max=101.0))
    (row,) = usage_report_for(svc, user="ana", by=("user",))
    assert row["allocated_gpu_seconds"] == 600.0  # answered, not 503 accounting_inconsistent
    assert row["utilized_gpu_seconds"] == 270.0 and row["telemetry_coverage"] == 0.9  # the minute is unknown
    (warning,) = row["warnings"]
    assert f"GPU {gpu}" in warning and "utilization_avg 101.0 % is outside 0..100" in warning
    # scheduling is untouched by it
    assert svc.tick().leader
    code, text = run_doctor(sqlite_db)
    assert code == doctor.EXIT_FOUND and "utilization_avg 101.0 %" in text, text
    entry_id = text.split("[", 1)[1].split("]", 1)[0]
    assert run_doctor(sqlite_db, "remove", entry_id)[0] == doctor.EXIT_USAGE  # asks for --yes first
    code, text = run_doctor(sqlite_db, "remove", entry_id, "--yes")
    assert code == doctor.EXIT_OK, text
    (row,) = usage_report_for(svc, user="ana", by=("user",))
    assert "warnings" not in row and row["telemetry_coverage"] == 0.9


def test_a_job_row_that_does_not_decode_is_skipped_by_listings_and_named_on_read(sqlite_db: str,
                                                                               tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock)
    good = svc.submit({"gpus": 1, "kernel_id": "k-1"}, user="ana", kind="lease")
    bad = svc.submit({"gpus": 1, "kernel_id": "k-2"}, user="ana", kind="lease")
    with svc.store.transaction() as tx:
        tx.conn.execute(sa.update(schema.jobs).where(schema.jobs.c.id == bad["id"]).values(spec='{"name": '))
    report = svc.tick()
    assert report.leader and report.admitted == [good["id"]]  # the cycle ran over the readable jobs
    assert [j["id"] for j in svc.list_jobs(user=None)] == [good["id"]]
    (entry,) = svc.store.quarantined(table="jobs")
    assert entry.key == bad["id"] and "does not decode (JSONDecodeError" in entry.error


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_sums_in_the_database_skip_the_rows_the_readers_quarantine(dialect: str, request: pytest.FixtureRequest,
                                                                   tmp_path: Path) -> None:
    """A truncated timestamp is never cast by PostgreSQL (the sum would fail for everyone) and a
    share outside (0, 1] never counts: ``gpu_seconds`` equals the sum over ``usage_rows``."""
    url = sqlite_url(tmp_path / "s.sqlite") if dialect == "sqlite" else request.getfixturevalue("pg_url")
    store = Store(url)
    try:
        with store.transaction(now=T0) as tx:
            for job, share in (("good", 1.0), ("cut", 1.0), ("ends-early", 0.5), ("wide", 1.0)):
                tx.open_usage(job_id=job, attempt=0, user="ana", team="ml", kind="training",
                              gpus=[(f"GPU-{job}", "A100", share)], started_at=T0)
                tx.close_usage(job, T0 + timedelta(hours=1))
            u = schema.usage
            tx.conn.execute(sa.update(u).where(u.c.job_id == "cut").values(started_at="2026-11-29T1"))
            tx.conn.execute(sa.update(u).where(u.c.job_id == "ends-early").values(ended_at="2026-11-29T00:00:00.000000Z"))
            tx.conn.execute(sa.update(u).where(u.c.job_id == "wide").values(share=2.0))
        assert [iv.job_id for iv in store.usage_rows()] == ["good"]
        assert store.gpu_seconds(since=T0 - timedelta(days=2), until=T0 + timedelta(days=1), user="ana") == 3600.0
    finally:
        store.close()


def test_s36_left_doctor_json_is_the_whole_report_the_text_form_shows(sqlite_db: str, tmp_path: Path) -> None:
    """Session 36 left ``doctor --json`` printing the quarantine list only: isolation, command lines, overlapping
    usage, the config — what the text form says — were not in it. Now one report (cli/doctor_report.py's shape,
    docs/admin.md): each check with its name, status, message and what to do; the text form is rendered from the
    same checks and unchanged."""
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock)
    bob = lease(svc, "bob")
    clock.advance(30 * 60)
    svc.cancel(bob["id"], user="bob")
    svc.tick()
    with svc.store.transaction() as tx:
        tx.conn.execute(sa.update(schema.usage).where(schema.usage.c.job_id == bob["id"]).values(started_at="2026-1"))
    text_code, text = run_doctor(sqlite_db)
    code, answer = run_doctor(sqlite_db, "--json")
    report = json.loads(answer)
    assert set(report) == {"store", "source", "versions", "status", "exit", "checks", "quarantined"}
    assert code == text_code == report["exit"] == doctor.EXIT_FOUND and report["status"] == "fail"
    assert report["store"] in text and report["versions"] in text
    names = [c["name"] for c in report["checks"]]
    assert names[:3] == ["runaway_usage", "quarantine", "usage_overlaps"], names
    assert {"isolation", "command_lines"} <= set(names), names
    for check in report["checks"]:
        assert set(check) == {"name", "status", "message", "fix", "details"} and check["status"] in ("ok", "warn", "fail")
        assert check["status"] == "ok" or check["fix"], check  # every finding says what to do
        if check["name"] != "runaway_usage" or check["status"] != "ok":  # said in the text form too, in its order
            assert check["message"] in text, (check, text)
    at = [text.index(c["message"]) for c in report["checks"] if c["name"] != "runaway_usage"]
    assert at == sorted(at), report["checks"]
    quarantine = report["checks"][1]
    assert quarantine["status"] == "fail" and "doctor repair ID COLUMN=VALUE" in quarantine["fix"]
    (row,) = quarantine["details"]
    (entry,) = report["quarantined"]
    assert row.startswith(f"[{entry['id']}] usage row") and "'2026-1'" in row and entry["attributes"]["user"] == "bob"
    assert doctor.main(["--db", sqlite_db, "remove", str(entry["id"]), "--yes"], out=io.StringIO()) == doctor.EXIT_OK
    code, answer = run_doctor(sqlite_db, "--json")
    report = json.loads(answer)
    assert code == report["exit"] == doctor.EXIT_OK and report["status"] in ("ok", "warn") and not report["quarantined"]
    assert next(c for c in report["checks"] if c["name"] == "quarantine")["status"] == "ok"
