"""Red team 17, R5 (still red team 15, R9, definitions part): offboarding could not pause a removed
user's definitions, nor could an admin — a pause re-checked a run *as the owner*, whom the hub no
longer knows (``404 … is not a user of this hub``), so they fired every minute for ever.

A pause changes nothing a run does: it never runs the owner's admission. Offboarding pauses a
removed owner's definitions (audited), an admin pauses any definition, and a paused one never fires.

Real parts: a ``SchedulerService`` on a real SQLite store; the owner resolver refuses a removed user
as the hub identity does (:class:`~jupyter_sched.hub.identity` raises ``NotFoundError`` naming
``user``); the real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import NotFoundError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.offboard import OWNER_REMOVED_ACTION, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest, GetDefinitionRequest
from jupyter_sched.store import Store, sqlite_url
from tests.hub.test_red15_offboarding import offboard_against

NOW = datetime(2026, 12, 4, 10, 0, 30, tzinfo=timezone.utc)


def _service(tmp_path: Path, removed: set[str]) -> tuple[SchedulerService, ManualClock]:
    clock = ManualClock(NOW)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0)
    definitions = svc.services.definitions
    resolve = definitions.owner_caller

    def owner(user: str) -> Any:  # as the hub identity answers for a user the hub deleted
        if user in removed:
            raise NotFoundError(f"{user} is not a user of this hub", field="user")
        return resolve(user)

    definitions.owner_caller = owner
    return svc, clock


def _define(svc: SchedulerService, tmp_path: Path, user: str, name: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text("print('x')\n")
    return svc.services.definitions.create(svc.services.caller(user, admin=False), parse(CreateDefinitionRequest, {
        "name": name, "script": str(script), "schedule": "* * * * *", "timezone": "UTC", "gpus": 0})).id


def _paused(svc: SchedulerService, definition_id: str) -> bool:
    got = svc.services.definitions.get(svc.services.caller("adm", admin=True), definition_id, GetDefinitionRequest())
    return bool(got.paused)


def _runs_of(svc: SchedulerService, user: str) -> list[dict[str, Any]]:
    return list(svc.list_jobs(user=user))


def test_red17_r5_an_admin_pauses_a_removed_owners_definition_and_it_never_fires(tmp_path: Path) -> None:
    """Failed before the fix: the admin's pause raised NotFoundError ("eve is not a user of this hub")."""
    removed: set[str] = set()
    svc, clock = _service(tmp_path, removed)
    try:
        eve = _define(svc, tmp_path, "eve", "eve-every-minute")
        ana = _define(svc, tmp_path, "ana", "ana-every-minute")
        removed.add("eve")
        paused = svc.services.definitions.pause(svc.services.caller("adm", admin=True), eve)
        assert paused.paused is True and _paused(svc, eve) and not _paused(svc, ana)
        row = next(r for r in svc.audit(limit=100) if r["action"] == "definition_updated")
        assert row["actor"] == "adm" and row["user"] == "eve" and "paused" in row["message"], row
        clock.advance(timedelta(minutes=3).total_seconds())
        svc.services.definitions.fire_due()
        assert _runs_of(svc, "ana"), "the control definition did not fire: the check below proves nothing"
        assert _runs_of(svc, "eve") == [], "a paused definition fired"
        assert not any(r["action"] == "definition_skipped" and r["user"] == "eve" for r in svc.audit(limit=1000))
    finally:
        svc.store.close()


def test_red17_r5_offboarding_pauses_a_removed_owners_definitions_with_its_audit(tmp_path: Path) -> None:
    """Failed before the fix: ``paused_definitions`` was [] and the definition stayed active."""
    removed: set[str] = set()
    svc, _ = _service(tmp_path, removed)
    off = Offboarding(grace_s=0.0)
    svc.services.set_held_users(off.held)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "eve": {"": True}}
    try:
        nightly = _define(svc, tmp_path, "eve", "eve-nightly")

        async def check() -> list[str]:
            return await offboard_against(svc, off, users)

        del users["eve"]
        removed.add("eve")  # the hub deleted eve: the owner's admission refuses her from now on
        assert asyncio.run(check()) == ["eve"]
        (record,) = [r for r in svc.audit(limit=1000) if r["action"] == OWNER_REMOVED_ACTION]
        assert record["details"]["paused_definitions"] == [nightly], record
        assert "1 definition(s) paused" in record["message"]
        assert _paused(svc, nightly)
    finally:
        svc.store.close()
