"""Red team 19, R2 on a real hub: after an admin removes a user from a hub group, admission kept
accepting their submits on that team for ``token_cache_s`` (30 s: the groups came from the token's
cached hub model), and jobs admitted in that window ran charged to it.

Now a request that changes something (POST/PUT/PATCH) decides membership on the hub's user record
at most ``membership_fresh_s`` old (0 here: every such request asks the hub), and running work still
charged to the team is named in a ``team_left`` record (left running). The poll's forgetting of
cached groups is tested in tests/hub/test_red19_r2_identity.py.

Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts, ``jupyter-sched serve`` as root on PostgreSQL (``hub_poll_interval_s`` 1 s); requests with
each user's own hub token; group changes through the hub's REST API as an admin makes them.
"""

from __future__ import annotations

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
    yield from amy_and_eve_hub(pg_server, users, "red19r2",
                               service_args=("--HubIdentityProvider.membership_fresh_s=0",))


def test_red19_r2_a_user_removed_from_a_group_cannot_charge_it_at_once_and_running_work_is_named(
        hub: Hub, users: dict[str, Account]) -> None:
    eve = users["eve"].name
    joined = hub.api("POST", "groups/vision/users", {"users": [eve]})
    assert joined.status_code == 200, joined.text
    tokens = {name: hub.token_for(name) for name in (eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def call(user: str, method: str, path: str, body: Any = None) -> httpx.Response:
        return httpx.request(method, f"{api}{path}", json=body, timeout=60,
                             headers={"Authorization": f"token {tokens[user]}"})

    def left() -> list[dict[str, Any]]:
        rows = httpx.get(f"{api}audit", params={"limit": 500, "user": eve, "action": "team_left"}, timeout=60,
                         headers={"Authorization": f"token {tokens['carol']}"})
        assert rows.status_code == 200, rows.text
        return list(rows.json())

    body = {"gpus": 1, "team": "vision", "command": ["sleep", "300"], "name": "r2-before"}
    made = call(eve, "POST", "jobs", body)
    assert made.status_code == 201, made.text
    before = str(made.json()["id"])
    try:
        hub.wait_for(lambda: call("carol", "GET", f"jobs/{before}").json()["state"] == "running", 60,
                     "eve's job on vision to run")
        me = call(eve, "GET", "me")  # a read: the token's hub model (groups: nlp, vision) is cached 30 s
        assert me.status_code == 200 and "vision" in me.json()["teams"], me.text

        removed = hub.api("DELETE", "groups/vision/users", {"users": [eve]})
        assert removed.status_code == 200, removed.text
        # the very next submit on vision is refused (was: accepted for token_cache_s, 30 s)
        for path in ("dryrun", "jobs"):
            refused = call(eve, "POST", path, {**body, "name": "r2-after"})
            assert refused.status_code == 403, (path, refused.text)
            error = refused.json()["error"]
            assert error["field"] == "team" and "may not charge team 'vision'" in error["message"], refused.text
        # the poll that sees the change names the running job still charged to vision
        hub.wait_for(lambda: any(before in row["details"]["running"] for row in left()), 60,
                     "the team_left record naming eve's running job")
        assert call("carol", "GET", f"jobs/{before}").json()["state"] == "running"  # left running, said to admins
    finally:
        httpx.delete(f"{api}jobs/{before}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        hub.api("POST", "groups/vision/users", {"users": [eve]})
