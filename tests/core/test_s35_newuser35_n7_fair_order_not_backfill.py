"""newuser35 N7: a waiting job's line contradicted itself — "ETA 01:54 … j-… and j-… are queued behind this job but
start first: even run to their time limits they cannot delay this job past 01:28 UTC, the latest it can start …, so
they are let run (backfill)".

Hub, 4 GPUs, no quota: n35b's b-hold holds 2 GPUs for 10 min, n35a's a-big wants all 4 (#1 in the queue), then
n35b floods 1-GPU 30-min jobs and 5-min jobs. n35b holds no more than an equal share (2 of 4) whenever a GPU frees,
so the fair order puts n35b's next job ahead of a-big (holdings tie; it adds less use): those jobs go first by the
queue's order, not by backfill — no reservation keeps them off, and a-big's bound is its election. The backfill
words came from this cycle's EASY reservation (01:28), the ETA from the replay in which the fair order went first.
Now the words come from the replay the ETA comes from: jobs it put ahead by the order are said to be, with the
time a-big goes first (elected); "cannot delay this job past T" only of jobs backfilled around a start T not
before the ETA the line states.

A real engine snapshot sequence (pure core: run_cycle, apply_result), cycle after cycle, 2 s apart as the hub's.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import JobState
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import apply_result, run_cycle
from jupyter_sched.wording.reasons import render_reason

RUNS_S = {"b-hold": 600.0} | {f"flood-long-{i}": 100.0 for i in range(1, 16)} | {
    f"flood-short-{i}": 60.0 for i in range(1, 16)}
"""What each job of the hub's sequence ran (s): its command's sleep; b-hold to its 10-min limit."""


def _submissions() -> list[tuple[float, str, float]]:
    """``(s after T0, job id, time limit s)``: 15 x 30-min jobs, then 15 x 5-min jobs, 1.5 s apart, from 55 s."""
    out = [(55.0 + 1.5 * i, f"flood-long-{i + 1}", 1800.0) for i in range(15)]
    return out + [(55.0 + 1.5 * (15 + i), f"flood-short-{i + 1}", 300.0) for i in range(15)]


def _clock_of(text: str, after: str) -> str:
    return text.split(after, 1)[1][:5]


def test_newuser35_n7_jobs_the_fair_order_puts_first_are_not_called_backfill_the_eta_outlasts() -> None:
    jobs = [running(make_job("b-hold", gpus=2, user="n35b", team="cv", time_limit_s=600), indices=[0, 1], started=0),
            make_job("a-big", gpus=4, user="n35a", team="ml", time_limit_s=1200, submitted=0.1)]
    snap = snapshot([make_node(gpus=4)], jobs)
    subs = _submissions()
    lines: list[tuple[datetime, str, dict[str, object]]] = []
    positions: list[int | None] = []
    for step in range(3, 100):  # 12:00:06 … 12:03:18, every 2 s
        now = T0 + timedelta(seconds=2 * step)
        ended = {j.id for j in snap.jobs if j.state.holds_gpus and j.started_at is not None
                 and (now - j.started_at).total_seconds() >= RUNS_S[j.id]}
        new = [make_job(job_id, user="n35b", team="cv", time_limit_s=limit, submitted=at / 60)
               for at, job_id, limit in subs if at <= 2 * step < at + 2]
        snap = replace(snap, now=now, jobs=(*(j for j in snap.jobs if j.id not in ended), *new))
        result = run_cycle(snap)
        reason = next((p.reason for p in result.pending if p.job_id == "a-big"), None)
        assert reason is not None, f"a-big started at {now}: the case is not reproduced"
        positions.append(reason.position)
        if reason.details.get("eta_waits_on_backfilled"):
            lines.append((now, render_reason(reason_to_dict(reason), now=now).eta, dict(reason.details)))
        snap = apply_result(snap, result, stop_at_once=True)
        snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                        if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
    assert lines, "no ETA waited on a job queued behind a-big: the case is not reproduced"
    for now, eta, _ in lines:
        said = eta.split(", when ", 1)[0]  # "ETA 12:37 UTC"
        if "cannot delay this job past" in eta:  # a backfill's bound is never before the ETA the line states
            assert _clock_of(eta, "cannot delay this job past ") >= said[4:9], (now, eta)
    # newuser38 N2: the jobs the fair order puts first when the GPUs free are ahead of a-big in the queue's
    # positions now (they follow that order, as the ETAs do): never "queued behind this job", nor backfill
    assert positions and max(positions) == 2, positions
    for now, eta, details in lines:
        basis = details.get("eta_backfill_basis")
        assert not (isinstance(basis, dict) and basis.get("ahead")), (now, eta)


def _reason(basis: dict[str, object], behind: list[str]) -> dict[str, object]:
    return {"code": "WaitingForCapacity", "message": "needs 4 GPUs, 0 free", "position": 1,
            "eta": "2025-03-30T12:37:36+00:00",
            "details": {"eta_code": "Projected", "eta_waits_on": behind, "eta_waits_on_queued": behind,
                        "eta_waits_on_backfilled": behind, "eta_backfill_basis": basis}}


def test_newuser35_n7_the_fair_orders_jobs_are_said_as_such_and_a_job_beside_them_as_backfill() -> None:
    eta = render_reason(_reason({"ahead": ["j-2"], "elected_from": "2025-03-30T12:07:36+00:00"}, ["j-2"]),
                        now=T0).eta
    assert eta == ("ETA 12:37 UTC, when j-2 ends; j-2 is queued behind this job but starts first: when the GPUs free, "
                   "the queue's order puts it ahead of this job (fair share or class, not backfill), so the ETA may "
                   "move; this job goes first from 12:07 UTC, once it has waited past its promised wait (elected)"), eta
    both = render_reason(_reason({"ahead": ["j-2"], "beside": ["j-3"]}, ["j-3", "j-2"]), now=T0).eta
    assert both == ("ETA 12:37 UTC, when j-3 and j-2 end; j-3 and j-2 are queued behind this job but start first: when "
                    "the GPUs free, the queue's order puts j-2 ahead of this job (fair share or class, not backfill) "
                    "and j-3 fits beside it, ending by then (backfill), so the ETA may move"), both
    assert "cannot delay" not in eta + both
