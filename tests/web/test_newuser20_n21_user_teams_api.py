"""New user 20, N21 through the real server: GET quotas shows the config's memberships as lists with
who set them; an admin's PUT takes a list or a name and replaces a user's teams (GET me follows); a
user who puts themselves in another team is refused 403 and audited, and nothing changes.

ivan is in team ml by the config (``c.SchedApp.user_teams``), judy in cv; boss is an admin."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, IVAN_TOKEN, server_config, wait_for

LINES = [{"team": t, "guaranteed": 1, "borrowing_limit": 1} for t in ("ml", "cv")]


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"ivan": "ml", "judy": ["cv"]}, quotas=LINES)


async def test_newuser20_n21_memberships_are_lists_an_admin_sets_and_a_user_cannot(sched_app: Any, api: Any) -> None:
    status, quotas = await api("GET", "quotas", token=BOSS_TOKEN)
    assert status == 200 and quotas["user_teams"] == {"ivan": ["ml"], "judy": ["cv"]}, quotas  # was {}
    status, quotas = await api("GET", "quotas", token=IVAN_TOKEN)  # a user reads their own alone (red team 23, R1)
    assert status == 200 and quotas["user_teams"] == {"ivan": ["ml"]}, quotas
    assert quotas["user_teams_source"]["config"], quotas["user_teams_source"]

    # a hostile user puts himself in judy's team: refused, audited, nothing changed
    status, body = await api("PUT", "quotas", {"user_teams": {"ivan": ["ml", "cv"], "judy": ["cv"]}}, token=IVAN_TOKEN)
    assert status == 403, body

    async def refused() -> list[Any]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        return [r for r in audit if r["details"]["request"] == "changing quotas"]

    (record,) = await wait_for(refused, timeout_s=10)
    assert record["actor"] == "ivan" and record["details"]["status"] == 403, record
    status, me = await api("GET", "me", token=IVAN_TOKEN)
    assert status == 200 and me["teams"] == ["ml"], me

    # the admin: a list, the first team charged by default; GET me follows at once
    put = {**quotas, "user_teams": {"ivan": ["cv", "ml"], "judy": "cv"}}  # GET's body sent back, as read-modify-write
    status, body = await api("PUT", "quotas", put, token=BOSS_TOKEN)
    assert status == 200 and body["user_teams"] == {"ivan": ["cv", "ml"], "judy": ["cv"]}, body
    assert body["user_teams_source"]["set_by"] == "boss" and not body["user_teams_source"]["config"], body
    status, me = await api("GET", "me", token=IVAN_TOKEN)
    assert status == 200 and me["team"] == "cv" and me["teams"] == ["cv", "ml"], me
    _, audit = await api("GET", "audit", params={"action": "team_members_changed"}, token=BOSS_TOKEN)
    assert [(r["actor"], r["message"]) for r in audit][:1] == [
        ("boss", "team memberships changed by boss: changed ivan: ml → cv, ml")], audit

    status, body = await api("PUT", "quotas", {"user_teams": {"ivan": []}}, token=BOSS_TOKEN)
    assert status == 400 and body["error"]["field"] == "user_teams.ivan" and body["error"]["hint"], body
