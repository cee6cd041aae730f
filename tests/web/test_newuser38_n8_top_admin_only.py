"""newuser38 n8: a non-admin's ``jupyter-sched top vb2`` on another user's pending job was told ``'vb2' is n38b's job …
not yours: you may hold, release or change only your own (an admin changes anyone's)`` — as if its owner could top
it, while the owner's own ``top`` is refused "only an admin puts a job first in its class". ``top`` is admin-only: that
refusal comes first, whoever's the job, by id (REST, audited) and by name (the CLI). Real parts: a jupyter server with
the extension, the CLI in a subprocess (tests/web's fixtures)."""

from __future__ import annotations

import os
from typing import Any

from jupyter_sched.cli.main import EXIT_REFUSED

from .conftest import BOSS_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job
from .test_cli import cli  # noqa: F401  (the fixture: a real jupyter-sched subprocess against this server)

ADMIN_ONLY = "only an admin puts a job first in its class"


async def test_newuser38_n8_top_of_another_users_job_is_refused_as_admin_only(
        cli: Any, api: Any, http_server_port: Any, jp_base_url: str) -> None:  # noqa: F811
    for i in range(4):
        await running_job(api, 1, name=f"fill-{i}")
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "vb2"})  # ivan's, waiting
    assert status == 201, job
    jid = job["id"]

    status, said = await api("PATCH", f"jobs/{jid}", {"top": True}, token=JUDY_TOKEN)
    assert status == 403, said
    assert said["error"]["message"] == ADMIN_ONLY and said["error"]["field"] == "top", said
    assert "only your own" not in said["error"]["message"] + said["error"]["hint"], said
    status, own = await api("PATCH", f"jobs/{jid}", {"top": True})  # its owner: the same words
    assert status == 403 and own["error"]["message"] == ADMIN_ONLY, own
    status, rows = await api("GET", "audit", params={"job_id": jid}, token=BOSS_TOKEN)
    assert status == 200 and any(r["actor"] == "judy" and ADMIN_ONLY in r["message"] for r in rows), rows

    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}",
                "JUPYTER_SCHED_TOKEN": JUDY_TOKEN})
    run = await cli("top", "vb2", environ=env)  # by name: another user's, found in the queue
    assert run.code == EXIT_REFUSED, run
    assert f"'vb2' is ivan's job {jid} (pending), not yours: {ADMIN_ONLY}" in run.err, run.err
    assert "only your own" not in run.err and f"ask an admin: `jupyter-sched top {jid}`" in run.err, run.err
    status, after = await api("GET", f"jobs/{jid}", token=BOSS_TOKEN)
    assert status == 200 and not after.get("top_at"), after  # nothing changed
