"""New user 17, N11: nothing bounded one hub user's pending jobs or submit rate (300 pending in 27 s,
all 201). ``max_pending_jobs_per_user`` refuses a submit or a lease request at the cap with 429
naming the rule, the count and the fix (audited); ``max_submits_per_user_minute`` is a token bucket
answered 429 with ``Retry-After``. Through the real server (pytest-jupyter), SQLite, simulated GPUs;
the CLI's and the magics' renderers turn the real 429 body into one line with the hint.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config

from jupyter_sched.cli.main import error_line
from jupyter_sched.client._wire import error_from_response
from jupyter_sched.extension.app import SchedApp
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.magics.core import _one_line

from .conftest import API, BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, server_config, wait_for

HOLD = {"gpus": 4, "command": [sys.executable, "-c", "import time; time.sleep(60)"]}
"""All four simulated GPUs: the first runs, the rest pend."""


@pytest.fixture
def jp_server_config(tmp_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    return server_config(tmp_path, **getattr(request, "param", {}))


@pytest.mark.parametrize("jp_server_config", [{"max_pending_jobs_per_user": 2}], indirect=True)
async def test_newuser17_n11_a_user_at_the_pending_cap_is_told_rule_count_and_fix(
        sched_app: Any, api: Any, kernel: Any) -> None:
    """Failed before the fix: there was no such setting, and every submit was 201."""
    running = (await api("POST", "jobs", {**HOLD, "name": "runs"}))[1]["id"]

    async def started() -> bool:
        return (await api("GET", f"jobs/{running}"))[1]["state"] == "running"

    await wait_for(started, timeout_s=20)  # a running job is not pending: it does not count
    pending = [(await api("POST", "jobs", {**HOLD, "name": f"waits-{i}"}))[1]["id"] for i in range(2)]
    status, body = await api("POST", "jobs", {**HOLD, "name": "one-too-many"})
    assert status == 429, body
    error = body["error"]
    assert error["message"] == ("ivan has 2 pending jobs; at most 2 per user "
                                "(c.SchedApp.max_pending_jobs_per_user)"), error
    assert (error["code"], error["field"], error["hint"]) == (
        "busy", "max_pending_jobs_per_user", "wait for some to start or cancel them"), error
    assert error["details"] == {"pending": 2, "limit": 2, "setting": "c.SchedApp.max_pending_jobs_per_user"}
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()})
    assert status == 429 and lease["error"]["field"] == "max_pending_jobs_per_user", "a lease can pend: counted"
    status, judys = await api("POST", "jobs", HOLD, token=JUDY_TOKEN)
    assert status == 201, "another user's pending work is not counted against her"

    async def refused() -> list[Any]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        return [r for r in audit if r["details"]["field"] == "max_pending_jobs_per_user"]

    records = await wait_for(refused, timeout_s=10)
    assert sorted(r["details"]["request"] for r in records) == ["request lease", "submit job"], records
    assert all(r["details"]["status"] == 429 for r in records)

    # the CLI and the magics: one line, with the fix
    refusal = error_from_response(429, json.dumps(body))
    line = error_line("submit", refusal)
    assert line == ("jupyter-sched submit: ivan has 2 pending jobs; at most 2 per user "
                    "(c.SchedApp.max_pending_jobs_per_user) — wait for some to start or cancel them [busy]"), line
    magic = _one_line(refusal)
    assert "\n" not in magic and magic.endswith("Wait for some to start or cancel them."), magic

    status, cancelled = await api("DELETE", f"jobs/{pending[0]}")
    assert status == 200 and cancelled["state"] == "cancelled", cancelled
    status, job = await api("POST", "jobs", HOLD)
    assert status == 201, "a slot freed by cancelling is usable at once"
    for job_id in (running, pending[1], job["id"], judys["id"]):
        await api("DELETE", f"jobs/{job_id}", token=BOSS_TOKEN)


@pytest.mark.parametrize("jp_server_config", [{"max_submits_per_user_minute": 3}], indirect=True)
async def test_newuser17_n11_a_user_over_the_submit_rate_gets_429_with_retry_after(
        sched_app: Any, api: Any, jp_fetch: Any) -> None:
    """Failed before the fix: no rate; the fourth submit in a second was 201."""
    dry = {"gpus": 0, "command": [sys.executable, "-c", "pass"]}
    ids = [(await api("POST", "jobs", {**dry, "name": f"quick-{i}"}))[1]["id"] for i in range(3)]
    assert all(ids)
    response = await jp_fetch(*f"{API}/jobs".split("/"), method="POST", body=json.dumps(dry), raise_error=False,
                              headers={"Authorization": f"token {IVAN_TOKEN}"})
    assert response.code == 429, response.body
    error = json.loads(response.body)["error"]
    after = int(response.headers["Retry-After"])
    assert 1 <= after <= 20 and error["details"]["retry_after_s"] == after, (after, error)
    assert error["field"] == "max_submits_per_user_minute" and error["hint"] == f"retry in {after} s", error
    assert "faster than 3 a minute" in error["message"], error
    status, judys = await api("POST", "jobs", dry, token=JUDY_TOKEN)
    assert status == 201, ("judy's bucket is her own", judys)

    async def refused() -> list[Any]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        return [r for r in audit if r["details"]["field"] == "max_submits_per_user_minute"]

    (record,) = await wait_for(refused, timeout_s=10)
    assert record["details"]["status"] == 429
    line = error_line("submit", error_from_response(429, response.body.decode()))
    assert line.endswith(f"— retry in {after} s [busy]") and "\n" not in line, line


def test_newuser17_n11_hub_defaults_bound_pending_and_rate_a_single_user_server_does_not() -> None:
    assert (SchedApp().max_pending_jobs_per_user, SchedApp().max_submits_per_user_minute) == (0, 0)
    assert (HubSchedApp().max_pending_jobs_per_user, HubSchedApp().max_submits_per_user_minute) == (200, 120)
    configured = Config({"SchedApp": {"max_pending_jobs_per_user": 0, "max_submits_per_user_minute": 30}})
    hub = HubSchedApp(config=configured)
    assert (hub.max_pending_jobs_per_user, hub.max_submits_per_user_minute) == (0, 30)
