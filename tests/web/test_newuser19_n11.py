"""New user 19, N11: a typo in a read's query (``jobs?limit=abc``, ``usage?by=planet``) was answered
400 naming the argument — and also written to the audit log as a refusal, so a panel or script polling
with a wrong argument filled it (27 rows in 20 s). A read's malformed query is an answer; a read beyond
the caller's rights (a non-admin asking for the audit log) and a refused write stay audited. Through the
real server (pytest-jupyter), SQLite, simulated GPUs.
"""

from __future__ import annotations

from typing import Any

from .conftest import BOSS_TOKEN, wait_for


async def test_newuser19_n11_a_read_s_malformed_query_is_answered_not_audited(sched_app: Any, api: Any) -> None:
    for path, params in (("jobs", {"limit": "abc"}), ("jobs", {"foo": "1"}), ("usage", {"by": "planet"}),
                         ("queue", {"limit": "0"})):
        status, body = await api("GET", path, params=params)
        assert status == 400 and body["error"]["field"], (path, params, body)
    status, body = await api("GET", "audit")  # ivan is no admin: beyond his rights
    assert status == 403, body
    status, body = await api("POST", "jobs", {"gpus": -1, "command": ["true"]})  # a refused write
    assert status == 400, body

    async def both() -> list[Any]:
        _, rows = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
        return rows if len(rows) >= 2 else []

    rows = await wait_for(both, timeout_s=10)
    requests = sorted(str(r["details"].get("request")) for r in rows)
    assert len(rows) == 2 and "submit job" in requests, rows  # the write and the 403 read, nothing else
    assert not any("limit" in str(r.get("message")) or "planet" in str(r.get("message")) or
                   "'foo'" in str(r.get("message")) for r in rows), rows
