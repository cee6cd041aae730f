"""New user 22, N10: in one ``queue`` the waiter read "when stuck ends, from its progress (30 % done)" while
stuck's own line read "40 % done, reported 05:08 UTC (just now)".

The waiter's ETA is built at a full cycle from the report stored then; the blocker's line reads the latest
stored report, which may be newer (a job reports every few seconds, and a report is not a reason to run a
cycle: red team 21, R5). Rebuilding every waiter's ETA on each report would undo R5 and R2, so the waiter's
words name the report they read: ``from its progress (30 % done, reported 05:08:30 UTC)``, beside the
blocker's ``40 % done, reported 05:08 UTC (just now)`` — each true of its own report. A capped ETA (its
limit stops the blocker first) names it the same way. The ETA audit rule of red team 21, R2 (at most one
``eta_moved`` per waiting job per 600 s) holds while the named report changes every cycle.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import ProgressReport
from jupyter_sched.model import PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import Snapshot, run_cycle
from jupyter_sched.scheduling.eta import ETA_MOVE_MIN_INTERVAL_S
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reported import progress_text

START = T0 - timedelta(minutes=10)


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def _snap(report: ProgressReport, now_s: float, *, limit_s: float = 900.0) -> Snapshot:
    jobs = [running(make_job("stuck", gpus=3, user="bob", time_limit_s=limit_s), "n1", started=-10),
            make_job("waiter2", gpus=2, time_limit_s=300.0)]
    return replace(snapshot([make_node("n1", gpus=4)], jobs, now=_at(now_s)), progress={"stuck": report})


def _reason(snap: Snapshot) -> PendingReason:
    return {p.job_id: p.reason for p in run_cycle(snap).pending}["waiter2"]


def _blocker_line(fraction: float, at_s: float, now_s: float, limit_s: float = 900.0) -> str:
    job = {"state": "running", "started_at": START.isoformat(), "time_limit_s": limit_s,
           "progress": {"fraction": fraction, "at": _at(at_s).isoformat(), "run_started_at": START.isoformat(),
                        "ran_s": at_s}}
    return progress_text(job, _at(now_s))


def test_s22_newuser22_n10_the_waiters_words_name_the_report_its_eta_read() -> None:
    # the cycle at 05:08:30 read stuck's 30 % report of 05:08:30; stuck reported 40 % at 05:08:41
    reason = _reason(_snap(ProgressReport(fraction=0.3, at=_at(90), ran_s=90), 90))
    assert reason.details["eta_progress"] == {"stuck": 0.3}
    assert reason.details["eta_progress_at"] == {"stuck": _at(90).isoformat()}
    waiter = render_reason(reason_to_dict(reason), now=_at(101), relative=True).eta
    blocker = _blocker_line(0.4, 101, 101)
    assert waiter.endswith(", when bob's job stuck ends, from its progress (30 % done, reported 11:51:30 UTC)"), waiter
    assert blocker == "40 % done, reported 11:51 UTC (just now)", blocker
    # stored text (no clock of the reader's): the day with it, which the panel says as of its own now
    stored = render_reason(reason_to_dict(reason), now=None).eta
    assert "from its progress (30 % done, reported Mar 30 11:51:30 UTC)" in stored, stored


def test_s22_newuser22_n10_a_capped_eta_names_its_report_too() -> None:
    # slowlim (2m limit) said 10 % after 40 s: its limit stops it first (new user 21, N7)
    reason = _reason(_snap(ProgressReport(fraction=0.1, at=_at(40), ran_s=40), 46, limit_s=120))
    text = render_reason(reason_to_dict(reason), now=_at(46)).eta
    assert "reaches its 2m time limit (its progress report of 11:50:40 UTC, 10 % done, says it needs ~6m40s in all)" \
        in text, text


def test_s22_newuser22_n10_eta_moved_stays_bounded_while_the_named_report_changes() -> None:
    snap = _snap(ProgressReport(fraction=0.1, at=_at(10), ran_s=10), 10)
    moved: list[str] = []
    texts: set[str] = set()
    for i in range(int(ETA_MOVE_MIN_INTERVAL_S / 11)):  # ten minutes of reports every 11 s, a cycle after each
        now_s = 20 + 11 * i
        fraction = min(0.95, 0.1 + 0.005 * i) if i % 2 == 0 else 0.011  # a pace that moves the ETA every cycle
        snap = replace(snap, now=_at(now_s), progress={"stuck": ProgressReport(fraction=fraction, at=_at(now_s),
                                                                               ran_s=now_s)})
        result = run_cycle(snap)
        reasons = {p.job_id: p.reason for p in result.pending}
        texts.add(render_reason(reason_to_dict(reasons["waiter2"]), now=_at(now_s)).eta)
        snap = replace(snap, jobs=tuple(replace(j, reason=reasons.get(j.id, j.reason)) for j in snap.jobs))
        moved += [a.job_id for a in result.audit if a.action == "eta_moved"]
    assert len(texts) > 10  # the words follow each report read
    assert moved.count("waiter2") <= 2, moved  # the first move, then at most one per interval (red team 21, R2)
