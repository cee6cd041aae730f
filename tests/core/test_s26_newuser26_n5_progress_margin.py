"""newuser26 N5 (issue 16): a job's end projected from its progress was never under a minute away.

``END_MARGIN_S`` (60 s) floored the time left: "82 % done after 40 s" read "projected end … (in 57s)" where
its rate said 9 s, and a job reporting "100 % done" read "projected end (in 51s), if it ends at ~20 % of its
time limit, as your other runs did" (its learnt end kept over a report that was not read alone). The margin
is now a share of the span the report projects past itself, at least 5 s; a report of 100 % done is read
even alone, and says "finishing".
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.backfill.progress import (
    END_MARGIN_S,
    END_MARGIN_SHARE,
    ProgressFit,
    ProgressReport,
    end_margin_s,
    projected_left,
    read_progress,
)
from jupyter_sched.wording.projected import projected_end_text

START = datetime(2026, 12, 5, 18, 47, 20, tzinfo=timezone.utc)


def _report(*points: tuple[float, float]) -> ProgressReport:
    fit = ProgressFit()
    for ran_s, fraction in points:
        fit = fit.add(ran_s, fraction)
    ran_s, fraction = points[-1]
    return ProgressReport(fraction=fraction, at=START + timedelta(seconds=ran_s), ran_s=ran_s, fit=fit)


def test_newuser26_n5_82_percent_after_40s_projects_the_rates_9s_not_a_minute() -> None:
    report = _report((40.0, 0.82))  # slow.py 50: one report read alone (40 s of run)
    now = START + timedelta(seconds=40.4)  # the tester's REST read, 0.4 s after the report
    left = projected_left(report, start=START, now=now, limit_s=300.0)
    assert left is not None and left[1] is True
    assert left[0] == pytest.approx(40 / 0.82 - 40.4)  # ~8.4 s; it was 60 s
    assert END_MARGIN_S == 5.0


def test_newuser26_n5_the_margin_is_a_share_of_the_projected_span() -> None:
    assert end_margin_s(48.8, 40.0) == END_MARGIN_S  # a few seconds projected: the 5 s floor
    assert end_margin_s(3600.0 + 1800.0, 1800.0) == pytest.approx(END_MARGIN_SHARE * 3600.0)  # an hour: 6 min
    report = _report((1800.0, 0.5))  # half done after 30 min: 30 min to go
    late_in = START + timedelta(seconds=3500.0)  # 100 s before the rate's end, no report since
    left = projected_left(report, start=START, now=late_in, limit_s=None)
    assert left == (pytest.approx(END_MARGIN_SHARE * 1800.0), True)  # 3 min: the margin, not 100 s


def test_newuser26_n5_a_100_percent_report_outranks_a_learnt_end_and_says_finishing() -> None:
    report = _report((1.0, 0.1), (10.0, 1.0))  # slow.py 10: 10 % then 100 %, a first run
    now = START + timedelta(seconds=10.5)
    # single=False: a learnt end it has not outrun (its other runs) is kept over a lone report — not over "done"
    reading = read_progress(report, start=START, now=now, limit_s=300.0, single=False)
    assert reading is not None and reading.left_s == pytest.approx(END_MARGIN_S) and reading.from_progress
    view = {"at": (now + timedelta(seconds=END_MARGIN_S)).isoformat(), "source": "progress",
            "report_at": report.at.isoformat(), "fraction": 1.0}
    assert projected_end_text(view, now, yours=True) == "finishing: all done by its progress report of 18:47:30 UTC"
    assert projected_end_text(view, now, brief=True) == "finishing"
    assert projected_end_text(view, None).startswith("finishing: all done by its progress report of Dec 5 ")
    nearly = {**view, "fraction": 0.99}  # not all done: the projection, as before
    assert projected_end_text(nearly, now).startswith("projected end ~18:47 UTC (in 5s), from its progress report")
