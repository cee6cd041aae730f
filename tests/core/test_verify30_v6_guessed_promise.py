"""verify30 V6: a flood's first ETA ("in 5s" for an 8-minute job) became the job's stored promise, and its
line then said it was late against a figure nothing but a guess had given.

Each way a first ETA could sit implausibly near, and what it is now:

* a running job with **no time limit** that ran past its learnt end was "expected to stop within the 1m
  grace period: it ran past its 5s time limit" — a limit it never had, "in 1m" on every cycle. Nothing
  bounds it: the jobs behind it have no ETA, and say why;
* a running job **past its typical runtime**, a few seconds short of the next longer similar run, was
  said to end then ("in 5s"); it is now given at least as long again as it overran the typical run;
* an ETA that rests on a **guess** — a running job's end read from other users' runs of its size (a
  newcomer's job), or the moving end of one past its typical run; or a
  job queued ahead that starts when such a guessed end comes — is shown, but **no promise** is made from
  it (the promise decides an election and is kept until the job starts); one is made on the first cycle
  its ETA rests on something (a time limit, a stop's grace, a learnt end of its own user's runs that the
  running job is still within).

The snapshots here carry the learnt runtimes as the engine's feed gives them (``Snapshot.runtime_estimates``,
``runtime_typical``, ``runtime_sources``); tests/runtime/test_verify30_v6_engine.py runs the same through
the engine with real processes and its store's history.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from core_builders import T0, make_job, make_node, running, snapshot, straight_report

from jupyter_sched.backfill.history import OTHER_RUNS, POPULATION_RUNS, SAME_RUNS
from jupyter_sched.model import Job, PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, Snapshot, run_cycle
from jupyter_sched.wording import render_reason


def _flood(*, limit_s: float | None = 600.0, ran_s: float = 10.0) -> tuple[list[Job], datetime]:
    """Two 1-GPU jobs of bo running for ``ran_s`` on a 2-GPU node, and three more of his queued behind them."""
    now = T0 + timedelta(seconds=ran_s)
    jobs = [running(make_job(f"r{i}", user="bo", time_limit_s=limit_s), "n1", [i], started=0) for i in range(2)]
    jobs += [make_job(f"q{i}", user="bo", time_limit_s=limit_s, submitted=ran_s / 60) for i in range(3)]
    return jobs, now


def _cycle(jobs: list[Job], now: datetime, **learnt: Any) -> tuple[dict[str, PendingReason], Snapshot]:
    snap = replace(snapshot([make_node("n1", gpus=2)], jobs, now=now), **learnt)
    result: CycleResult = run_cycle(snap, SchedulingProfile())
    assert not result.admits
    return {p.job_id: p.reason for p in result.pending}, snap


def _carried(jobs: list[Job], reasons: dict[str, PendingReason]) -> list[Job]:
    """The jobs with the reasons a cycle gave them (what the store keeps between cycles)."""
    return [replace(j, reason=reasons[j.id]) if j.id in reasons else j for j in jobs]


def _in_s(reason: PendingReason, now: datetime) -> float | None:
    return None if reason.eta is None else (reason.eta - now).total_seconds()


def test_verify30_v6_a_running_job_with_no_limit_past_its_learnt_end_has_no_end_not_a_grace_period() -> None:
    jobs, now = _flood(limit_s=None, ran_s=10.0)
    # its similar past runs took 5 s; it has run 10 s, with no time limit (a personal lab's default)
    reasons, _ = _cycle(jobs, now, runtime_estimates={"r0": 5.0, "r1": 5.0})
    first = reasons["q0"]
    assert first.eta is None, first  # was now + 60 s: "within the 1m grace period"
    assert "grace period" not in first.eta_reason and "time limit" in first.eta_reason, first.eta_reason
    assert "ran longer than the ~5s that similar past runs took, and it has no time limit, so its end is unknown" \
        in first.eta_reason, first.eta_reason
    text = render_reason(reason_to_dict(first), now=now, relative=True).eta
    assert text.startswith("ETA unknown") and "grace" not in text, text


def test_verify30_v6_a_running_job_past_its_typical_run_is_not_said_to_end_in_seconds() -> None:
    jobs, now = _flood(limit_s=3600.0, ran_s=300.0)
    # similar runs typically took 60 s; the longer of them end at 305 s: it ran 300 s
    reasons, _ = _cycle(jobs, now, runtime_estimates={"r0": 305.0, "r1": 305.0},
                        runtime_typical={"r0": 60.0, "r1": 60.0})
    left = _in_s(reasons["q0"], now)
    assert left is not None and left >= 300.0 - 60.0, reasons["q0"]  # was 5 s
    assert "has run longer than the ~1m that similar past runs took" in reasons["q0"].details["eta_note"]


GUESSES = [
    pytest.param({"runtime_estimates": {"r0": 15.0, "r1": 15.0},
                  "runtime_sources": {"r0": POPULATION_RUNS, "r1": POPULATION_RUNS}},
                 id="a newcomer's running jobs read from other users' runs of their size"),
    pytest.param({"runtime_estimates": {"r0": 15.0, "r1": 15.0}, "runtime_typical": {"r0": 8.0, "r1": 8.0}},
                 id="running jobs past the typical run of their own work"),
]


@pytest.mark.parametrize("reported", [False, True], ids=["no progress report", "a progress report on r1"])
@pytest.mark.parametrize("learnt", GUESSES)
def test_verify30_v6_no_promise_is_made_from_an_eta_that_rests_on_a_guess(learnt: dict[str, Any],
                                                                          reported: bool) -> None:
    jobs, now = _flood(limit_s=600.0, ran_s=10.0)
    if reported:  # the promise is then projected apart, without reports (eta.promises): it reads the guess too
        learnt = {**learnt, "progress": {"r1": straight_report(T0, now, 400.0)}}
    reasons, _ = _cycle(jobs, now, **learnt)
    for jid in ("q0", "q1", "q2"):  # q2 waits on q0 and q1, which start when the guessed ends come
        assert reasons[jid].eta is not None, reasons[jid]  # shown, as before
        assert PROMISE not in reasons[jid].details, (jid, reasons[jid].details[PROMISE])
    assert _in_s(reasons["q0"], now) < 600 - 10  # type: ignore[operator]  # the guess, before the limit
    # the running jobs outrun the guess: their limits bound them, and the promise is made then
    later = now + timedelta(seconds=20)
    outrun = {**learnt, "runtime_estimates": {"r0": 15.0, "r1": 15.0}}  # the edge's guess, below what they ran
    again, _ = _cycle(_carried(jobs, reasons), later, **outrun)
    promise = again["q0"].details[PROMISE]
    assert promise["at"] == later.isoformat()
    assert datetime.fromisoformat(promise["start"]) == T0 + timedelta(seconds=600), promise  # r0's 10m limit
    assert PROMISE in again["q2"].details


@pytest.mark.parametrize("source", [SAME_RUNS, OTHER_RUNS], ids=["similar past runs", "its user's other programs"])
def test_verify30_v6_a_promise_is_still_made_from_a_learnt_end_of_its_users_runs_the_job_is_within(
        source: str) -> None:
    """Its own user's record is something (counting their other programs as a guess cost the loaded
    replay's ETA error 13 % -> 23 % and avg JCT +7 % -> +16 % of SJF: runtimes.GUESSED_FROM)."""
    jobs, now = _flood(limit_s=600.0, ran_s=10.0)
    reasons, _ = _cycle(jobs, now, runtime_estimates={"r0": 120.0, "r1": 120.0},
                        runtime_sources={"r0": source, "r1": source})
    first = reasons["q0"]
    assert first.eta == T0 + timedelta(seconds=120), first
    assert first.details[PROMISE] == {"at": now.isoformat(), "start": first.eta.isoformat()}
    assert PROMISE in reasons["q2"].details


def test_verify30_v6_a_promise_from_limits_alone_is_unchanged() -> None:
    jobs, now = _flood(limit_s=600.0, ran_s=10.0)
    reasons, _ = _cycle(jobs, now)
    assert reasons["q0"].details[PROMISE]["start"] == (T0 + timedelta(seconds=600)).isoformat()
    assert reasons["q2"].details[PROMISE]["start"] == (T0 + timedelta(seconds=1200)).isoformat()


def test_verify30_v6_the_overrun_floor_never_reaches_past_the_jobs_limit() -> None:
    jobs, now = _flood(limit_s=400.0, ran_s=300.0)  # overran its 60-s typical run by 240 s; 100 s to its limit
    reasons, _ = _cycle(jobs, now, runtime_estimates={"r0": 305.0, "r1": 305.0},
                        runtime_typical={"r0": 60.0, "r1": 60.0})
    assert reasons["q0"].eta == T0 + timedelta(seconds=400), reasons["q0"]
