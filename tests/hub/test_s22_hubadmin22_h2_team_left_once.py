"""hubadmin22 H2: every service restart audited ``team_left`` again for the same membership change,
and the held job's "found" time moved to the restart. The changes announced are in memory; a restart
is a new :class:`~jupyter_sched.hub.offboard.Offboarding` on the same store, as here.

Real parts as in ``test_red18_team``: a ``SchedulerService`` on a real SQLite store, real jobs as
processes on simulated GPUs, the real HubAPI against the loopback hub double.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.membership import TEAM_LEFT_ACTION, TEAM_REJOINED_ACTION, hub_caller_of
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against
from tests.hub.test_red18_team import NOW, QUOTAS, SLEEP, _job, _submit
from tests.in_process import cancel_all_and_close, tick_until


def _rows(svc: SchedulerService, action: str) -> list[dict[str, Any]]:
    return [r for r in svc.audit(limit=1000) if r["action"] == action]


def _offboarding(svc: SchedulerService) -> Offboarding:
    """What a (re)started service builds: a fresh Offboarding, its holds wired into the engine."""
    off = Offboarding(caller_of=hub_caller_of(svc.services, lambda: ()))
    svc.services.set_held_users(off.held)
    svc.services.set_held_jobs(off.held_jobs)
    return off


def test_s22_hubadmin22_h2_one_membership_change_is_one_record_found_once_across_restarts(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")),
                           inventory=SimulatedInventory(2, node="n1"), executor=LocalExecutor(tmp_path / "jobs"),
                           clock=clock, cycle_interval_s=0.0, stop_grace_s=2.0)
    svc.set_quotas(QUOTAS, actor="admin")
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "red18c": {"": True}}
    roles: dict[str, dict[str, Any]] = {"ana": {"groups": ["teama"], "admin": False},
                                        "red18c": {"groups": ["teama"], "admin": False}}
    try:
        ana = _submit(svc, "ana", ["teama"], {"gpus": 2, "team": "teama", "command": SLEEP, "name": "a-two"})
        tick_until(svc, "ana's job to run", lambda: _job(svc, ana)["state"] == "running")
        queued = _submit(svc, "red18c", ["teama"], {"gpus": 2, "team": "teama", "command": SLEEP, "name": "c-q"})
        roles["red18c"]["groups"] = []  # an admin removes red18c from hub group teama
        off = _offboarding(svc)
        asyncio.run(offboard_against(svc, off, users, roles))
        found = off.held_jobs()[queued].since
        assert len(_rows(svc, TEAM_LEFT_ACTION)) == 1

        for _ in range(2):  # two restarts, a minute apart
            clock.advance(60)
            off = _offboarding(svc)
            asyncio.run(offboard_against(svc, off, users, roles))
            assert set(off.held_jobs()) == {queued}, "still held after the restart"
            assert off.held_jobs()[queued].since == found, "found when it happened, not at the restart"
        assert len(_rows(svc, TEAM_LEFT_ACTION)) == 1, _rows(svc, TEAM_LEFT_ACTION)

        roles["red18c"]["groups"] = ["teama"]  # added back, then removed again: a new change, a new record
        asyncio.run(offboard_against(svc, off, users, roles))
        assert len(_rows(svc, TEAM_REJOINED_ACTION)) == 1
        clock.advance(60)
        roles["red18c"]["groups"] = []
        off = _offboarding(svc)  # a restart between: the rejoin read back ends the first change
        asyncio.run(offboard_against(svc, off, users, roles))
        assert len(_rows(svc, TEAM_LEFT_ACTION)) == 2
        assert off.held_jobs()[queued].since > found
    finally:
        cancel_all_and_close(svc)
