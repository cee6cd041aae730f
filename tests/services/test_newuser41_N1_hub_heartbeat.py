"""newuser41 N1, the hub half: a lease asked by a kernel the server cannot check by pid (a hub's kernel on another
host, in a container or another pid namespace) held its GPUs after the kernel was killed (SIGKILL, OOM, node lost)
until the idle rules ended it, and its pending request stayed queued for ever.

Now the kernel's keeper (:mod:`jupyter_sched.client.heartbeat`) sends ``POST leases/{id}/heartbeat`` every
``lease_heartbeat_interval_s``, and the leading engine's :class:`~jupyter_sched.services.leases_alive.HeartbeatWatch`
withdraws a pending lease silent for ``lease_heartbeat_misses`` heartbeats, and releases a granted one after twice
that. The rule in-process here: the application services on a real SQLite store with the real engine on the
project's manual clock, real ``sleep`` jobs filling the GPUs. One end-to-end check through a hub user's server is in
tests/hub/test_newuser9_leases.py (that module's hub).
"""

from __future__ import annotations

import os
from typing import Any

import httpx
import pytest
from traitlets import TraitError

from jupyter_sched import asking_process
from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.heartbeat import LeaseKeeper
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.engine import ManualClock
from jupyter_sched.errors import AuthorizationError, ConflictError, NotFoundError, ValidationError
from jupyter_sched.extension.config import PolicyConfig
from jupyter_sched.services import Services
from jupyter_sched.services.leases_alive import HeartbeatWatch, heartbeat_gone
from jupyter_sched.services.models import SubmitJobRequest

ELSEWHERE: dict[str, Any] = {"pid": 4242, "started": 7, "host": "other-boot/pid:[4026531836]"}
"""A kernel on another host (its boot id and pid namespace are not the service's)."""


def _clock(services: Services) -> ManualClock:
    assert isinstance(services.clock, ManualClock)  # tests/services/conftest.py's: the project's manual clock
    return services.clock


def _lease(services: Services, user: str = "ann", asker: dict[str, Any] | None = ELSEWHERE) -> str:
    body: dict[str, Any] = {"gpus": 1, "released_at_exit": True}
    if asker is not None:
        body["asking_process"] = asker
    return services.leases.request(services.caller(user, admin=False), SubmitJobRequest(**body)).id


def _state(services: Services, job_id: str) -> tuple[str, str | None]:
    job = services.store.get_job(job_id).job
    return job.state.value, job.message


def _fill(services: Services, n: int) -> list[str]:
    ann = services.caller("ann", admin=False)
    return [services.jobs.submit(ann, SubmitJobRequest(gpus=1, command=["sleep", "600"])).id for _ in range(n)]


def _end(services: Services, *job_ids: str) -> None:
    for job_id in job_ids:
        if _state(services, job_id)[0] in ("pending", "admitted", "running"):
            services.jobs.cancel(services.caller("ann", admin=False), job_id)
    services.engine.tick()


def _beat(services: Services, lease: str, user: str = "ann") -> dict[str, Any]:
    return dict(services.heartbeats.beat(services.caller(user, admin=False), lease).to_wire())


def test_newuser41_N1_hub_a_silent_kernels_pending_lease_is_withdrawn_after_misses_times_interval(
        services: Services) -> None:
    busy = _fill(services, 4)
    services.engine.tick()  # the watch's first leading cycle: its grace starts (a start, a leader change)
    lease = _lease(services)
    said = _beat(services, lease)
    assert said == {"id": lease, "state": "pending", "needed": True, "interval_s": 30.0, "misses": 3}, said
    last = services.clock.now()
    _clock(services).advance(60)
    services.engine.tick()
    _clock(services).advance(29)
    services.engine.tick()
    assert _state(services, lease)[0] == "pending", "89 s of silence: 2.97 heartbeats missed, kept"
    _clock(services).advance(1)
    services.engine.tick()
    state, message = _state(services, lease)
    # failed before: pending for ever, later granted to a kernel that no longer ran
    assert state == "cancelled", (state, message)
    why = "its kernel stopped answering (no heartbeat since 12:00 UTC) — killed?"
    assert heartbeat_gone(last, services.clock.now()) == why
    assert message == f"request withdrawn by the server before any GPU was granted: {why}", message
    audited = [e for e in services.store.list_events(job_id=lease) if e.action == "lease_released"]
    assert len(audited) == 1 and audited[0].message == why and audited[0].actor == "server", audited
    assert audited[0].details["last_heartbeat"] == last.isoformat(), audited[0].details
    with pytest.raises(ConflictError):  # its keeper's next beat is told it ended, and stops
        _beat(services, lease)
    _end(services, *busy)
    assert _state(services, lease)[0] == "cancelled", "never granted once GPUs free"


def test_newuser41_N1_hub_a_silent_kernels_granted_lease_is_released_after_a_grace_and_the_waiter_gets_it(
        services: Services) -> None:
    busy = _fill(services, 3)
    services.engine.tick()
    lease = _lease(services)
    services.engine.tick()
    assert _state(services, lease)[0] == "running"
    _beat(services, lease)
    waiter = services.leases.request(services.caller("bob", admin=False), SubmitJobRequest(gpus=1)).id
    for _ in range(3):
        _clock(services).advance(30)
        services.engine.tick()
    assert _state(services, lease)[0] == "running", "granted: 3 missed heartbeats are not yet enough"
    for _ in range(2):
        _clock(services).advance(30)
        services.engine.tick()
    assert _state(services, lease)[0] == "running"
    _clock(services).advance(30)  # 180 s: twice misses x interval
    for _ in range(2):  # released this cycle; its GPU granted to the waiter within the next
        services.engine.tick()
    state, message = _state(services, lease)
    assert state == "cancelled", (state, message)
    assert message == "released by the server: its kernel stopped answering (no heartbeat since 12:00 UTC) — killed?"
    assert _state(services, waiter)[0] == "running", _state(services, waiter)
    services.jobs.cancel(services.caller("bob", admin=False), waiter)
    _end(services, *busy)


def test_newuser41_N1_hub_heartbeats_keep_a_lease_and_are_never_activity(services: Services) -> None:
    """A kernel that keeps beating keeps its lease past any window; a heartbeat writes nothing — no activity time,
    no keepalive, no audit record, not even a new row version — so the idle rules stay exactly as they were."""
    services.engine.tick()
    lease = _lease(services)
    services.engine.tick()
    before = services.store.get_job(lease)
    events = len(services.store.list_events(job_id=lease))
    for _ in range(12):  # 6 min: four windows
        _beat(services, lease)
        _clock(services).advance(30)
        services.engine.tick()
    after = services.store.get_job(lease)
    assert after.job.state.value == "running", after.job.message
    assert after.activity_at == before.activity_at is None, "a heartbeat is not a keepalive"
    assert after.version == before.version, "a heartbeat writes nothing to the lease"
    assert len(services.store.list_events(job_id=lease)) == events, services.store.list_events(job_id=lease)
    _end(services, lease)


def test_newuser41_N1_hub_only_the_owner_sends_a_heartbeat_and_other_leases_are_left_as_before(
        services: Services) -> None:
    services.engine.tick()
    lease = _lease(services)
    for user, admin in (("bob", False), ("root", True)):  # an admin releases a lease, never keeps one alive
        with pytest.raises(AuthorizationError) as refused:
            services.heartbeats.beat(services.caller(user, admin=admin), lease)
        assert refused.value.field == "lease_id", refused.value
    refusals = [e for e in services.store.list_events(job_id=lease) if e.action == "refused"]
    assert {e.actor for e in refusals} == {"bob", "root"}, refusals
    with pytest.raises(NotFoundError):
        _beat(services, "l-nosuchlease")
    job = services.jobs.submit(services.caller("ann", admin=False), SubmitJobRequest(gpus=0, command=["true"])).id
    with pytest.raises(ValidationError) as batch:
        _beat(services, job)
    assert batch.value.field == "lease_id" and "not a lease" in str(batch.value), batch.value
    # never heard from (an older client without the keeper): left to its exit hook and the idle rules
    unheard, unheard_no_proc = _lease(services), _lease(services, asker=None)
    # the server checks a same-host kernel by its pid (AskerWatch): no heartbeat needed, none ends it
    me = {"pid": os.getpid(), "started": asking_process.start_ticks(os.getpid()), "host": asking_process.host()}
    same_host = _lease(services, asker=me)
    assert _beat(services, same_host)["needed"] is False
    assert HeartbeatWatch(services.ctx, services.jobs, here=str(ELSEWHERE["host"])).watched(
        services.store.get_job(lease).job) is False
    # a kernel on a host without /proc (macOS, Windows) names no asking_process: kept by its heartbeats too
    no_proc = _lease(services, asker=None)
    assert _beat(services, no_proc)["needed"] is True
    for _ in range(10):
        _clock(services).advance(30)
        services.engine.tick()
    states = [_state(services, j)[0] for j in (unheard, unheard_no_proc, same_host, no_proc)]
    assert states[:3] == ["running"] * 3 and states[3] == "cancelled", states
    _end(services, lease, unheard, unheard_no_proc, same_host, job)


def test_newuser41_N1_hub_after_a_start_or_a_leader_change_nothing_ends_before_a_whole_window(
        services: Services) -> None:
    """The heartbeats live in the leading process's memory: a restarted server (or one leading again after a gap
    in its cycles) first waits misses x interval, so every keeper still running is heard before anything ends."""
    services.engine.tick()
    lease = _lease(services)
    watch = HeartbeatWatch(services.ctx, services.jobs, interval_s=10, misses=2)  # as after a restart
    watch.beat(services.caller("ann", admin=False), lease)
    _clock(services).advance(25)  # silent for more than the 20 s window...
    assert watch() == [], "...but this is its first cycle: the grace runs"
    _clock(services).advance(19)
    assert watch() == []
    _clock(services).advance(60)  # a gap in the leader's cycles longer than the window (another server led)
    assert watch() == [], "a new grace after the gap"
    _clock(services).advance(20)
    assert watch() == [lease]
    assert _state(services, lease)[0] == "cancelled"
    services.engine.tick()


@pytest.mark.parametrize(("name", "value", "words"), [
    ("lease_heartbeat_interval_s", 0, "must be above 0 and at most 3600 seconds"),
    ("lease_heartbeat_interval_s", -5, "must be above 0 and at most 3600 seconds"),
    ("lease_heartbeat_interval_s", float("nan"), "must be above 0 and at most 3600 seconds"),
    ("lease_heartbeat_misses", 0, "must be 1..100 heartbeats"),
])
def test_newuser41_N1_hub_heartbeat_settings_are_checked_naming_the_field(name: str, value: float, words: str) -> None:
    with pytest.raises(TraitError) as bad:
        PolicyConfig(**{name: value})
    assert str(bad.value).startswith(f"c.SchedApp.{name} = ") and words in str(bad.value) and "Fix: " in str(bad.value)
    assert PolicyConfig(lease_heartbeat_interval_s=5, lease_heartbeat_misses=2).heartbeat_settings() == {
        "lease_heartbeat_interval_s": 5.0, "lease_heartbeat_misses": 2}


def test_newuser41_N1_hub_the_keeper_stops_quietly_against_a_server_without_heartbeats() -> None:
    """A server older than the heartbeat (no ``lease_heartbeat_interval_s`` in GET config; its route table has no
    heartbeat route): the keeper posts nothing and stops. A double speaking the older server's wire format — the
    keeper against a real server is the end-to-end check of tests/hub/test_newuser9_leases.py."""
    seen: list[str] = []

    def older_server(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.method} {request.url.path}")
        if request.url.path.endswith("/config"):
            return httpx.Response(200, json={"version": "0.41", "mode": "hub", "features": {"leases": True}})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no such route"}})

    connection = Connection(url="http://sched.invalid/", token="t", kernel_id=None, source="explicit")
    keeper = LeaseKeeper(lambda: SchedClient(connection, transport=httpx.MockTransport(older_server)), "l-1").start()
    keeper.thread.join(30)
    assert not keeper.running and keeper.stopped == "server without heartbeats", keeper.stopped
    assert seen == ["GET /api/sched/config"], seen
