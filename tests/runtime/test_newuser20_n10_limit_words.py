"""New user 20, N10: a job killed at its time limit was reported in seconds — ``time limit of 240 s
exceeded``, the log's ``stopped: time limit 240 s reached``, the audit's ``time limit of 240 s
reached`` — although the user wrote ``4m`` and the queue had said "its 4m time limit". The three
now say the limit as every other surface does (``format_duration``: ``4m``). Real engine, SQLite,
the local executor with a real job process; a manual clock moves past the limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.stops import stop_words
from tests.runtime.builders import T0
from tests.runtime.test_engine import gated, make_service, state_of, wait_until


def stopped_at_limit(svc: Any, clock: ManualClock, tmp_path: Path, past_s: float, **fields: Any) -> tuple[str, list[str], str]:
    """Run ana's job (``fields`` added to its request) until the clock moved ``past_s`` past its start stops it
    at its limit: its end message, its ``time_limit`` audit rows' messages and its log's stop line."""
    job = svc.submit({"command": gated(tmp_path, "never"), **fields}, user="ana")
    wait_until(lambda: state_of(svc, job["id"]) == "running", "running", tick=svc.tick)
    clock.advance(past_s)
    wait_until(lambda: state_of(svc, job["id"]) == "failed", "the time limit", tick=svc.tick)
    record = svc.store.get_job(job["id"])
    assert record is not None
    return (svc.get_job(job["id"], user="ana")["message"],
            [e["message"] for e in svc.audit(job_id=job["id"]) if e["action"] == "time_limit"], stop_words(record))


def test_newuser20_n10_a_job_past_its_4m_limit_is_said_4m_not_240_s(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock=clock)
    message, audit, stopped = stopped_at_limit(svc, clock, tmp_path, 241, time_limit="4m")
    assert message.startswith("time limit of 4m exceeded"), message
    assert audit == ["time limit of 4m reached; stopping"], audit
    assert stopped == "stopped: time limit 4m reached"
    assert "240" not in message + audit[0]
