"""GET audit reads the refusals answered before it (session 21, fix 6; the issue-16 item 4 flake).

A refusal the web layer records (a request model's or the spec's validation: a job's ``env`` naming
``JUPYTER_SCHED_JOB_TOKEN``) is written on the request threads just after its 400 is answered. An admin (or a
test) reading ``GET audit`` right after the answer could read before the write: under load
``test_issue16_item4_a_users_env_cannot_set_the_job_token`` found no row once. ``GET audit`` now waits for the
refusal records already asked for, so it reads its own side's writes. Real parts: the server, the SQLite
store; the write is held back by a real second SQLite connection holding the write lock (as another process
writing would), released on the loop while the read is waiting.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from .conftest import BOSS_TOKEN

TOKEN_ENV = "JUPYTER_SCHED_JOB_TOKEN"


async def test_s21_fix6_get_audit_reads_a_refusal_answered_before_it(sched_app: Any, api: Any, tmp_path: Path) -> None:
    """The refusal's record cannot be written until the other writer lets go; GET audit waits for it."""
    other = sqlite3.connect(tmp_path / "sched.sqlite", isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")  # holds the write lock: the refusal's record waits (busy timeout 30 s)
        status, error = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "env": {TOKEN_ENV: "jsjob1.x.1.y"}})
        assert status == 400 and error["error"]["field"] == f"env.{TOKEN_ENV}", error
        asyncio.get_running_loop().call_later(1.0, other.rollback)  # the other writer lets go while the read waits
        _, rows = await api("GET", "audit", params={"action": "refused"}, token=BOSS_TOKEN)
    finally:
        other.close()
    assert [r for r in rows if r["details"].get("field") == f"env.{TOKEN_ENV}"], rows
