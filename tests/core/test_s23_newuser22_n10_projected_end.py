"""New user 22, N10 (second half): the owner's line never showed the projected end its waiters are given.

A waiter read "ETA 05:09, when stuck ends, from its progress (30 % done)" while stuck's own line said only
"ends by 05:23 UTC, its 15m time limit". The cycle now carries, per running job whose projected end comes
before its time limit's, the end the ETA pass projects for it (``CycleResult.projected``,
:func:`jupyter_sched.scheduling.ends.projected_ends`) — the same reading, so the owner's time is the
waiter's: from its progress report, or from its learnt runtime; none where its limit ends it.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import ProgressReport
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle
from jupyter_sched.scheduling.snapshot import ProjectedEnd

START = T0 - timedelta(minutes=10)


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def _snap(report: ProgressReport | None, now_s: float, *, limit_s: float = 900.0, waiter: bool = True) -> Snapshot:
    jobs = [running(make_job("stuck", gpus=3, user="bob", time_limit_s=limit_s), "n1", started=-10),
            *([make_job("waiter2", gpus=2, time_limit_s=300.0)] if waiter else [])]
    snap = snapshot([make_node("n1", gpus=4)], jobs, now=_at(now_s))
    return replace(snap, progress={"stuck": report}) if report is not None else snap


def test_s23_newuser22_n10_the_running_job_carries_the_end_its_waiter_is_given() -> None:
    result = run_cycle(_snap(ProgressReport(fraction=0.3, at=_at(90), ran_s=90), 90))
    waiter = {p.job_id: p.reason for p in result.pending}["waiter2"]
    end = result.projected["stuck"]
    assert end == ProjectedEnd(at=waiter.eta, source="progress", report_at=_at(90), fraction=0.3), (end, waiter.eta)
    assert end.at < _at(900)  # before its 15m limit's end (the only time its line said)


def test_s23_newuser22_n10_no_waiter_still_projects_the_owners_end() -> None:
    # the owner's line does not depend on someone waiting: the same reading with an empty queue
    alone = run_cycle(_snap(ProgressReport(fraction=0.3, at=_at(90), ran_s=90), 90, waiter=False)).projected
    queued = run_cycle(_snap(ProgressReport(fraction=0.3, at=_at(90), ran_s=90), 90)).projected
    assert alone == queued and "stuck" in alone


@pytest.mark.parametrize("report, limit_s", [
    pytest.param(None, 900.0, id="no report and nothing learnt: its limit ends it, already said"),
    pytest.param(ProgressReport(fraction=0.1, at=_at(40), ran_s=40), 120.0,
                 id="its pace needs more than its limit: the limit ends it"),
])
def test_s23_newuser22_n10_a_job_its_limit_ends_carries_no_projection(report: ProgressReport | None,
                                                                      limit_s: float) -> None:
    assert run_cycle(_snap(report, 46, limit_s=limit_s)).projected == {}


def test_s23_newuser22_n10_a_learnt_runtime_is_projected_as_the_waiter_reads_it() -> None:
    snap = replace(_snap(None, 90), runtime_estimates={"stuck": 300.0})
    result = run_cycle(snap)
    waiter = {p.job_id: p.reason for p in result.pending}["waiter2"]
    assert result.projected["stuck"] == ProjectedEnd(at=_at(300), source="history", runs="same")
    assert waiter.eta == _at(300)
    # the profile that projects limits only: nothing learnt is read, nothing projected
    assert run_cycle(snap, SchedulingProfile(eta_source="limits")).projected == {}


def test_s23_newuser22_n10_stopping_work_carries_none() -> None:
    snap = _snap(ProgressReport(fraction=0.3, at=_at(90), ran_s=90), 90)
    stopping = replace(snap, jobs=tuple(replace(j, stopping_since=_at(80)) if j.id == "stuck" else j for j in snap.jobs))
    assert run_cycle(stopping).projected == {}
