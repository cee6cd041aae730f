"""newuser37 N2: the panel's Logs of a held job read "Connecting…", then "Following live output…" over an
empty page for ever (the CLI: "j-… is pending: no output yet — … follows it once it starts"). The log
route's answer now says the job's ``state`` at the read (so a reader says why an empty log is empty), and
a follow answers when that state moves on (the job started), not only on new text or its end — the panel
says "pending: no output yet — <its reason>" until then (labextension test/s37_newuser37_n2_pending_log.test.ts).

Real parts: the pytest-jupyter server with the extension, its engine and SQLite store; the held job is
written to the store as a hold leaves it (no race with the engine's first cycle)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

import pytest

from jupyter_sched.extension import log_follow
from jupyter_sched.model.job import Hold
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job

from .conftest import wait_for


async def test_newuser37_n2_the_log_answer_says_the_state_and_a_follow_answers_when_the_job_starts(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    job = make_job("j-n37n2", user="ivan", command=("sleep", "60"))
    job = replace(job, held=Hold(by="ivan", at=T0, admin=False))
    sched_app.services.store.insert_job(JobRecord(job=job, executor="local", handle=None))
    status, chunk = await api("GET", "jobs/j-n37n2/logs")
    assert status == 200 and chunk["text"] == "" and chunk["state"] == "pending", chunk  # before: no state
    assert chunk["finished"] is False, chunk
    # a follow of the held job waits; once released and started it answers at once (before: only on text or
    # the end, up to its ceiling later — made long here, so only the state's change can end it in time)
    monkeypatch.setattr(log_follow, "FOLLOW_WAIT_S", 3600.0)
    follow = asyncio.ensure_future(api("GET", "jobs/j-n37n2/logs", params={"follow": "true", "offset": "0"}))

    async def waiting() -> bool:  # its first read saw the job pending and it waits now: release it only then
        return any(users.get("ivan") for users in list(log_follow._OPEN.values()))

    await wait_for(waiting, timeout_s=60)
    status, released = await api("PATCH", "jobs/j-n37n2", {"held": False})
    assert status == 200, released
    status, chunk = await asyncio.wait_for(follow, timeout=120)
    assert status == 200 and chunk["text"] == "" and chunk["state"] in ("admitted", "running"), chunk
    assert chunk["finished"] is False, chunk
