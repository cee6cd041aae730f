"""A drained node never locks users out (issue 15 item 6): with fewer GPUs than the guarantees,
identity and requests keep working; admins read a warning in GET quotas, users see none."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.inventory.simulated import SimulatedInventory

from .conftest import BOSS_TOKEN, JUDY_TOKEN, server_config


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"judy": "ml"},
                         quotas=[{"team": "ml", "guaranteed": 3, "borrowing_limit": 1},
                                 {"team": "cv", "guaranteed": 1, "borrowing_limit": 0}])


async def test_guarantees_above_capacity_warn_admins_and_never_fail_users(sched_app: Any, api: Any) -> None:
    _, before = await api("GET", "quotas", token=BOSS_TOKEN)
    # the one warning before: ivan and boss are in team default, which has no quota line (red team 19, R3)
    assert len(before["warnings"]) == 1 and before["warnings"][0].startswith("team default has no share of the GPUs (no quota line)"), before
    sched_app.services.ctx.inventory_source = SimulatedInventory(2, node="n1")  # two of four GPUs drained
    _, admin = await api("GET", "quotas", token=BOSS_TOKEN)
    drained = [w for w in admin["warnings"] if w not in before["warnings"]]
    assert len(drained) == 1 and "4 GPUs" in drained[0] and "only 2 exist" in drained[0], admin["warnings"]
    status, user = await api("GET", "quotas", token=JUDY_TOKEN)
    assert status == 200 and "warnings" not in user
    status, me = await api("GET", "me", token=JUDY_TOKEN)
    assert status == 200 and me["team"] == "ml"
    status, job = await api("POST", "jobs", {"gpus": 1, "command": ["python", "-c", "pass"]}, token=JUDY_TOKEN)
    assert status == 201 and job["team"] == "ml", job


async def test_a_drained_node_blocks_only_new_guarantees_not_other_quota_edits(sched_app: Any, api: Any) -> None:
    sched_app.services.ctx.inventory_source = SimulatedInventory(2, node="n1")  # two of four GPUs drained
    status, body = await api("PUT", "quotas", {"user_teams": {"judy": "ml", "kim": "cv"}}, token=BOSS_TOKEN)
    assert status == 200 and body["user_teams"] == {"judy": ["ml"], "kim": ["cv"]}, body  # lists (new user 20, N21)
    # a raised total is refused; ml's 3 alone (4 in force) is kept with a warning (hubadmin25 B12)
    status, body = await api("PUT", "quotas", {"quotas": [{"team": "ml", "guaranteed": 5, "borrowing_limit": 0}]},
                             token=BOSS_TOKEN)
    assert status == 400 and body["error"]["field"] == "guaranteed", body
    status, body = await api("PUT", "quotas", {"quotas": [{"team": "ml", "guaranteed": 3, "borrowing_limit": 0}]},
                             token=BOSS_TOKEN)
    assert status == 200 and any("only 2 exist" in w for w in body["warnings"]), body
    status, body = await api("PUT", "quotas", {"quotas": [{"team": "ml", "guaranteed": 2, "borrowing_limit": 0}]},
                             token=BOSS_TOKEN)
    assert status == 200 and body["quotas"][0]["guaranteed"] == 2, body


async def test_get_quotas_with_its_warnings_can_be_put_back_changed(sched_app: Any, api: Any) -> None:
    sched_app.services.ctx.inventory_source = SimulatedInventory(2, node="n1")
    _, current = await api("GET", "quotas", token=BOSS_TOKEN)
    assert current["warnings"], current  # the read-modify-write below carries them back
    lines = [{"team": "ml", "guaranteed": 1, "borrowing_limit": 1}, {"team": "cv", "guaranteed": 1}]
    status, body = await api("PUT", "quotas", {**current, "quotas": lines}, token=BOSS_TOKEN)
    # no capacity warning left (team default, without a line, is still said: red team 19, R3)
    assert status == 200 and [q["guaranteed"] for q in body["quotas"]] == [1, 1], body
    assert [w for w in body["warnings"] if "(no quota line" not in w] == [], body
