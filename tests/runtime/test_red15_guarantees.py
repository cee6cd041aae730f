"""Guaranteed GPUs always come back, end to end (red team 15 R5, R7, R13; new user 15 N14).

SchedulerService with a real SQLite store, the real core and real subprocesses on simulated GPUs
(80 GiB each); the clock is a ManualClock so "has run 5 minutes" needs no waiting. ann is in
teama, bob in teamb; both teams are guaranteed 2 GPUs and may borrow without limit.

Every service a test makes has its jobs ended in the test's teardown (:func:`_end_jobs`): cancelling
them at the end of a test only asks for their stop, and R5's left one running after it finished
(tests/conftest.py's leftover-job net caught it, session 21) — and a failed assertion cancelled nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.scheduling import SchedulingProfile
from tests.leftovers import end_jobs
from tests.runtime.builders import T0
from tests.runtime.test_engine import gated, make_service, state_of, wait_until

TEAMS = {"ann": "teama", "bob": "teamb"}
QUOTAS = {"quotas": [{"team": "teama", "guaranteed": 2, "borrowing_limit": None},
                     {"team": "teamb", "guaranteed": 2, "borrowing_limit": None}]}


_MADE: list[SchedulerService] = []
"""The services the running test made (:func:`_end_jobs` ends their jobs)."""


@pytest.fixture(autouse=True)
def _end_jobs() -> Iterator[None]:
    """After each test, end every job its services still run (no grace) and check none is left."""
    _MADE.clear()
    yield
    made, _MADE[:] = list(_MADE), []
    left = {id(svc): end_jobs(svc.engine.executor) for svc in made}
    assert not any(left.values()), f"jobs still running after the test: {left}"


def _service(sqlite_db: str, tmp_path: Path, clock: ManualClock, gpus: int = 4) -> SchedulerService:
    svc = make_service(sqlite_db, tmp_path, gpus=gpus, clock=clock, user_teams=TEAMS,
                       scheduling_profile=SchedulingProfile(gpu_sharing="team", grace_s=5))
    _MADE.append(svc)
    if gpus >= 4:
        svc.set_quotas(QUOTAS, actor="admin")
    return svc


def _job(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


def _gpu(svc: SchedulerService, job_id: str) -> str:
    return str(_job(svc, job_id)["allocation"]["gpu_uuids"][0])


def test_red15_r5_tenths_one_per_gpu_give_teama_its_two_guaranteed_gpus(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    # 50 GiB each: no two tenths fit one 80 GiB GPU (R7), so bob's four tenths spread one per GPU
    tenths = [svc.submit({"gpus": 0.1, "mem_per_gpu": "50GiB", "command": gated(tmp_path, "never"),
                          "name": f"frag{i}"}, user="bob")["id"] for i in range(4)]
    wait_until(lambda: all(state_of(svc, t) == "running" for t in tenths), "bob's tenths to run", tick=svc.tick)
    assert len({_gpu(svc, t) for t in tenths}) == 4
    clock.advance(360)  # they have run past the minimum runtime
    mine = [svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": f"a{i}"}, user="ann")["id"]
            for i in range(3)]
    wait_until(lambda: sum(state_of(svc, j) == "running" for j in mine) == 2, "ann's two guaranteed GPUs",
               tick=svc.tick)
    requeued = [t for t in tenths if state_of(svc, t) == "pending"]
    assert len(requeued) == 2, [(t, state_of(svc, t)) for t in tenths]  # the fewest shares that free 2 GPUs
    said = _job(svc, requeued[0])
    assert "preempted to return a whole GPU to teama" in said["message"] or \
        "return a whole GPU to teama" in str(said["reason"]), said
    third = next(_job(svc, j) for j in mine if state_of(svc, j) != "running")  # beyond teama's guarantee:
    # nothing more is reclaimed, and it says why
    assert third["state"] == "pending"
    assert "2 GPUs each hold a share of team teamb (0.1 GPU each)" in third["reason"]["message"], third["reason"]
    assert "0 wholly free" in third["reason"]["message"]
    for j in (*tenths, *mine):
        svc.cancel(j, user="admin", is_admin=True)


def test_red15_r7_two_halves_asking_60_gib_never_share_one_80_gib_gpu(sqlite_db: str, tmp_path: Path) -> None:
    svc = _service(sqlite_db, tmp_path, ManualClock(T0), gpus=2)
    half = {"gpus": 0.5, "mem_per_gpu": "60GiB", "command": gated(tmp_path, "never")}
    first = svc.submit({**half, "name": "mem60-a"}, user="bob")
    assert any("reserved from the shared GPU's memory for placement only" in w for w in first.get("warnings", ())), first
    ids = [first["id"], *(svc.submit({**half, "name": f"mem60-{c}"}, user="bob")["id"] for c in "bc")]
    wait_until(lambda: sum(state_of(svc, j) == "running" for j in ids) == 2, "two halves to run", tick=svc.tick)
    running = [j for j in ids if state_of(svc, j) == "running"]
    assert _gpu(svc, running[0]) != _gpu(svc, running[1])  # 120 GiB never promised on one 80 GiB GPU
    waiting = next(j for j in ids if j not in running)

    def reason() -> dict[str, Any] | None:
        svc.tick()
        job = _job(svc, waiting)
        return job["reason"] if job["state"] == "pending" and job.get("reason") else None

    said = wait_until(reason, "the third half's reason")
    assert "only 20480 MiB of its memory unreserved" in said["message"], said
    for j in ids:
        svc.cancel(j, user="admin", is_admin=True)


def test_red15_r13_a_young_borrower_is_not_evicted_and_the_reclaimer_says_until_when(sqlite_db: str,
                                                                                    tmp_path: Path) -> None:
    # the red team's loop: bob's reclaimer evicts one of ann's borrowers and is cancelled at once, again
    # and again. A job never evicted keeps the preference only (case 032 reclaims fresh borrowers), so
    # each of ann's two 2-GPU borrowers loses its work once; it runs again at once (no back-off: N14)
    # and is then protected for 5 min — the third reclaimer waits instead of evicting anyone again.
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    a = [svc.submit({"gpus": 2, "command": gated(tmp_path, "never"), "name": f"a-{i}"}, user="ann")["id"]
         for i in range(2)]  # teama (guaranteed 2) borrows 2 GPUs
    wait_until(lambda: all(state_of(svc, j) == "running" for j in a), "ann's two jobs", tick=svc.tick)
    victims = []
    for round_ in range(2):
        clock.advance(10)
        evictor = svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": f"b-evictor-{round_}"},
                             user="bob")["id"]
        victims.append(wait_until(lambda: next((j for j in a if state_of(svc, j) == "pending"), None),
                                  "one borrower reclaimed", tick=svc.tick))
        assert _job(svc, victims[-1])["not_before"] is None  # an eviction is no failure: no back-off (N14)
        svc.cancel(evictor, user="admin", is_admin=True)  # bob cancels at once: the victim starts again
        wait_until(lambda: state_of(svc, victims[-1]) == "running", "the victim to run again", tick=svc.tick)
    assert sorted(victims) == sorted(a)  # each borrower evicted once, never the same one twice
    clock.advance(10)
    third = svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": "b-evictor-2"}, user="bob")["id"]

    def reason() -> dict[str, Any] | None:
        svc.tick()
        job = _job(svc, third)
        rule = ((job.get("reason") or {}).get("details") or {}).get("preemption_rule") or {}
        return job["reason"] if rule.get("rule") == "min_runtime" else None

    said = wait_until(reason, "b-evictor-2's minimum-runtime reason")
    assert "has run 5 min (12:05 UTC)" in said["message"], said  # from 12:00:10/20; the ETA's clock (newuser23 N3)
    assert datetime.fromisoformat(said["eta"]) in (T0 + timedelta(minutes=5, seconds=10),
                                                   T0 + timedelta(minutes=5, seconds=20)), said
    assert all(state_of(svc, j) == "running" for j in a)
    assert [_job(svc, j)["attempts"] for j in a] == [2, 2]
    clock.advance(300)
    wait_until(lambda: any(state_of(svc, j) == "pending" for j in a), "a borrower reclaimed after 5 min",
               tick=svc.tick)
    for j in (*a, third):
        svc.cancel(j, user="admin", is_admin=True)


def test_newuser15_n14_a_reclaimed_job_restarts_at_once_when_its_gpus_are_free(sqlite_db: str,
                                                                             tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    big = svc.submit({"gpus": 4, "command": gated(tmp_path, "never"), "name": "a-big"}, user="ann")["id"]
    wait_until(lambda: state_of(svc, big) == "running", "a-big to run", tick=svc.tick)
    clock.advance(360)
    lease = svc.submit({"gpus": 1, "command": gated(tmp_path, "never"), "name": "b-one"}, user="bob")["id"]
    wait_until(lambda: state_of(svc, big) == "pending", "a-big reclaimed and requeued", tick=svc.tick)
    requeued = _job(svc, big)
    assert requeued["not_before"] is None and requeued["reason"]["code"] != "Backoff", requeued["reason"]
    svc.cancel(lease, user="admin", is_admin=True)  # all 4 GPUs free again, the clock not moved at all
    wait_until(lambda: state_of(svc, big) == "running", "a-big to start again without a back-off", tick=svc.tick)
    svc.cancel(big, user="admin", is_admin=True)
