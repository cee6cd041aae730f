"""New user 24, N1 (the two-user race, left by session 24): a job admitted by one scheduling pass and reclaimed by
the next, 0-1 s after its start, read "preempted … (it waits in the queue again)" and counted as a run: its next
start said "start 2, after preemption by …", and its log "(start 2)".

A stop asked within the engine's poll interval of the executor's start confirmation (``started_at``; the
engine had not looked at the running work once — :func:`jupyter_sched.engine.transitions.just_started`) now
says so, on the job's reason, in the last line of its log and in the ``requeued`` record (``counted: false``):
"stopped just after it started: …; it is back in the queue, this does not count as an attempt" — and it is
none: ``false_starts`` grows, and the starts its owner is told of are ``attempts - false_starts``. There is no
limit on attempts to keep it from; what counts are the start's number on every surface and the requeue backoff.
A stop asked later is a preemption as before.

Real SQLite store, real core, real processes of the local executor on simulated GPUs (the scenario of
:mod:`tests.runtime.test_newuser24_n1`).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.engine.stops import stop_words
from jupyter_sched.wording.jobs import job_line
from tests.in_process import tick_until
from tests.leftovers import end_jobs
from tests.runtime.test_newuser24_n1 import NEVER, _service

TAIL = "it is back in the queue, this does not count as an attempt"


def _requeued(svc: Any, job_id: str) -> dict[str, Any]:
    (row,) = [e for e in svc.audit(limit=100) if e["action"] == "requeued" and e["job_id"] == job_id]
    return dict(row)


@pytest.mark.parametrize(("after_s", "just"), [(0.0, True), (0.5, True), (5.0, False)],
                         ids=["reclaimed in the same second", "half a second later", "5 s later: a real run"])
def test_newuser24_n1_a_job_stopped_just_after_it_started_says_so_and_is_no_attempt(
        sqlite_db: str, tmp_path: Path, after_s: float, just: bool) -> None:
    svc = _service(sqlite_db, tmp_path)
    try:
        low = svc.submit({"gpus": 3, "command": NEVER, "priority": "low", "team": "ml", "time_limit_s": 600},
                         user="root")["id"]
        tick_until(svc, "low to run", lambda: svc.get_job(low, user="root")["state"] == "running")
        svc.clock.advance(after_s)
        cv = svc.submit({"gpus": 2, "command": NEVER, "team": "cv", "time_limit_s": 240}, user="root")["id"]
        tick_until(svc, "low's reclaim", lambda: svc.store.get_job(low).stop_intent is not None, timeout_s=30)
        running = svc.store.get_job(low)
        job_of, started, stopped = running.job, running.job.started_at, running.stop_requested_at
        tick_until(svc, "low to be reclaimed and requeued",
                   lambda: svc.get_job(low, user="root")["state"] == "pending", timeout_s=30)
        job = svc.get_job(low, user="root")
        requeued = _requeued(svc, low)
        log = svc.logs(low, user="root")["text"]
        if just:
            # failed before: "preempted: …" and its log's "(it waits in the queue again)", counted as run 1
            assert requeued["message"].startswith("stopped just after it started: preempted to return borrowed quota "
                                                  "to cv; "), requeued
            assert requeued["message"].endswith(TAIL) and requeued["details"]["counted"] is False, requeued
            # the reasons of the cycles that follow keep saying it
            assert "stopped just after it started: this does not count as an attempt" in job["reason"]["message"], \
                job["reason"]
            assert (job["attempts"], job["false_starts"]) == (1, 1), job
            # the last line of its log (written when the wrapper read the stop's words before its program ended)
            words = stop_words(replace(svc.store.get_job(low), stop_intent="preempt", stop_requested_at=stopped,
                                       job=replace(job_of, started_at=started)), svc.engine.writer.settle_s)
            assert words.startswith(f"stopped just after it started: preempted by {cv}") and words.endswith(TAIL), words
            assert "[jupyter_sched]" not in log or log.rstrip().endswith(TAIL), log
        else:
            assert requeued["message"].startswith("preempted"), requeued
            assert "count as an attempt" not in job["reason"]["message"] and TAIL not in log, log
            assert requeued["details"]["counted"] is True, requeued
            assert (job["attempts"], job["false_starts"]) == (1, 0), job
        svc.cancel(cv, user="root")
        tick_until(svc, "low to run again", lambda: svc.get_job(low, user="root")["state"] == "running")
        again = svc.get_job(low, user="root")
        assert again["attempts"] == 2, again  # the run number (usage intervals, the job token) still grows
        line = job_line(again, svc.clock.now())
        if just:
            assert "start 2" not in line, line  # its first real start is its only one
        else:
            assert "start 2, after preemption by" in line, line
    finally:
        assert end_jobs(svc.engine.executor) == []
