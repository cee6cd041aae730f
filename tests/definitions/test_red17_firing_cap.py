"""Red team 17, R4: the definition firing cap (red team 15, R2) turned a job flood into a row
flood — every skipped firing wrote a rejected job, a run and an audit row (100 a minute from one
user with nobody logged in). A skipped firing writes no job and no run; one audit record per
definition per hour says how many were skipped since when. Real services on a real store (SQLite
and PostgreSQL, as the module's fixtures give), a manual clock.
"""

from __future__ import annotations

from pathlib import Path

from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.store.definitions import list_runs

EVERY_MINUTE = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 0,
                "overlap": "allow"}  # every firing a run: no engine cycle starts them here (the default skips behind a waiting run: newuser34 n1)


def test_red17_r4_skipped_firings_write_no_rows_but_one_record_per_definition_per_hour(
        db_url: str, tmp_path: Path) -> None:
    """Failed before the fix: 2 definitions x 90 minutes over a cap of 2 wrote ~176 rejected jobs
    and as many run and audit rows."""
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs", max_firings_per_user_hour=2)
    ids = [server.create({**EVERY_MINUTE, "name": f"d{n}"}, user="mallory")["id"] for n in range(2)]
    reports = []
    for _ in range(90):  # 10:01 ... 11:30: 180 firings; 2 an hour may run (10:01 and 11:01)
        clock.advance(60)
        reports.append(server.fire_due())
    jobs = server.store.count_jobs(user="mallory")
    with server.store.transaction(write=False) as tx:
        runs = list_runs(tx, ids, limit=1000)
    assert len(runs) == jobs == 4, (len(runs), jobs)  # only the firings that ran have runs (jobs)
    skipped = sum(report.skipped for report in reports)
    assert skipped == 176
    audited = server.store.list_events(action="definition_skipped", limit=1000)
    # per definition: its first skip, and one record an hour later counting the skips in between
    assert len(audited) <= 2 * len(ids), [e.message for e in audited]
    assert sum(e.details["skipped"] for e in audited) >= skipped - 2 * 60
    summary = max(audited, key=lambda e: e.details["skipped"])
    assert summary.details["skipped"] > 50 and "firings skipped since 10:" in summary.message, summary.message
    assert "c.SchedApp.definition_max_firings_per_user_hour = 2" in summary.message
    assert all(e.job_id is None for e in audited)


def test_red17_r4_a_restart_does_not_grant_another_hours_firings(db_url: str, tmp_path: Path) -> None:
    """The count was in memory: every restart of the service let 60 more firings run at once.
    Failed before the fix (the second server ran 2 more firings in the same hour)."""
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    first = Server(db_url, clock, tmp_path / "jobs", max_firings_per_user_hour=2)
    ids = [first.create({**EVERY_MINUTE, "name": f"d{n}"}, user="mallory")["id"] for n in range(2)]
    clock.advance(60)
    first.fire_due()  # 10:01: both fire, the hour's cap is reached
    restarted = Server(db_url, clock, tmp_path / "jobs", max_firings_per_user_hour=2)
    for _ in range(3):
        clock.advance(60)
        restarted.fire_due()
    with restarted.store.transaction(write=False) as tx:
        runs = list_runs(tx, ids, limit=1000)
    assert len(runs) == 2, [(r.definition_id, r.scheduled_for) for r in runs]
