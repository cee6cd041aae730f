"""newuser38 N3: added to a second hub group, a user's new work was silently charged to the group first
in the alphabet. Their default team is now the group they joined first — kept across restarts (the
audit's ``team_order`` records) — and the change is said to them (``GET me``'s ``team_note``, a
``status`` line).

Real parts: a ``SchedulerService`` with a real SQLite store and its admission step; the hub poll's user
listing read from the loopback hub double of the other hub tests (the hub's REST wire format: a real
JupyterHub's ``POST /hub/api/groups/nlp/users`` is what its changed listing stands for).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.default_team import TeamOrder, record_order
from jupyter_sched.hub.offboard import Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.quotas import SetQuotasRequest
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording.status import status_lines
from tests.hub.test_red15_offboarding import offboard_against

NOW = datetime(2026, 12, 7, 10, 40, tzinfo=timezone.utc)


def _wired(svc: SchedulerService) -> tuple[Offboarding, TeamOrder]:
    """As the central service wires them: the poll's models to the order, the order to admission."""
    order = TeamOrder(record=lambda user, teams: record_order(svc.store, user, teams))
    order.prime(svc.store)
    svc.services.admission.group_order = order.order
    off = Offboarding(grace_s=0.0)
    off.on_models = lambda models: order.observe(models, NOW)
    return off, order


def _poll(svc: SchedulerService, off: Offboarding, groups: dict[str, list[str]]) -> None:
    asyncio.run(offboard_against(svc, off, {u: {"": False} for u in groups},
                                 roles={u: {"groups": g} for u, g in groups.items()}))


def test_newuser38_n3_a_second_hub_group_keeps_the_first_joined_as_default(tmp_path: Path) -> None:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(4, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0)
    try:
        svc.services.quotas.set(svc.services.caller("root", admin=True), parse(SetQuotasRequest, {"quotas": [
            {"team": "vision", "guaranteed": 2}, {"team": "nlp", "guaranteed": 1}]}))
        off, order = _wired(svc)
        _poll(svc, off, {"n38b": ["vision"], "n38a": ["vision"]})
        assert svc.services.caller("n38b", admin=False, groups=["vision"]).teams == ("vision",)
        _poll(svc, off, {"n38b": ["nlp", "vision"], "n38a": ["vision"]})  # the hub admin adds n38b to nlp
        caller = svc.services.caller("n38b", admin=False, groups=["nlp", "vision"])
        assert caller.teams == ("vision", "nlp"), caller.teams  # not the alphabet's nlp
        note = order.note("n38b", NOW)
        assert note == "you are now also in nlp; new work still goes to vision — --team nlp to charge it", note
        assert order.note("n38b", NOW + timedelta(days=2)) == ""  # said for a day, not for ever
        assert order.note("n38a", NOW) == ""
        me: dict[str, Any] = {"user": "n38b", "team": "vision", "teams": ["vision", "nlp"], "team_note": note,
                              "quotas": [], "in_use": {}}
        assert any(line.strip() == note for line in status_lines("http://x", {}, me, {"gpus": []}, now=NOW))

        again = TeamOrder()  # a restart: the order is read back from the audit
        again.prime(svc.store)
        assert again.order("n38b", ["nlp", "vision"]) == ["vision", "nlp"]

        _poll(svc, off, {"n38b": ["nlp"], "n38a": ["vision"]})  # n38b leaves vision: the next by join order
        assert svc.services.caller("n38b", admin=False, groups=["nlp"]).teams == ("nlp",)
        assert order.note("n38b", NOW) == "you are no longer in vision; new work now goes to nlp"
        _poll(svc, off, {"n38b": ["nlp", "vision"], "n38a": ["vision"]})  # back in vision: it joined last now
        assert svc.services.caller("n38b", admin=False, groups=["nlp", "vision"]).teams == ("nlp", "vision")
    finally:
        svc.store.close()
