"""Red team 18, R4 on a real hub: a job queued on a team (hub group) by a member whom an admin then
removes from the group is held (``TeamMembership``, one ``team_left`` record), never starts charged to
that team when its GPUs free, and starts once the admin adds the user back.

Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts, ``jupyter-sched serve`` as root on PostgreSQL (``hub_poll_interval_s`` 1 s); requests with
each user's own hub token; group changes through the hub's REST API as an admin makes them (the
service reads ``groups`` from the user models its ``read:users`` token sees). What the service
writes after a change is polled for with a deadline (CI's hub host is slower).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "red18")


def test_red18_r4_a_job_queued_on_a_group_its_owner_left_is_held_until_they_are_added_back(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name
    # eve joins amy's group vision before her first request (a request's groups are cached per token)
    joined = hub.api("POST", "groups/vision/users", {"users": [eve]})
    assert joined.status_code == 200, joined.text
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def submit(user: str, body: dict[str, Any]) -> str:
        made = httpx.post(f"{api}jobs", json=body, headers={"Authorization": f"token {tokens[user]}"}, timeout=60)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def job(job_id: str) -> dict[str, Any]:
        got = httpx.get(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert got.status_code == 200, got.text
        return dict(got.json())

    def left() -> list[dict[str, Any]]:
        rows = httpx.get(f"{api}audit", params={"limit": 500, "user": eve, "action": "team_left"}, timeout=60,
                         headers={"Authorization": f"token {tokens['carol']}"})
        assert rows.status_code == 200, rows.text
        return list(rows.json())

    full = submit(amy, {"gpus": hub.gpus, "team": "vision", "command": ["sleep", "300"], "name": "r4-full"})
    queued = ""
    try:
        hub.wait_for(lambda: job(full)["state"] == "running", 60, "amy's job to run")
        queued = submit(eve, {"gpus": 1, "team": "vision", "command": ["true"], "name": "r4-queued-vision"})
        removed = hub.api("DELETE", "groups/vision/users", {"users": [eve]})
        assert removed.status_code == 200, removed.text
        hub.wait_for(lambda: (job(queued).get("reason") or {}).get("code") == "TeamMembership", 60,
                     "eve's queued job to be held")
        reason = job(queued)["reason"]
        assert f"held: {eve} is no longer a member of team vision" in reason["message"], reason
        hub.wait_for(lambda: bool(left()), 60, "the team_left record")
        (row,) = left()
        assert row["details"]["held"] == [queued] and row["details"]["team"] == "vision", row

        stop = httpx.delete(f"{api}jobs/{full}", headers={"Authorization": f"token {tokens[amy]}"}, timeout=60)
        assert stop.status_code == 200, stop.text
        hub.wait_for(lambda: job(full)["state"] == "cancelled", 60, "amy's job to stop")
        end = time.monotonic() + 4  # several cycles and group checks (1 s each) with vision's GPUs free
        while time.monotonic() < end:
            assert job(queued)["state"] == "pending", job(queued)
            time.sleep(0.5)

        back = hub.api("POST", "groups/vision/users", {"users": [eve]})
        assert back.status_code == 200, back.text
        hub.wait_for(lambda: job(queued)["state"] in ("admitted", "running", "succeeded"), 60,
                     "the held job to start once eve is back in vision")
    finally:
        for job_id in (queued, full):
            if job_id:
                httpx.delete(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
