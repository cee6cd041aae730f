"""newuser38 (session 38): who is charged on a hub, and what status says.

Real parts: a ``SchedulerService`` with a real SQLite store on simulated GPUs, its offboarding check
against the loopback hub double of the other hub tests (it speaks the hub's REST wire format: a real
JupyterHub's user deletion is what it stands for).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against

NOW = datetime(2026, 12, 7, 10, 40, tzinfo=timezone.utc)


def _service(tmp_path: Path) -> SchedulerService:
    return SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)


def test_newuser38_n18_a_deleted_users_held_line_says_to_re_add_their_groups_too(tmp_path: Path) -> None:
    """JupyterHub drops a deleted user's group memberships with the user: re-adding the user alone held
    their jobs again as "no longer a member of team vision". The line names the groups they were in, also
    after a restart (read back from the removal's audit record)."""
    svc = _service(tmp_path)
    off = Offboarding(grace_s=0.0)
    svc.services.set_held_users(off.held, off.removed_groups)
    users: dict[str, dict[str, bool]] = {"n38b": {"": False}, "n38a": {"": False}}
    roles = {"n38b": {"groups": ["vision", "nlp"]}, "n38a": {"groups": ["vision"]}}
    try:
        job_id = svc.submit({"gpus": 1, "command": ["true"], "name": "vb"}, user="n38b")["id"]
        assert asyncio.run(offboard_against(svc, off, users, roles=roles)) == []
        del users["n38b"]
        assert asyncio.run(offboard_against(svc, off, users, roles={"n38a": roles["n38a"]})) == ["n38b"]
        svc.tick()
        reason = svc.get_job(job_id, user="n38b")["reason"]
        assert reason["code"] == "OwnerRemoved", reason
        assert "re-add n38b on the hub and to its groups nlp, vision (it then starts as before)" in reason["eta_reason"]
        assert reason["unblock"].startswith("An admin: re-add n38b on the hub and to its groups nlp, vision"), reason
        record = [r for r in svc.audit(limit=100) if r["action"] == "owner_removed"][-1]
        assert record["details"]["groups"] == ["nlp", "vision"], record
        again = Offboarding(grace_s=0.0)  # a restart: the groups are read back with the removal
        again.prime(svc.services)
        assert again.removed_groups() == {"n38b": ("nlp", "vision")}
    finally:
        svc.store.close()


def test_newuser38_n18_a_user_deleted_before_any_listing_is_told_to_be_re_added(tmp_path: Path) -> None:
    svc = _service(tmp_path)
    off = Offboarding(grace_s=0.0)
    svc.services.set_held_users(off.held, off.removed_groups)
    try:
        job_id = svc.submit({"gpus": 1, "command": ["true"], "name": "vb"}, user="n38b")["id"]
        assert asyncio.run(offboard_against(svc, off, {"n38a": {"": False}})) == ["n38b"]
        svc.tick()
        said = svc.get_job(job_id, user="n38b")["reason"]["eta_reason"]
        assert "re-add n38b on the hub (it then starts as before)" in said, said
    finally:
        svc.store.close()
