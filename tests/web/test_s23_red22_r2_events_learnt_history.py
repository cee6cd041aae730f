"""Red team 22, R2 caveat, the event stream over a real socket: a waiting job's event carried another user's
learnt history to its owner — "(if it ends at ~40 % of its time limit, as its owner's other runs did)", how
ivan's other jobs ran — while an admin's stream may say it. Each receiver now reads the event as they may.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan runs the blocker; his earlier runs of
other programs are finished jobs in its SQLite store; eve waits; boss is an admin), SSE over a socket.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from jupyter_sched.model import JobState
from jupyter_sched.store import JobRecord
from tests.runtime.builders import make_job

from .conftest import API, BOSS_TOKEN, EVE_TOKEN, SLEEP_JOB, running_job


async def _stream(port: int, base_url: str, token: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {base_url}{API}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 f"Authorization: token {token}\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    assert " 200 " in (await reader.readline()).decode()
    return reader, writer


async def _learnt(reader: asyncio.StreamReader, job_id: str) -> dict[str, Any]:
    """The first event of ``job_id`` whose reason's ETA was learnt (it names ``eta_learned``)."""
    event = ""
    while True:
        line = (await asyncio.wait_for(reader.readline(), 30)).decode().strip()
        if line.startswith("event: "):
            event = line[len("event: "):]
        elif line.startswith("data: ") and event == "job":
            data: dict[str, Any] = json.loads(line[len("data: "):])
            reason = data.get("reason") or {}
            if data.get("id") == job_id and (reason.get("details") or {}).get("eta_learned"):
                return dict(reason)


async def test_s23_red22_r2_a_waiters_event_says_no_other_users_history(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str) -> None:
    """Failed before: eve's event said "as its owner's other runs did" and "~40 %" of ivan's runs."""
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    for i, (command, ran_s, limit_s) in enumerate(((("echo", "a"), 24.0, 60.0), (("env",), 48.0, 120.0),
                                                   (("sleep", "120"), 120.0, 300.0))):
        job = make_job(f"j-past-{i}", user="ivan", command=command, time_limit_s=limit_s, submitted_at=start)
        at = start + timedelta(minutes=10 * i)
        sched_app.services.store.insert_job(JobRecord(job=replace(
            job, state=JobState.SUCCEEDED, admitted_at=at, started_at=at, finished_at=at + timedelta(seconds=ran_s))))
    holder = await running_job(api, gpus=4, name="a0")  # ivan's sleep, a program his history has not run
    port = http_server_port[1]
    eve, eve_w = await _stream(port, jp_base_url, EVE_TOKEN)
    boss, boss_w = await _stream(port, jp_base_url, BOSS_TOKEN)
    try:
        status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4}, token=EVE_TOKEN)
        assert status == 201, waiting
        admin = await _learnt(boss, waiting["id"])
        assert admin["details"]["eta_learned_other"] == {holder: 0.4}, admin["details"]
        assert "as its owner's other runs did" in admin["text"]["eta"], admin["text"]
        mine = await _learnt(eve, waiting["id"])
        said = json.dumps(mine)
        assert "other runs" not in said and "~40 %" not in said, mine
        assert mine["details"]["eta_learned_other"] == {holder: None}, mine["details"]
        assert "as estimated from past runs" in mine["text"]["eta"], mine["text"]
    finally:
        eve_w.close()
        boss_w.close()
