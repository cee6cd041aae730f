"""One user's log follows are bounded (red-team 4 finding 4): ``GET jobs/{id}/logs?follow=true``
re-reads the log every 0.25 s for up to 25 s, and eve's 1,000 follows of her own pending job made
judy's ``GET me`` 79x slower. At most MAX_OPEN_FOLLOWS of a user's follows wait at once per
server; one more is 429 naming ``follow``; other users' follows are unaffected."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from jupyter_sched.extension import log_follow
from jupyter_sched.extension.log_follow import MAX_OPEN_FOLLOWS

from .conftest import API, EVE_TOKEN, JUDY_TOKEN, wait_for


async def test_redteam4_a_user_may_hold_only_so_many_log_follows_open(sched_app: Any, api: Any, kernel: Any, http_server_port: Any,
                                                                      jp_base_url: str) -> None:
    status, _ = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, token=EVE_TOKEN)
    assert status == 201
    status, eves_job = await api("POST", "jobs", {"gpus": 1, "command": ["true"]}, token=EVE_TOKEN)
    assert status == 201 and eves_job["state"] == "pending"
    status, judys_job = await api("POST", "jobs", {"gpus": 1, "command": ["true"]}, token=JUDY_TOKEN)
    assert status == 201
    follow = {"follow": "true"}
    waiting = log_follow._OPEN.setdefault(sched_app, log_follow.Counter())

    # its own client: the fixture's tornado client runs at most 10 requests at once
    client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}{API}/", timeout=60,
                               limits=httpx.Limits(max_connections=MAX_OPEN_FOLLOWS + 4))

    async def follow_of(job: dict[str, Any], token: str) -> tuple[int, Any]:
        answer = await client.get(f"jobs/{job['id']}/logs", params=follow, headers={"Authorization": f"token {token}"})
        return answer.status_code, answer.json()

    eves = [asyncio.ensure_future(follow_of(eves_job, EVE_TOKEN)) for _ in range(MAX_OPEN_FOLLOWS)]
    judys = asyncio.ensure_future(follow_of(judys_job, JUDY_TOKEN))

    async def all_waiting() -> bool:
        return waiting["eve"] == MAX_OPEN_FOLLOWS and waiting["judy"] == 1
    await wait_for(all_waiting, timeout_s=20)

    status, body = await api("GET", f"jobs/{eves_job['id']}/logs", token=EVE_TOKEN, params=follow)
    assert status == 429 and body["error"]["field"] == "follow", body
    status, _ = await api("GET", f"jobs/{eves_job['id']}/logs", token=EVE_TOKEN)  # without follow: answered
    assert status == 200

    for job in (eves_job, judys_job):  # a finished job answers every follow of it at once
        status, _ = await api("DELETE", f"jobs/{job['id']}", token=EVE_TOKEN if job is eves_job else JUDY_TOKEN)
        assert status == 200
    answers = await asyncio.gather(*eves, judys)
    await client.aclose()
    assert [status for status, _ in answers] == [200] * (MAX_OPEN_FOLLOWS + 1)
    assert all(body["finished"] for _, body in answers)
    assert waiting["eve"] == 0 and waiting["judy"] == 0
