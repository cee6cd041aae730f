"""A refusal echoes and records user input bounded (red-team 3 finding 6): an unknown field's name
is user input of any length; a 5 MB key used to come back whole as ``error.field`` and was stored
whole in the audit log by every refused request (any user could fill the shared store's disk)."""

from __future__ import annotations

import json
from typing import Any

from .conftest import BOSS_TOKEN, EVE_TOKEN, wait_for


async def test_redteam3_a_huge_unknown_field_is_neither_echoed_nor_audited_whole(sched_app: Any, api: Any) -> None:
    key = "gpus" * 250_000  # 1 MB, close to a real field name (the did-you-mean guess must not choke on it)
    raw = json.dumps({"gpus": 1, "command": ["true"], key: 1}).encode()
    status, body = await api("POST", "jobs", raw=raw, token=EVE_TOKEN)
    assert status == 400, body
    error = body["error"]
    assert error["message"].startswith("unknown field 'gpusgpus") and len(error["message"]) < 200, error["message"]
    assert error["field"] == key[:77] + "...", len(error["field"])
    assert len(json.dumps(body)) < 2_000

    async def refusals() -> list[dict[str, Any]]:  # written off the loop after the answer
        status, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "20"})
        assert status == 200
        return [r for r in rows if r["action"] == "refused" and r["user"] == "eve"]

    refused = await wait_for(refusals)
    assert refused[0]["details"]["field"] == error["field"]
    assert len(json.dumps(refused[0])) < 2_000, "the audit row holds the key whole"
