"""Verify 22, V2: an admin's cancel of my job showed no toast in my panel. The cancel's ``job``
event (``DELETE jobs/{id}`` by boss) carried ``mine: false`` — boss's view of the job — to its
owner, whose panel took the job for someone else's and said nothing. A job event's ``mine`` is its
reader's. Real store, engine and subprocesses, as tests/runtime/test_engine.py; the events are read
at the service's event bus and passed through :func:`event_for` as the stream does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.services.visibility import event_for
from tests.runtime.test_engine import gated, make_service, published, state_of, wait_until


def test_verify22_v2_admin_cancel_event_is_mine_to_its_owner(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, gpus=1)
    seen = published(svc)
    hold = svc.submit({"name": "hold", "command": gated(tmp_path, "never")}, user="ann")
    try:
        wait_until(lambda: state_of(svc, hold["id"]) == "running", "hold to run", tick=svc.tick)
        _check(svc, seen)
    finally:
        (tmp_path / "never").touch()  # its program ends whatever happened above
        wait_until(lambda: state_of(svc, hold["id"]) in {"cancelled", "succeeded"}, "hold to end", tick=svc.tick)


def _check(svc: Any, seen: list[dict[str, Any]]) -> None:
    job = svc.submit({"name": "solo0", "command": ["true"]}, user="ivan")
    assert state_of(svc, job["id"]) == "pending"
    seen.clear()
    svc.cancel(job["id"], user="boss", is_admin=True)
    event = next(e for e in seen if e["type"] == "job" and e["data"].get("id") == job["id"])
    assert event["data"]["mine"] is False  # the sender's (boss's) view, as published
    owner = event_for(svc.services.caller("ivan", admin=False), event)
    assert owner is not None
    assert (owner["data"]["mine"], owner["data"]["cancelled_by"], owner["data"]["state"]) == (True, "boss", "cancelled")
    admin = event_for(svc.services.caller("boss", admin=True), event)
    assert admin is not None and admin["data"]["mine"] is False
    other = event_for(svc.services.caller("root", admin=True), {"type": "job", "data": {**event["data"], "mine": True}})
    assert other is not None and other["data"]["mine"] is False  # never the owner's flag to another reader
