"""Red team 18, R4 (embedded half): a user removed from a team by ``PUT quotas`` keeps no queued job
running into that team's quota.

Without a hub, a team's members are the quota set's (team policies' ``members``, ``user_teams``).
Admission checks them at submit only: red18c queued a 2-GPU job on ``teama``, the admin removed
red18c from ``teama`` with ``PUT quotas``, and the job started later charged to teama. Now the
job is held (``TeamMembership``, with the change and the way out) from that ``PUT``, audited
``team_left`` as the admin who sent it; adding red18c back releases it (``team_rejoined``) and it
starts. Real parts: a SQLite store, the local executor, the service's own cycle.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from jupyter_sched.admission import AdmissionPolicy
from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetAuditRequest, SetQuotasRequest, SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.leftovers import end_jobs
from tests.runtime.builders import T0


def _teams(services: Services, boss: Any, *members: str) -> None:
    """``PUT quotas``: team ``teama`` (2 GPUs guaranteed) with ``members``."""
    services.quotas.set(boss, SetQuotasRequest.model_validate({
        "quotas": [{"team": "teama", "guaranteed": 2, "borrowing_limit": 0}],
        "teams": [{"team": "teama", "members": list(members)}]}))


def _audit(services: Services, boss: Any, action: str) -> list[Any]:
    return list(services.audit.list(boss, GetAuditRequest(action=action)).root)


def test_red18_r4_embedded_a_member_removed_by_put_quotas_has_queued_work_on_that_team_held(
        services: Services) -> None:
    """Failed before: the job started charged to teama after its owner was removed."""
    boss = services.caller("boss", admin=True)
    _teams(services, boss, "red18c", "ana")
    red = services.caller("red18c", admin=False)
    queued = services.jobs.submit(red, SubmitJobRequest(gpus=2, team="teama", name="q", command=["sleep", "60"]))
    assert services.jobs.get(red, queued.id).state == "pending"  # queued: no cycle has run yet

    _teams(services, boss, "ana")  # red18c removed from teama
    for _ in range(3):
        services.engine.tick()
    seen = services.jobs.get(red, queued.id).model_dump(mode="json")
    assert seen["state"] == "pending", "held with 4 GPUs free: never starts charged to teama"
    reason = seen["reason"]
    assert reason["code"] == "TeamMembership", reason
    assert reason["message"].startswith("held: red18c is no longer a member of team teama"), reason["message"]
    assert "an admin adds red18c back to teama" in reason["unblock"], reason["unblock"]
    (left,) = _audit(services, boss, "team_left")
    assert (left.actor, left.user, left.details["team"], left.details["held"]) == ("boss", "red18c", "teama",
                                                                                   [queued.id])

    _teams(services, boss, "ana", "red18c")  # added back: released, audited, and it starts
    for _ in range(3):
        services.engine.tick()
    assert services.jobs.get(red, queued.id).state in ("admitted", "running")
    (back,) = _audit(services, boss, "team_rejoined")
    assert (back.actor, back.user, back.details["team"]) == ("boss", "red18c", "teama")
    services.jobs.cancel(boss, queued.id)


def test_red18_r4_embedded_an_admin_and_the_default_team_are_never_held(tmp_path: Path) -> None:
    """An admin (``c.SchedApp.admin_users``) may charge any team an admin named, as at submit; nobody
    is held on the default team."""
    clock = ManualClock(T0)
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(4, node="vm"), executor=LocalExecutor(tmp_path / "jobs"),
                        clock=clock, admin_users=("boss",))
    boss = services.caller("boss", admin=True)
    _teams(services, boss, "ana")
    boss = services.caller("boss", admin=True)  # as a request now: an admin may charge a team the quotas name
    own = services.jobs.submit(boss, SubmitJobRequest(gpus=2, team="teama", name="demo", command=["sleep", "60"]))
    al = services.caller("al", admin=False)
    plain = services.jobs.submit(al, SubmitJobRequest(gpus=1, name="plain", command=["sleep", "60"]))
    _teams(services, boss)  # teama has no members now
    services.engine.tick()
    assert services.membership.held() == {}
    for job in (own, plain):  # both start: 3 of 4 GPUs
        assert services.jobs.get(boss, job.id).state in ("admitted", "running")
    assert _audit(services, boss, "team_left") == []
    for job in (own, plain):
        services.jobs.cancel(boss, job.id)
    assert end_jobs(services.executor) == []  # the cancels are carried out by a cycle this test does not run
    services.store.close()


def test_red18_r4_embedded_a_member_removed_from_the_settings_between_starts_is_held_at_start(tmp_path: Path) -> None:
    """``c.SchedApp.user_teams`` changed while the server was down: the start looks again."""
    url = sqlite_url(tmp_path / "sched.sqlite")

    def server(user_teams: dict[str, tuple[str, ...]]) -> Services:
        clock = ManualClock(T0)
        return Services(store=Store(url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                        executor=LocalExecutor(tmp_path / "jobs"), clock=clock,
                        policy=AdmissionPolicy(user_teams=user_teams))

    before = server({"red18c": ("teama",)})
    queued = before.jobs.submit(before.caller("red18c", admin=False),
                                SubmitJobRequest(gpus=1, team="teama", name="q", command=["sleep", "60"]))
    before.store.close()

    after = server({})  # red18c taken out of teama in the settings

    async def start_and_stop() -> None:
        await after.start()
        await after.stop()

    asyncio.run(start_and_stop())
    assert set(after.membership.held()) == {queued.id}
    (left,) = _audit(after, after.caller("boss", admin=True), "team_left")
    assert (left.actor, left.user, left.details["held"]) == ("jupyter_sched", "red18c", [queued.id])
