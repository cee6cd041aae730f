"""s40-views: what every server on one store shows is the same (session 39's left-overs).

Session 39 put a team's reclaim cool-down (``GET me`` / ``GET quotas`` ``reclaim_cooldowns``, newuser38 n21), a
user's held work (``GET me`` ``held``, n24) and a lease's keepalive (``idle_release.keepalive_until``, newuser39
n11) on the wire — each read from the leading engine's memory (its last cycle, its idle ladder cache). Another
embedded server on the same database (a second JupyterLab of the same user, a second replica) said none of them.
And ``jupyter-sched quotas`` named the releaser to the releaser ("after n40a's release", not "your release").

Two servers' services on one store (SQLite and the session's real PostgreSQL): ``a`` ticks and leads, ``b`` never
ticks (it does not lead). Leases bound to a kernel id only (no processes); 4 simulated GPUs; a manual clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import JobKind, PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.scheduling.gates import HELD_CODES
from jupyter_sched.services.facade import SchedulerService
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.jobs import UpdateJobRequest
from jupyter_sched.store import Store
from jupyter_sched.store.codec import dumps
from jupyter_sched.wording.quota import reclaim_cooldown_line
from tests.leftovers import end_jobs
from tests.runtime.test_engine import state_of, wait_until

TEAMS = {"n40a": "vision", "n40b": "vision", "n40c": "nlp"}
QUOTAS = {"quotas": [{"team": "vision", "guaranteed": 3, "borrowing_limit": 1},
                     {"team": "nlp", "guaranteed": 1, "borrowing_limit": 1}]}
POLICY = IdlePolicies(default=IdlePolicy(window_s=1800.0, warning_s=300.0, grace_s=0.0, max_gap_s=300.0,
                                         keepalive_max_s=7200.0))


@pytest.fixture
def servers(db_url: str, tmp_path: Path) -> Iterator[tuple[SchedulerService, SchedulerService, ManualClock]]:
    clock = ManualClock(datetime.now(timezone.utc).replace(microsecond=0))
    made = [SchedulerService(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                             executor=LocalExecutor(tmp_path / name), clock=clock, cycle_interval_s=0.0, owner_id=name,
                             user_teams=TEAMS, idle_policies=POLICY,
                             scheduling_profile=SchedulingProfile(grace_s=5, min_runtime_s=0))
            for name in ("a", "b")]
    yield made[0], made[1], clock
    for svc in made:
        assert end_jobs(svc.executor) == []
        svc.store.close()


def _me(svc: SchedulerService, user: str) -> dict[str, Any]:
    answer = svc.services.accounting.me(svc.services.caller(user, admin=False))
    wire: dict[str, Any] = answer.to_wire()
    return wire


def _cooling(svc: SchedulerService, user: str, *, admin: bool = False) -> list[dict[str, Any]]:
    got = svc.services.quotas.get(svc.services.caller(user, admin=admin)).to_wire()
    return list(got.get("reclaim_cooldowns") or [])


def test_s40_views_a_second_server_says_the_cooldown_and_the_releaser_reads_your_release(
        servers: tuple[SchedulerService, SchedulerService, ManualClock]) -> None:
    """Failed before: ``b``'s GET me and GET quotas had no ``reclaim_cooldowns`` (only the leader's memory held
    them), and the CLI's ``quotas`` line said "after n40a's release" to n40a."""
    a, b, clock = servers
    a.set_quotas(QUOTAS, actor="admin")
    held = a.submit({"gpus": 2, "kernel_id": "k-a"}, user="n40a", kind="lease")["id"]  # vision uses 2
    borrowed = a.submit({"gpus": 2, "kernel_id": "k-c"}, user="n40c", kind="lease")["id"]  # nlp borrows 1
    wait_until(lambda: state_of(a, held) == state_of(a, borrowed) == "running", "both leases", tick=a.tick)
    clock.advance(60)
    taker = a.submit({"gpus": 1}, user="n40a", kind="lease")["id"]  # vision's guarantee: takes nlp's GPU back
    wait_until(lambda: state_of(a, taker) == "running", "the reclaiming lease", tick=a.tick)
    clock.advance(2)
    a.services.jobs.cancel(a.services.caller("n40a", admin=False), taker, kind=JobKind.LEASE)  # gave it up at once
    a.tick()
    assert a.engine.is_leader and not b.engine.is_leader

    on_a, on_b = _me(a, "n40b"), _me(b, "n40b")  # a teammate, on each server
    assert on_a["reclaim_cooldowns"], on_a
    assert on_b["reclaim_cooldowns"] == on_a["reclaim_cooldowns"], "the second server said no cool-down before"
    assert on_b["quota_text"] == on_a["quota_text"] and "reclaims paused until" in on_b["quota_text"]
    [cool] = on_b["reclaim_cooldowns"]
    assert (cool["team"], cool["user"], cool["cause"]) == ("vision", "n40a", "release"), cool
    assert _cooling(b, "n40c") == _cooling(a, "n40c") != []  # another team: when, not who
    assert "n40a" not in str(_cooling(b, "n40c"))

    # the releaser's own `jupyter-sched quotas` (GET quotas, which names no reader): "your release"
    [mine] = _cooling(b, "n40a")
    line = reclaim_cooldown_line(mine, clock.now())
    assert "(cool-down after your release)" in line and "n40a" not in line, line
    assert line == mine["text"], "the server's words for its caller, clocks in the reader's zone (UTC here)"

    clock.advance(datetime.fromisoformat(cool["until"]).timestamp() - clock.now().timestamp() + 1)  # over
    assert _me(b, "n40b")["reclaim_cooldowns"] == [] and _cooling(b, "n40c") == []


def test_s40_views_a_second_server_says_held_work_and_a_keepalive(
        servers: tuple[SchedulerService, SchedulerService, ManualClock]) -> None:
    """Failed before: ``b``'s GET me ``held`` was [] (the leader's last cycle only) and ``b``'s lease row had
    no ``keepalive_until`` (the leader's idle ladder cache; a server that does not lead fills none)."""
    a, b, clock = servers
    lease = a.submit({"gpus": 4, "kernel_id": "k-b"}, user="n40b", kind="lease")["id"]  # every GPU
    wait_until(lambda: state_of(a, lease) == "running", "n40b's lease", tick=a.tick)
    waits = a.submit({"gpus": 1, "command": ["true"]}, user="n40b")["id"]
    kept = a.submit({"gpus": 1, "command": ["true"]}, user="n40b")["id"]
    a.services.jobs.update(a.services.caller("n40b", admin=False), kept, parse(UpdateJobRequest, {"held": True}))
    a.tick()
    assert a.get_job(kept, user="n40b")["reason"]["code"] == "Held"

    on_a, on_b = _me(a, "n40b"), _me(b, "n40b")
    assert on_a["held"] == [{"code": "Held", "jobs": 1, "what": "held by n40b",
                             "fix": f"release it: jupyter-sched release {kept}"}], on_a["held"]
    assert on_b["held"] == on_a["held"], "the second server said no held work before"
    assert on_b["pending"] == 2 and waits != kept

    # a keepalive through the second server: both servers' lease rows say until when, before any cycle
    answer = b.keepalive(lease, user="n40b", seconds=3600)
    until = answer["keepalive_until"]
    for svc in (a, b):
        row = svc.get_job(lease, user="n40b")
        assert row["idle_release"]["keepalive_until"] == until, (svc.engine.owner_id, row["idle_release"])
    clock.advance(3601)  # over: no longer said
    assert "keepalive_until" not in b.get_job(lease, user="n40b")["idle_release"]


def test_s40_views_a_stored_reason_starts_with_its_code() -> None:
    """The store finds held work by the reason's text (``{"code":"Held",…``: :func:`dumps` sorts the keys) — a
    reason field sorted before ``code`` would make every held job unseen: this pins the encoding for every
    held code."""
    for code in sorted(HELD_CODES):
        text = dumps(reason_to_dict(PendingReason(code=code, message="m", details={"a": 1}, unblock="u")))
        assert text.startswith(dumps({"code": code})[:-1] + ","), text


def test_s40_views_a_second_server_says_what_waits_on_your_gpus(
        servers: tuple[SchedulerService, SchedulerService, ManualClock]) -> None:
    """The same kind (newuser31 n14's ``waiting_on_you``, leader-only like the others): failed before — ``b``'s
    GET me of the holder had none."""
    a, b, clock = servers
    holder = a.submit({"gpus": 4, "command": ["sleep", "60"], "time_limit": "10m"}, user="n40c")["id"]  # every GPU
    wait_until(lambda: state_of(a, holder) == "running", "n40c's job", tick=a.tick)
    job = a.submit({"gpus": 1, "command": ["true"], "time_limit": "5m"}, user="n40a")["id"]
    lease = a.submit({"gpus": 1, "kernel_id": "k-b"}, user="n40b", kind="lease")["id"]
    a.tick()
    on_a, on_b = _me(a, "n40c"), _me(b, "n40c")
    assert on_a.get("waiting_on_you"), on_a
    assert on_b.get("waiting_on_you") == on_a["waiting_on_you"], "the second server said nothing waits before"
    assert on_b["waiting_on_you"]["users"] == ["n40a", "n40b"], on_b["waiting_on_you"]
    assert _me(b, "n40a").get("waiting_on_you") is None, _me(b, "n40a").get("waiting_on_you")  # a waiter: none
    a.cancel(holder, user="n40c")

    def started() -> bool:
        clock.advance(1)
        return state_of(a, job) != "pending" and state_of(a, lease) != "pending"

    wait_until(started, "the waiting work to start", tick=a.tick)
    assert _me(b, "n40c").get("waiting_on_you") is None  # read again once the store's rows changed


def test_s40_views_a_keepalive_over_is_not_said() -> None:
    """A lease row read (or kept: the services keep a row per row version) while its keepalive lasted, said after it
    ended: failed before — ``not before 16:16 UTC: kept while idle until then`` of a time already past."""
    from jupyter_sched.wording.jobs import ends_by, keepalive_line

    until = datetime(2026, 12, 7, 16, 16, tzinfo=timezone.utc)
    lease = {"id": "l-1", "kind": "lease", "state": "running", "kernel_id": "k-1",
             "idle_release": {"action": "release", "after_s": 1800, "keepalive_until": until.isoformat()}}
    before, after = until.replace(minute=0), until.replace(second=1)
    assert "not before 16:16 UTC: kept while idle until then" in ends_by(lease, before)
    assert "not before" not in ends_by(lease, after) and "reclaimed after 30m idle" in ends_by(lease, after)
    assert keepalive_line(lease, before).startswith("kept while idle until 16:16 UTC")
    assert keepalive_line(lease, after) == ""
