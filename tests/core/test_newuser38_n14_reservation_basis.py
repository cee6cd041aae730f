"""New user 38, n14: a dry run's answer said two start times with nothing between them — "… nlp's jobs queued
after it start first only where they end by 11:05 UTC, when it can start (reservation) · ETA 10:50 UTC (…),
when n38c's job "nlp2" ends (if it ends as estimated from past runs)". The reservation is worked out from the
time limits of the work ahead (EASY backfill's guarantee); the ETA from what that work is expected to run. Now
the reservation's clause says its basis in the same sentence: "… when it can start even if the work ahead of it
runs to its time limits (reservation)", so the earlier ETA reads as the expected start, not a contradiction.

Pure core: run_cycle on a snapshot whose team limit keeps a 2-GPU job waiting, rendered by the one renderer the
CLI's dry run, the panel and the magics use (:func:`jupyter_sched.wording.reasons.render_reason`).
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Allocation, JobState, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason


def test_newuser38_n14_the_reservation_time_says_it_stands_on_time_limits() -> None:
    q = quotas(Quota(team="nlp", guaranteed=3, borrowing_limit=0))
    running = replace(make_job("nlp2", gpus=2, user="n38c", team="nlp", time_limit_s=1800), state=JobState.RUNNING,
                      admitted_at=T0, started_at=T0,
                      allocation=Allocation(node="n1", gpu_uuids=("GPU-n1-0", "GPU-n1-1"), gpu_milli=1000))
    waiting = make_job("nlp-dry", gpus=2, user="n38b", team="nlp", time_limit_s=600, submitted=-1)
    result = run_cycle(snapshot([make_node(gpus=4)], [running, waiting], quota=q))
    assert not result.admits, result.admits
    reason = next(p.reason for p in result.pending if p.job_id == "nlp-dry")
    assert reason.details["headroom"]["reservation"] == "2025-03-30T12:30:00+00:00", reason.details
    said = reason_to_dict(reason)
    assert said is not None
    line = render_reason(said, now=T0).line
    # one sentence says the reservation's time and what it stands on (before: "…by 12:30 UTC, when it can start
    # (reservation)", beside an ETA that estimates may put earlier)
    assert ("nlp's jobs queued after it start first only where they end by 12:30 UTC, when it can start even if "
            "the work ahead of it runs to its time limits") in line, line
    assert line.count("(reservation)") == 1, line
