"""hubadmin22 H7, H8, H10 (session 22): hub-mode quota words, a removed user's hold names the act,
admin views (usage, audit) from a terminal with cost's unit named.

Real parts: a ``SchedulerService`` with a real SQLite store on simulated GPUs (H8); the quota service's
warnings and answer with the hub's groups as the membership source (H7); the CLI against a real
scheduler web app (H10).
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.offboard import REMOVED_WHY
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url

NOW = datetime(2026, 12, 5, 6, 0, tzinfo=timezone.utc)


def test_s22_hubadmin22_h8_a_removed_users_held_job_names_the_act(tmp_path: Path) -> None:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    svc.services.set_held_users(lambda: {"ha22d": REMOVED_WHY})
    try:
        job_id = svc.submit({"gpus": 1, "command": ["true"], "name": "urgent"}, user="ha22d")["id"]
        for _ in range(3):
            svc.tick()
        job = svc.get_job(job_id, user="ha22d")
        assert job["state"] == "pending" and job["reason"]["code"] == "OwnerRemoved"
        said = job["reason"]["eta_reason"]
        assert "re-add ha22d on the hub (it then starts as before)" in said, said
        assert f"jupyter-sched cancel {job_id} (admins)" in said, said
        assert f"jupyter-sched cancel {job_id}" in job["reason"]["unblock"]
    finally:
        svc.store.close()


def test_s22_hubadmin22_h7_the_hub_poll_reads_the_groups_with_no_live_work(tmp_path: Path) -> None:
    """The poll's user listing feeds GET quotas' ``user_teams`` even while no job is live (it returned
    before reading the hub when no one had work)."""
    import asyncio

    from jupyter_sched.hub.offboard import Offboarding
    from jupyter_sched.services.hub_teams import groups_of_models
    from tests.hub.test_red15_offboarding import offboard_against

    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    off = Offboarding(grace_s=0.0)
    seen: list[dict[str, object]] = []
    off.on_models = lambda models: seen.append(dict(models))
    try:
        assert asyncio.run(offboard_against(svc, off, {"ha22a": {"": False}}, roles={"ha22a": {"groups": ["vision"]}})) == []
        assert seen and "ha22a" in seen[0]
        assert groups_of_models(seen[0], NOW).members == {"ha22a": ("vision",)}
    finally:
        svc.store.close()
