"""Incremental decisions (issue 17 item 4): a submit that fits now and overtakes nothing blocked is
admitted in the same tick without a full cycle; anything else still goes through a full cycle.

Real store (SQLite), real core (the live ledger of its last full cycle), simulated GPUs.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, check_integrity
from tests.runtime.builders import T0


def make_service(url: str, tmp_path: Path, gpus: int) -> SchedulerService:
    clock = ManualClock(T0)
    return SchedulerService(store=Store(url, now=clock.now), inventory=SimulatedInventory(gpus, node="n1"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=60.0)


def lease(gpus: int = 1, **extra: Any) -> dict[str, Any]:
    return {"gpus": gpus, "kernel_id": "k", **extra}


def test_a_lease_that_fits_is_bound_in_the_same_tick_without_a_full_cycle(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=4)
    first = svc.submit(lease(), user="ana", kind="lease")
    assert svc.tick().decided  # the first cycle of the term is a full one: it leaves the live ledger
    assert svc.get_job(first["id"], user="ana")["state"] == "running"
    second = svc.submit(lease(2), user="bob", kind="lease")
    report = svc.tick()
    assert not report.decided and report.admitted == [second["id"]] and report.started == [second["id"]]
    got = svc.get_job(second["id"], user="bob")
    assert got["state"] == "running" and len(got["allocation"]["gpu_uuids"]) == 2
    assert not set(got["allocation"]["gpu_uuids"]) & set(svc.get_job(first["id"], user="ana")["allocation"]["gpu_uuids"])
    assert svc.engine.incremental.decided == 1
    admit = next(e for e in svc.audit(limit=20) if e["action"] == "admit" and e["job_id"] == second["id"])
    assert admit["details"]["allocation"]["gpu_uuids"] == got["allocation"]["gpu_uuids"]
    assert check_integrity(svc.store).ok


def test_a_submit_that_would_delay_a_reservation_is_left_to_the_full_cycle(sqlite_db: str, tmp_path: Path) -> None:
    """EASY backfill: the blocked 2-GPU job holds a reservation from the holder's time limit; a
    job without a time limit on the free GPU may delay it. Whether it may is the full cycle's call
    (the core's backfill rules, with its runtime projections): the fast path never makes it."""
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    # A batch job with a time limit holds one GPU (a lease takes no time limit); its process
    # loops until the cancel at the end stops it.
    never = [sys.executable, "-c", "import time\nwhile True: time.sleep(0.05)"]
    holder = svc.submit({"gpus": 1, "command": never, "time_limit_s": 600}, user="ana")
    svc.tick()
    big = svc.submit(lease(2), user="bob", kind="lease")  # needs both GPUs: blocked, holds the reservation
    svc.tick()
    assert svc.get_job(big["id"], user="bob")["state"] == "pending"
    svc.submit(lease(), user="carl", kind="lease")  # fits the free GPU, but may delay big
    report = svc.tick()
    assert report.decided  # it went to a full cycle
    assert svc.engine.incremental.decided == 0 and svc.engine.incremental.deferred >= 1
    assert svc.get_job(holder["id"], user="ana")["state"] == "running"
    svc.cancel(holder["id"], user="ana")
    svc.tick()


def test_a_change_other_than_a_submit_spends_the_live_ledger(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=4)
    svc.submit(lease(), user="ana", kind="lease")
    svc.tick()
    svc.set_quotas({"quotas": [{"team": "default", "guaranteed": 1, "borrowing_limit": 0}]}, actor="admin")
    job = svc.submit(lease(), user="ana", kind="lease")
    report = svc.tick()
    assert report.decided and svc.engine.incremental.decided == 0  # the quota change asked a full cycle
    assert svc.get_job(job["id"], user="ana")["state"] == "pending"  # and the new quota holds it back


def test_a_follower_never_asks_its_driver_to_hurry(sqlite_db: str, tmp_path: Path) -> None:
    """A kicked engine that does not lead must not make its driver tick in a tight loop (it would
    hammer the store and starve the API while another server holds the lease)."""
    leader, follower = make_service(sqlite_db, tmp_path, gpus=1), make_service(sqlite_db, tmp_path, gpus=1)
    follower.engine.cycle_gap_s = leader.engine.cycle_gap_s = 0.1
    assert leader.tick().leader and not follower.tick().leader
    follower.kick()
    assert follower.engine.wait_hint_s(1.0) == 1.0
    leader.kick()
    leader.engine._full_not_before = 0.0
    assert leader.engine.wait_hint_s(1.0) == 0.0  # the leader, asked for a cycle, ticks at once


def test_a_release_keeps_the_live_ledger_so_the_next_request_is_decided_at_once(sqlite_db: str,
                                                                               tmp_path: Path) -> None:
    """``%gpu release`` then ``%gpu request 1``: the release asks a full cycle, but the next request
    must not wait for that cycle's gap (that wait was the old fixed pause in a new place). The
    ledger still counts the released GPU as held until the full cycle, so the request gets the
    other GPU — shy, never double-booked."""
    svc = make_service(sqlite_db, tmp_path, gpus=2)
    svc.engine.cycle_gap_s = 3600.0  # a kick-asked full cycle would wait an hour
    first = svc.submit(lease(), user="ana", kind="lease")
    svc.tick()
    first_gpus = svc.get_job(first["id"], user="ana")["allocation"]["gpu_uuids"]
    svc.cancel(first["id"], user="ana")  # the release
    second = svc.submit(lease(), user="ana", kind="lease")
    report = svc.tick()
    assert not report.decided and report.admitted == [second["id"]]  # no full cycle: decided at once
    got = svc.get_job(second["id"], user="ana")
    assert got["state"] == "running" and not set(got["allocation"]["gpu_uuids"]) & set(first_gpus)
    assert svc.engine.incremental.decided == 1 and check_integrity(svc.store).ok


def test_newuser3_a_grant_on_the_live_ledger_is_followed_by_true_reasons_for_the_others(sqlite_db: str,
                                                                                        tmp_path: Path) -> None:
    """New-user round 3 finding 2: a lease granted on the live ledger took a GPU that the other
    pending jobs' reasons still counted as free ("needs 3, 2 free") until the next periodic full
    cycle. The grant's own tick stays fast (no full cycle); the next tick re-words the others."""
    svc = make_service(sqlite_db, tmp_path, gpus=4)
    svc.submit(lease(2), user="ana", kind="lease")
    svc.tick()
    big = svc.submit(lease(3), user="bob", kind="lease")
    svc.tick()
    before = svc.get_job(big["id"], user="bob")
    assert before["state"] == "pending" and "2 free" in before["reason"]["message"], before["reason"]
    small = svc.submit(lease(1), user="carl", kind="lease")
    report = svc.tick()
    assert not report.decided and report.admitted == [small["id"]]  # granted at once, no full cycle
    svc.tick()  # nothing else happened: no submit, no finish, the periodic cycle is a minute away
    after = svc.get_job(big["id"], user="bob")
    assert after["state"] == "pending" and "1 free" in after["reason"]["message"], after["reason"]
