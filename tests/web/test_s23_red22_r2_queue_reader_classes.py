"""Red team 22, R2 caveat: every reader of ``GET queue`` but the waiter's owner shared one cached copy of a
waiting job's line, which withheld its blocker's progress figure from all of them — from the blocker's own
owner and from admins too, who may see it (session 22 left it). Lines are now kept per reader class: the
waiter's owner, an admin, a user whose work it waits on, anyone else.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan owns the running job and reports
its progress; eve waits; judy is a third user; boss an admin), real job processes, the SQLite store; each
user reads the queue in turn, so a line one class built is in the cache when the next reads.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import BOSS_TOKEN, EVE_TOKEN, IVAN_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for


async def test_s23_red22_r2_the_blockers_owner_and_admins_read_its_figure_in_the_queue(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: ivan's and boss's GET queue said eve's job waits "from its reported progress", the
    line judy (and every other user) shared, while GET jobs/{id} told boss "2 % done"."""
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)
    holder = await running_job(api, gpus=4, name="a0")  # ivan's
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4}, token=EVE_TOKEN)
    assert status == 201, waiting
    for done in (15, 25):
        status, answer = await api("POST", f"jobs/{holder}/progress", {"done": done, "total": 1000})
        assert status == 200 and answer["stored"], answer

    async def line(token: str) -> dict[str, Any]:
        status, queue = await api("GET", "queue", token=token)
        assert status == 200, queue
        [found] = [e for e in queue if e["id"] == waiting["id"]]
        return dict(found.get("reason") or {})  # none before the first cycle

    async def read_from_progress() -> Any:
        reason = await line(JUDY_TOKEN)  # the withheld line first: cached before ivan and boss read
        return reason if (reason.get("details") or {}).get("eta_progress") else None

    judy = await wait_for(read_from_progress)
    assert judy["details"]["eta_progress"] == {holder: None}, judy["details"]
    assert "from its reported progress" in judy["text"]["eta"], judy["text"]
    for token in (IVAN_TOKEN, BOSS_TOKEN):  # the blocker's owner, an admin
        seen = await line(token)
        assert seen["details"]["eta_progress"] == {holder: 0.025}, (token, seen["details"])
        assert "from its progress (2 % done, reported " in seen["text"]["eta"], (token, seen["text"])
    again = await line(JUDY_TOKEN)  # and the shared line did not take theirs
    assert again["details"]["eta_progress"] == {holder: None}, again["details"]
    mine = await line(EVE_TOKEN)
    assert mine["details"]["eta_progress"] == {holder: None} and "2 % done" not in mine["text"]["eta"], mine
