"""hubadmin26 B10 through a real server: ``POST users/{user}/rename`` and ``jupyter-sched users rename OLD NEW``.

Embedded mode: ivan has a running job (a real ``sleep``) and a waiting one; the admin (boss) carries them
over to ivan.new. The running job keeps running (its process is not touched), both are ivan.new's; a
non-admin is refused (403, audited); bad input is 400 naming the field; the same rename again changes nothing.
"""

from __future__ import annotations

from typing import Any

from jupyter_sched.cli.main import EXIT_OK

from .conftest import BOSS_TOKEN, JUDY_TOKEN
from .test_cli import cli  # noqa: F401  (the fixture: the CLI as a subprocess against this server)
from .test_s24_team_move_web import _job, jp_server_config, running_and_waiting  # noqa: F401  (ivan and judy in vision)


async def test_s27_hubadmin26_b10_users_rename_carries_running_and_waiting_work_over(
        sched_app: Any, api: Any, cli: Any) -> None:  # noqa: F811
    running, waiting = await running_and_waiting(api)
    status, refused = await api("POST", "users/ivan/rename", {"to": "ivan.new"}, token=JUDY_TOKEN)
    assert status == 403, refused
    for path, body, field in (("users/ivan/rename", {"to": "ivan"}, "to"), ("users/ivan/rename", {}, "to"),
                              ("users/ivn/rename", {"to": "ivan.new"}, "user"),
                              ("users/ivan/rename", {"to": "ivan\u202enew"}, "to")):
        status, bad = await api("POST", path, body, token=BOSS_TOKEN)
        assert status == 400 and bad["error"]["field"] == field, (path, body, bad)

    run = await cli("--token", BOSS_TOKEN, "users", "rename", "ivan", "ivan.new", "--yes")
    assert run.code == EXIT_OK, run.err
    assert "moved ivan's work to ivan.new: 2 live job(s)" in run.out, run.out
    for job in (running, waiting):
        assert (await _job(api, job["id"]))["user"] == "ivan.new"
    assert (await _job(api, running["id"]))["state"] == "running"
    again = await cli("--token", BOSS_TOKEN, "users", "rename", "ivan", "ivan.new", "--yes")
    assert again.code == EXIT_OK and "nothing to do" in again.out, (again.out, again.err)
    _, renamed = await api("GET", "audit", params={"action": "user_renamed"}, token=BOSS_TOKEN)
    assert [(r["actor"], r["user"]) for r in renamed] == [("boss", "ivan")], renamed
    for job in (waiting, running):
        status, _ = await api("DELETE", f"jobs/{job['id']}", token=BOSS_TOKEN)
        assert status == 200
