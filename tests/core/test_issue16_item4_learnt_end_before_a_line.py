"""Issue 16 item 4 (session 21): a learnt end is kept until a line is fitted through a job's reports.

``train`` (2 GPUs, 5 h limit) started an hour ago; similar past runs took 2 h, so its learnt end is in an
hour. Its one report says 20 % done after 50 minutes: read alone, that rate (250 minutes in all) counts
its start-up as run without progress — on the loaded replay such single-report ends were 61 % too long
at the median, the learnt ones 16 % (``benchmarks/jct_loaded.py``) — so ``wait``'s ETA keeps the learnt
end until three reports fit a line (:func:`jupyter_sched.scheduling.runtimes.progress_end`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import ProgressFit, ProgressReport, projected_left
from jupyter_sched.model import PendingReason
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle

MIN = 60.0
HISTORY = SchedulingProfile(eta_source="history")


def _t(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _single(fraction: float = 0.2) -> ProgressReport:
    """One report, 10 minutes ago, after 50 minutes of run (no line yet)."""
    return ProgressReport(fraction=fraction, at=_t(-10), ran_s=50 * MIN, fit=ProgressFit().add(50 * MIN, fraction))


def _line() -> ProgressReport:
    """Three reports on the line ``fraction = -0.1 + 0.01 x minutes``: all done after 110 minutes."""
    fit = ProgressFit()
    for minutes, fraction in ((30, 0.2), (40, 0.3), (50, 0.4)):
        fit = fit.add(minutes * MIN, fraction)
    return ProgressReport(fraction=0.4, at=_t(-10), ran_s=50 * MIN, fit=fit)


def _snap(report: ProgressReport, *, learnt_min: float | None) -> Snapshot:
    jobs = [running(make_job("train", gpus=2, user="bob", time_limit_s=300 * MIN), "n1", started=-60),
            make_job("wait", gpus=2, time_limit_s=60 * MIN)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs), progress={"train": report})
    return snap if learnt_min is None else replace(snap, runtime_estimates={"train": learnt_min * MIN})


def _reason(snap: Snapshot) -> PendingReason:
    return {p.job_id: p.reason for p in run_cycle(snap, HISTORY).pending}["wait"]


def test_issue16_item4_a_learnt_end_is_kept_over_a_single_report() -> None:
    reason = _reason(_snap(_single(), learnt_min=120))
    assert reason.eta == _t(60), reason.eta  # learnt: 2 h in all, an hour left (the report alone: 190 minutes)
    assert "eta_progress" not in reason.details  # the words do not say "from its progress"


def test_issue16_item4_the_line_through_three_reports_wins_over_the_learnt_end() -> None:
    reason = _reason(_snap(_line(), learnt_min=120))
    assert reason.eta == _t(50), reason.eta  # 110 minutes in all, from its start an hour ago
    assert reason.details["eta_progress"] == {"train": 0.4}


@pytest.mark.parametrize(("learnt_min", "why"), [
    (None, "nothing learnt: its limit (300 minutes) is all else there is"),
    (50, "it already ran past its learnt end (50 minutes)"),
    (300, "the learnt end is its limit"),
])
def test_issue16_item4_a_single_report_is_read_where_no_learnt_end_is_ahead(learnt_min: float | None,
                                                                             why: str) -> None:
    reason = _reason(_snap(_single(), learnt_min=learnt_min))
    assert reason.eta == _t(190), why  # 50 minutes for 20 %: 250 in all
    assert reason.details["eta_progress"] == {"train": 0.2}, why


def test_issue16_item4_projected_left_without_the_single_reading_needs_a_line() -> None:
    start = _t(-60)
    assert projected_left(_single(), start=start, now=T0, limit_s=300 * MIN, single=False) is None
    assert projected_left(_single(), start=start, now=T0, limit_s=300 * MIN) == (190 * MIN, True)
    assert projected_left(_line(), start=start, now=T0, limit_s=300 * MIN, single=False) == pytest.approx((50 * MIN, True))
