"""hubadmin24 B4 and B5 through a real server: PUT quotas (its dry run too) that lowers team ml below
what its running work holds says so in ``warnings`` and in the ``quotas_changed`` audit row; a job of ml
then held by ml's own quota is told it waits for ml's running work, not for another team's job whose end
frees a GPU first.

The B4 half fails before its fix (no warning); the B5 half guards the wire (one node here, where the old
rule named ml's jobs too: ``tests/core/test_s24_hubadmin24_b5_quota_eta_names_own_work.py`` is the one that
failed before).

Real parts: a jupyter_server with jupyter_sched, per-user tokens (judy in ml, ivan in default, boss an
admin), real job processes (``sleep``) on 4 simulated GPUs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, server_config, wait_for

SAID = ("ml: running work holds 3 GPUs, 2 GPUs over the new limit of 1 GPU — it runs on (nothing is stopped); "
        "new work waits until it is under")


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, user_teams={"judy": "ml"},
                         quotas=[{"team": "ml", "guaranteed": 2, "borrowing_limit": 2},
                                 {"team": "default", "guaranteed": 2}])


async def _submit(api: Any, token: str, *, limit: str = "10m") -> str:
    status, job = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "300"], "time_limit": limit}, token=token)
    assert status == 201, job
    return str(job["id"])


async def test_s24_hubadmin24_b4_b5_lowered_quota_warns_and_the_held_job_waits_for_its_own_team(
        sched_app: Any, api: Any) -> None:
    mine = [await _submit(api, JUDY_TOKEN) for _ in range(3)]
    ivans = await _submit(api, IVAN_TOKEN, limit="5m")  # ends first: frees a GPU ml's quota cannot use

    async def all_running() -> bool:
        for job_id in (*mine, ivans):
            _, job = await api("GET", f"jobs/{job_id}", token=BOSS_TOKEN)
            if job["state"] != "running":
                return False
        return True

    await wait_for(all_running)
    lowered = {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 0}, {"team": "default", "guaranteed": 2}]}
    status, dry = await api("PUT", "quotas", {**lowered, "dry_run": True}, token=BOSS_TOKEN)
    assert status == 200 and dry["warnings"][0] == SAID, dry
    status, body = await api("PUT", "quotas", lowered, token=BOSS_TOKEN)
    assert status == 200 and body["warnings"][0] == SAID, body
    status, audit = await api("GET", "audit", params={"action": "quotas_changed"}, token=BOSS_TOKEN)
    assert status == 200, audit
    rows = audit if isinstance(audit, list) else audit.get("events", audit)
    assert [r["message"] for r in rows if r["actor"] == "boss"] == [
        f"quotas changed by boss: changed ml: guaranteed 2 → 1, borrowing limit 2 → 0; {SAID}"], rows  # B2: what

    held = await _submit(api, JUDY_TOKEN)

    async def explained() -> Any:
        _, job = await api("GET", f"jobs/{held}", token=BOSS_TOKEN)
        reason = job.get("reason") or {}
        return reason if (reason.get("details") or {}).get("eta_waits_on") else None

    reason = await wait_for(explained)
    assert reason["code"] in ("ExceedsQuota", "BorrowingLimitReached"), reason
    waits = reason["details"]["eta_waits_on"]
    assert set(waits) <= set(mine) and ivans not in waits, (waits, mine, ivans)
