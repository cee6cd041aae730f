"""Hubadmin24 B6 (low): revoking a priority class was audited ``team_left`` by ``jupyterhub``. The admin had
taken ``high`` out of team teama's policy (``PUT quotas``); the owner was still a member of teama, and the hub
had done nothing — yet the record said the owner left the team, and that the hub did it.

Now a class no longer granted is its own action, ``priority_class_revoked`` (and ``priority_class_regranted``
once granted again), naming the class, by whoever changed it: the admin whose ``PUT quotas`` took it away —
the central service checks the holds again right after that request
(:meth:`jupyter_sched.hub.offboard.Offboarding.recheck`, wired as the quota service's ``on_change``) — and
``jupyter_sched`` (the server's settings) when a hub poll finds one changed, never ``jupyterhub``: the hub
changes groups, never classes.

Real parts: a ``SchedulerService`` on a real SQLite store, the real :class:`~jupyter_sched.hub.hubapi.HubAPI`
against the loopback hub double, the real offboarding check and ``PUT quotas`` through the services.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_sched.hub.membership import TEAM_LEFT_ACTION
from jupyter_sched.services.audit import AUDIT_ACTIONS
from tests.hub.test_red15_offboarding import offboard_against
from tests.hub.test_red18_team import QUOTAS, SLEEP, _job, _service, _submit
from tests.in_process import cancel_all_and_close

CLASS_REVOKED_ACTION = "priority_class_revoked"  # spelt out: the test runs (and fails) where they do not exist
CLASS_REGRANTED_ACTION = "priority_class_regranted"


def _quotas(*allowed: str) -> dict[str, Any]:
    return {**QUOTAS, "teams": [{"team": "teama", "allowed_priorities": list(allowed)}]}


def _rows(svc: Any, action: str) -> list[dict[str, Any]]:
    return [r for r in svc.audit(limit=1000) if r["action"] == action]


def test_hubadmin24_b6_a_class_revoked_by_put_quotas_is_its_own_record_by_that_admin(tmp_path: Path) -> None:
    svc, off = _service(tmp_path, gpus=2)
    svc.services.quotas.on_change = lambda actor: off.recheck(svc.services, actor)  # as the central service wires it
    users: dict[str, dict[str, bool]] = {"b6a": {"": True}}
    roles: dict[str, dict[str, Any]] = {"b6a": {"groups": ["teama"], "admin": False}}
    try:
        svc.set_quotas(_quotas("normal", "low", "high"), actor="admin")
        queued = _submit(svc, "b6a", ["teama"], {"gpus": 1, "team": "teama", "priority": "high", "command": SLEEP})
        asyncio.run(offboard_against(svc, off, users, roles))  # the first hub listing: nothing changed
        assert _rows(svc, CLASS_REVOKED_ACTION) == [] and _rows(svc, TEAM_LEFT_ACTION) == []
        svc.set_quotas(_quotas("normal", "low"), actor="boss")  # boss takes high out of teama's policy
        # failed before: one team_left record by jupyterhub, written at the next hub poll
        (revoked,) = _rows(svc, CLASS_REVOKED_ACTION)
        assert (revoked["actor"], revoked["user"]) == ("boss", "b6a"), revoked
        assert revoked["details"]["priority"] == "high" and revoked["details"]["team"] == "teama", revoked
        assert revoked["details"]["held"] == [queued], revoked
        assert revoked["message"].startswith("priority high is no longer granted to b6a in team teama"), revoked
        asyncio.run(offboard_against(svc, off, users, roles))  # the next poll: the same change, not said again
        assert len(_rows(svc, CLASS_REVOKED_ACTION)) == 1 and _rows(svc, TEAM_LEFT_ACTION) == []
        svc.tick()
        assert _job(svc, queued)["reason"]["code"] == "TeamMembership", _job(svc, queued)
        svc.set_quotas(_quotas("normal", "low", "high"), actor="boss")  # granted again
        (regranted,) = _rows(svc, CLASS_REGRANTED_ACTION)
        assert (regranted["actor"], regranted["details"]["priority"]) == ("boss", "high"), regranted
        assert {CLASS_REVOKED_ACTION, CLASS_REGRANTED_ACTION} <= AUDIT_ACTIONS
    finally:
        cancel_all_and_close(svc)


def test_hubadmin24_b6_a_class_change_a_hub_poll_finds_is_the_settings_never_jupyterhub(tmp_path: Path) -> None:
    """No request told the service (a quota set changed under it, grants changed in the settings): the poll
    that finds it says ``jupyter_sched``, the server's settings."""
    svc, off = _service(tmp_path, gpus=2)  # no recheck wired: only the hub poll looks
    users: dict[str, dict[str, bool]] = {"b6b": {"": True}}
    roles: dict[str, dict[str, Any]] = {"b6b": {"groups": ["teama"], "admin": False}}
    try:
        svc.set_quotas(_quotas("normal", "low", "high"), actor="admin")
        _submit(svc, "b6b", ["teama"], {"gpus": 1, "team": "teama", "priority": "high", "command": SLEEP})
        svc.set_quotas(_quotas("normal", "low"), actor="boss")
        asyncio.run(offboard_against(svc, off, users, roles))
        (revoked,) = _rows(svc, CLASS_REVOKED_ACTION)
        assert revoked["actor"] == "jupyter_sched", revoked  # failed before: team_left by jupyterhub
        assert _rows(svc, TEAM_LEFT_ACTION) == []
    finally:
        cancel_all_and_close(svc)
