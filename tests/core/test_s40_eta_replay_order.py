"""The ETA replay orders the queue at each future instant as admission will then (s39-eta's left-overs).

With several users the shown ETAs parted from the cycles' admissions in small random worlds (the n23 harness with
two or three users and fair-share usage fed as the engine feeds it: 68 of 2,000 worlds off). Two causes:

* no quota: the fair order puts first what users hold above an equal share of the GPUs among the users *with work*
  (:func:`~jupyter_sched.queues.order.holdings`); the replay kept the users of now, so when one user's last job
  ended the share did not rise and another user's job was projected first;
* a job first queued in a cycle is promised the ETA that cycle gives it and is elected once it has waited past
  ``elect_overdue`` x that wait; the replay that makes the ETA had no promise for it, so it never elected it.
  The replay now runs again with the promises it gave until they hold.

After: 3 of 2,000, which the placer's choice among nodes took (the replay took the first by index); the replay
now walks the nodes as the placer does (:meth:`~jupyter_sched.scheduling.eta_gpus.NodeGpus.place`): 0 of 2,000
(one user, up to three nodes, NVLink pairs: 17 of 2,000 before, 0 after). A share its quota holds back (red team 38 R3:
each 0.1 GPU x 70 GiB share takes a GPU of its own, counted whole) named other teams' jobs as what it waited
for; the projection now counts the GPUs only a team's shares hold whole on its lines, charges a share opening a
GPU the whole GPU, and packs shares by the GPU memory they reserve.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, pairs, snapshot
from test_newuser38_n23_backfill_eta import _at, _ended, _on
from test_red38_r3_shares import LIMITS, SHARED, _busy, _frac

from jupyter_sched.model import Job, JobState
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory


def _usage(closed: dict[str, float], jobs: tuple[Job, ...], now: datetime) -> UsageHistory:
    """GPU-seconds per user as the engine feeds them: ended work plus running work so far (no decay: minutes)."""
    out = dict(closed)
    for job in jobs:
        if job.state is JobState.RUNNING and job.started_at is not None:
            out[job.spec.user] = out.get(job.spec.user, 0.0) + job.spec.resources.gpus * (now - job.started_at).total_seconds()
    return UsageHistory(decayed_gpu_seconds_by_user=out)


def _fed(snap: Snapshot, base: dict[str, float]) -> Snapshot:
    return replace(snap, usage=_usage(base, snap.jobs, snap.now))


def _admitted(snap: Snapshot, base: dict[str, float], profile: SchedulingProfile | None = None) -> dict[str, datetime]:
    """Cycles at T0 and at each end of a running job (each runs to its time limit, nothing arrives), the usage fed
    to each: when each job is admitted."""
    closed = dict(base)
    started: dict[str, datetime] = {}
    for _ in range(40):
        result = run_cycle(snap, profile)
        started.update((a.job_id, snap.now) for a in result.admits)
        snap = apply_result(snap, result)
        ends = [j.started_at + timedelta(seconds=j.spec.time_limit_s) for j in snap.jobs
                if j.state is JobState.RUNNING and j.started_at is not None and j.spec.time_limit_s is not None]
        if not ends or all(j.state is not JobState.PENDING for j in snap.jobs):
            break
        now = min(ends)
        for job in snap.jobs:
            if _ended(job, now):
                closed[job.spec.user] = closed.get(job.spec.user, 0.0) + job.spec.resources.gpus * (job.spec.time_limit_s or 0)
        snap = replace(_at(snap, (now - T0).total_seconds()))
        snap = replace(snap, usage=_usage(closed, snap.jobs, snap.now))
    return started


def _etas(snap: Snapshot, profile: SchedulingProfile | None = None) -> dict[str, datetime | None]:
    return {p.job_id: p.reason.eta for p in run_cycle(snap, profile).pending}


def _s(at: datetime | None) -> float | None:
    return None if at is None else (at - T0).total_seconds()


def test_s40_eta_a_user_whose_work_ended_no_longer_divides_the_gpus() -> None:
    # 4 GPUs, no quota: alice holds 2, bob 1, carol 1 (ends at +10 s). Now the equal share is 4/3 and alice is above
    # it; at +10 s carol has no work, the share is 2, nobody is above it and alice (least usage) goes first: the
    # cycle then starts her p1. The replay kept 4/3 and projected bob's p0 first: "p1 ETA +100 s"
    base = {"alice": 0.0, "bob": 1500.0, "carol": 1500.0}
    jobs = [_on(make_job("r00", gpus=2, user="alice", time_limit_s=120), "n0", (0, 3), 20),
            _on(make_job("r01", user="bob", time_limit_s=300), "n0", (2,), 10),
            _on(make_job("r02", user="carol", time_limit_s=60), "n0", (1,), 50),
            make_job("p0", gpus=2, user="bob", time_limit_s=300, submitted=-10),
            make_job("p1", user="alice", time_limit_s=120, submitted=-9)]
    snap = _fed(snapshot([make_node("n0", gpus=4)], jobs), base)
    etas = _etas(snap)
    assert {j: _s(e) for j, e in etas.items()} == {"p0": 100.0, "p1": 10.0}
    assert _admitted(snap, base) == etas


def test_s40_eta_an_election_a_first_promise_falls_due_for_moves_the_eta() -> None:
    # bob's p1 is promised the start this cycle gives it (+630 s) and is elected at 0.75 x that (+472 s): at +590 s,
    # when r00 frees 2 GPUs, the cycle starts p1, not alice's p2 (less usage). The replay had no promise for p1
    # (it is the one making it) and said p2 +590 s, p1 +630 s
    base = {"alice": 200.0, "bob": 1500.0}
    jobs = [_on(make_job("r00", gpus=2, user="bob", time_limit_s=600), "n0", (0, 2), 10),
            _on(make_job("r01", user="bob", time_limit_s=600), "n0", (3,), 0),
            _on(make_job("r02", user="alice", time_limit_s=60), "n0", (1,), 30),
            make_job("p0", user="alice", time_limit_s=600, submitted=-10),
            make_job("p1", gpus=2, user="bob", time_limit_s=300, submitted=-9),
            make_job("p2", gpus=2, user="alice", time_limit_s=600, submitted=-8),
            make_job("p3", user="bob", time_limit_s=1200, submitted=-7)]
    snap = _fed(snapshot([make_node("n0", gpus=4)], jobs), base)
    etas = _etas(snap)
    assert {j: _s(e) for j, e in etas.items()} == {"p0": 30.0, "p1": 590.0, "p2": 630.0, "p3": 890.0}
    assert _admitted(snap, base) == etas
    # without elections the fair order decides, and the replay says so too
    plain = SchedulingProfile(elect_overdue=0)
    assert {j: _s(e) for j, e in _etas(snap, plain).items()} == {"p0": 30.0, "p1": 630.0, "p2": 590.0, "p3": 930.0}
    assert _admitted(snap, base, plain) == _etas(snap, plain)


def _world(seed: int) -> tuple[Snapshot, dict[str, float]]:
    """test_newuser38_n23's small random worlds with two or three users, and usage before now."""
    rng = random.Random(seed)
    size, n_nodes = rng.choice([4, 4, 8]), rng.choice([1, 1, 2])
    nodes = [make_node(f"n{i}", gpus=size, nvlink=pairs(size) if rng.random() < 0.3 else None) for i in range(n_nodes)]
    users = ["alice", "bob", "carol"][: rng.choice([2, 3])]
    jobs: list[Job] = []
    for i, node in enumerate(nodes):
        free = list(range(size))
        rng.shuffle(free)
        while free:
            count = min(len(free), rng.choice([1, 1, 2, 3]))
            taken, free = tuple(sorted(free[:count])), free[count:]
            job = make_job(f"r{i}{len(jobs)}", gpus=count, user=rng.choice(users),
                           time_limit_s=rng.choice([60, 120, 180, 240, 300, 600]))
            jobs.append(_on(job, node.name, taken, rng.choice([0, 10, 20, 30, 50])))
    for p in range(rng.randint(2, 5)):
        jobs.append(make_job(f"p{p}", gpus=rng.choice([1, 1, 2, 3, 4] if size > 4 else [1, 1, 2]),
                             user=rng.choice(users), time_limit_s=rng.choice([60, 120, 300, 600, 1200]),
                             submitted=-10 + p))
    base = {u: float(rng.choice([0, 0, 200, 600, 1500])) for u in users}
    return _fed(snapshot(nodes, jobs), base), base


@pytest.mark.parametrize("seed", range(0, 600, 100))
def test_s40_eta_replayed_starts_are_the_cycle_s_admissions_with_several_users(seed: int) -> None:
    # every queued job's ETA is the time the cycles admit it; before, 16 of these 600 worlds were off
    off = []
    for world in range(seed, seed + 100):
        snap, base = _world(world)
        etas, started = _etas(snap), _admitted(snap, base)
        off += [(world, j, _s(e), _s(started.get(j))) for j, e in etas.items() if e is None or started.get(j) != e]
    assert off == []


@pytest.mark.parametrize("borrow", [
    pytest.param(1.0, id="at its limit of 2 GPUs"),
    pytest.param(1.5, id="half a GPU below its limit: the share would open a whole GPU"),
])
def test_s40_eta_a_share_its_quota_holds_back_waits_on_its_own_team_s_shares(borrow: float) -> None:
    # red team 38 R3's world: teamc's frac0 and frac1 (0.1 GPU x 70 of 80 GiB) each hold a GPU of their own, counted
    # whole on its line; frac2 would open a third. It waits for one of teamc's shares to end — its line said
    # "after a0, a1, a2, a3, a4 end" (teama's whole-GPU jobs), must release 1
    line = replace(LIMITS, quotas=tuple(replace(q, borrowing_limit=borrow) if q.team == "teamc" else q
                                        for q in LIMITS.quotas))
    fracs = [_frac(f"frac{i}", 1 + i) for i in range(3)]
    result = run_cycle(snapshot([make_node(gpus=8)], [*_busy(), *fracs], quota=line), SHARED)
    assert sorted(a.job_id for a in result.admits) == ["frac0", "frac1"]
    reason = next(p.reason for p in result.pending if p.job_id == "frac2")
    assert reason.code == "BorrowingLimitReached" and reason.eta is None
    assert reason.details["eta_waits_on"] == ["frac0", "frac1"] and reason.details["eta_must_release"] == 1


def test_s40_eta_a_start_takes_the_node_the_placer_walks_to_first_among_equally_full_ones() -> None:
    # at +70 s n0 frees GPUs 0-2, n1 GPU 0. The cycle then places p0 (2 GPUs) on n0's 0-1, which moves n0 behind n1
    # among the nodes with one GPU free: p1 (20 min) goes to n1, p2 (1 min) to n0. At +600 s n1 has three GPUs free
    # and p3 (4 GPUs) waits for p1 to +1,270 s. The replay gave p1 the first node by index (n0) and p2 n1, which
    # is wholly free at +600 s: "p3 ETA +600 s"
    jobs = [_on(make_job("r00", gpus=2, time_limit_s=100), "n0", (0, 1), 30),
            _on(make_job("r01", time_limit_s=100), "n0", (2,), 30),
            _on(make_job("r02", time_limit_s=630), "n0", (3,), 30),
            _on(make_job("r10", time_limit_s=100), "n1", (0,), 30),
            _on(make_job("r11", gpus=3, time_limit_s=630), "n1", (1, 2, 3), 30),
            make_job("p0", gpus=2, time_limit_s=1200, submitted=-10), make_job("p1", time_limit_s=1200, submitted=-9),
            make_job("p2", time_limit_s=60, submitted=-8), make_job("p3", gpus=4, time_limit_s=300, submitted=-7)]
    snap = snapshot([make_node("n0", gpus=4), make_node("n1", gpus=4)], jobs)
    etas = _etas(snap)
    assert {j: _s(e) for j, e in etas.items()} == {"p0": 70.0, "p1": 70.0, "p2": 70.0, "p3": 1270.0}
    at_70 = run_cycle(_at(snap, 70))
    assert {a.job_id: a.allocation.node for a in at_70.admits} == {"p0": "n0", "p1": "n1", "p2": "n0"}
    assert _admitted(snap, {}) == etas


def test_s40_eta_the_reservation_s_walk_moves_its_node_behind_the_others() -> None:
    # at +130 s GPU 0 of n0 and of n1 free. p0 (2 GPUs) is reserved on n0 at +210 s (r01's end): the cycle's walk
    # released r01 in a trial, and taking it back moved n0 behind n1 among the nodes with one GPU free, so p2
    # (1 min, ends by +210 s: it may use the GPU kept for p0) goes to n1 and p5 (10 min) waits for p2's end. The
    # replay gave p2 n0's GPU (the first node by the snapshot's order) and started p5 on n1's at +130 s
    jobs = [_on(make_job("r00", time_limit_s=160), "n0", (0,), 30),
            _on(make_job("r01", gpus=3, time_limit_s=240), "n0", (1, 2, 3), 30),
            _on(make_job("r10", time_limit_s=160), "n1", (0,), 30),
            _on(make_job("r11", gpus=3, time_limit_s=630), "n1", (1, 2, 3), 30),
            make_job("p0", gpus=2, time_limit_s=300, submitted=-10), make_job("p2", time_limit_s=60, submitted=-9),
            make_job("p5", time_limit_s=600, submitted=-8)]
    snap = snapshot([make_node("n0", gpus=4), make_node("n1", gpus=4)], jobs)
    etas = _etas(snap)
    assert {j: _s(e) for j, e in etas.items()} == {"p0": 210.0, "p2": 130.0, "p5": 190.0}
    assert {a.job_id: a.allocation.node for a in run_cycle(_at(snap, 130)).admits} == {"p2": "n1"}
    assert _admitted(snap, {}) == etas
