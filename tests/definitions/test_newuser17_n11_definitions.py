"""New user 17, N11, for definitions: ``max_pending_jobs_per_user`` bounds the runs of one user's
definitions too. A scheduled firing of an owner at the cap becomes a rejected run saying so (its
number an hour is bounded by ``definition_max_firings_per_user_hour``; it is never retried at
every tick), and "run now" — a request — is refused with 429 like ``POST jobs``, and counts
against ``max_submits_per_user_minute``. Real services on a real store, a manual clock.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import BusyError
from jupyter_sched.model import JobState

EVERY_MINUTE = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 1,
                "overlap": "allow"}  # every firing a run: no engine cycle starts them here (the default skips behind a waiting run: newuser34 n1)


def _server(db_url: str, tmp_path: Path, **policy: int) -> tuple[Server, ManualClock]:
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    admission = server.services.admission
    admission.policy = replace(admission.policy, **policy)
    (tmp_path / "report.ipynb").write_text("{}")
    return server, clock


def test_newuser17_n11_a_firing_at_the_owners_pending_cap_is_a_rejected_run_saying_why(
        db_url: str, tmp_path: Path) -> None:
    """Failed before the fix: every firing added a pending job, whatever the owner had pending."""
    server, clock = _server(db_url, tmp_path, max_pending_per_user=2)
    server.create({**EVERY_MINUTE, "name": "d"}, user="mallory")
    for _ in range(4):  # 10:01 .. 10:04; the engine is not running, so every run stays pending
        clock.advance(60)
        server.fire_due()
    jobs = server.store.list_jobs(user="mallory", limit=100)
    states = sorted(r.job.state.value for r in jobs)
    assert states == ["pending", "pending", "rejected", "rejected"], states
    rejected = [r.job for r in jobs if r.job.state is JobState.REJECTED]
    assert all(j.message == "could not submit this run: mallory has 2 pending jobs; at most 2 per user "
               "(c.SchedApp.max_pending_jobs_per_user) — wait for some to start or cancel them"
               for j in rejected), [j.message for j in rejected]
    refused = server.store.list_events(action="refused", limit=100)
    assert [e.details["field"] for e in refused] == ["max_pending_jobs_per_user"] * 2, refused
    assert server.create({**EVERY_MINUTE, "name": "d2"}, user="mallory")["id"], "saving one is no submit"


def test_newuser17_n11_run_now_is_refused_at_the_pending_cap_and_over_the_submit_rate(
        db_url: str, tmp_path: Path) -> None:
    server, clock = _server(db_url, tmp_path, max_pending_per_user=2)
    d = server.create({**EVERY_MINUTE, "schedule": None, "name": "manual"}, user="mallory")
    for _ in range(2):
        server.run_now(d["id"], {}, user="mallory")
        clock.advance(1)  # one manual run per definition and instant
    with pytest.raises(BusyError) as refused:
        server.run_now(d["id"], {}, user="mallory")
    assert refused.value.field == "max_pending_jobs_per_user" and refused.value.details["pending"] == 2
    assert server.store.count_jobs(user="mallory") == 2, "a refused run now writes no job"

    # a second server: buckets of its own; saving the definition takes one of the 3 (red team 20, R4)
    rated, clock = _server(db_url, tmp_path, submits_per_minute=3)
    manual = rated.create({**EVERY_MINUTE, "schedule": None, "name": "manual2"}, user="nina")
    for _ in range(2):
        rated.run_now(manual["id"], {}, user="nina")
        clock.advance(1)
    with pytest.raises(BusyError) as fast:
        rated.run_now(manual["id"], {}, user="nina")
    assert fast.value.field == "max_submits_per_user_minute" and fast.value.details["retry_after_s"] >= 1
