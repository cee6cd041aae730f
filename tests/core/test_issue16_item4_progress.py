"""Issue 16 item 4: a running job's own progress report sets its end for the ETAs shown — never a decision.

``train`` (2 GPUs, 5 h limit) started an hour ago; ``wait`` (2 GPUs) waits for its GPUs. From its
limit ``wait``'s ETA is 4 h away; ``train`` reported 50 % done after 50 minutes, so it runs 100 minutes
in all and ``wait`` starts in 40 (:mod:`jupyter_sched.backfill.progress`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import END_MARGIN_S, ProgressReport, projected_left
from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.estimates import done_text, progress_clause

MIN = 60.0


def _t(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _report(fraction: float, *, at: float = -10, ran: float = 50) -> ProgressReport:
    """A report made ``at`` minutes from T0 after ``ran`` minutes of running."""
    return ProgressReport(fraction=fraction, at=_t(at), ran_s=ran * MIN)


def _snap(report: ProgressReport | None = None, *, limit_min: float = 300) -> Snapshot:
    jobs = [running(make_job("train", gpus=2, user="bob", time_limit_s=limit_min * MIN), "n1", started=-60),
            make_job("wait", gpus=2, time_limit_s=60 * MIN)]
    snap = snapshot([make_node("n1", gpus=2)], jobs)
    return replace(snap, progress={"train": report}) if report is not None else snap


def _reason(snap: Snapshot, profile: SchedulingProfile | None = None, job_id: str = "wait") -> PendingReason:
    return {p.job_id: p.reason for p in run_cycle(snap, profile).pending}[job_id]


def test_issue16_item4_an_eta_waits_for_a_running_job_where_its_progress_takes_it() -> None:
    assert _reason(_snap()).eta == _t(240)  # its 5 h limit
    reason = _reason(_snap(_report(0.5)))
    assert reason.eta == _t(40)  # 50 minutes for half: 100 in all, from its start an hour ago
    assert reason.details["eta_progress"] == {"train": 0.5}
    text = render_reason(reason_to_dict(reason), now=T0).eta
    assert text == "ETA 12:40 UTC, when bob's job train ends, from its progress (50 % done, reported 11:50:00 UTC)", text


def test_issue16_item4_the_time_limit_still_wins_when_the_rate_says_later() -> None:
    reason = _reason(_snap(_report(0.1)))  # 500 minutes at this rate; the limit stops it at 300
    assert reason.eta == _t(240)


def test_issue16_item4_a_job_that_just_said_it_is_done_is_never_projected_before_now() -> None:
    reason = _reason(_snap(_report(1.0, at=0, ran=60)))  # "done" now and still holding its GPUs
    assert reason.eta == T0 + timedelta(seconds=END_MARGIN_S)


def test_issue16_item4_a_job_behind_its_own_projection_is_late_not_a_minute_away() -> None:
    """"Done" a minute ago (and a minute given to wind up) but still holding its GPUs: its own projection
    has passed, so its limit sets the ETA again — never a rolling "in 1 min" (new user 21, N4)."""
    reason = _reason(_snap(_report(1.0, at=-1, ran=59)))
    assert reason.eta == _t(240)
    assert reason.details["eta_progress_lapsed"]["train"]["lapse"] == "late"


@pytest.mark.parametrize(("report", "why"), [
    (_report(0.5, at=-40), "older than 30 minutes: it may have stopped progressing"),
    (_report(0.005), "under 1 % done: a rate from start-up and noise"),
    (_report(0.5, at=-70, ran=10), "made before this run started (an earlier attempt's)"),
    (_report(0.5, at=5), "made after now"),
    (_report(1.5), "over 100 % done"),
    (_report(math.nan), "not a number"),
    (_report(0.5, ran=0), "no run time"),
])
def test_issue16_item4_a_stale_or_bad_report_is_ignored(report: ProgressReport, why: str) -> None:
    reason = _reason(_snap(report))
    assert reason.eta == _t(240), why
    assert "eta_progress" not in reason.details, why


def test_issue16_item4_projected_left_in_numbers() -> None:
    start, now = _t(-60), T0
    assert projected_left(_report(0.5), start=start, now=now, limit_s=300 * MIN) == (40 * MIN, True)
    assert projected_left(_report(0.1), start=start, now=now, limit_s=300 * MIN) == (240 * MIN, False)
    assert projected_left(_report(0.5), start=start, now=now, limit_s=None) == (40 * MIN, True)
    assert projected_left(_report(0.5), start=start, now=now, limit_s=50 * MIN) is None  # ran past its limit
    assert projected_left(_report(0.5, at=-40), start=start, now=now, limit_s=None) is None


def _lying_case() -> Snapshot:
    """``big`` (2 of 4 GPUs, ends by its 2 h limit in an hour) blocks ``head`` (4 GPUs): ``head`` holds the
    reservation from then; ``small`` (2 GPUs, 90 min) would run past it on its GPUs, so it must not start."""
    jobs = [running(make_job("big", gpus=2, user="bob", time_limit_s=120 * MIN), "n1", [0, 1], started=-60),
            make_job("head", gpus=4, time_limit_s=60 * MIN),
            make_job("small", gpus=2, time_limit_s=90 * MIN, submitted=1)]
    return snapshot([make_node("n1", gpus=4)], jobs, now=_t(1))


@pytest.mark.parametrize("mode", ["easy", "conservative"])
@pytest.mark.parametrize("lie", [_report(0.99, at=1, ran=61), _report(0.02, at=1, ran=61)],
                         ids=["says it is nearly done", "says it has hardly started"])
def test_issue16_item4_a_lying_progress_report_changes_no_admission_decision(mode: str, lie: ProgressReport) -> None:
    """Reports are read for the ETAs shown only: EASY's reservation and the conservative plan keep the
    time limits, so a job that lies about its progress gains nothing but wrong ETAs for others."""
    profile = SchedulingProfile(backfill_mode=mode)
    honest = run_cycle(_lying_case(), profile)
    lied = run_cycle(replace(_lying_case(), progress={"big": lie}), profile)
    assert [(a.job_id, a.allocation, a.backfill) for a in lied.admits] == \
        [(a.job_id, a.allocation, a.backfill) for a in honest.admits]
    assert lied.preemptions == honest.preemptions and lied.rejects == honest.rejects
    assert [p.reason.code for p in lied.pending] == [p.reason.code for p in honest.pending]
    assert "small" not in {a.job_id for a in lied.admits}  # it would delay head's reservation
    if lie.fraction > 0.5:  # the lie did reach the ETA shown (a slow one is capped by the limit: no change)
        # the rate's end (~37 s after the report; floored at a minute until newuser26 N5)
        left = max(END_MARGIN_S, lie.ran_s / lie.fraction - lie.ran_s)
        assert {p.job_id: p.reason.eta for p in lied.pending}["head"] == _t(1) + timedelta(seconds=left)
        assert {p.job_id: p.reason.eta for p in honest.pending}["head"] == _t(60)


def test_issue16_item4_a_slow_lie_does_not_let_the_liars_own_job_backfill() -> None:
    """Conservative backfill plans on the learnt end of ``big`` (10 minutes away): ``head`` is reserved then,
    and bob's ``small`` (30 min) would delay it. Were progress read by the admission plan, ``big`` saying it
    has hardly started (its limit: an hour away) would move that reservation and let ``small`` start now."""
    jobs = [running(make_job("big", gpus=2, user="bob", time_limit_s=120 * MIN), "n1", [0, 1], started=-60),
            make_job("head", gpus=4, time_limit_s=60 * MIN),
            make_job("small", gpus=2, user="bob", time_limit_s=30 * MIN, submitted=1)]
    snap = replace(snapshot([make_node("n1", gpus=4)], jobs, now=_t(1)), runtime_estimates={"big": 71 * MIN})
    profile = SchedulingProfile(backfill_mode="conservative", queue_sort="fifo")
    honest = run_cycle(snap, profile)
    lied = run_cycle(replace(snap, progress={"big": _report(0.02, at=0, ran=60)}), profile)
    assert [a.job_id for a in honest.admits] == [a.job_id for a in lied.admits] == []
    assert {p.job_id: p.reason.code for p in lied.pending} == {p.job_id: p.reason.code for p in honest.pending}


def test_issue16_item4_an_eta_moved_by_a_report_says_so() -> None:
    """The first usable report moves ``wait`` from the limit (4 h away) to 40 minutes: the move record's
    cause is the report, not "running jobs ended before their limits"."""
    snap = _snap()
    first = run_cycle(snap)
    wait = next(j for j in snap.jobs if j.id == "wait")
    seen = replace(wait, reason=next(p.reason for p in first.pending if p.job_id == "wait"))
    snap = replace(snap, now=_t(1), jobs=tuple(seen if j.id == "wait" else j for j in snap.jobs),
                   progress={"train": _report(0.5, at=0, ran=60)})
    moved = _reason(snap).details["eta_moved"]
    assert (moved["cause"], moved["jobs"]) == ("progress", ["train"]), moved
    assert moved["message"].endswith("train is projected to end from its progress (50 % done)"), moved["message"]


def test_issue16_item4_words_for_several_jobs_and_for_some_of_them() -> None:
    assert done_text(0.999) == "99 % done" and done_text(0.004) == "under 1 % done"
    assert progress_clause([("a", 0.4)], every=True) == "from its progress (40 % done)"
    assert progress_clause([("a", 0.4), ("b", 0.7)], every=True) == "from their progress (a 40 % done, b 70 % done)"
    assert progress_clause([("a", 0.4)], every=False) == "a from its progress (40 % done)"
