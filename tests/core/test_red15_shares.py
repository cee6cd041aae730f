"""Guaranteed GPUs always come back (red team 15 R5, R7, R13; issue 16), over built snapshots.

* R5 — tenths of one team spread one per GPU must not lock another team out of its guarantee: a
  GPU only one team's shares occupy counts, for reclaim, as a whole GPU held by that team; a
  within-guarantee whole-GPU job reclaims the fewest shares that free a GPU;
* R7 — ``mem_per_gpu`` of a fraction is reserved from its GPU's memory;
* R13 — another team's job younger than the minimum runtime is never a victim: the reclaimer
  waits, its reason and ETA saying until when.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, Quota
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, run_cycle

TEAMS = quotas(Quota(team="teama", guaranteed=2, borrowing_limit=None),
               Quota(team="teamb", guaranteed=2, borrowing_limit=None))
SHARED = SchedulingProfile(gpu_sharing="team")


def _tenth(job_id: str, gpu: int, *, started: float = -60.0, team: str = "teamb") -> object:
    return running(make_job(job_id, milli=100, team=team, user="bob"), "n1", [gpu], milli=100, started=started)


@dataclass(frozen=True)
class Spread:
    name: str
    tenths_on: tuple[int, ...]      # GPU of each running tenth of teamb
    a_jobs: int                     # whole-GPU jobs teama submits
    want_admitted: int              # of them started (now or on the GPUs reclaimed for them)
    want_reclaimed: int             # tenths of teamb reclaimed


SPREADS = [
    Spread("four tenths one per GPU: teama's two guaranteed GPUs come back, one tenth each", (0, 1, 2, 3), 2, 2, 2),
    Spread("teama beyond its guarantee reclaims nothing: teamb keeps its two shared GPUs", (0, 1, 2, 3), 3, 2, 2),
    Spread("tenths on two GPUs leave two whole: nothing is reclaimed", (0, 0, 1, 1), 2, 2, 0),
    Spread("teamb's shares within its guarantee of 2 GPUs are kept whole", (0, 1), 3, 2, 0),
]


@pytest.mark.parametrize("case", SPREADS, ids=[c.name for c in SPREADS])
def test_red15_r5_shares_spread_one_per_gpu_give_a_guarantee_back(case: Spread) -> None:
    tenths = [_tenth(f"b{i}", g) for i, g in enumerate(case.tenths_on)]
    a_jobs = [make_job(f"a{i}", team="teama", user="ann", submitted=1 + i) for i in range(case.a_jobs)]
    result = run_cycle(snapshot([make_node(gpus=4)], [*tenths, *a_jobs], quota=TEAMS), SHARED)
    reclaimed = [p for p in result.preemptions if p.kind == "reclaim"]
    assert len(reclaimed) == case.want_reclaimed, result.preemptions
    assert all(p.job_id.startswith("b") and p.for_job.startswith("a") for p in reclaimed)
    served = {a.job_id for a in result.admits} | {p.for_job for p in reclaimed}
    assert len(served) == case.want_admitted, (result.admits, result.pending)


def test_red15_r5_a_guarantee_beyond_the_shared_gpus_says_whose_shares_hold_them() -> None:
    # teamb's two tenths sit within its guarantee (2 GPUs): teama's third job borrows, reclaims nothing,
    # and its reason says the GPUs are held by teamb's shares, not "0 free" of an idle cluster
    tenths = [_tenth("b0", 0), _tenth("b1", 1)]
    whole = [running(make_job(f"a{i}", team="teama", user="ann"), "n1", [2 + i]) for i in range(2)]
    third = make_job("a2", team="teama", user="ann", submitted=1)
    result = run_cycle(snapshot([make_node(gpus=4)], [*tenths, *whole, third], quota=TEAMS), SHARED)
    assert result.preemptions == ()
    reason = next(p.reason for p in result.pending if p.job_id == "a2")
    assert "0 wholly free" in reason.message, reason.message
    assert "2 GPUs each hold a share of team teamb (0.1 GPU each)" in reason.message, reason.message
    assert reason.details["shared_gpus"] == 2 and reason.details["shared_by"] == {"teamb": 2}


def test_red15_r5_a_new_share_goes_to_a_gpu_its_team_already_shares_after_cancels() -> None:
    # after cancels teamb keeps one tenth on GPU 0 and one on GPU 2; teamc a tenth on GPU 1: a new
    # tenth of teamb joins GPU 0 (best fit among its own), never the whole GPU 3 nor teamc's GPU 1
    jobs = [_tenth("b0", 0), _tenth("b2", 2), _tenth("c1", 1, team="teamc"),
            make_job("b-new", milli=100, team="teamb", user="bob", submitted=1)]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs), SHARED)
    placed = {a.job_id: a.allocation.gpu_uuids for a in result.admits}
    assert placed["b-new"][0] in ("GPU-n1-0", "GPU-n1-2"), placed


def _r13_borrowers(evicted_before: bool) -> list[Job]:
    """teama's 3 jobs started 3, 2 and 1 min ago (teama guaranteed 2 borrows one GPU), each running
    again after an earlier eviction when ``evicted_before``."""
    return [replace(running(make_job(f"a{i}", team="teama", user="ann"), "n1", [g], started=-float(3 - i)),
                    preempted_by="b-old" if evicted_before else None)
            for i, g in enumerate((0, 1, 3))]


def _r13_cycle(evicted_before: bool, *, minutes: float = 0) -> CycleResult:
    """One cycle ``minutes`` after T0: teama's borrowers (:func:`_r13_borrowers`), teamb's running job
    and its within-guarantee ``b-evictor`` (both teams guaranteed 2 of 4 GPUs)."""
    b_run = running(make_job("b-run", team="teamb", user="bob"), "n1", [2])
    b = make_job("b-evictor", team="teamb", user="bob", submitted=0)
    q = quotas(Quota(team="teama", guaranteed=2, borrowing_limit=None), Quota(team="teamb", guaranteed=2))
    jobs = [*_r13_borrowers(evicted_before), b_run, b]
    return run_cycle(snapshot([make_node(gpus=4)], jobs, quota=q, now=T0 + timedelta(minutes=minutes)),
                     SchedulingProfile())


def test_red15_r13_a_young_borrower_is_never_reclaimed_and_the_reason_says_until_when() -> None:
    # teamb's second job is within its guarantee. Every candidate is younger than 5 min and runs again
    # after an eviction: none is evicted (before, the youngest went, 5 times over in the red team's
    # run); the reclaimer waits until the youngest has run 5 min (12:04 UTC), then takes it.
    first = _r13_cycle(evicted_before=True)
    assert first.preemptions == (), first.preemptions
    reason = next(p.reason for p in first.pending if p.job_id == "b-evictor")
    assert reason.details["preemption_rule"]["rule"] == "min_runtime"
    assert "until ann's a2 (a2) has run 5 min (12:04 UTC)" in reason.message, reason.message
    assert reason.eta == T0 + timedelta(minutes=4)
    later = _r13_cycle(evicted_before=True, minutes=4)
    assert [(p.job_id, p.kind) for p in later.preemptions] == [("a2", "reclaim")]


def test_red15_r13_a_young_borrower_never_evicted_is_reclaimed_at_once() -> None:
    # the minimum runtime stays a preference for a job that was never evicted (DESIGN.md *Reclaim*:
    # "protected where possible"; case 032 reclaims borrowers seen running 10 s before): the youngest
    # borrower goes at once, so a within-guarantee job never waits out other teams' fresh borrowing
    first = _r13_cycle(evicted_before=False)
    assert [(p.job_id, p.kind) for p in first.preemptions] == [("a2", "reclaim")]


@pytest.mark.parametrize("policy", ["", "fgd"], ids=["default placement", "fgd placement"])
def test_red15_r7_two_halves_asking_60_gib_never_share_one_80_gib_gpu(policy: str) -> None:
    from jupyter_sched.placement.placer import PlacementConfig

    first = running(make_job("mem60-a", milli=500, min_memory_mib=61440, team="teamb", user="bob"), "n1", [0],
                    milli=500)
    second = make_job("mem60-b", milli=500, min_memory_mib=61440, team="teamb", user="bob", submitted=1)
    small = make_job("mem10", milli=100, min_memory_mib=10240, team="teamb", user="bob", submitted=2)
    profile = SchedulingProfile(gpu_sharing="team", placement=PlacementConfig(fragmentation=policy))
    result = run_cycle(snapshot([make_node(gpus=2)], [first, second, small]), profile)
    placed = {a.job_id: a.allocation.gpu_uuids[0] for a in result.admits}
    assert placed["mem60-b"] == "GPU-n1-1", placed  # GPU 0 has 20 GiB unreserved: the half goes to GPU 1
    assert placed["mem10"] in ("GPU-n1-0", "GPU-n1-1"), placed  # 10 GiB still fits beside either half
    # with one GPU the second half waits, and its reason says the memory is reserved
    alone = run_cycle(snapshot([make_node(gpus=1)], [first, second]), profile)
    assert alone.admits == ()
    reason = alone.pending[0].reason
    assert "has that share free but only 20480 MiB of its memory unreserved" in reason.message, reason.message
    assert reason.details["unreserved_mib"] == 20480
