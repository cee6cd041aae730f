"""New user 21, N4 and N7: the ETAs that a running job's progress reports give the jobs waiting for it.

N4: ``stuck`` (4 GPUs, 15 m limit) reported 10 % … 90 % every 11 s, then stalled; the line through its reports
ended ~99 s into its run. Its waiter read "ETA in 56s, from its progress (90 % done)" for six minutes and on:
the 60 s floor turned a passed end into one always a minute away. Once its own projection has passed (or its
reports stopped: stale), its limit sets the waiter's ETA again and the words say why; a lone report from the
first second of a run is not read at all.

N7: ``slowlim`` (2 m limit) reported 10 % after 40 s: 400 s in all at that pace, so its limit stops it first.
The waiter's ETA (its limit's) was credited to "its progress (10 % done)"; its owner was told nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import END_MARGIN_S, ProgressFit, ProgressReport
from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import Snapshot, run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reported import progress_text

START = T0 - timedelta(minutes=10)
"""When the blocking job started (its reports' run times count from here)."""


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def _reports(*points: tuple[float, float]) -> ProgressReport:
    """The latest report of a run that reported ``(ran_s, fraction)`` at each point, in order."""
    fit = ProgressFit()
    for ran_s, fraction in points:
        fit = fit.add(ran_s, fraction)
    ran_s, fraction = points[-1]
    return ProgressReport(fraction=fraction, at=_at(ran_s), ran_s=ran_s, fit=fit)


STUCK = _reports(*((0.2 + 11 * i, (i + 1) / 10) for i in range(9)))
"""stuck.py: report_progress(i, 10) for i in 1..9, 11 s apart (the first 0.2 s into the run), then nothing."""


def _snap(report: ProgressReport, now_s: float, *, limit_s: float = 900.0, name: str = "stuck") -> Snapshot:
    jobs = [running(make_job(name, gpus=4, user="bob", time_limit_s=limit_s), "n1", started=-10),
            make_job("waiter", gpus=2, time_limit_s=300.0)]
    return replace(snapshot([make_node("n1", gpus=4)], jobs, now=_at(now_s)), progress={name: report})


def _reason(snap: Snapshot) -> PendingReason:
    return {p.job_id: p.reason for p in run_cycle(snap).pending}["waiter"]


def _eta_text(reason: PendingReason, now_s: float) -> str:
    return render_reason(reason_to_dict(reason), now=_at(now_s)).eta


def test_newuser21_n4_a_passed_projection_is_late_and_the_limit_sets_the_eta_again() -> None:
    ahead = _reason(_snap(STUCK, 90))  # its line still ends ~9 s ahead: read, at the line's end (newuser26 N5:
    total = STUCK.fit.total_s()         # it was floored at a minute, 150 s)
    assert total is not None and 98 < total < 100
    assert ahead.eta == _at(total) and "eta_progress" in ahead.details
    seen = set()
    for now_s in range(100, 700, 20):  # every 20 s after its projected end, as the user's `queue` loop did
        reason = _reason(_snap(STUCK, now_s))
        seen.add(reason.eta)
        assert reason.eta == _at(900), (now_s, reason.eta)  # its 15m limit, never "now + 1 min"
        assert "eta_progress" not in reason.details
        assert reason.details["eta_progress_lapsed"]["stuck"]["lapse"] == "late"
    assert seen == {_at(900)}
    text = _eta_text(_reason(_snap(STUCK, 360)), 360)
    assert text == ("ETA 12:05 UTC, when bob's job stuck ends; stuck's progress (90 % done at 11:51 UTC) "
                    "said it would end at 11:51 UTC: it is late, so this ETA no longer reads it"), text
    assert "from its progress" not in text


def test_newuser21_n4_a_stale_report_is_not_read_though_its_end_is_ahead() -> None:
    """Reports at 60, 120 and 180 s (10, 20, 30 %): the line ends at 600 s. Three intervals (180 s) after the
    last report it is stale: the job stopped reporting, so it may have stopped progressing."""
    quiet = _reports((60, 0.1), (120, 0.2), (180, 0.3))
    fresh = _reason(_snap(quiet, 300))  # 120 s after the last report: read
    assert fresh.eta == _at(600) and fresh.details["eta_progress"] == {"stuck": 0.3}
    stale = _reason(_snap(quiet, 400))  # 220 s after it: stale
    assert stale.eta == _at(900)
    assert stale.details["eta_progress_lapsed"]["stuck"]["lapse"] == "stale"
    assert _eta_text(stale, 400).endswith("; stuck has not reported its progress since 11:53 UTC (30 % done), "
                                          "so this ETA no longer reads it")


@pytest.mark.parametrize(("report", "now_s", "read"), [
    (_reports((0.2, 0.1)), 10, False),
    (_reports((20, 0.1)), 25, False),
    (_reports((0.2, 0.1), (11, 0.2)), 12, True),
    (_reports((40, 0.5)), 45, True),
], ids=["one report 0.2 s into the run", "one report 20 s in", "a second report", "one report 40 s in"])
def test_newuser21_n4_a_lone_report_from_the_first_seconds_of_a_run_is_not_read(
        report: ProgressReport, now_s: float, read: bool) -> None:
    reason = _reason(_snap(report, now_s))
    assert ("eta_progress" in reason.details) is read
    if not read:
        assert reason.eta == _at(900)


def test_newuser21_n4_a_job_that_says_it_is_all_done_gets_its_margin_then_is_late() -> None:
    done = _reports((60, 0.5), (120, 1.0))
    # END_MARGIN_S to wind up after its last report (saving, evaluating), only while that is ahead; a minute
    # until newuser26 N5 ("100 % done" read "projected end in 51s")
    assert _reason(_snap(done, 120)).eta == _at(120 + END_MARGIN_S)
    assert _reason(_snap(done, 123)).eta == _at(123 + END_MARGIN_S)  # the floor, while its end is ahead
    late = _reason(_snap(done, 130))
    assert late.eta == _at(900) and late.details["eta_progress_lapsed"]["stuck"]["lapse"] == "late"


SLOW = _reports((40, 0.1))
"""slow.py under a 2m limit: 10 % after 40 s, so ~400 s in all."""


def test_newuser21_n7_an_eta_capped_at_the_time_limit_is_the_limits_not_the_progresss() -> None:
    reason = _reason(_snap(SLOW, 46, limit_s=120, name="slowlim"))
    assert reason.eta == _at(120)
    assert "eta_progress" not in reason.details
    assert reason.details["eta_progress_capped"] == {"slowlim": {"fraction": 0.1, "needs_s": 400.0, "limit_s": 120.0,
                                                                 "at": _at(40).isoformat()}}
    text = _eta_text(reason, 46)  # the report read, by its time (new user 22, N10)
    assert text == ("ETA 11:52 UTC, when bob's job slowlim reaches its 2m time limit (its progress report of "
                    "11:50:40 UTC, 10 % done, says it needs ~6m40s in all)"), text


def test_newuser21_n7_its_owner_is_told_the_limit_stops_it_at_this_pace() -> None:
    job = {"state": "running", "started_at": START.isoformat(), "time_limit_s": 120,
           "progress": {"fraction": 0.1, "at": _at(40).isoformat(), "run_started_at": START.isoformat(), "ran_s": 40}}
    assert progress_text(job, _at(46)) == ("10 % done (at this pace it needs ~6m40s in all: its 2m time limit stops "
                                           "it at 11:52 UTC), reported 11:50 UTC (6s ago)")
    assert progress_text({**job, "time_limit_s": 600}, _at(46)) == "10 % done, reported 11:50 UTC (6s ago)"
    early = {**job, "progress": {**job["progress"], "ran_s": 5, "at": _at(5).isoformat()}}  # start-up, not pace
    assert progress_text(early, _at(6)) == "10 % done, reported 11:50 UTC (1s ago)"
