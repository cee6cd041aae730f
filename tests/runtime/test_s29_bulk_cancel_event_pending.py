"""s29 (toasts.spec newuser22 N7): a bulk cancel of 60 pending jobs showed "57 of your pending jobs were
cancelled" under load — the panel counted the ends its re-read happened to show. The per-owner event of a
bulk cancel (more than ``PER_JOB_EVENTS`` jobs) says the numbers the panel's summary says: ``cancelled``
(ended or asked to stop) and ``pending`` (of them, taken off the queue before they ever ran). Real store,
engine and subprocesses, as tests/runtime/test_newuser22_n7_cancel_events.py."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services.cancelling import PER_JOB_EVENTS
from jupyter_sched.services.models import CancelJobsRequest
from tests.runtime.test_engine import gated, make_service, published, state_of, wait_until


def test_s29_bulk_cancel_event_counts_the_owners_jobs_and_those_that_never_ran(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    seen = published(svc)
    hold = svc.submit({"name": "hold", "command": gated(tmp_path, "never")}, user="ana")
    try:
        wait_until(lambda: state_of(svc, hold["id"]) == "running", "hold to run", tick=svc.tick)
        waiting = [svc.submit({"name": f"w{i}", "command": ["true"]}, user="ana") for i in range(PER_JOB_EVENTS + 5)]
        assert {state_of(svc, j["id"]) for j in waiting} == {"pending"}
        seen.clear()
        answer = svc.services.jobs.cancel_many(svc.services.caller("ana", admin=False), CancelJobsRequest(mine=True))
        assert answer.cancelled == PER_JOB_EVENTS + 6  # the 55 waiting and the running one (asked to stop)
        summaries = [e["data"] for e in seen if e["type"] == "job" and "id" not in e["data"]]
        assert summaries == [{"user": "ana", "cancelled": PER_JOB_EVENTS + 6, "by": "ana", "pending": PER_JOB_EVENTS + 5}]
    finally:
        (tmp_path / "never").touch()  # its program ends whatever happened above
        wait_until(lambda: state_of(svc, hold["id"]) in {"cancelled", "succeeded"}, "hold to end", tick=svc.tick)
