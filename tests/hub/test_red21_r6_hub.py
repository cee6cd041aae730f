"""Red team 21, R6 on a real hub (red21 a11_left_store_team.py): the hub admin's ``PUT quotas``
``user_teams`` was taken (200) in hub mode, and the membership it stored kept a user in a team after
she was removed from the hub group (her submits on it 201, no ``team_left``); a user never in the
group could charge it too.

Now the hub's groups are the one source of teams there: the PUT is refused 400 naming ``user_teams``
(the hint says to change the hub group), GET quotas says the hub's groups decide, and a user removed
from the group — or never in it — is refused on that team at once. The services-level cases (stored
memberships of an earlier version not read, audit rows carrying the user) are in
tests/services/test_red21_r6_hub_teams.py.

Real parts, as tests/hub/test_red19_r2_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts, ``jupyter-sched serve`` as root on PostgreSQL; requests with each user's own hub token;
group changes through the hub's REST API as an admin makes them.
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
    yield from amy_and_eve_hub(pg_server, users, "red21r6",
                               service_args=("--HubIdentityProvider.membership_fresh_s=0",))


def test_red21_r6_hub_mode_refuses_stored_memberships_and_the_hub_group_stays_authoritative(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name  # amy in hub group vision, eve in nlp
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def call(user: str, method: str, path: str, body: Any = None, **params: Any) -> httpx.Response:
        return httpx.request(method, f"{api}{path}", json=body, params=params or None, timeout=60,
                             headers={"Authorization": f"token {tokens[user]}"})

    put = call("carol", "PUT", "quotas", {"user_teams": {amy: ["vision"], eve: ["vision"]}})
    assert put.status_code == 400, put.text  # was 200: a second source of teams beside the hub's groups
    error = put.json()["error"]
    assert error["field"] == "user_teams" and "hub mode" in error["message"], error
    assert "/hub/api/groups/" in error["hint"], error
    got = call("carol", "GET", "quotas").json()
    # the hub's groups as its poll read them, read-only (hubadmin22 H7; {} before the first poll): never the PUT's
    assert got["user_teams"].get(eve, []) in ([], ["nlp"]) and got["user_teams_source"]["set_by"] == "hub", got
    assert "hub groups" in got["user_teams_source"]["text"], got["user_teams_source"]
    assert call("carol", "PUT", "quotas", {"user_teams": {}}).status_code == 200  # clearing is taken

    body = {"gpus": 1, "team": "vision", "command": ["true"], "name": "r6"}
    assert call(amy, "POST", "dryrun", body).status_code == 200  # in the hub group: may charge vision
    refused = call(eve, "POST", "dryrun", body)  # was 201 through the stored membership (red21d)
    assert refused.status_code == 403 and refused.json()["error"]["field"] == "team", refused.text
    try:
        removed = hub.api("DELETE", "groups/vision/users", {"users": [amy]})
        assert removed.status_code == 200, removed.text
        refused = call(amy, "POST", "dryrun", body)  # the hub's removal is authoritative at once
        assert refused.status_code == 403 and "may not charge team 'vision'" in refused.json()["error"]["message"], \
            refused.text
        # a read's groups come from the token's cached hub model until the poll sees the change (red19 R2)
        hub.wait_for(lambda: "vision" not in call(amy, "GET", "me").json()["teams"], 30, "GET me without vision")
        # and GET quotas' user_teams, from the same poll (hubadmin22 H7)
        hub.wait_for(lambda: "vision" not in call("carol", "GET", "quotas").json()["user_teams"].get(amy, []), 30,
                     "GET quotas' user_teams without amy in vision")
    finally:
        hub.api("POST", "groups/vision/users", {"users": [amy]})
    rows = call("carol", "GET", "audit", action="team_members_changed", limit=50)
    assert rows.status_code == 200 and rows.json() == [], rows.text  # the refused PUT changed nobody


def test_red23_r1_a_user_reads_only_their_own_teams_never_the_hubs_roster(hub: Hub, users: dict[str, Account]) -> None:
    """Red team 23, R1: GET quotas' ``user_teams`` gave every hub user the hub's whole roster and every
    user's groups (admins, groups that are no scheduler team) — what the hub refuses them (GET
    /hub/api/users, /hub/api/groups: 403). An admin still reads it all (hubadmin22 H7)."""
    amy, eve = users["amy"].name, users["eve"].name
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def quotas(user: str) -> dict[str, Any]:
        got = httpx.get(f"{api}quotas", timeout=60, headers={"Authorization": f"token {tokens[user]}"})
        assert got.status_code == 200, got.text
        return dict(got.json())

    made = hub.api("POST", "groups/secret-hr", {"users": [eve]})  # a hub group that is no scheduler team
    assert made.status_code in (200, 201), made.text
    try:
        hub.wait_for(lambda: "secret-hr" in quotas("carol")["user_teams"].get(eve, []), 30,
                     "the admin's GET quotas listing eve's new group")
        for user, own in ((amy, "vision"), (eve, "nlp")):
            said = quotas(user)
            assert set(said["user_teams"]) == {user} and own in said["user_teams"][user], said["user_teams"]
            assert all(policy["members"] in ([], [user]) for policy in said["teams"]), said["teams"]
            assert "carol" not in str(said["user_teams"])
        assert "secret-hr" not in str(quotas(amy)), "another user's hub group read through GET quotas"
        assert {amy, eve} <= set(quotas("carol")["user_teams"])  # the admin's whole listing stays
    finally:
        hub.api("DELETE", "groups/secret-hr")
