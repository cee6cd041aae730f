"""Red team 18, R4: a queued job kept charging a team its owner had left. Team membership was checked
only at submit: red18c queued a 2-GPU job on teama, an admin removed red18c from hub group teama,
and the job started later charged to teama's quota; a removed-then-re-created user's held job
pended again on a team they were no longer in.

Now the offboarding check resolves each owner of live work as a request of theirs would be (hub
groups and admin flag from the hub's user model) and holds their pending jobs on teams they may no
longer charge: code ``TeamMembership``, never admitted, one ``team_left`` record; added back, the
job starts (``team_rejoined``). A model without ``groups`` (unknown) holds nothing; the fallback
default team is never held.

Real parts: a ``SchedulerService`` on a real SQLite store, real jobs as processes on simulated GPUs,
the real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double
(``tests/hub/hub_double.py``, whose user models carry ``groups``/``admin`` as the hub's do).
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.membership import TEAM_LEFT_ACTION, TEAM_REJOINED_ACTION, hub_caller_of
from jupyter_sched.hub.offboard import OWNER_RETURNED_ACTION, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against
from tests.in_process import cancel_all_and_close, tick_until

NOW = datetime(2026, 12, 4, 16, 30, tzinfo=timezone.utc)
QUOTAS = {"quotas": [{"team": "teama", "guaranteed": 1, "borrowing_limit": None},
                     {"team": "teamb", "guaranteed": 1, "borrowing_limit": None},
                     {"team": "teamc", "guaranteed": 0, "borrowing_limit": None}]}
SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]


def _service(tmp_path: Path, gpus: int) -> tuple[SchedulerService, Offboarding]:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")),
                           inventory=SimulatedInventory(gpus, node="n1"), executor=LocalExecutor(tmp_path / "jobs"),
                           clock=ManualClock(NOW), cycle_interval_s=0.0, stop_grace_s=2.0)
    svc.set_quotas(QUOTAS, actor="admin")
    off = Offboarding(caller_of=hub_caller_of(svc.services, lambda: ()))
    svc.services.set_held_users(off.held)
    svc.services.set_held_jobs(off.held_jobs)
    return svc, off


def _submit(svc: SchedulerService, user: str, groups: list[str], body: dict[str, Any]) -> str:
    """Submit as a hub request of ``user`` in ``groups`` would (admission checks the team)."""
    caller = svc.services.caller(user, admin=False, groups=groups)
    return str(svc.services.jobs.submit(caller, parse(SubmitJobRequest, body)).id)


def _job(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


def _records(svc: SchedulerService, action: str, count: int) -> list[dict[str, Any]]:
    """The audit records of ``action``, once ``count`` are there (polled: CI's host is slower)."""
    deadline = time.monotonic() + 30
    while len(rows := [r for r in svc.audit(limit=1000) if r["action"] == action]) < count:
        assert time.monotonic() < deadline, f"gave up waiting for {count} {action} record(s): {rows}"
        time.sleep(0.05)
    return rows


def test_red18_r4_a_job_queued_on_a_team_its_owner_left_is_held_and_starts_once_added_back(tmp_path: Path) -> None:
    """Failed before the fix: red18c's job was admitted charged to teama once ana's GPUs freed."""
    svc, off = _service(tmp_path, gpus=2)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "red18c": {"": True}}
    roles: dict[str, dict[str, Any]] = {"ana": {"groups": ["teama"], "admin": False},
                                        "red18c": {"groups": ["teama"], "admin": False}}

    def check() -> list[str]:
        return asyncio.run(offboard_against(svc, off, users, roles))

    try:
        ana = _submit(svc, "ana", ["teama"], {"gpus": 2, "team": "teama", "command": SLEEP, "name": "a-two"})
        tick_until(svc, "ana's job to run", lambda: _job(svc, ana)["state"] == "running")
        queued = _submit(svc, "red18c", ["teama"], {"gpus": 2, "team": "teama", "command": SLEEP,
                                                   "name": "c-queued-teama"})
        svc.tick()
        assert _job(svc, queued)["state"] == "pending"
        assert check() == [] and off.held_jobs() == {}  # still a member: nothing held

        roles["red18c"]["groups"] = []  # an admin removes red18c from hub group teama
        check()
        assert set(off.held_jobs()) == {queued}
        (record,) = _records(svc, TEAM_LEFT_ACTION, 1)
        assert record["user"] == "red18c" and record["details"]["team"] == "teama", record
        assert record["details"]["held"] == [queued] and record["details"]["running"] == []
        assert "red18c is no longer a member of team teama" in record["message"]
        check()  # found once
        assert len(_records(svc, TEAM_LEFT_ACTION, 1)) == 1

        svc.cancel(ana, user="ana")  # teama's GPUs free: the held job still never starts
        tick_until(svc, "ana's job to stop", lambda: _job(svc, ana)["state"] == "cancelled")
        for _ in range(5):
            svc.tick()
        job = _job(svc, queued)
        assert job["state"] == "pending", job
        reason = job["reason"]
        assert reason["code"] == "TeamMembership", reason
        assert reason["message"].startswith("held: red18c is no longer a member of team teama"), reason
        assert reason["details"]["teams"] == ["default"] and "default" in reason["unblock"], reason
        assert "adds red18c back to teama" in reason["unblock"], reason
        me = svc.services.caller("ana", admin=False, groups=["teama"])  # teama's own member runs on its quota
        mine = str(svc.services.jobs.submit(me, parse(SubmitJobRequest, {"gpus": 1, "team": "teama",
                                                                          "command": ["true"]})).id)
        tick_until(svc, "teama's member's job to start", lambda: _job(svc, mine)["state"] in ("running", "succeeded"))

        roles["red18c"]["groups"] = ["teama"]  # added back: the hold ends, with one record
        check()
        assert off.held_jobs() == {}
        (back,) = _records(svc, TEAM_REJOINED_ACTION, 1)
        assert back["user"] == "red18c" and back["details"]["team"] == "teama", back
        tick_until(svc, "the held job to start once red18c is back in teama",
               lambda: _job(svc, queued)["state"] in ("admitted", "running"))
    finally:
        cancel_all_and_close(svc)


def test_red18_r4_unknown_groups_and_the_default_team_hold_nothing(tmp_path: Path) -> None:
    """One check, three owners: bob left teama (held: the control), cleo's model does not say her
    groups (a token without read:users:groups: unknown, nothing held), dan queued on the default
    team while in no group and was then added to teamb (default-team work is never held)."""
    svc, off = _service(tmp_path, gpus=4)
    users: dict[str, dict[str, bool]] = {"bob": {"": True}, "cleo": {"": True}, "dan": {"": True}}
    roles: dict[str, dict[str, Any]] = {"bob": {"groups": ["teamb"], "admin": False}, "dan": {"groups": ["teamb"]}}
    try:
        blocker = _submit(svc, "bob", ["teamb"], {"gpus": 4, "team": "teamb", "command": SLEEP, "name": "full"})
        tick_until(svc, "the blocker to run", lambda: _job(svc, blocker)["state"] == "running")
        bob = _submit(svc, "bob", ["teama"], {"gpus": 1, "team": "teama", "command": SLEEP, "name": "bob-a"})
        cleo = _submit(svc, "cleo", ["teama"], {"gpus": 1, "team": "teama", "command": SLEEP, "name": "cleo-a"})
        dan = _submit(svc, "dan", [], {"gpus": 1, "command": SLEEP, "name": "dan-default"})
        assert _job(svc, dan)["team"] == "default"

        asyncio.run(offboard_against(svc, off, users, roles))
        assert set(off.held_jobs()) == {bob}, off.held_jobs()  # bob left teama; cleo unknown; dan on default
        (record,) = _records(svc, TEAM_LEFT_ACTION, 1)
        assert record["user"] == "bob" and record["details"]["running"] == [], record  # blocker is teamb's

        svc.cancel(blocker, user="bob")
        tick_until(svc, "cleo's and dan's jobs to start",
               lambda: all(_job(svc, j)["state"] in ("admitted", "running") for j in (cleo, dan)))
        for _ in range(3):
            svc.tick()
        held = _job(svc, bob)
        assert held["state"] == "pending" and held["reason"]["code"] == "TeamMembership", held
    finally:
        cancel_all_and_close(svc)


def test_red18_r4_a_recreated_users_job_on_a_team_they_are_no_longer_in_stays_held(tmp_path: Path) -> None:
    """Failed before the fix: re-created in no group, red18c's held teamc job pended again as teamc
    (``owner_returned … their held jobs may start``)."""
    svc, off = _service(tmp_path, gpus=2)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "red18c": {"": True}}
    roles: dict[str, dict[str, Any]] = {"ana": {"groups": []}, "red18c": {"groups": ["teamc"]}}

    def check() -> list[str]:
        return asyncio.run(offboard_against(svc, off, users, roles))

    try:
        blocker = _submit(svc, "ana", [], {"gpus": 2, "command": SLEEP, "name": "full"})
        tick_until(svc, "the blocker to run", lambda: _job(svc, blocker)["state"] == "running")
        job = _submit(svc, "red18c", ["teamc"], {"gpus": 2, "team": "teamc", "command": ["true"], "name": "c-two"})
        del users["red18c"]  # deleted from the hub: held as removed
        assert check() == ["red18c"]
        users["red18c"] = {"": False}
        roles["red18c"] = {"groups": [], "admin": False}  # re-created, in no group
        check()
        assert set(off.held_jobs()) == {job} and off.held() == {}
        (returned,) = _records(svc, OWNER_RETURNED_ACTION, 1)
        assert returned["details"]["still_held"] == [job], returned
        assert "except 1 on teams they are no longer in" in returned["message"], returned
        (left,) = _records(svc, TEAM_LEFT_ACTION, 1)
        assert left["details"]["team"] == "teamc" and left["details"]["held"] == [job], left
        svc.tick()
        reason = _job(svc, job)["reason"]
        assert reason["code"] == "TeamMembership" and "team teamc" in reason["message"], reason
    finally:
        cancel_all_and_close(svc)
