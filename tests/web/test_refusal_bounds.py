"""A refusal echoes and records user input bounded (red-team 3 finding 6): an unknown field's name
is user input of any length; a 5 MB key used to come back whole as ``error.field`` and was stored
whole in the audit log by every refused request (any user could fill the shared store's disk)."""

from __future__ import annotations

import json
from typing import Any

from .conftest import BOSS_TOKEN, EVE_TOKEN, JUDY_TOKEN, wait_for


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


async def test_redteam4_a_refused_cancel_of_another_users_job_is_audited_as_a_cancel(sched_app: Any, api: Any) -> None:
    """eve's DELETE of judy's job or lease is a 404 to her, and the admin's audit log says she
    tried to cancel it (it said "read job", like a harmless look)."""
    _, judys = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "judy-own"}, token=JUDY_TOKEN)
    for path in (f"jobs/{judys['id']}", f"leases/{judys['id']}"):
        status, _ = await api("DELETE", path, token=EVE_TOKEN)
        assert status == 404

    async def refused() -> list[dict[str, Any]]:
        _, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "20"})
        mine = [r for r in rows if r["action"] == "refused" and r["user"] == "eve" and r["job_id"] == judys["id"]]
        return mine if len(mine) >= 2 else []  # both written (off the loop, after the answers)
    rows = await wait_for(refused)
    assert sorted(r["details"]["request"] for r in rows) == ["cancel job", "cancel lease"], rows
