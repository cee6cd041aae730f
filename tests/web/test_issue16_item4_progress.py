"""Issue 16 item 4: ``POST jobs/{id}/progress`` — a running job reports its progress; ``GET jobs/{id}`` shows it.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan owns the jobs; eve is another
user; boss an admin), real job processes (``sleep``) on simulated GPUs, the SQLite store on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.backfill.progress import ProgressFit
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.progress import read_progress, record_progress

from .conftest import BOSS_TOKEN, EVE_TOKEN, SLEEP_JOB, running_job, wait_for


@pytest.mark.parametrize("body, field", [
    ({"done": -1, "total": 10}, "done"),
    ({"done": 11, "total": 10}, "done"),
    ({"done": 1, "total": 0}, "total"),
    ({"done": "5", "total": 10}, "done"),
    ({"done": True, "total": 10}, "done"),
    ({"total": 10}, "done"),
    ({"done": 1}, "total"),
    ({"done": 1, "total": 10, "steps": 3}, "steps"),
    ({"done": 1, "total": 1e300}, "total"),
], ids=["negative done", "done above total", "total zero", "done as text", "done as a boolean", "no done",
        "no total", "unknown field", "total past its bound"])
async def test_issue16_item4_a_bad_progress_body_is_a_400_naming_the_field(sched_app: Any, api: Any,
                                                                          body: dict[str, Any], field: str) -> None:
    job_id = await running_job(api)
    status, error = await api("POST", f"jobs/{job_id}/progress", body)
    assert status == 400 and error["error"]["field"] == field, error
    assert error["error"]["hint"], error
    status, error = await api("POST", f"jobs/{job_id}/progress", raw=b'{"done": NaN, "total": 10}')
    assert status == 400 and error["error"]["field"] == "body" and "NaN" in error["error"]["message"], error


async def test_issue16_item4_a_report_is_stored_coalesced_within_its_interval_and_shown(sched_app: Any, api: Any) -> None:
    job_id = await running_job(api)
    status, answer = await api("POST", f"jobs/{job_id}/progress", {"done": 120, "total": 1000})
    assert status == 200 and answer["stored"] is True, answer
    assert answer["progress"]["fraction"] == pytest.approx(0.12) and answer["progress"]["reports"] == 1
    status, again = await api("POST", f"jobs/{job_id}/progress", {"done": 130, "total": 1000})
    assert status == 200 and again["stored"] is False and again["min_interval_s"] == 10.0, again
    assert again["progress"]["done"] == 120  # coalesced: the stored report stands
    status, job = await api("GET", f"jobs/{job_id}")
    assert status == 200 and job["progress"]["fraction"] == pytest.approx(0.12), job
    assert job["progress"]["at"] == answer["progress"]["at"] and job["progress"]["run_started_at"]


async def test_issue16_item4_only_the_owner_reports_and_refusals_are_audited(sched_app: Any, api: Any) -> None:
    job_id = await running_job(api)
    status, error = await api("POST", f"jobs/{job_id}/progress", {"done": 999, "total": 1000}, token=EVE_TOKEN)
    assert status == 403 and error["error"]["field"] == "job_id", error  # as the jobs API answers for others' jobs
    status, error = await api("POST", f"jobs/{job_id}/progress", {"done": 999, "total": 1000}, token=BOSS_TOKEN)
    assert status == 403 and "owner" in error["error"]["message"], error
    _, job = await api("GET", f"jobs/{job_id}")
    assert job.get("progress") is None  # neither report was stored
    _, audit = await api("GET", "audit", params={"action": "refused"}, token=BOSS_TOKEN)
    refused = {(r["user"], r.get("job_id"), r["details"].get("request")) for r in audit}
    assert {("eve", job_id, "report progress of job"), ("boss", job_id, "report progress of job")} <= refused


async def test_issue16_item4_a_queued_job_has_no_run_to_report_on(sched_app: Any, api: Any) -> None:
    await running_job(api, gpus=4)  # every GPU held
    status, queued = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4})
    assert status == 201, queued
    status, error = await api("POST", f"jobs/{queued['id']}/progress", {"done": 1, "total": 10})
    assert status == 409 and error["error"]["field"] == "job_id" and "not running" in error["error"]["message"], error
    status, error = await api("POST", "jobs/j-no-such/progress", {"done": 1, "total": 10})
    assert status == 404, error


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_issue16_item4_a_restart_keeps_the_stored_progress_and_a_new_run_starts_the_line_again(
        tmp_path: Path, database: str, request: pytest.FixtureRequest) -> None:
    from datetime import datetime, timedelta, timezone

    url = sqlite_url(tmp_path / "sched.sqlite") if database == "sqlite" else str(request.getfixturevalue("pg_url"))
    start = datetime(2026, 12, 4, 22, 0, tzinfo=timezone.utc)
    store = Store(url)
    for minutes, done in ((5, 10), (10, 20), (15, 30)):
        with store.transaction() as tx:
            record_progress(tx, "j-1", run_started_at=start, at=start + timedelta(minutes=minutes), done=done,
                            total=100, min_interval_s=10)
    store.close()
    again = Store(url)  # the server restarted
    with again.transaction(write=False) as tx:
        kept = read_progress(tx, ["j-1"])["j-1"]
    assert (kept.done, kept.total, kept.report.fraction, kept.report.ran_s) == (30, 100, 0.3, 900.0)
    assert kept.report.fit.n == 3 and kept.report.fit.total_s() == pytest.approx(3000.0)
    later = start + timedelta(hours=1)  # preempted and started again: the line starts afresh
    with again.transaction() as tx:
        stored, fresh = record_progress(tx, "j-1", run_started_at=later, at=later + timedelta(minutes=1), done=35,
                                        total=100, min_interval_s=10)
    assert fresh and stored.report.fit == ProgressFit().add(60.0, 0.35)
    again.close()


async def test_issue16_item4_the_eta_of_a_job_waiting_on_a_reporting_job_says_so(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's snapshot carries the stored report (engine/decide.py): the waiting job's ETA reads it.
    Two reports (a lone one made in a run's first seconds is not read, new user 21 N4), at a pace whose end
    is minutes ahead (a report of 50 % a second into the run ends it a second later: late at once)."""
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # two reports without the 10 s wait
    holder = await running_job(api, gpus=4)
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4})
    assert status == 201, waiting

    async def projected() -> bool:  # a cycle has run since the holder started: its pace below is minutes long
        _, job = await api("GET", f"jobs/{waiting['id']}")
        return bool(((job.get("reason") or {}).get("details") or {}).get("eta_code") == "Projected")

    await wait_for(projected)
    for done in (15, 25):
        status, answer = await api("POST", f"jobs/{holder}/progress", {"done": done, "total": 1000})
        assert status == 200 and answer["stored"], answer

    async def told() -> Any:
        _, job = await api("GET", f"jobs/{waiting['id']}")
        reason = job.get("reason") or {}
        return reason if (reason.get("details") or {}).get("eta_progress") else None

    reason = await wait_for(told)
    assert reason["details"]["eta_progress"] == {holder: 0.025}
    assert "from its progress (2 % done, reported " in reason["text"]["eta"], reason["text"]


async def test_issue16_item4_report_progress_from_inside_a_job_and_a_no_op_outside(
        sched_app: Any, api: Any, http_server: Any, http_server_port: Any, jp_base_url: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``jupyter_sched.report_progress`` reads JUPYTER_SCHED_JOB_ID and finds the server as the client
    does; calls sooner than the interval are not sent, the last step always is."""
    import asyncio

    import jupyter_sched
    from jupyter_sched.client import progress as client_progress

    from .conftest import IVAN_TOKEN

    monkeypatch.setattr(client_progress, "_state", {"client": None, "sent_at": None, "interval_s": 10.0,
                                                    "warned": set()})
    monkeypatch.delenv("JUPYTER_SCHED_JOB_ID", raising=False)
    with pytest.warns(RuntimeWarning, match="not inside a scheduled job"):
        assert jupyter_sched.report_progress(1, 10) is None
    job_id = await running_job(api)
    monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", job_id)
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    loop = asyncio.get_running_loop()
    first = await loop.run_in_executor(None, jupyter_sched.report_progress, 10, 100)
    assert first is not None and first["stored"] and first["progress"]["fraction"] == pytest.approx(0.1)
    assert await loop.run_in_executor(None, jupyter_sched.report_progress, 20, 100) is None  # within 10 s: not sent
    last = await loop.run_in_executor(None, jupyter_sched.report_progress, 100, 100)  # the last step is sent
    assert last is not None and last["job_id"] == job_id


async def test_issue16_item4_the_jobs_own_process_reports_with_its_owners_token(
        sched_app: Any, api: Any, http_server: Any, http_server_port: Any, jp_base_url: str) -> None:
    """A real job calls ``jupyter_sched.report_progress`` (JUPYTER_SCHED_JOB_ID is set by the executor; the
    server's URL and the owner's token are the job's own variables, which a job may set)."""
    import sys

    from .conftest import IVAN_TOKEN

    code = "import time, jupyter_sched; print(jupyter_sched.report_progress(3, 4), flush=True); time.sleep(300)"
    status, job = await api("POST", "jobs", {
        "gpus": 1, "time_limit": "10m", "command": [sys.executable, "-c", code],
        "env": {"JUPYTER_SCHED_URL": f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}",
                "JUPYTER_SCHED_TOKEN": IVAN_TOKEN}})
    assert status == 201, job

    async def reported() -> Any:
        _, seen = await api("GET", f"jobs/{job['id']}")
        return seen.get("progress")

    progress = await wait_for(reported)
    assert progress["fraction"] == pytest.approx(0.75) and progress["done"] == 3 and progress["total"] == 4
