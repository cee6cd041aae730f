"""New user 28, N5: the owner of a job an admin held was told "release with: jupyter-sched release j-…" (and
"an admin releases it: jupyter-sched release j-…"), which, pasted, is refused 403 — whose words printed the
raw ``2026-12-06T02:06:39Z``. The owner's line (status/queue/jobs, the magics, the panel's row: one renderer,
``wording.reasons``, with ``mine``) now offers only what they may run — ask the admin, or cancel — and the
refusal says the hold's time as the line does (``02:06 UTC``); an admin still reads the release command."""

from __future__ import annotations

import re
from typing import Any

from .conftest import BOSS_TOKEN, SLEEP_JOB, running_job

ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d")


async def test_newuser28_n5_the_owner_of_an_admin_held_job_is_offered_only_what_they_may_run(api: Any) -> None:
    for i in range(4):  # every simulated GPU busy, so the job waits
        await running_job(api, 1, name=f"fill-{i}")
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "a-held"})
    assert status == 201, job
    jid = job["id"]
    status, held = await api("PATCH", f"jobs/{jid}", {"held": True}, token=BOSS_TOKEN)
    assert status == 200 and held["held"]["admin"] is True, held

    _, mine = await api("GET", f"jobs/{jid}")  # its owner, ivan
    text = mine["reason"]["text"]
    assert text["unblock"] == f"Ask boss to release it, or cancel it: jupyter-sched cancel {jid}.", text
    assert "jupyter-sched release" not in text["line"] and "release with" not in text["line"], text
    assert text["line"].startswith("queued") and " · held by boss (an admin) at " in text["line"], text
    assert mine["reason"]["unblock"] == text["unblock"], mine["reason"]

    _, admins = await api("GET", f"jobs/{jid}", token=BOSS_TOKEN)  # who may release it reads how
    assert f"jupyter-sched release {jid}" in admins["reason"]["text"]["line"], admins["reason"]["text"]

    status, refused = await api("PATCH", f"jobs/{jid}", {"held": False})
    assert status == 403, refused
    error = refused["error"]
    assert re.search(r"held by an admin \(boss at \d\d:\d\d UTC\): only an admin may release it", error["message"]), \
        error
    assert not ISO.search(error["message"]), error
    assert error["hint"] == f"ask boss to release it, or cancel it: jupyter-sched cancel {jid}", error
