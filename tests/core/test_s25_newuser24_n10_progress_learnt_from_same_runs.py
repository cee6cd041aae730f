"""New user 24, N10: a reporting job's end was read from its user's runs of *other* programs.

Since session 21 a running job that reported its progress once keeps its learnt end over that single
report until three reports fit a line (:func:`jupyter_sched.scheduling.runtimes.progress_reading`): on the
loaded replay the learnt end of *the same work* (its past runs) was 16 % off at the median, a single
report 61 %. But the learnt end it kept could come from the user's runs of unrelated programs
(``Snapshot.runtime_sources`` ``"other"``, its limit times their share of theirs), and then the job's
own report — the only figure about this program — was set aside for a guess from other work.

Now only a learnt end from the job's own user's runs is kept over a single report: its run key's runs
(``SAME_RUNS``) or the user's other programs (``OTHER_RUNS``, which since new user 25 N6 are read only
under time limits within ``LIMIT_REACH`` of its own); one from other users' runs of its size is not.
Keeping only ``SAME_RUNS`` (this session's first fix) cost the loaded replay's ETA 20 -> 23 %
(``benchmarks/jct_loaded.py``); the user's other programs kept: 20 %.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.history import OTHER_RUNS, POPULATION_RUNS, SAME_RUNS
from jupyter_sched.backfill.progress import ProgressFit, ProgressReport
from jupyter_sched.model import PendingReason
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle

MIN = 60.0
HISTORY = SchedulingProfile(eta_source="history")


def _t(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def _snap(source: str) -> Snapshot:
    """``train`` (5 h limit) started an hour ago; one report: 20 % done after 50 minutes (250 minutes in
    all); a learnt end of 2 h in all, from ``source``."""
    report = ProgressReport(fraction=0.2, at=_t(-10), ran_s=50 * MIN, fit=ProgressFit().add(50 * MIN, 0.2))
    jobs = [running(make_job("train", gpus=2, user="bob", time_limit_s=300 * MIN), "n1", started=-60),
            make_job("wait", gpus=2, time_limit_s=60 * MIN)]
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs), progress={"train": report},
                   runtime_estimates={"train": 120 * MIN})
    return snap if source == SAME_RUNS else replace(snap, runtime_sources={"train": source})


def _reason(snap: Snapshot) -> PendingReason:
    return {p.job_id: p.reason for p in run_cycle(snap, HISTORY).pending}["wait"]


@pytest.mark.parametrize("source", [POPULATION_RUNS])
def test_newuser24_n10_a_report_is_not_set_aside_for_an_end_learnt_from_other_work(source: str) -> None:
    reason = _reason(_snap(source))
    # failed before: ETA _t(60), the learnt 2 h in all from other users' runs of its size
    assert reason.eta == _t(190), reason.eta  # the job's own report: 50 minutes for 20 %, 250 in all
    assert reason.details["eta_progress"] == {"train": 0.2}


@pytest.mark.parametrize("source", [SAME_RUNS, OTHER_RUNS])
def test_newuser24_n10_an_end_learnt_from_its_users_own_runs_is_still_kept_over_a_single_report(source: str) -> None:
    reason = _reason(_snap(source))
    assert reason.eta == _t(60), reason.eta  # session 21's rule stands for its user's own runs
    assert "eta_progress" not in reason.details
