"""Shares submitted together are each charged the whole GPU they open (red team 39 R1), over built snapshots.

Red team 38 R3's rule — a GPU only one team's shares occupy counts as a whole GPU of that team — held
for a full cycle, but a burst of 0.1-GPU / 70 GiB shares submitted at once is decided one by one on the
last full cycle's live ledger (:class:`~jupyter_sched.scheduling.live.LiveCycle`). A ledger built while no
job asked for a share never counted shares (``CycleContext.shares_held`` was fixed at its start): every
share of the burst was charged its 0.1 and opened a GPU of its own — teamc (at most 2 GPUs) held all
the GPUs that were free. Now the first share a live decision visits turns share counting on
(``CycleContext.count_shares``): quota checks, reclaim and the capacity reason's note all see them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, JobKind, PriorityClass, Quota
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, run_cycle
from jupyter_sched.scheduling.live import LiveCycle

SHARED = SchedulingProfile(gpu_sharing="team")
GIB = 1024
# teamc: guaranteed 1, may borrow 1 (at most 2 GPUs); teama guaranteed 2, no limit (its whole GPUs below)
LIMITS = quotas(Quota(team="teamc", guaranteed=1, borrowing_limit=1),
                Quota(team="teama", guaranteed=2, borrowing_limit=None))


def _share(job_id: str, submitted: float = 1.0, *, lease: bool = False) -> Job:
    """A 0.1-GPU share of teamc asking 70 GiB of an 80 GiB GPU: two never fit on one GPU."""
    job = make_job(job_id, milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol", submitted=submitted)
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE)) if lease else job


def _busy(n: int) -> list[Job]:
    """teama's whole GPUs on GPUs 0..n-1 of the 8."""
    return [running(make_job(f"a{i}", team="teama", user="ann"), "n1", [i]) for i in range(n)]


def _decide_all(live: LiveCycle, jobs: list[Job]) -> list[CycleResult | None]:
    """Each job decided on the live ledger in turn, a second apart (None: it needs a full cycle)."""
    return [live.decide(job, T0 + timedelta(seconds=1 + i)) for i, job in enumerate(jobs)]


def _admitted(results: list[CycleResult | None]) -> list[str]:
    return [a.job_id for r in results if r is not None for a in r.admits]


def _reason(results: list[CycleResult | None], job_id: str) -> tuple[str, dict[str, object], str]:
    reason = next(p.reason for r in results if r is not None for p in r.pending if p.job_id == job_id)
    return reason.code, dict(reason.details), reason.message


def test_red39_r1_shares_admitted_in_one_cycle_each_charged_their_whole_gpu() -> None:
    # one full cycle, 6 shares pending, 8 free GPUs: two open a GPU each (the limit), the rest wait on it
    shares = [_share(f"s{i}", 1 + i) for i in range(6)]
    result = run_cycle(snapshot([make_node(gpus=8)], shares, quota=LIMITS), SHARED)
    admitted = sorted(a.job_id for a in result.admits)
    assert admitted == ["s0", "s1"], (admitted, result.pending)
    assert len({a.allocation.gpu_uuids[0] for a in result.admits}) == 2
    for p in result.pending:
        assert p.reason.code == "BorrowingLimitReached", (p.job_id, p.reason)
        assert p.reason.details["used"] == 2, p.reason.details


@pytest.mark.parametrize("kinds", ["jobs", "leases", "mix"])
def test_red39_r1_shares_decided_live_after_a_cycle_without_shares_each_charged_their_whole_gpu(kinds: str) -> None:
    # the full cycle saw no share (teamc had cancelled its work); the burst comes after it, decided live
    live = LiveCycle(snapshot([make_node(gpus=8)], _busy(3), quota=LIMITS), SHARED)
    assert live.result.admits == ()
    burst = [_share(f"s{i}", lease=kinds == "leases" or (kinds == "mix" and i % 2 == 1)) for i in range(5)]
    results = _decide_all(live, burst)
    admitted = _admitted(results)
    assert admitted == ["s0", "s1"], (admitted, results)  # was all five: each charged 0.1 on its own GPU
    code, details, message = _reason(results, "s2")
    assert code == "BorrowingLimitReached", (code, message)
    assert details["used"] == 2 and details["quota"] == 2, details
    assert details["held_whole"] == 1.8, details
    assert "teamc would use 3 GPUs, above its limit of 2 GPUs" in message, message
    assert results[3] is None and results[4] is None  # the ledger is spent: a full cycle decides them
    assert not live.usable


def test_red39_r1_a_whole_gpu_job_after_live_shares_counts_their_gpus_whole() -> None:
    # two shares decided live hold two GPUs (the limit): a whole-GPU job of teamc waits, as in a full cycle
    live = LiveCycle(snapshot([make_node(gpus=8)], _busy(3), quota=LIMITS), SHARED)
    whole = make_job("c-whole", team="teamc", user="carol", submitted=2)
    results = _decide_all(live, [_share("s0"), _share("s1"), whole])
    assert _admitted(results) == ["s0", "s1"], results
    code, details, _ = _reason(results, "c-whole")
    assert code == "BorrowingLimitReached" and details["used"] == 2, (code, details)


def test_red39_r1_a_full_cluster_after_live_shares_names_the_shares_holding_it() -> None:
    # teama holds 6 GPUs, two live shares of teamc the other 2: a whole-GPU job of teama waits, and its
    # reason says the shares hold the last GPUs (the capacity note counts shares from the first on)
    live = LiveCycle(snapshot([make_node(gpus=8)], _busy(6), quota=LIMITS), SHARED)
    wait = make_job("a-wait", team="teama", user="ann", submitted=2)
    results = _decide_all(live, [_share("s0"), _share("s1"), wait])
    assert _admitted(results) == ["s0", "s1"], results
    code, details, message = _reason(results, "a-wait")
    assert code == "WaitingForCapacity", (code, message)
    assert details.get("shared_gpus") == 2, details
    assert "2 GPUs each hold a share of team teamc" in message, message


def test_red39_r1_a_plan_for_a_share_charges_the_gpu_it_opens_whole() -> None:
    # GPUs shared across teams ("any"): teamc holds a whole GPU and half of one beside teamb (1.5 of its 2, no
    # borrowing). teama's borrowing jobs, admitted first this cycle, fill the last two GPUs. A 0.1-GPU / 70 GiB
    # share of teamc "within its guarantee" by its fraction (1.6) would withdraw one of them and open that GPU
    # alone — 2.5 GPUs held on a limit of 2. The plan charges it the GPU it opens: no withdrawal, it waits.
    limits = quotas(Quota(team="teamc", guaranteed=2, borrowing_limit=0),
                    Quota(team="teama", guaranteed=0, borrowing_limit=None),
                    Quota(team="teamb", guaranteed=1, borrowing_limit=None))
    jobs = [running(make_job("c-whole", team="teamc", user="carol"), "n1", [0]),
            running(make_job("c-half", team="teamc", user="carol", milli=500, min_memory_mib=10 * GIB), "n1", [1],
                    milli=500),
            running(make_job("b-half", team="teamb", user="bob", milli=500, min_memory_mib=10 * GIB), "n1", [1],
                    milli=500),
            make_job("a0", team="teama", user="ann", priority="high", submitted=1),
            make_job("a1", team="teama", user="ann", priority="high", submitted=2),
            make_job("c-big", gpus=2, team="teamc", user="carol", submitted=3),  # defers teamc's later jobs
            _share("c-share", 4)]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=limits), SchedulingProfile(gpu_sharing="any"))
    admitted = sorted(a.job_id for a in result.admits)
    assert admitted == ["a0", "a1"], (admitted, result.pending)  # was a1 and c-share: a0 withdrawn for it
    assert result.preemptions == ()
    reason = next(p.reason for p in result.pending if p.job_id == "c-share")
    assert "no preemption: evicting would leave it only a GPU of its own, which counts whole: teamc would use " \
           "2.5 GPUs, above its limit of 2 GPUs" in reason.message, reason.message
    assert "would still not make it fit" not in reason.message, reason.message


def test_red39_r1_a_share_waits_on_freed_gpus_only_where_it_may_open_one() -> None:
    # as above, teamc holds 1.5 of its 2 GPUs (its low whole-GPU job, half a GPU beside teamb); teama's a2 is
    # stopping. A high 0.1-GPU / 70 GiB share of teamc took over a2's GPU and waited for it — a GPU of its own,
    # 2.5 GPUs on a limit of 2, which admission then refuses. It preempts teamc's own low job instead: that GPU
    # counts whole either way (1.5 GPUs).
    limits = quotas(Quota(team="teamc", guaranteed=2, borrowing_limit=0),
                    Quota(team="teama", guaranteed=6, borrowing_limit=None),
                    Quota(team="teamb", guaranteed=1, borrowing_limit=None))
    stopping = running(make_job("a2", team="teama", user="ann"), "n1", [2])
    jobs = [running(make_job("c-low", team="teamc", user="carol", priority="low"), "n1", [0]),
            running(make_job("c-half", team="teamc", user="carol", milli=500, min_memory_mib=10 * GIB), "n1", [1],
                    milli=500),
            running(make_job("b-half", team="teamb", user="bob", milli=500, min_memory_mib=10 * GIB), "n1", [1],
                    milli=500),
            replace(stopping, stopping_since=T0 - timedelta(seconds=5)),
            *(running(make_job(f"a{i}", team="teama", user="ann"), "n1", [i]) for i in range(3, 8)),
            replace(_share("c-share", 3), spec=replace(_share("c-share", 3).spec, priority=PriorityClass.HIGH))]
    result = run_cycle(snapshot([make_node(gpus=8)], jobs, quota=limits), SchedulingProfile(gpu_sharing="any"))
    held = result.nominations.get("c-share")
    assert held is not None and held.gpu_uuids == ("GPU-n1-0",), result.nominations  # was GPU-n1-2 (a2's)
    assert [p.job_id for p in result.preemptions] == ["c-low"], result.preemptions
