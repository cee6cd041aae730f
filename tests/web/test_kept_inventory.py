"""A kept ``GET inventory`` answer is served on the event loop, and only while it is exactly right
(issue 17: every ``jupyter-sched status`` sent ``GET inventory`` to a request thread for a store
transaction, each hop a wait for the GIL under fifty pollers).

What must never happen: an admin's view given to anyone else (or the other way round), or a
stale answer after a job took or released a GPU.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, server_config


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, cycle_interval=3600)  # full cycles only when something happens


@pytest.fixture
def computed(sched_app: Any, monkeypatch: Any) -> list[bool]:
    """Views (admin or not) whose ``GET inventory`` was computed (on a request thread), in order."""
    calls: list[bool] = []
    system = sched_app.services.system
    real = system.inventory

    def counted(caller: Any = None) -> Any:
        calls.append(caller is None or caller.admin)
        return real(caller)

    monkeypatch.setattr(system, "inventory", counted)
    return calls


async def _quiet(sched_app: Any) -> None:
    """Wait until the store's jobs counter stays put for three looks (no decision, no write)."""
    store = sched_app.services.store
    seen: list[Any] = []
    for _ in range(300):  # a wait for the engine, not a timing assertion
        seen = [*seen[-2:], store.jobs_version_now()]
        if len(seen) == 3 and seen[0] == seen[1] == seen[2] and seen[0] is not None:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the engine never went quiet")


def _holders(answer: dict[str, Any]) -> list[str]:
    return sorted(h["job_id"] for hs in answer["allocations"].values() for h in hs)


async def test_a_kept_answer_is_served_without_the_service_call_and_a_job_taking_a_gpu_is_seen_next(
        sched_app: Any, api: Any, computed: list[bool]) -> None:
    await _quiet(sched_app)
    status, first = await api("GET", "inventory")
    assert status == 200 and _holders(first) == [] and computed == [False]
    status, again = await api("GET", "inventory")
    assert status == 200 and again == first
    assert computed == [False], "the kept answer was served on the loop, without the service call"
    status, job = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"]})
    assert status == 201
    for _ in range(100):  # until the engine admitted it (each poll is exact: it never shows a stale holder set)
        status, after = await api("GET", "inventory")
        assert status == 200
        if _holders(after):
            break
        await asyncio.sleep(0.1)
    assert _holders(after) == [job["id"]]
    assert len(computed) >= 2, "the job's write moved the counter: computed again"
    status, _ = await api("DELETE", f"jobs/{job['id']}")
    assert status == 200
    for _ in range(100):
        status, released = await api("GET", "inventory")
        if not _holders(released):
            break
        await asyncio.sleep(0.1)
    assert _holders(released) == [], "its GPU released: the next answers no longer show it"


async def test_an_admins_view_and_a_users_view_are_each_their_own(
        sched_app: Any, api: Any, computed: list[bool]) -> None:
    await _quiet(sched_app)
    users = [(await api("GET", "inventory"))[1] for _ in range(2)]
    admins = [(await api("GET", "inventory", token=BOSS_TOKEN))[1] for _ in range(2)]
    assert users[0] == users[1] and admins[0] == admins[1]
    assert computed == [False, True], "each view computed once (never served the other's), then kept"
    system = sched_app.services.system
    assert system.kept_inventory(False) is not system.kept_inventory(True)
