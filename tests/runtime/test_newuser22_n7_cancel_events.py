"""New user 22, N7: a cancel's ``job`` event says who cancelled (``cancelled_by``), so the owner's
panel says nothing of its own cancel of waiting work (299 toasts "bulkN cancelled: cancelled by
root" after one ``cancel --mine``). Real store, engine and subprocesses, as tests/runtime/test_engine.py;
the events are read at the service's event bus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.services.cancelling import PER_JOB_EVENTS
from jupyter_sched.services.models import CancelJobsRequest
from jupyter_sched.services.visibility import event_for
from tests.runtime.test_engine import gated, make_service, state_of, wait_until


def test_newuser22_n7_cancel_events_name_their_actor_to_the_owner(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    seen: list[dict[str, Any]] = []
    bus = svc.bus
    sink = bus.publish

    def spy(event: dict[str, Any]) -> None:
        seen.append(event)
        sink(event)

    bus.publish = spy
    hold = svc.submit({"name": "hold", "command": gated(tmp_path, "never")}, user="ana")
    try:
        _check(svc, seen, hold)
    finally:
        (tmp_path / "never").touch()  # its program ends whatever happened above
        wait_until(lambda: state_of(svc, hold["id"]) in {"cancelled", "succeeded"}, "hold to end", tick=svc.tick)
    assert PER_JOB_EVENTS == 50  # beyond, one {user, cancelled, by} event per owner (the panel reads `by`)


def _check(svc: Any, seen: list[dict[str, Any]], hold: dict[str, Any]) -> None:
    wait_until(lambda: state_of(svc, hold["id"]) == "running", "hold to run", tick=svc.tick)
    one, two, three = (svc.submit({"name": f"w{i}", "command": ["true"]}, user="ana") for i in range(3))
    assert {state_of(svc, j["id"]) for j in (one, two, three)} == {"pending"}
    seen.clear()
    svc.cancel(one["id"], user="ana")  # DELETE jobs/{id}
    svc.services.jobs.cancel_many(svc.services.caller("ana", admin=False), CancelJobsRequest(ids=[two["id"]]))  # POST jobs/cancel
    svc.cancel(three["id"], user="boss", is_admin=True)  # an admin's cancel of ana's job
    svc.cancel(hold["id"], user="ana")  # running: a stop asked for, which says its actor as stop_requested.by
    ended = {e["data"]["id"]: e["data"] for e in seen if e["type"] == "job" and "id" in e["data"]}
    assert [ended[j["id"]].get("cancelled_by") for j in (one, two, three)] == ["ana", "ana", "boss"], ended
    assert "cancelled_by" not in ended[hold["id"]] and ended[hold["id"]]["stop_requested"]["by"] == "ana"
    # the actor travels with the job's event: to its owner (and admins), never to another user
    event = next(e for e in seen if e["type"] == "job" and e["data"].get("id") == three["id"])
    assert event_for(svc.services.caller("ana", admin=False), event)["data"]["cancelled_by"] == "boss"
    assert event_for(svc.services.caller("eve", admin=False), event) is None
