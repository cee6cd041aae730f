"""New user 18, N11: read-only checks are answers, not refused requests.

The Scheduled-notebooks form previews a cron expression on every pause while a user types it
(``0``, ``0 0``, ``0 0 31 2``), and the Submit form's automatic fit check dry-runs every pause on
an incomplete time limit (``1d2`` …): each answer "this would be refused" was written to the audit
log as a ``refused`` request, so an admin's audit log listed values users only typed. Through the
real server (pytest-jupyter): the previews and dry runs answer as before (4xx with the sentence)
and write no ``refused`` row; the same input sent to create a definition or submit a job is still
refused and audited; a dry run charging another team (who may do what), one probing a parent
job and one setting a variable the GPU fence owns stay on the record.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.admission.gate import READ_ONLY_CHECKS
from jupyter_sched.extension.audit_names import request_name

from .conftest import BOSS_TOKEN, server_config, wait_for

JOB = {"gpus": 1, "command": ["python", "-c", "pass"]}


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": "ml", "judy": "cv"},
                         quotas=[{"team": "ml", "guaranteed": 2, "borrowing_limit": 0},
                                 {"team": "cv", "guaranteed": 2, "borrowing_limit": 0}])


async def _refusals(sched_app: Any, api: Any) -> list[tuple[str, str | None, int]]:
    await asyncio.gather(*list(sched_app._audits))  # the web layer's records are written just after the answer
    _, rows = await api("GET", "audit", params={"action": "refused", "user": "ivan", "limit": "200"}, token=BOSS_TOKEN)
    return sorted((r["details"]["request"], r["details"]["field"], r["details"]["status"]) for r in rows)


async def test_newuser18_n11_previews_and_dry_runs_are_answered_without_a_refused_row(sched_app: Any,
                                                                                       api: Any) -> None:
    typed = ["0", "0 0", "0 0 3", "0 0 31 2"]  # what the form's live preview sends while typing 0 0 31 2 *
    for schedule in typed:
        status, body = await api("POST", "definitions/preview", {"schedule": schedule, "timezone": "UTC"})
        assert status == 400 and "a cron expression has 5 fields" in body["error"]["message"], body
    status, body = await api("POST", "definitions/preview", {"schedule": "0 7 * * *", "timezone": "utc"})
    assert status == 400 and "did you mean 'UTC'" in body["error"]["message"], body
    for time_limit in ("abc", "1d2"):  # the Submit form's automatic fit check on an incomplete value
        status, body = await api("POST", "dryrun", {**JOB, "time_limit": time_limit})
        assert status == 400 and body["error"]["field"] == "time_limit", body
    status, body = await api("POST", "dryrun", {**JOB, "gpus": 3})  # "can never fit": the verdict asked for
    assert status == 422 and body["error"]["field"] == "gpus", body
    assert await _refusals(sched_app, api) == []

    # the same input where it would change something is refused and audited, as before
    status, body = await api("POST", "definitions", {"name": "r", "notebook": "r.ipynb", "schedule": "0 0",
                                                     "timezone": "UTC"})
    assert status == 400, body
    status, body = await api("POST", "jobs", {**JOB, "time_limit": "abc"})
    assert status == 400 and body["error"]["field"] == "time_limit", body
    status, body = await api("POST", "jobs", {**JOB, "gpus": 3})
    assert status == 422, body
    # who may do what, and a probe of another user's job, stay on the record in a dry run too
    status, body = await api("POST", "dryrun", {**JOB, "team": "cv"})
    assert status == 403, body
    status, body = await api("POST", "dryrun", {"kind": "lease", "gpus": 1, "parent_job_id": "j-someone-elses"})
    assert status == 400 and body["error"]["field"] == "parent_job_id", body
    status, body = await api("POST", "dryrun", {**JOB, "env": {"CUDA_VISIBLE_DEVICES": "0,1"}})  # red team 15, R1
    assert status == 400 and body["error"]["field"] == "env.CUDA_VISIBLE_DEVICES", body

    want = sorted([("create definition", "schedule", 400), ("submit job", "time_limit", 400),
                   ("submit job", "gpus", 422), ("dry run", "team", 403), ("dry run", "parent_job_id", 400),
                   ("dry run", "env.CUDA_VISIBLE_DEVICES", 400)])

    async def recorded() -> list[tuple[str, str | None, int]] | None:
        seen = await _refusals(sched_app, api)
        return seen if len(seen) >= len(want) else None

    assert await wait_for(recorded, timeout_s=20) == want


def test_newuser18_n11_the_read_only_checks_are_the_routes_the_web_layer_names() -> None:
    assert {request_name("POST", "dryrun"), request_name("POST", "definitions/preview")} == READ_ONLY_CHECKS
