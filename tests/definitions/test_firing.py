"""The firing loop on a real store: one run per scheduled instant, across restarts and servers (case 028)."""

from __future__ import annotations

import itertools
import threading
from datetime import datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from def_builders import MakeServer, Server, at

from jupyter_sched.definitions.model import DefinitionRun, RunTrigger
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.errors import AuthorizationError, NotFoundError
from jupyter_sched.model import Job
from jupyter_sched.model.validation import spec_from_request
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import (
    CreateDefinitionRequest,
    ListDefinitionRunsRequest,
    ListDefinitionsRequest,
)
from jupyter_sched.store import SortableIds, Store
from jupyter_sched.store.codec import JobRecord
from jupyter_sched.store.definitions import insert_run, list_runs

DAILY = {"name": "daily", "notebook": "daily.ipynb", "schedule": "0 12 * * 1-5", "timezone": "Europe/Berlin",
         "gpus": 1, "overlap": "allow"}  # every firing a run: no engine cycle starts them here (the default skips behind a waiting run: newuser34 n1)


_folders = itertools.count()


@pytest.fixture
def server(tmp_path: Path) -> MakeServer:
    """Makes one 'server process' on a database: its own Store (connection pool), ids and engine."""

    def make(url: str, clock: ManualClock) -> Server:
        return Server(url, clock, tmp_path / f"jobs-{next(_folders)}")

    return make


def parse_create(body: dict[str, Any]) -> CreateDefinitionRequest:
    return parse(CreateDefinitionRequest, body)


def open_store(url: str, clock: ManualClock) -> Store:
    return Store(url, now=clock.now)


def runs_by_definition(url: str, clock: ManualClock, *ids: str) -> dict[str, list[DefinitionRun]]:
    store = open_store(url, clock)
    with store.transaction(write=False) as tx:
        return {d: list_runs(tx, [d]) for d in ids}


def test_case_028_delete_and_recreate_with_two_servers_gives_one_run_per_firing(db_url: str, server: MakeServer) -> None:
    """Case 028 (schedule): d1 deleted 11:50, d2 created 11:51, two servers on one store,
    a restart at 11:59:50: exactly one 12:00 run (10:00 UTC, owned by d2), none for d1, 5 in the week."""
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))           # 09:00 Berlin
    a, b = server(db_url, clock), server(db_url, clock)
    d1 = a.create(DAILY, user="fay")
    clock.set(at("2025-06-02T09:50:00+00:00"))                   # 11:50 Berlin
    a.delete(d1["id"], user="fay")
    clock.set(at("2025-06-02T09:51:00+00:00"))
    d2 = b.create(DAILY, user="fay")
    clock.set(at("2025-06-02T09:59:50+00:00"))
    a = server(db_url, clock)                                     # "restart" of server a at 11:59:50
    created: list[str] = []
    end = at("2025-06-09T00:00:00+00:00")
    while clock.now() < end:              # both tick for a week: every 10 s from 09:50 to 10:10 UTC (the firing at
        for s in (a, b):                  # 10:00 and the restart), every 5 min else (09:00-11:00 ticked every 10 s
            created += s.fire_due().created  # until session 41: 3x the passes, none near a firing)
        clock.advance(10 if time(9, 50) <= clock.now().time() < time(10, 10) else 300)
    runs = runs_by_definition(db_url, clock, d1["id"], d2["id"])
    assert runs[d1["id"]] == []
    scheduled = sorted(r.scheduled_for for r in runs[d2["id"]])
    assert scheduled == [datetime(2025, 6, day, 10, tzinfo=timezone.utc) for day in range(2, 7)]
    assert sorted(created) == sorted(r.job_id for r in runs[d2["id"]]), "each run was created by exactly one server"
    store = open_store(db_url, clock)
    jobs = [store.get_job(r.job_id).job for r in runs[d2["id"]]]
    assert {j.spec.notebook for j in jobs} == {"daily.ipynb"} and {j.spec.user for j in jobs} == {"fay"}
    assert {j.spec.definition_id for j in jobs} == {d2["id"]}, "each run's job names its definition"
    assert jobs[-1].spec.name == "daily @ 2025-06-02 12:00 CEST"


def test_the_unique_key_refuses_a_second_run_for_the_same_firing(db_url: str, server: MakeServer) -> None:
    """Two servers that both believe they lead (a split brain) race on one firing: the store keeps one."""
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(db_url, clock)
    d = svc.create(DAILY, user="fay")
    firing = at("2025-06-02T10:00:00+00:00")
    stores = [open_store(db_url, clock) for _ in range(4)]
    ids = SortableIds(clock.now)
    results: list[bool] = []
    barrier = threading.Barrier(len(stores))

    def race(store: Store) -> None:
        job = Job(id=ids("j"), spec=spec_from_request({"notebook": "daily.ipynb"}, user="fay"), submitted_at=firing)
        run = DefinitionRun(definition_id=d["id"], job_id=job.id, trigger=RunTrigger.SCHEDULE, scheduled_for=firing)
        barrier.wait()
        with store.transaction() as tx:
            results.append(insert_run(tx, run, JobRecord(job=job)))

    threads = [threading.Thread(target=race, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False, False, False, True]
    assert len(runs_by_definition(db_url, clock, d["id"])[d["id"]]) == 1
    assert len(open_store(db_url, clock).list_jobs()) == 1, "a refused firing writes no job either"


def test_missed_firings_after_downtime_follow_the_policy(sqlite_db: str, server: MakeServer) -> None:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    once = svc.create({**DAILY, "name": "once", "schedule": "0 * * * *"}, user="fay")
    skip = svc.create({**DAILY, "name": "skip", "schedule": "0 * * * *", "missed": "skip"}, user="fay")
    clock.set(at("2025-06-02T10:30:00+00:00"))                   # down from 07:00 to 10:30 UTC
    report = svc.fire_due()
    runs = runs_by_definition(sqlite_db, clock, once["id"], skip["id"])
    assert [r.scheduled_for for r in runs[once["id"]]] == [at("2025-06-02T10:00:00+00:00")]
    assert runs[skip["id"]] == []
    assert report.missed == 2 + 3
    events = svc.store.list_events(action="definition_missed")
    assert any("missed 3 firing(s)" in e.message and "skip" in e.message for e in events)


def test_paused_definitions_do_not_fire_and_resume_does_not_replay(sqlite_db: str, server: MakeServer) -> None:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    d = svc.create({**DAILY, "schedule": "0 * * * *"}, user="fay")
    svc.pause(d["id"], user="fay")
    clock.set(at("2025-06-02T09:00:30+00:00"))
    assert svc.fire_due().created == []
    svc.resume(d["id"], user="fay")
    assert svc.fire_due().created == []                          # 08:00 and 09:00 were paused, not missed
    clock.set(at("2025-06-02T10:00:05+00:00"))
    assert len(svc.fire_due().created) == 1


def test_newuser6_finding_7_the_audit_says_a_resume_as_resumed(sqlite_db: str, server: MakeServer) -> None:
    """New user 6, F7: pause and resume were both audited "definition 'daily_report' updated: paused"."""
    svc = server(sqlite_db, ManualClock(at("2025-06-02T07:00:00+00:00")))
    d = svc.create({**DAILY, "schedule": "0 * * * *"}, user="fay")
    svc.pause(d["id"], user="fay")
    svc.resume(d["id"], user="fay")
    svc.update(d["id"], {"schedule": "30 * * * *", "paused": True}, user="fay")
    said = [e.message for e in svc.store.list_events() if e.action == "definition_updated"]
    assert said == ["definition 'daily' updated: paused", "definition 'daily' updated: resumed",
                    "definition 'daily' updated: paused, schedule"], said


def test_newuser6_finding_7_an_edit_is_audited_with_the_fields_it_changed_only(sqlite_db: str,
                                                                               server: MakeServer) -> None:
    """New user 6, F7 remainder: a new cron schedule alone was audited "updated: schedule, timezone"
    (the schedule is checked in the stored time zone, so both came back from validation)."""
    svc = server(sqlite_db, ManualClock(at("2025-06-02T07:00:00+00:00")))
    d = svc.create({**DAILY, "schedule": "0 * * * *"}, user="fay")
    svc.update(d["id"], {"schedule": "30 * * * *"}, user="fay")
    svc.update(d["id"], {"timezone": "America/New_York"}, user="fay")
    svc.update(d["id"], {"schedule": "30 * * * *", "timezone": "America/New_York"}, user="fay")
    svc.update(d["id"], {"gpus": 2}, user="fay")
    events = [e for e in svc.store.list_events() if e.action == "definition_updated"]
    assert [e.message for e in events] == [
        "definition 'daily' updated: schedule", "definition 'daily' updated: timezone",
        "definition 'daily' updated: nothing changed", "definition 'daily' updated: job"], [e.message for e in events]
    assert [e.details["fields"] for e in events] == [["schedule"], ["timezone"], [], ["job"]]


def test_a_firing_that_cannot_submit_still_gets_its_one_run_saying_why(sqlite_db: str, server: MakeServer) -> None:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    d = svc.create({**DAILY, "schedule": "0 * * * *", "profile": None}, user="fay")
    # the stored request goes bad later (e.g. an admin removed what it relied on): simulate with a bad value
    from dataclasses import replace

    from jupyter_sched.store.definitions import get_definition, update_definition
    with svc.store.transaction() as tx:
        update_definition(tx, replace(get_definition(tx, d["id"]), job={"gpus": "lots"}))
    clock.set(at("2025-06-02T08:00:10+00:00"))
    [job_id] = svc.fire_due().created
    job = svc.store.get_job(job_id).job
    assert job.state.value == "rejected" and "gpus" in job.message
    assert svc.get(d["id"], user="fay")["runs"][0]["job"]["state"] == "rejected"


def test_users_see_only_their_own_definitions_and_probes_are_audited(sqlite_db: str, server: MakeServer) -> None:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    d = svc.create(DAILY, user="fay")
    with pytest.raises(NotFoundError):
        svc.get(d["id"], user="gil")
    gil = svc.caller("gil")
    probes = [
        lambda: svc.delete(d["id"], user="gil"),
        lambda: svc.update(d["id"], {"name": "mine now"}, user="gil"),
        lambda: svc.pause(d["id"], user="gil"),
        lambda: svc.definitions.runs(gil, d["id"], ListDefinitionRunsRequest()),
        lambda: svc.run_now(d["id"], {}, user="gil"),
    ]
    for probe in probes:
        with pytest.raises(NotFoundError, match="no definition"):
            probe()
    with pytest.raises(AuthorizationError):
        svc.list(user="gil", everyone=True)
    with pytest.raises(AuthorizationError) as named:
        svc.definitions.list(gil, ListDefinitionsRequest(user="fay"))
    assert named.value.field == "user"
    assert svc.definitions.list(gil, ListDefinitionsRequest(user="gil")).definitions.to_wire() == []
    assert [x["id"] for x in svc.definitions.list(svc.caller("root", admin=True),
                                                  ListDefinitionsRequest(user="fay")).definitions.to_wire()] == [d["id"]]
    assert svc.list(user="gil") == []
    assert [x["id"] for x in svc.list(user="root", admin=True, everyone=True)] == [d["id"]]
    assert svc.get(d["id"], user="fay")["next_run_at"] == "2025-06-02T10:00:00Z"
    refused = [(e.actor, e.details["request"], e.details["status"]) for e in svc.store.list_events(action="refused")]
    assert sorted(refused) == [("gil", "delete definition", 404), ("gil", "edit definition", 404),
                               ("gil", "edit definition", 404), ("gil", "list definition runs", 404),
                               ("gil", "listing other users' definitions", 403),
                               ("gil", "listing other users' definitions", 403), ("gil", "read definition", 404),
                               ("gil", "run definition", 404)]
    assert svc.get(d["id"], user="fay")["name"] == "daily" and not svc.get(d["id"], user="fay")["paused"]


def test_run_now_uses_per_run_parameters_over_the_definitions(sqlite_db: str, server: MakeServer) -> None:
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    d = svc.create({**DAILY, "parameters": {"region": "us", "limit": 5}}, user="fay")
    run = svc.run_now(d["id"], {"parameters": {"region": "eu"}}, user="fay")
    assert run["parameters"] == {"region": "eu", "limit": 5}
    job = svc.store.get_job(run["job_id"]).job
    assert dict(job.spec.parameters) == {"region": "eu", "limit": 5}
    assert run["trigger"] == "manual" and job.spec.name == "daily, run now"
    clock.advance(timedelta(hours=3).total_seconds())
    assert svc.fire_due().created, "a manual run never takes a scheduled firing's place"


def test_a_firing_admits_the_owner_as_the_owner_resolver_says_and_retries_when_it_cannot_tell(
        sqlite_db: str, server: MakeServer) -> None:
    """Hub mode sets ``owner_caller`` to a hub lookup (red-team finding 1): the firing, which has no
    request, charges the team the resolver gives the owner; a resolver that cannot answer now
    (hub down: BusyError) leaves the firing for the next tick instead of a rejected run."""
    from jupyter_sched.errors import BusyError

    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    in_ml = svc.services.caller("fay", admin=False, groups=["ml"])
    assert in_ml.teams[0] == "ml"
    d = svc.definitions.create(in_ml, parse_create({**DAILY, "schedule": "0 * * * *", "team": "ml"})).to_wire()
    asked: list[str] = []

    def hub_down(user: str) -> Any:
        asked.append(user)
        raise BusyError("the hub did not say who fay is", hint="retried shortly")

    svc.definitions.owner_caller = hub_down
    clock.set(at("2025-06-02T08:00:10+00:00"))
    assert svc.fire_due().created == [] and asked == ["fay"]
    assert svc.get(d["id"], user="fay")["runs"] == []

    svc.definitions.owner_caller = lambda user: svc.services.caller(user, admin=False, groups=["ml"])
    clock.set(at("2025-06-02T08:00:20+00:00"))
    [job_id] = svc.fire_due().created
    job = svc.store.get_job(job_id).job
    assert (job.spec.user, job.spec.team, job.state.value) == ("fay", "ml", "pending")

    svc.definitions.owner_caller = lambda user: svc.services.caller(user, admin=False, groups=["cv"])
    clock.set(at("2025-06-02T09:00:10+00:00"))
    [job_id] = svc.fire_due().created
    job = svc.store.get_job(job_id).job
    assert job.state.value == "rejected" and "team" in job.message  # left the group: not charged to ml


def test_one_user_keeps_at_most_the_admins_number_of_definitions(tmp_path: Path) -> None:
    """Red-team finding 2: 300 every-minute definitions from one user were accepted; the admin's
    ``definition_limit_per_user`` bounds them (422 naming the setting, audited)."""
    from jupyter_sched.errors import QuotaError
    from jupyter_sched.store import sqlite_url

    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = Server(sqlite_url(tmp_path / "s.sqlite"), clock, tmp_path / "jobs", limit_per_user=2)
    first = svc.create({**DAILY, "name": "a"}, user="fay")
    svc.create({**DAILY, "name": "b"}, user="fay")
    with pytest.raises(QuotaError) as refused:
        svc.create({**DAILY, "name": "c"}, user="fay")
    assert "2 job definitions" in refused.value.message and "definition_limit_per_user" in (refused.value.hint or "")
    assert svc.create({**DAILY, "name": "c"}, user="gil")["user"] == "gil"  # per user
    svc.delete(first["id"], user="fay")
    assert svc.create({**DAILY, "name": "c"}, user="fay")["name"] == "c"  # deleting makes room
    assert [e.details["request"] for e in svc.store.list_events(action="refused")] == ["create definition"]


def test_every_definitions_event_reaches_only_its_owner_and_admins(sqlite_db: str, server: MakeServer) -> None:
    """The event fan-out shows an event to ``data.user`` and admins; an event without an owner goes
    to everyone — so every event the definitions publish (saved, edited, fired, run now, deleted)
    names its owner, and another user's stream never learns a definition or run exists."""
    from jupyter_sched.services.visibility import event_for

    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    published: list[dict[str, Any]] = []
    bus = svc.services.bus
    original = bus.publish
    bus.publish = lambda event: (published.append(event), original(event))[1]  # type: ignore[method-assign]
    d = svc.create({**DAILY, "schedule": "0 * * * *"}, user="fay")
    svc.update(d["id"], {"parameters": {"token": "s3cret"}}, user="fay")
    svc.run_now(d["id"], {}, user="fay")
    clock.set(at("2025-06-02T08:00:10+00:00"))
    assert svc.fire_due().created
    svc.delete(d["id"], user="fay")
    kinds = {e["type"] for e in published}
    assert {"definition", "definition_run", "job"} <= kinds, kinds
    gil, fay, root = svc.caller("gil"), svc.caller("fay"), svc.caller("root", admin=True)
    assert [e for e in published if event_for(gil, e) is not None] == []
    assert all(event_for(fay, e) is not None and event_for(root, e) is not None for e in published)


def test_the_engine_hook_fires_on_time_what_this_server_or_another_wrote(sqlite_db: str, server: MakeServer) -> None:
    """The leader hook reads the definitions only when a firing is due, one was written through
    this server, or ``recheck_s`` passed (one store read per engine tick cost a fifth of a
    submit's tick, issue 17). None of that may make a firing late."""
    clock = ManualClock(at("2025-06-02T07:59:00+00:00"))
    a, b = server(sqlite_db, clock), server(sqlite_db, clock)

    def hook() -> None:  # the pass runs on its own thread (s37-defs): waited for here
        a.definitions.on_leader_tick()
        assert a.definitions.wait_firing(60), "the firing pass ended"
    hourly = a.create({**DAILY, "name": "hourly", "schedule": "0 * * * *", "timezone": "UTC"}, user="fay")
    hook()
    clock.set(at("2025-06-02T08:00:00+00:00"))  # its due firing: read then, whatever the recheck
    a.definitions.recheck_s = 3600.0
    hook()
    assert [r.scheduled_for for r in runs_by_definition(sqlite_db, clock, hourly["id"])[hourly["id"]]] == \
        [at("2025-06-02T08:00:00+00:00")]
    clock.advance(1)
    hook()  # nothing due before 09:00 and the recheck is an hour away: the next read waits …
    half = a.create({**DAILY, "name": "half", "schedule": "30 * * * *", "timezone": "UTC"}, user="fay")
    clock.set(at("2025-06-02T08:30:00+00:00"))
    hook()  # … except for a definition written through this server
    assert len(runs_by_definition(sqlite_db, clock, half["id"])[half["id"]]) == 1
    a.definitions.recheck_s = 5.0
    clock.advance(1)
    hook()
    other = b.create({**DAILY, "name": "other", "schedule": "45 * * * *", "timezone": "UTC"}, user="fay")
    clock.set(at("2025-06-02T08:45:00+00:00"))  # written by another server: seen within recheck_s
    hook()
    assert len(runs_by_definition(sqlite_db, clock, other["id"])[other["id"]]) == 1


def test_hubadmin26_b17_a_stored_schedule_that_no_longer_parses_pauses_its_definition_once(
        sqlite_db: str, server: MakeServer, caplog: pytest.LogCaptureFixture) -> None:
    """hubadmin26 B17: ``UPDATE definitions SET schedule = '61 25 * * *'`` (a hand edit of the store) logged a
    12-line ERROR traceback every 5.5 s for ever, "retried at the next tick" though it never could fire. Now
    the definition is paused with one WARNING and one ``definition_updated`` record naming it, its owner
    and the fix; the other definitions fire as before."""
    import logging

    import sqlalchemy as sa

    caplog.set_level(logging.WARNING)
    clock = ManualClock(at("2025-06-02T07:00:00+00:00"))
    svc = server(sqlite_db, clock)
    broken = svc.create({**DAILY, "name": "nightly", "schedule": "0 * * * *"}, user="fay")
    fine = svc.create({**DAILY, "name": "hourly", "schedule": "0 * * * *"}, user="fay")
    with svc.store.engine.begin() as conn:
        conn.execute(sa.text("UPDATE definitions SET schedule = '61 25 * * *', version = version + 1 WHERE id = :id"),
                     {"id": broken["id"]})
    clock.set(at("2025-06-02T08:00:30+00:00"))
    for _ in range(5):  # five ticks
        svc.fire_due()
    assert [r.levelname for r in caplog.records if "Traceback" in r.getMessage() or r.exc_info] == []
    said = [r.getMessage() for r in caplog.records if broken["id"] in r.getMessage()]
    assert len(said) == 1 and "paused: its stored schedule '61 25 * * *' no longer parses" in said[0], said
    assert f"jupyter-sched definitions edit {broken['id']} --cron" in said[0] and "(fay" not in said[0], said
    shown = svc.get(broken["id"], user="fay")  # the owner's read of it: no error, the problem said
    assert shown["paused"] is True and shown["next_run_at"] is None, shown
    assert shown["schedule_description"].startswith("this schedule no longer parses (invalid cron expression"), shown
    assert sorted(d["id"] for d in svc.list(user="fay")) == sorted([broken["id"], fine["id"]])
    (row,) = [e for e in svc.store.list_events(action="definition_updated") if e.details.get("why")]
    assert row.user == "fay" and row.details["definition_id"] == broken["id"] and row.actor == "scheduler", row
    runs = runs_by_definition(sqlite_db, clock, fine["id"], broken["id"])
    assert [r.scheduled_for for r in runs[fine["id"]]] == [at("2025-06-02T08:00:00+00:00")] and runs[broken["id"]] == []
