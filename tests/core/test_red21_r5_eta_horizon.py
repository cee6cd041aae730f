"""Red team 21, R5: one job's progress reports froze the engine for everyone.

Three reports 0.5, 0.5, 0.5000000000000001 on a job without a time limit fit a line of slope ~1e-17:
~1.9e16 s left. The ETA replay turned that into ``now + timedelta(...)`` and raised OverflowError, so
every cycle failed and nothing started for anyone. Now (:mod:`jupyter_sched.model.horizon`) every
projection past ten years is "unknown", a degenerate line projects nothing, and a cycle whose ETA pass
fails anyway still decides (``CycleResult.eta_failure`` names the cause; the ETAs say unknown).
"""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_sched.backfill.progress import ProgressFit, ProgressReport, projected_left
from jupyter_sched.model.horizon import HORIZON_S, capped, later
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle
from jupyter_sched.scheduling import eta as eta_module


def _liar_report() -> ProgressReport:
    """The reports of R5 (10.5 s apart, from 10 s into the run) on a run started 40 s before T0."""
    fit = ProgressFit()
    for ran, fraction in ((10.0, 0.5), (20.5, 0.5), (31.0, 0.5000000000000001)):
        fit = fit.add(ran, fraction)
    return ProgressReport(fraction=0.5000000000000001, at=T0 - timedelta(seconds=9), ran_s=31.0, fit=fit)


_STARTED = -40 / 60  # minutes


def _snap(*, with_bystander: bool = True) -> Snapshot:
    jobs = [running(make_job("liar-1", user="eve"), "n1", [0], started=_STARTED),
            running(make_job("liar-2", user="eve"), "n1", [1], started=_STARTED),
            make_job("waits", gpus=2, user="bob")]  # behind them
    if with_bystander:
        jobs.append(make_job("bystander", gpus=1, user="cy", submitted=1.0))  # a free GPU
    snap = snapshot([make_node("n1", gpus=3)], jobs)
    return replace(snap, progress={"liar-1": _liar_report(), "liar-2": _liar_report()})


def test_red21_r5_a_degenerate_line_projects_no_end_from_progress() -> None:
    report = _liar_report()
    assert report.fit.total_s() is None  # ~1.9e16 s: past the horizon, no end from the line
    left = projected_left(report, start=T0 - timedelta(seconds=40), now=T0, limit_s=None)
    assert left is not None and left[0] <= HORIZON_S  # the latest report's own rate (run / fraction)


@pytest.mark.parametrize("mode", ["easy", "conservative", "none"])
def test_red21_r5_three_reports_never_freeze_the_cycle(mode: str) -> None:
    profile = SchedulingProfile(backfill=mode != "none", backfill_mode=mode if mode != "none" else "easy")
    result = run_cycle(_snap(), profile)
    assert [a.job_id for a in result.admits] == ["bystander"]  # the free GPU is given
    waits = {p.job_id: p.reason for p in result.pending}["waits"]
    assert waits.eta is None or waits.eta - T0 <= timedelta(seconds=HORIZON_S)
    assert result.eta_failure == ""


def test_red21_r5_a_failing_eta_pass_still_decides_and_says_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise OverflowError("Python int too large to convert to C int")

    monkeypatch.setattr(eta_module, "lookahead", broken)
    monkeypatch.setattr(eta_module.Plan, "estimate", broken)
    result = run_cycle(_snap())
    assert [a.job_id for a in result.admits] == ["bystander"]
    waits = {p.job_id: p.reason for p in result.pending}["waits"]
    assert waits.eta is None and waits.details["eta_code"] == "EstimateFailed"
    assert waits.position == 1
    assert "ETA" in waits.eta_reason and "unknown" in waits.eta_reason
    # the cause, naming the running jobs whose progress reports fed the pass
    assert "OverflowError" in result.eta_failure and "liar-1" in result.eta_failure, result.eta_failure


def test_red21_r5_times_past_the_horizon_are_unknown_or_capped() -> None:
    assert later(T0, 1.88e16) is None and later(T0, math.inf) is None and later(T0, math.nan) is None
    assert later(T0, 60.0) == T0 + timedelta(seconds=60)
    assert capped(T0, 1e300) == T0 + timedelta(seconds=HORIZON_S)
    assert capped(T0, math.nan) == T0 + timedelta(seconds=HORIZON_S)
    assert capped(T0, -1e300) == T0 - timedelta(seconds=HORIZON_S)


_FRACTIONS = st.one_of(st.floats(min_value=0.0, max_value=1.0),
                       st.sampled_from([0.5, 0.5000000000000001, 0.01, 1.0, 0.9999999999999999]))


@settings(max_examples=60, deadline=None)
@given(reports=st.lists(st.tuples(st.floats(min_value=0.001, max_value=3540.0), _FRACTIONS), min_size=1, max_size=6),
       limit=st.one_of(st.none(), st.floats(min_value=1.0, max_value=366 * 86400.0)))
def test_red21_r5_no_progress_sequence_makes_a_cycle_raise(reports: list[tuple[float, float]],
                                                           limit: float | None) -> None:
    fit = ProgressFit()
    for ran, fraction in reports:
        fit = fit.add(ran, fraction)
    ran, fraction = reports[-1]
    report = ProgressReport(fraction=fraction, at=T0 - timedelta(minutes=60) + timedelta(seconds=ran), ran_s=ran,
                            fit=fit)
    jobs = [running(make_job("liar", gpus=2, user="eve", time_limit_s=limit), "n1", [0, 1], started=-60.0),
            make_job("waits", gpus=2, user="bob"), make_job("other", gpus=1, user="cy", time_limit_s=600.0)]
    snap = replace(snapshot([make_node("n1", gpus=3)], jobs), progress={"liar": report})
    result = run_cycle(snap)
    assert result.eta_failure == ""
    assert result.admits == run_cycle(replace(snap, progress={})).admits  # a report decides nothing
