"""ETA words for two cases the queue got right but said badly.

newuser26 n5: a uniform batch on 4 busy GPUs — three running jobs end at the same projected second; the
pending #2 (1 GPU) read "ETA …, when hist-114, hist-113 and hist-112 end", as if it waited for all three. It
needs one GPU, the first of theirs: "when the first of … ends (they are projected to end at the same time)".

newuser27 n12: a pending #1 (2 GPUs) read "ETA …, when waiter1 (j-…) ends" while waiter1 was #2 and not
started — it backfilled into the first GPU that freed. Say why: "(queued behind it, it fits the GPUs that
free first and ends before this job's reservation, so it runs first: backfill)".
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason


def _etas(jobs):  # type: ignore[no-untyped-def]
    result = run_cycle(snapshot([make_node(gpus=4)], jobs))
    return {p.job_id: (p.reason, render_reason(reason_to_dict(p.reason), now=T0).eta) for p in result.pending}


def test_newuser26_n5_same_second_ends_say_the_first_of_them() -> None:
    jobs = [running(make_job("hist-111", time_limit_s=600), indices=[0], started=-8),
            *(running(make_job(f"hist-11{i}", time_limit_s=600), indices=[i - 1], started=-5) for i in (2, 3, 4)),
            *(make_job(f"w{i}", time_limit_s=600, submitted=i) for i in range(1, 5))]
    etas = _etas(jobs)
    assert etas["w1"][1] == "ETA 12:02 UTC, when hist-111 ends", etas["w1"]
    reason, eta = etas["w2"]
    assert reason.details.get("eta_needs_of") == 1, reason.details
    assert eta.startswith("ETA 12:05 UTC, when the first of "), eta
    assert eta.endswith(" ends (they are projected to end at the same time)"), eta
    for name in ("hist-112", "hist-113", "hist-114"):
        assert name in eta, eta


def test_newuser26_n5_a_job_needing_all_of_them_says_they_end() -> None:
    jobs = [*(running(make_job(f"r{i}", time_limit_s=600), indices=[i], started=-5) for i in range(4)),
            make_job("big", gpus=4, time_limit_s=600)]
    reason, eta = _etas(jobs)["big"]
    assert "eta_needs_of" not in reason.details, reason.details
    assert "the first of" not in eta and eta.endswith(" end"), eta


def test_newuser27_n12_an_eta_on_a_backfilled_job_says_why() -> None:
    # 2 GPUs: a's frees at 12:02 (its limit), b's at ~12:04.7 (learnt); #1 needs both, #2 (1 GPU, 5m limit)
    # starts on a's first — its limit ends 12:07, before #1's reservation by limits (12:08) — so #1 waits on it
    jobs = [running(make_job("a", time_limit_s=600), indices=[0], started=-8),
            running(make_job("b", time_limit_s=600), indices=[1], started=-2),
            make_job("waiter", gpus=2, time_limit_s=600, submitted=1),
            make_job("waiter1", time_limit_s=300, submitted=2)]
    snap = replace(snapshot([make_node(gpus=2)], jobs), runtime_estimates={"b": 400, "waiter1": 300})
    pends = {p.job_id: p.reason for p in run_cycle(snap).pending}
    reason = pends["waiter"]
    assert reason.position == 1 and pends["waiter1"].position == 2, (reason.position, pends["waiter1"].position)
    assert reason.details.get("eta_waits_on") == ["waiter1"], reason.details
    assert reason.details.get("eta_waits_on_backfilled") == ["waiter1"], reason.details
    assert render_reason(reason_to_dict(reason), now=T0).eta == (
        "ETA 12:07 UTC, when waiter1 ends; waiter1 is queued behind this job but starts first: even run to its time limit it "
        "cannot delay this job past 12:08 UTC, the latest it can start (every running job run to its limit), so it is "
        "let run (backfill)")  # not "ends before this job's planned start": the ETA is its end (newuser31 N6)
    # the #2 itself waits on a running job: nothing of backfill
    assert "eta_waits_on_backfilled" not in pends["waiter1"].details
