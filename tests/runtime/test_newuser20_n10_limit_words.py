"""New user 20, N10: a job killed at its time limit was reported in seconds — ``time limit of 240 s
exceeded``, the log's ``stopped: time limit 240 s reached``, the audit's ``time limit of 240 s
reached`` — although the user wrote ``4m`` and the queue had said "its 4m time limit". The three
now say the limit as every other surface does (``format_duration``: ``4m``). Real engine, SQLite,
the local executor with a real job process; a manual clock moves past the limit."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.stops import stop_words
from tests.runtime.builders import T0
from tests.runtime.test_engine import gated, make_service, state_of, wait_until


def test_newuser20_n10_a_job_past_its_4m_limit_is_said_4m_not_240_s(sqlite_db: str, tmp_path: Path) -> None:
    clock = ManualClock(T0)
    svc = make_service(sqlite_db, tmp_path, clock=clock)
    job = svc.submit({"command": gated(tmp_path, "never"), "time_limit": "4m"}, user="ana")
    wait_until(lambda: state_of(svc, job["id"]) == "running", "running", tick=svc.tick)
    clock.advance(241)
    wait_until(lambda: state_of(svc, job["id"]) == "failed", "the time limit", tick=svc.tick)
    message = svc.get_job(job["id"], user="ana")["message"]
    assert message.startswith("time limit of 4m exceeded"), message
    audit = [e["message"] for e in svc.audit(job_id=job["id"]) if e["action"] == "time_limit"]
    assert audit == ["time limit of 4m reached; stopping"], audit
    record = svc.store.get_job(job["id"])
    assert record is not None and stop_words(record) == "stopped: time limit 4m reached"
    assert "240" not in message + audit[0]
