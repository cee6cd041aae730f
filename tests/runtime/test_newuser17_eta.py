"""New user 17, N15, through the engine (real SQLite store, the local executor running real
processes, the engine's RuntimeFeed learning from the store): a learnt "ends at ~40 % of its time
limit, as its owner's other runs did" is never said of a service (it runs until stopped), nor of a
run whose same work's last run ran to its limit. The pure rule: tests/core/test_eta_sources.py."""

from __future__ import annotations

import socket
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.backfill.history import RuntimeHistory
from jupyter_sched.engine import ManualClock
from jupyter_sched.model import JobKind, JobState
from jupyter_sched.store import JobRecord
from tests.runtime.builders import T0, make_job
from tests.runtime.test_eta_other_runs import LOOP, _service


def _waiter_eta(svc: Any, clock: ManualClock, holder: dict[str, Any], limit_s: float) -> dict[str, Any]:
    """A job waiting on ``holder``: its reason once the engine has read the runs (no learnt end, ETA = the limit)."""
    svc.tick()
    started = clock.now()
    assert svc.get_job(holder["id"], user="eve")["state"] in ("admitted", "running")
    waiter = svc.submit({"gpus": 1, "command": ["true"], "time_limit": "1m", "name": "amy-cell-job"}, user="amy")
    try:
        clock.advance(10)
        svc.tick()
        reason: dict[str, Any] = svc.get_job(waiter["id"], user="amy")["reason"]
    finally:
        svc.cancel(waiter["id"], user="amy")
    assert reason["details"]["eta_waits_on"] == [holder["id"]], reason
    eta = datetime.fromisoformat(reason["eta"].replace("Z", "+00:00"))
    assert abs((eta - (started + timedelta(seconds=limit_s))).total_seconds()) < 2, reason
    return reason


def test_newuser17_n15_a_service_is_not_told_to_end_as_its_owners_other_runs_did(sqlite_db: str,
                                                                                   tmp_path: Path) -> None:
    """A service (kind inference) held 2 GPUs; the job behind it read "ETA in 2m, when a-secret-svc
    ends (if it ends at ~75 % of its time limit, as its owner's other runs did)" — it ran to its limit."""
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)  # eve's other runs: each ended at 40 % of its limit
    with socket.socket() as probe:  # a port free here (nothing answers on it: the service is LOOP)
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    service = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "10m", "name": "eve-svc", "kind": "inference",
                          "port": port}, user="eve")
    try:
        reason = _waiter_eta(svc, clock, service, 600.0)
        assert "eta_learned_other" not in reason["details"] and "eta_learned" not in reason["details"], reason
    finally:
        svc.cancel(service["id"], user="eve")
        svc.tick()


def test_newuser17_n15_the_same_work_after_a_run_to_its_limit_is_read_from_its_limit(sqlite_db: str,
                                                                                    tmp_path: Path) -> None:
    """``a-fair1`` was stopped at its 10m limit; ``a-fair2``, the same command, was told to end "at
    ~75 % of its time limit, as your other runs did": the same work is now read from its limit."""
    clock = ManualClock(T0)
    svc = _service(sqlite_db, tmp_path, clock)
    again = svc.submit({"gpus": 2, "command": LOOP, "time_limit": "10m", "name": "eve-loop-2"}, user="eve")
    start = T0 - timedelta(minutes=15)
    twin = svc.store.get_job(again["id"]).job  # the same work (command, folder, request), run before
    svc.store.insert_job(JobRecord(job=replace(twin, id="j-eve-loop-1", spec=replace(twin.spec, name="eve-loop-1"),
                                               state=JobState.FAILED, submitted_at=start, admitted_at=start,
                                               started_at=start, finished_at=start + timedelta(seconds=601),
                                               message="time limit of 600 s exceeded")))
    try:
        reason = _waiter_eta(svc, clock, again, 600.0)
        assert "eta_learned_other" not in reason["details"] and "eta_learned" not in reason["details"], reason
    finally:
        svc.cancel(again["id"], user="eve")
        svc.tick()


@pytest.mark.parametrize("service", [{"kind": JobKind.INFERENCE}, {"port": 18951}])
def test_newuser17_n15_history_reads_a_service_and_work_run_to_its_limit_from_the_limit(service: dict[str, Any]) -> None:
    history = RuntimeHistory()
    for i in range(3):  # eve's other programs end at 40 % of their limits; her first runs' guess is earned
        history.learn(make_job(f"o{i}", user="eve", command=("prog", str(i)), time_limit_s=600.0).spec, 240.0, 600.0)
    work = make_job("w", user="eve", command=("train",), time_limit_s=600.0).spec
    assert history.predict(work, 600.0, ran_s=30.0) == pytest.approx(240.0)  # the rule this narrows
    assert history.predict(replace(work, **service), 600.0, ran_s=30.0) is None
    assert history.origin(replace(work, **service), 600.0, ran_s=30.0) is None
    history.ran_to_limit(work)
    assert history.predict(work, 600.0, ran_s=30.0) is None and history.predict(work, 600.0) is None
    history.learn(work, 300.0, 600.0)  # a run of it that ended before its limit: read from its runs again
    assert history.predict(work, 600.0, ran_s=30.0) is not None
