"""hubadmin26 B12: an admin leaving (the hub's admin flag removed) was recorded nowhere, and the
definition they made as an admin charging a team they are not in kept its schedule, every firing a
refused run. Now the offboarding check records ``admin_removed`` (by ``jupyterhub``) and pauses such
definitions, as a removed owner's are paused; their own team's definitions keep firing.

Real parts as in ``test_s22_hubadmin22_h2_team_left_once``: a ``SchedulerService`` on a real SQLite
store, its definitions service, the real HubAPI against the loopback hub double."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.membership import hub_caller_of
from jupyter_sched.hub.offboard import ADMIN_REMOVED_ACTION, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest, GetDefinitionRequest
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against
from tests.hub.test_red18_team import NOW, QUOTAS


def test_s26_hubadmin26_b12_a_demoted_admin_is_recorded_and_their_other_team_definitions_paused(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0)
    svc.set_quotas(QUOTAS, actor="admin")
    users: dict[str, dict[str, bool]] = {"h263d2725": {"": True}}
    roles: dict[str, dict[str, Any]] = {"h263d2725": {"groups": ["teamb"], "admin": True}}
    script = tmp_path / "tick.py"
    script.write_text("print('t')\n")
    defs = svc.services.definitions
    try:
        admin = svc.services.caller("h263d2725", admin=True, groups=["teamb"])
        body = {"script": str(script), "schedule": "*/2 * * * *", "gpus": 0}
        other = defs.create(admin, parse(CreateDefinitionRequest, {**body, "name": "nlp-tick", "team": "teama"})).id
        own = defs.create(admin, parse(CreateDefinitionRequest, {**body, "name": "own-tick", "team": "teamb"})).id
        off = Offboarding(caller_of=hub_caller_of(svc.services, lambda: ()))
        asyncio.run(offboard_against(svc, off, users, roles))  # the admins as they are
        assert [r for r in svc.audit(limit=1000) if r["action"] == ADMIN_REMOVED_ACTION] == []

        roles["h263d2725"]["admin"] = False  # PATCH /hub/api/users/h263d2725 {"admin": false}
        asyncio.run(offboard_against(svc, off, users, roles))
        asyncio.run(offboard_against(svc, off, users, roles))  # once, not at every check
        (row,) = [r for r in svc.audit(limit=1000) if r["action"] == ADMIN_REMOVED_ACTION]
        assert row["actor"] == "jupyterhub" and row["details"]["paused_definitions"] == [other], row
        assert row["message"] == (f"h263d2725 is no longer a hub admin; 1 definition(s) charging teams they are not "
                                  f"in paused ({other}): change the team with jupyter-sched definitions edit ID "
                                  "--team, then resume"), row
        root = svc.services.caller("boss", admin=True)
        assert defs.get(root, other, GetDefinitionRequest()).paused
        assert not defs.get(root, own, GetDefinitionRequest()).paused  # their own team's keeps firing
    finally:
        svc.services.store.close()
