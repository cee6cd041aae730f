"""newuser31 n3: a running job's line said "18 % done" and, beside it, an end learnt from its owner's other runs
that the 18 % already ruled out — "projected end ~12:26 UTC (in 10s), if it ends at ~10 % of its time limit, as
your other runs did" 20 s into a run that, 18 % done after 11 s, needs about a minute; the jobs waiting on it were
planned on that end too. And (the nit) the line mixed two reports: "51 % done, reported 12:26" beside "projected
end ~12:27, from its progress report of 12:26:28" (the 35 % one).

A learnt end is kept over a report that cannot project alone (session 21: the latest report alone counts the
start-up as run without progress), but not one the report's pace rules out even if half the run so far were
start-up (:func:`jupyter_sched.backfill.progress.paced_past`): then the report projects it, for its owner's line
and its waiters' ETAs alike. The owner's line reads the projection from the report it shows
(:func:`jupyter_sched.scheduling.ends.as_of_report`). Pure core.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.history import OTHER_RUNS
from jupyter_sched.backfill.progress import ProgressFit, ProgressReport, paced_past
from jupyter_sched.scheduling import Snapshot, run_cycle
from jupyter_sched.scheduling.ends import as_of_report
from jupyter_sched.scheduling.snapshot import ProjectedEnd

START = T0


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def _report(fraction: float, ran_s: float, reports: int = 2) -> ProgressReport:
    """A run's latest of ``reports`` stored reports (a line needs 3: with 2 the latest is read alone)."""
    fit = ProgressFit()
    for k in range(1, reports + 1):
        fit = fit.add(ran_s * k / reports, fraction * k / reports)
    return ProgressReport(fraction=fraction, at=_at(ran_s), ran_s=ran_s, fit=fit)


def _snap(report: ProgressReport, now_s: float, learnt_s: float = 30.0) -> Snapshot:
    """n31a's a-wait (3 GPUs, 5m limit) learnt from her other runs to end at ``learnt_s`` (30 s: ~10 % of its
    limit); a job waits."""
    jobs = [running(make_job("a-wait", gpus=3, user="n31a", time_limit_s=300), "n1", started=0),
            make_job("waiter", gpus=2, user="n31b", time_limit_s=300)]
    snap = snapshot([make_node("n1", gpus=4)], jobs, now=_at(now_s))
    return replace(snap, progress={"a-wait": report}, runtime_estimates={"a-wait": learnt_s},
                   runtime_sources={"a-wait": OTHER_RUNS})


def test_newuser31_n3_a_learnt_end_the_pace_rules_out_is_neither_said_nor_planned_on() -> None:
    result = run_cycle(_snap(_report(0.18, 11.0), 20))  # 18 % after 11 s: ~61 s in all, not 30
    end = result.projected["a-wait"]
    assert end.source == "progress" and end.fraction == 0.18, end
    assert abs((end.at - _at(11 / 0.18)).total_seconds()) < 1, end
    waiter = {p.job_id: p.reason for p in result.pending}["waiter"]
    assert waiter.eta == end.at, (waiter.eta, end.at)  # the waiter is planned on the same end
    assert (waiter.details.get("eta_progress") or {}).get("a-wait") == 0.18, waiter.details


def test_newuser31_n3_a_learnt_end_a_start_up_or_the_reports_noise_explains_is_kept() -> None:
    # two reports, 5 % and 10 % at 6 s and 12 s: the pace between them ends the run at ~120 s, 1.5 x faster ~84 s —
    # a learnt end at 90 s stands, one at 70 s does not
    two = _report(0.10, 12.0)
    assert not paced_past(two, 90.0) and paced_past(two, 70.0)
    assert run_cycle(_snap(two, 20, learnt_s=90.0)).projected["a-wait"] == ProjectedEnd(
        at=_at(90), source="history", runs=OTHER_RUNS, share=0.3)
    # one report cannot tell start-up from pace: 20 % after 50 minutes beside a learnt 2 h (session 21) stands
    one = _report(0.20, 3000.0, reports=1)
    assert not paced_past(one, 7200.0) and paced_past(one, 5000.0)
    assert not paced_past(_report(0.005, 11.0), 1.0)  # under 1 % done: nothing is ruled out


def test_newuser31_n3_the_owners_projection_is_read_from_the_report_it_shows() -> None:
    cycle = ProjectedEnd(at=_at(80), source="progress", report_at=_at(28), fraction=0.35)
    shown = _report(0.51, 40.0, reports=4)  # the 51 % one, newer than the cycle's 35 %
    end = as_of_report(cycle, shown, start=START, now=_at(41), limit_s=300)
    assert end is not None and end.report_at == shown.at and end.fraction == 0.51, end
    assert as_of_report(cycle, _report(0.35, 28.0), start=START, now=_at(41), limit_s=300) == cycle  # the same one
    # a learnt end the shown report rules out: from the report, as the next cycle plans it
    learnt = ProjectedEnd(at=_at(30), source="history", runs=OTHER_RUNS, share=0.1)
    read = as_of_report(learnt, _report(0.18, 11.0), start=START, now=_at(20), limit_s=300)
    assert read is not None and read.source == "progress" and read.fraction == 0.18, read
    # the shown report says its limit stops it first: no projection (the line says the limit's end)
    assert as_of_report(cycle, _report(0.05, 40.0, reports=4), start=START, now=_at(41), limit_s=300) is None
