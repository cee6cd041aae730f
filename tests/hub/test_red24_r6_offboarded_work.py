"""Red team 24, R6 (offboarding): a user deleted from the hub is no member of any team, so their running
work is outside the guarantee of the team it is charged to, as a group removal's is.

eve runs a 2-GPU job on ``teama`` (guaranteed 2, no borrowing); the hub admin deletes eve; the job runs on
(``removed_user_grace_s`` 0: an admin decides), but teama's member ana, submitting 1 GPU, takes its GPUs
back as a reclaim (audited ``reclaim`` with ``details.departed``). Before, ana waited behind it with no
word why for as long as it ran.

Real parts: a ``SchedulerService`` on a real SQLite store, real jobs as processes on simulated GPUs, the
real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.membership import hub_caller_of
from jupyter_sched.hub.offboard import OWNER_REMOVED_ACTION, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against
from tests.in_process import cancel_all_and_close, tick_until

NOW = datetime(2026, 12, 5, 16, 0, tzinfo=timezone.utc)
SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]


def test_red24_r6_a_removed_users_running_job_is_taken_back_by_the_teams_member(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0,
                           stop_grace_s=2.0)
    svc.set_quotas({"quotas": [{"team": "teama", "guaranteed": 2, "borrowing_limit": 0}]}, actor="admin")
    off = Offboarding(caller_of=hub_caller_of(svc.services, lambda: ()))
    svc.services.set_held_users(off.held)
    svc.services.set_held_jobs(off.held_jobs)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "eve": {"": True}}
    roles: dict[str, dict[str, Any]] = {"ana": {"groups": ["teama"], "admin": False},
                                        "eve": {"groups": ["teama"], "admin": False}}

    def submit(user: str, gpus: int) -> str:
        caller = svc.services.caller(user, admin=False, groups=["teama"])
        body = {"gpus": gpus, "team": "teama", "command": SLEEP, "name": f"{user}-{gpus}"}
        return str(svc.services.jobs.submit(caller, parse(SubmitJobRequest, body)).id)

    def state(job_id: str) -> str:
        return str(svc.get_job(job_id, user="admin", is_admin=True)["state"])

    try:
        eves = submit("eve", 2)
        tick_until(svc, "eve's job to run", lambda: state(eves) == "running")
        assert asyncio.run(offboard_against(svc, off, users, roles)) == []
        assert off.held_jobs() == {}, "a member's running work is the team's"

        del users["eve"]  # the hub admin deletes eve
        assert asyncio.run(offboard_against(svc, off, users, roles)) == ["eve"]
        hold = off.held_jobs()[eves]
        assert (hold.team, hold.since, hold.priority) == ("teama", NOW, None), hold
        (record,) = [r for r in svc.audit(limit=100) if r["action"] == OWNER_REMOVED_ACTION]
        assert "left running outside their teams' guarantees (the teams' members may take their GPUs back)" in \
            record["message"], record["message"]

        anas = submit("ana", 1)
        tick_until(svc, "ana's job to run", lambda: state(anas) == "running")
        (taken,) = [r for r in svc.audit(limit=100) if r["action"] == "reclaim"]
        assert taken["job_id"] == eves and taken["details"]["for_job"] == anas, taken
        assert taken["details"]["departed"] == {"user": "eve", "team": "teama", "since": NOW.isoformat()}, taken
        assert state(eves) != "running"
    finally:
        cancel_all_and_close(svc)
