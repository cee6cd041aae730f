"""Red team 20, R4: creating, editing, pausing, resuming and deleting job definitions was not
rate-limited — one sequential client wrote ~480 audit rows (each a write transaction) a minute, none
of them a refusal (so the refusal bound did not apply) and none a submit (so
``c.SchedApp.max_submits_per_user_minute`` did not either). Each change now takes a token of the
same per-user bucket as submits: past it 429 ``busy`` naming the setting with ``retry_after_s``,
audited as a refusal (under the refusal bound). The service's own work (offboarding's pauses) takes none.

Real services on a real store (SQLite and PostgreSQL), a manual clock, the bucket's clock manual too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from def_builders import Server, at

from jupyter_sched.admission.caller import system_caller
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import BusyError
from jupyter_sched.services.callers import SubmitBuckets

MANUAL = {"notebook": "report.ipynb", "timezone": "UTC", "gpus": 1}
CHANGES = ("definition_created", "definition_updated", "definition_deleted")


def _server(db_url: str, tmp_path: Path, per_minute: int) -> tuple[Server, list[float]]:
    server = Server(db_url, ManualClock(at("2026-12-04T10:00:30+00:00")), tmp_path / "jobs")
    admission = server.services.admission
    admission.policy = replace(admission.policy, submits_per_minute=per_minute)
    tick = [0.0]
    admission.rate = SubmitBuckets(monotonic=lambda: tick[0])
    (tmp_path / "report.ipynb").write_text("{}")
    return server, tick


def _changes(server: Server) -> int:
    return sum(len(server.store.list_events(action=action, limit=1000)) for action in CHANGES)


def test_red20_r4_definition_changes_past_the_submit_rate_are_429_naming_it_and_audited(
        db_url: str, tmp_path: Path) -> None:
    # fails before the fix: all 12 changes of the loop went through (12 audit rows, no refusal)
    server, tick = _server(db_url, tmp_path, per_minute=5)
    done, refused = 0, None
    try:
        for i in range(3):  # red20/a46_audit_flood.py: create, pause, resume, edit, delete, again
            d = server.create({**MANUAL, "name": f"flood-{i}"}, user="mallory")
            done += 1
            server.pause(d["id"], user="mallory")
            done += 1
            server.resume(d["id"], user="mallory")
            done += 1
            server.update(d["id"], {"gpus": 2}, user="mallory")
            done += 1
            server.delete(d["id"], user="mallory")
            done += 1
    except BusyError as exc:
        refused = exc
    assert refused is not None and done == 5, done
    assert refused.field == "max_submits_per_user_minute", refused.field
    assert refused.message == ("mallory is changing job definitions faster than 5 a minute, the most per user "
                               "(c.SchedApp.max_submits_per_user_minute)"), refused.message
    assert refused.hint == "retry in 12 s (submits and changes of jobs and definitions share it)", refused.hint
    assert refused.details["retry_after_s"] == 12
    assert _changes(server) == 5
    rows = server.store.list_events(action="refused", limit=10)
    assert [(r.user, r.details["field"]) for r in rows] == [("mallory", "max_submits_per_user_minute")], rows
    # every kind of change is bounded, checked before anything is read: an edit, a pause, a delete, a create
    for change in (lambda: server.update(d["id"], {"gpus": 1}, user="mallory"),
                   lambda: server.pause(d["id"], user="mallory"),
                   lambda: server.delete(d["id"], user="mallory"),
                   lambda: server.create({**MANUAL, "name": "more"}, user="mallory")):
        with pytest.raises(BusyError):
            change()
    assert _changes(server) == 5
    # another user has a bucket of her own; the bucket refills (one change every 60/5 s)
    assert server.create({**MANUAL, "name": "hers"}, user="nina")["id"]
    tick[0] += 12
    assert server.create({**MANUAL, "name": "later"}, user="mallory")["id"]
    with pytest.raises(BusyError):
        server.create({**MANUAL, "name": "later-2"}, user="mallory")


def test_red20_r4_submits_and_definition_changes_share_one_bucket(db_url: str, tmp_path: Path) -> None:
    server, _tick = _server(db_url, tmp_path, per_minute=3)
    d = server.create({**MANUAL, "name": "manual"}, user="nina")
    server.run_now(d["id"], {}, user="nina")
    server.update(d["id"], {"gpus": 2}, user="nina")
    server.clock.advance(1)  # one manual run per definition and instant
    with pytest.raises(BusyError) as fast:  # the fourth of create, run now, edit, run now
        server.run_now(d["id"], {}, user="nina")
    assert fast.value.message.startswith("nina is submitting faster than 3 a minute"), fast.value.message


def test_red20_r4_the_services_own_pauses_take_no_token(db_url: str, tmp_path: Path) -> None:
    # offboarding pauses every definition of a removed user at once (hub/offboard.py): never 429
    server, _tick = _server(db_url, tmp_path, per_minute=2)
    ids = [server.create({**MANUAL, "name": f"d{i}"}, user="gone")["id"] for i in range(2)]
    for definition_id in ids:
        assert server.definitions.pause(system_caller("offboarding"), definition_id).to_wire()["paused"] is True
