"""One user's dry runs cannot take every place (red-team 4 finding 6): ``POST dryrun`` computes
``dryrun_concurrency`` at a time with four times as many waiting, for everyone together; eve's 16
loops of dry runs held every place and 22 of judy's 30 were refused 429. At most
``dryrun_concurrency`` of one user's are in flight: eve's next is refused, judy's is computed."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from .conftest import EVE_TOKEN, JUDY_TOKEN, wait_for

JOB = {"gpus": 1, "command": ["true"]}


async def test_redteam4_one_users_dry_runs_leave_room_for_anothers(sched_app: Any, api: Any, monkeypatch: Any) -> None:
    service = sched_app.services.jobs
    real = service.dryrun
    gate = threading.Event()
    inside = {"eve": 0}

    def held(caller: Any, request: Any) -> Any:
        if caller.user == "eve":
            inside["eve"] += 1
            gate.wait(30)  # eve's dry runs stay on the dry-run threads until the test lets them go
        return real(caller, request)

    monkeypatch.setattr(service, "dryrun", held)
    most = sched_app.dryrun_concurrency
    eves = [asyncio.ensure_future(api("POST", "dryrun", JOB, token=EVE_TOKEN)) for _ in range(most + 4)]
    try:
        async def threads_held() -> bool:
            return inside["eve"] == most
        await wait_for(threads_held)
        judys = asyncio.ensure_future(api("POST", "dryrun", JOB, token=JUDY_TOKEN))

        async def eves_extra_refused() -> bool:
            return sum(1 for t in eves if t.done()) == 4
        await wait_for(eves_extra_refused)  # refused at once, not waiting in the places judy needs
    finally:
        gate.set()
    answers = [await t for t in eves]
    status, body = await judys
    assert sorted(s for s, _ in answers) == [200] * most + [429] * 4, answers
    assert all("of your dry runs" in b["error"]["message"] for s, b in answers if s == 429), answers
    assert status == 200 and body["fits"] is True, body
