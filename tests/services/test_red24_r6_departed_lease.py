"""Red team 24, R6 (service half): a kernel lease outlived its owner leaving the team.

Found: after an admin took red24a out of team ``ml``, her lease's keepalive still answered 200 and
extended it, the lease stayed charged to ``ml`` holding ml's guarantee, and ml's remaining member
waited with no word why. Now (embedded: the quota set's members, ``PUT quotas``):

* the ``team_left`` record says her running lease is outside ml's guarantee (``details.reclaimable``);
* her keepalive answers 200 with a ``notice`` (left the team; not renewed; how to ask again under her
  team now) and extends nothing — no ``idle_keepalive`` record, ``keepalive_until`` unchanged;
* ml's member's job takes the GPUs back as a reclaim (audited ``reclaim`` with ``details.departed``),
  its reason meanwhile naming whose lease it was and that she left ml; then it runs.

Real parts: a SQLite store, the local executor, the service's own cycles (4 simulated GPUs).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.services import Services
from jupyter_sched.services.models import (
    GetAuditRequest,
    KeepaliveLeaseRequest,
    SetQuotasRequest,
    SubmitJobRequest,
)


def _teams(services: Services, boss: Any, *ml: str) -> None:
    """``PUT quotas``: ``ml`` guaranteed all 4 GPUs (no borrowing) with members ``ml``; red24a is in ``cv`` too."""
    services.quotas.set(boss, SetQuotasRequest.model_validate({
        "quotas": [{"team": "ml", "guaranteed": 4, "borrowing_limit": 0},
                   {"team": "cv", "guaranteed": 0, "borrowing_limit": 4}],
        "teams": [{"team": "ml", "members": list(ml)}, {"team": "cv", "members": ["red24a"]}]}))


def _audit(services: Services, boss: Any, action: str) -> list[Any]:
    return list(services.audit.list(boss, GetAuditRequest(action=action)).root)


class _KernelClient:
    """What ``%gpu keepalive`` asks of its client, answered by ``services`` for ``caller`` (REST's bodies)."""

    kernel_id = "k-r24a"

    def __init__(self, services: Services, caller: Any) -> None:
        self.services, self.caller = services, caller

    def lease(self, lease_id: str) -> dict[str, Any]:
        return dict(self.services.jobs.get(self.caller, lease_id).to_wire())

    def keepalive(self, lease_id: str) -> dict[str, Any]:
        return dict(self.services.leases.keepalive(self.caller, lease_id, KeepaliveLeaseRequest()).to_wire())


def test_red24_r6_a_left_members_lease_is_not_renewed_and_the_team_takes_it_back(
        services: Services, capsys: pytest.CaptureFixture[str]) -> None:
    boss = services.caller("boss", admin=True)
    _teams(services, boss, "red24a", "red24b")
    alice = services.caller("red24a", admin=False)
    lease = services.leases.request(alice, SubmitJobRequest(gpus=4, team="ml", kernel_id="k-r24a"))
    services.engine.tick()
    assert services.jobs.get(alice, lease.id).state in ("admitted", "running")

    _teams(services, boss, "red24b")  # the admin takes red24a out of ml
    (left,) = _audit(services, boss, "team_left")
    assert left.details["running"] == [lease.id] and left.details["reclaimable"] == [lease.id], left.details
    assert "left running outside ml's guarantee: ml's members may take their GPUs back" in left.message, left.message

    # her keepalive: 200, a notice, nothing extended (before: kept until now + the admin's maximum)
    alice = services.caller("red24a", admin=False)  # as a request of hers is resolved now: in cv only
    kept = services.leases.keepalive(alice, lease.id, KeepaliveLeaseRequest()).model_dump(mode="json")
    assert kept["keepalive_until"] is None, kept
    assert kept["notice"] == (
        f"GPUs held by your lease {lease.id}; you left team ml (found 12:00 UTC): outside ml's guarantee, "
        "reclaimable by its members; it is not renewed: this keepalive did not extend it, and it ends when ml's "
        "members take its GPUs back or it is released as idle — request GPUs again under your current team: "
        "%gpu request 4 --team cv"), kept["notice"]
    assert _audit(services, boss, "idle_keepalive") == [], "nothing was extended"
    client = _KernelClient(services, alice)
    magics = SchedMagics(None, client_factory=lambda: client)  # type: ignore[arg-type,return-value]
    magics.lease = client.lease(lease.id)
    magics.gpu("keepalive")  # %gpu keepalive in her notebook shows the notice (before: "keepalive recorded")
    shown = " ".join(capsys.readouterr().out.split())
    assert shown.startswith(f"Lease {lease.id}: not kept alive — GPUs held by your lease {lease.id}; you left team ml"), shown
    assert "keepalive recorded" not in shown and shown.endswith("%gpu request 4 --team cv."), shown

    bob = services.caller("red24b", admin=False)
    job = services.jobs.submit(bob, SubmitJobRequest(gpus=1, team="ml", name="b", command=["sleep", "60"]))
    services.engine.tick()
    (taken,) = _audit(services, boss, "reclaim")
    assert taken.job_id == lease.id and taken.details["for_job"] == job.id, taken
    assert taken.details["departed"]["user"] == "red24a" and taken.details["departed"]["team"] == "ml", taken.details
    seen = services.jobs.get(bob, job.id).model_dump(mode="json")
    assert seen["state"] == "pending" and seen["reason"]["code"] == "WaitingForPreemption", seen  # the grace
    assert (f"GPUs held by red24a's kernel lease ({lease.id}); red24a left team ml (found Nov 29 12:00 UTC): "
            "outside ml's guarantee, reclaimable by its members") in seen["reason"]["text"]["summary"], seen["reason"]["text"]
    for _ in range(4):
        services.clock.advance(30)  # the grace period passes
        services.engine.tick()
    assert services.jobs.get(bob, job.id).state in ("admitted", "running"), services.jobs.get(bob, job.id).reason
    assert services.jobs.get(alice, lease.id).state not in ("admitted", "running")
    services.jobs.cancel(boss, job.id)
    for _ in range(3):
        services.engine.tick()


def test_verify25_one_removal_reads_as_one_removal_when_its_reclaimed_job_is_held_later(services: Services) -> None:
    """verify25 (small): a member left while her job ran (``team_left`` #1, naming it); when the team took
    its GPUs back and the job was requeued, held, a second ``team_left`` said "is no longer a member"
    again with a new time — two removals in the log for one. The second record now keeps the change's
    first time and says it adds work to a change recorded before."""
    boss = services.caller("boss", admin=True)
    _teams(services, boss, "red24a", "red24b")
    alice = services.caller("red24a", admin=False)
    hers = services.jobs.submit(alice, SubmitJobRequest(gpus=4, team="ml", name="a", command=["sleep", "600"]))
    services.engine.tick()
    assert services.jobs.get(alice, hers.id).state in ("admitted", "running")
    _teams(services, boss, "red24b")  # the admin takes red24a out of ml
    (first,) = _audit(services, boss, "team_left")
    assert first.details["running"] == [hers.id] and "follow_up" not in first.details, first.details

    bob = services.caller("red24b", admin=False)
    services.clock.advance(60)
    his = services.jobs.submit(bob, SubmitJobRequest(gpus=4, team="ml", name="b", command=["sleep", "60"]))
    for _ in range(6):
        services.clock.advance(30)  # the grace period passes; her job is stopped (a real process) and requeued
        services.engine.tick()
    for _ in range(200):
        if services.jobs.get(alice, hers.id).state == "pending":
            break
        time.sleep(0.05)
        services.engine.tick()
    assert services.jobs.get(alice, hers.id).state == "pending", services.jobs.get(bob, his.id).reason
    services.membership.check()  # the next membership check (a hub's poll; embedded: a start or PUT quotas)
    rows = sorted(_audit(services, boss, "team_left"), key=lambda r: r.id)
    assert len(rows) == 2, [r.message for r in rows]
    second = rows[1]
    assert second.details["since"] == first.details["since"] and second.details["follow_up"] is True, second.details
    assert second.details["held"] == [hers.id], second.details
    assert second.message.startswith("red24a is no longer a member of team ml (found 12:00 UTC, recorded then) — "
                                     "since then: 1 pending job(s) held that ran before (requeued)"), second.message
