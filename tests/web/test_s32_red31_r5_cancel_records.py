"""red31 R5 through the real server: its owner's cancel (``DELETE jobs/{id}``) of a job that took GPUs back by
reclaim, in its first minute, writes the audit record ``reclaim_dropped`` admins read (``GET audit``); the same
cancel of a job that reclaimed nothing writes none. The engine's ``reclaim`` record for the job is written
through the store's own audit API (a reclaim needs its victims past the 5-minute minimum runtime, which a test
does not wait for); the cool-down it then starts is the core's (tests/core/test_s32_red31_r5_reclaim_cooldown.py).
pytest-jupyter server, SQLite, simulated GPUs, the local executor."""

from __future__ import annotations

from typing import Any

from .conftest import BOSS_TOKEN, running_job


async def test_red31_r5_an_owners_early_cancel_of_a_reclaiming_job_is_audited_for_admins(
        sched_app: Any, api: Any) -> None:
    taker = await running_job(api, name="taker")
    plain = await running_job(api, name="plain")
    bulk = await running_job(api, name="bulk")  # cancelled with POST jobs/cancel: the same record
    store = sched_app.services.store
    for job_id in (taker, bulk):
        store.add_event(actor="scheduler", action="reclaim", job_id="j-victim", user="judy",
                        message="preempted to return borrowed quota to default",
                        details={"for_job": job_id, "kind": "reclaim"})
    for job_id in (taker, plain):
        status, _ = await api("DELETE", f"jobs/{job_id}")
        assert status == 200
    status, answer = await api("POST", "jobs/cancel", {"ids": [bulk]})
    assert status == 200, answer
    status, audit = await api("GET", "audit", params={"action": "reclaim_dropped"}, token=BOSS_TOKEN)
    assert status == 200, audit
    dropped = [r for r in audit if r["action"] == "reclaim_dropped"]
    assert sorted((r["job_id"], r["user"]) for r in dropped) == sorted([(taker, "ivan"), (bulk, "ivan")]), audit
    assert "from judy's job j-victim, whose work restarts" in dropped[0]["message"], dropped[0]["message"]
    assert "c.SchedApp.reclaim_cooldown_s" in dropped[0]["message"]
