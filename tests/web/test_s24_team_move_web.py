"""hubadmin23 A9 / hubadmin24 B12 through a real server: ``POST teams/{team}/move`` and
``jupyter-sched teams move``.

Embedded mode: the admin (boss) moves ivan from team vision to cv with PUT quotas (``user_teams``)
— what a hub group rename is to a hub. ivan's running job stays charged to vision and his waiting
one is held ("no longer a member of team vision"). The move re-charges both to cv: the running job
keeps running, the waiting one is no longer held and starts once GPUs free. A non-admin is refused
(403, audited); bad input is 400 naming the field.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan, judy; boss is an admin),
real job processes (``sleep``) on simulated GPUs, the CLI as a subprocess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN, JUDY_TOKEN, server_config, wait_for
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)

SLEEP = {"command": ["sleep", "300"], "time_limit": "10m"}


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": "vision", "judy": "vision"})


async def _job(api: Any, job_id: str) -> dict[str, Any]:
    status, job = await api("GET", f"jobs/{job_id}", token=BOSS_TOKEN)
    assert status == 200, job
    return dict(job)


async def running_and_waiting(api: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """ivan's 1-GPU sleeper, running once this returns, and his 4-GPU one, waiting behind it."""
    status, running = await api("POST", "jobs", {**SLEEP, "gpus": 1})
    assert status == 201, running
    status, waiting = await api("POST", "jobs", {**SLEEP, "gpus": 4})
    assert status == 201, waiting

    async def started() -> bool:
        return (await _job(api, running["id"]))["state"] == "running"

    await wait_for(started)
    return dict(running), dict(waiting)


async def test_s24_hubadmin23_a9_the_admin_moves_a_renamed_teams_work_and_the_engine_runs_it_as_cv(
        sched_app: Any, api: Any, cli: Any) -> None:  # noqa: F811
    running, waiting = await running_and_waiting(api)
    status, answer = await api("PUT", "quotas", {"user_teams": {"ivan": ["cv"], "judy": ["vision"]}}, token=BOSS_TOKEN)
    assert status == 200, answer

    async def held() -> bool:
        reason = (await _job(api, waiting["id"])).get("reason") or {}
        return reason.get("code") == "TeamMembership"

    await wait_for(held)

    status, refused = await api("POST", "teams/vision/move", {"to": "cv"}, token=JUDY_TOKEN)
    assert status == 403, refused
    _, audit = await api("GET", "audit", params={"action": "refused", "user": "judy"}, token=BOSS_TOKEN)
    assert any("moving a team's work" in str(r.get("message")) for r in audit), audit
    for path, body, field in (("teams/vision/move", {"to": "vision"}, "to"), ("teams/vision/move", {"to": "cvv"}, "to"),
                              ("teams/visio/move", {"to": "cv"}, "team"), ("teams/vision/move", {}, "to")):
        status, error = await api("POST", path, body, token=BOSS_TOKEN)
        assert status == 400 and error["error"]["field"] == field, (path, body, error)

    status, plan = await api("POST", "teams/vision/move", {"to": "cv", "dry_run": True}, token=BOSS_TOKEN)
    assert status == 200, plan
    assert {i["id"]: i["outcome"] for i in plan["items"]} == {running["id"]: "moved", waiting["id"]: "moved"}, plan
    assert plan["holding"]["in_use_after"] == 1, plan
    assert (await _job(api, waiting["id"]))["team"] == "vision"

    run = await cli("--token", BOSS_TOKEN, "teams", "move", "vision", "--to", "cv", "--yes")
    assert run.code == EXIT_OK, run.err
    assert "moved 2 of 2 job(s)/definition(s) of team vision to cv" in run.out, run.out
    assert (await _job(api, running["id"]))["team"] == "cv"
    assert (await _job(api, running["id"]))["state"] == "running"

    async def released() -> bool:
        job = await _job(api, waiting["id"])
        return job["team"] == "cv" and (job.get("reason") or {}).get("code") != "TeamMembership"

    await wait_for(released)
    _, moved = await api("GET", "audit", params={"action": "team_moved"}, token=BOSS_TOKEN)
    assert [r["actor"] for r in moved] == ["boss"], moved
    status, _ = await api("DELETE", f"jobs/{running['id']}")
    assert status == 200

    async def second_runs() -> bool:
        return (await _job(api, waiting["id"]))["state"] == "running"

    await wait_for(second_runs)
