"""New user 19, N4: a 429 of a rule (``max_submits_per_user_minute``, ``max_pending_jobs_per_user``)
was audited twice — the rule's own row and a "flood" row (red team 15, R10) repeating it, then
"N more busy answer(s) … were counted" for the same refusals. The flood row is for 429s no rule
row records (too many dry runs or waits in flight, replaced event streams); a rule refusal is
recorded once. Through the real server (pytest-jupyter), SQLite, simulated GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.extension.floods import FLOODS_SETTING

from .conftest import BOSS_TOKEN, server_config, wait_for


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, max_submits_per_user_minute=1)


async def test_newuser19_n4_a_rule_429_is_audited_once_not_again_as_a_flood(
        sched_app: Any, api: Any, jp_serverapp: Any) -> None:
    quick = {"gpus": 0, "command": [sys.executable, "-c", "pass"]}
    status, first = await api("POST", "jobs", quick)
    assert status == 201, first
    for _ in range(3):
        status, body = await api("POST", "jobs", quick)
        assert status == 429 and body["error"]["field"] == "max_submits_per_user_minute", body

    async def refused() -> list[Any]:
        _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        rows = [r for r in audit if r["details"].get("field") == "max_submits_per_user_minute"]
        return rows if len(rows) == 3 else []

    rows = await wait_for(refused, timeout_s=10)
    assert all(r["details"]["status"] == 429 for r in rows), rows
    # the flood's minute is kept only once a 429 was counted as a flood: none of these was one
    assert FLOODS_SETTING not in jp_serverapp.web_app.settings, "a rule's 429 was audited again as a flood"
    _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
    floods = [r for r in audit if r["details"].get("field") is None]  # a flood row names no rule
    assert not floods and len(audit) == 3, audit
