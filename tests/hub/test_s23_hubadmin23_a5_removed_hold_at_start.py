"""hubadmin23 A5: a service restart started a removed hub user's held job — the engine's first
cycle ran before the first hub check rebuilt the in-memory holds — and ``owner_removed`` was audited
again at every restart, activity was posted for the removed user (404 each time), and the record of
a job admitted while the hub was asked said "held, never started".

A restart is a new :class:`~jupyter_sched.hub.offboard.Offboarding` on the same store, primed as the
central service primes it before its engine starts (:meth:`Offboarding.prime`). Real parts: a
``SchedulerService`` on a real SQLite store, real jobs as processes on simulated GPUs, the real
HubAPI against the loopback hub double (``tests/hub/hub_double.py``), and in the last test a real
``jupyter-sched serve`` whose hub does not answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.activity import ActivityReporter, report_activity
from jupyter_sched.hub.hubapi import HubAPI, HubLookupError
from jupyter_sched.hub.membership import hub_caller_of
from jupyter_sched.hub.offboard import OWNER_REMOVED_ACTION, REMOVED_WHY, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.scheduling.gates import UNCONFIRMED_WHY
from jupyter_sched.store import Store, sqlite_url
from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN, hub_app
from tests.hub.serve_start import _free_port, serve_env, serve_start_up_log
from tests.hub.test_red15_offboarding import NOW, offboard_against
from tests.in_process import cancel_all_and_close, tick_until

SLEEP = [sys.executable, "-c", "import time; time.sleep(300)"]


def _service(tmp_path: Path, gpus: int = 1) -> SchedulerService:
    return SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(gpus, node="n1"),
                            executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0,
                            stop_grace_s=2.0)


def _started(svc: SchedulerService) -> Offboarding:
    """What a (re)started central service builds before its engine's first cycle."""
    off = Offboarding(caller_of=hub_caller_of(svc.services, lambda: ()))
    svc.services.set_held_users(off.held)
    svc.services.set_held_jobs(off.held_jobs)
    off.prime(svc.services)
    return off


def _state(svc: SchedulerService, job_id: str) -> dict[str, Any]:
    return svc.get_job(job_id, user="admin", is_admin=True)


def _removed_rows(svc: SchedulerService) -> list[dict[str, Any]]:
    return [r for r in svc.audit(limit=1000) if r["action"] == OWNER_REMOVED_ACTION]


async def _hub_down_check(svc: SchedulerService, off: Offboarding) -> None:
    """A check while nothing listens at the hub's address."""
    hub = HubAPI(f"http://127.0.0.1:{_free_port()}/hub/api", TOKEN, timeout_s=5)
    with pytest.raises(HubLookupError):
        await off.check(svc.services, hub, off_loop=lambda f, *a, **k: asyncio.to_thread(f, *a, **k))


def test_s23_hubadmin23_a5_a_removed_users_held_job_stays_held_through_a_restart_and_is_announced_once(
        tmp_path: Path) -> None:
    svc = _service(tmp_path)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "eve": {"": True}, "bob": {"": True}}
    try:
        off = _started(svc)
        ana = svc.submit({"gpus": 1, "command": SLEEP, "name": "a-full"}, user="ana")["id"]
        tick_until(svc, "ana's job to run", lambda: _state(svc, ana)["state"] == "running")
        eve = svc.submit({"gpus": 1, "command": SLEEP, "name": "e-job"}, user="eve")["id"]
        bob = svc.submit({"gpus": 1, "command": SLEEP, "name": "b-job"}, user="bob")["id"]
        del users["eve"]  # the hub admin deletes eve
        assert asyncio.run(offboard_against(svc, off, users)) == ["eve"]
        assert len(_removed_rows(svc)) == 1

        # restart; the hub has not answered yet (or is down): eve's removal is read back, bob is not yet confirmed
        off = _started(svc)
        assert off.held() == {"eve": REMOVED_WHY, "bob": UNCONFIRMED_WHY}
        asyncio.run(_hub_down_check(svc, off))
        svc.cancel(ana, user="ana")  # a GPU frees
        tick_until(svc, "ana's job to end", lambda: _state(svc, ana)["state"] == "cancelled")
        for _ in range(5):
            svc.tick()
        assert _state(svc, eve)["state"] == "pending", "a removed user's job never starts at a restart"
        assert _state(svc, eve)["reason"]["code"] == "OwnerRemoved"
        bob_now = _state(svc, bob)
        assert bob_now["state"] == "pending" and bob_now["reason"]["code"] == "OwnerUnconfirmed", bob_now["reason"]
        assert "goes on once the hub confirms bob" in bob_now["reason"]["unblock"]

        # the hub answers: eve stays held and is not announced again; bob is confirmed and starts
        assert asyncio.run(offboard_against(svc, off, users)) == []
        assert len(_removed_rows(svc)) == 1, _removed_rows(svc)
        assert off.held() == {"eve": REMOVED_WHY}
        tick_until(svc, "bob's job to start", lambda: _state(svc, bob)["state"] in ("admitted", "running"))
        assert _state(svc, eve)["state"] == "pending"
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a5_a_user_deleted_while_the_service_was_down_never_starts(tmp_path: Path) -> None:
    svc = _service(tmp_path)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}}
    try:
        eve = svc.submit({"gpus": 1, "command": SLEEP, "name": "e-job"}, user="eve")["id"]
        off = _started(svc)  # eve was deleted on the hub while the service was down: no record of it
        for _ in range(5):
            svc.tick()
        assert _state(svc, eve)["state"] == "pending", "not started before the hub said who its owner is"
        assert asyncio.run(offboard_against(svc, off, users)) == ["eve"]
        for _ in range(3):
            svc.tick()
        assert _state(svc, eve)["state"] == "pending"
        assert "held, never started" in _removed_rows(svc)[0]["message"]
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a5_owner_removed_names_work_as_it_is_when_written(tmp_path: Path) -> None:
    """A job the engine admitted while the hub was being asked is named running, never "held, never started"."""
    svc = _service(tmp_path)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}}
    try:
        off = Offboarding()
        svc.services.set_held_users(off.held)
        eve = svc.submit({"gpus": 1, "command": SLEEP, "name": "e-job"}, user="eve")["id"]
        calls = 0

        async def off_loop(f: Callable[..., Any], *a: Any, **k: Any) -> Any:
            nonlocal calls
            calls += 1
            result = await asyncio.to_thread(f, *a, **k)
            if calls == 1:  # the live work is read; the engine admits eve's job before eve is held
                await asyncio.to_thread(tick_until, svc, "eve's job to start",
                                        lambda: _state(svc, eve)["state"] in ("admitted", "running"))
            return result

        async def check() -> list[str]:
            port = _free_port()
            server = HTTPServer(hub_app(users))
            server.listen(port, "127.0.0.1")
            try:
                return await off.check(svc.services, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN), off_loop=off_loop)
            finally:
                server.stop()

        assert asyncio.run(check()) == ["eve"]
        (row,) = _removed_rows(svc)
        assert "never started" not in row["message"], row["message"]
        assert row["details"]["running"] == [eve] and row["details"]["held"] == []
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a5_no_activity_posts_for_removed_users(tmp_path: Path) -> None:
    svc = _service(tmp_path, gpus=2)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}}
    posts: dict[str, Any] = {}
    try:
        ana = svc.submit({"gpus": 1, "command": SLEEP, "name": "a-run"}, user="ana")["id"]
        eve = svc.submit({"gpus": 1, "command": SLEEP, "name": "e-run"}, user="eve")["id"]
        tick_until(svc, "both to run", lambda: {_state(svc, j)["state"] for j in (ana, eve)} == {"running"})
        svc.services.store.add_event(actor="jupyterhub", action=OWNER_REMOVED_ACTION, job_id=None, user="eve",
                                     message="eve is no longer a user of this hub", details={"user": "eve"})
        off = _started(svc)  # a restart reads eve's removal back
        reporter = ActivityReporter()
        reporter.removed = lambda: off.removed
        async def report() -> list[str]:
            port = _free_port()
            server = HTTPServer(hub_app(users, posts=posts))
            server.listen(port, "127.0.0.1")
            try:
                return await report_activity(svc, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN), reporter=reporter)
            finally:
                server.stop()

        assert asyncio.run(report()) == ["ana"]
        assert reporter.failed_posts == 0 and set(posts) == {"ana"}
    finally:
        cancel_all_and_close(svc)


_SERVE = pytest.mark.skipif(os.geteuid() != 0 or not os.path.exists("/usr/bin/python3"),
                            reason="hub mode with the local executor runs as root; jobs need an interpreter all accounts run")


def _serve_with_a_queued_job_and_the_hub_down() -> tuple[str, dict[str, str], Any, list[Any]]:
    """A real ``jupyter-sched serve`` (hub mode, 1 simulated GPU) started on a store holding eve's pending
    1-GPU job, its hub not answering; (its log, its environment, the job's row after, the job's admit records)."""
    with shared_dir() as folder:
        db = folder / "store.sqlite"
        seed = SchedulerService(store=Store(sqlite_url(db)), inventory=SimulatedInventory(1, node="n1"),
                                executor=LocalExecutor(folder / "seed"), cycle_interval_s=0.0)
        try:
            job = seed.submit({"gpus": 1, "command": ["true"], "name": "e-job"}, user="eve")["id"]
            assert _state(seed, job)["state"] == "pending"  # no cycle ran here
        finally:
            seed.store.close()
        env = serve_env(folder, sqlite_url(db))
        text = serve_start_up_log(folder, env, "did not say who its users are", "--SchedApp.simulated_gpus=1",
                                  "--HubSchedApp.hub_poll_interval_s=2", "--SchedApp.cycle_interval=0.5",
                                  f"--SchedApp.log_dir={folder / 'jobs'}", "--HubSchedApp.job_python=/usr/bin/python3",
                                  wait_s=45)
        store = Store(sqlite_url(db))
        try:
            return text, env, store.get_job(job), [e for e in store.list_events(job_id=job) if e.action == "admit"]
        finally:
            store.close()


@_SERVE
def test_s23_hubadmin23_a5_serve_restart_with_the_hub_down_starts_no_queued_job() -> None:
    """The job is still pending after the first cycles, and one WARNING names the hub. Before the fix the
    first cycle admitted it (and no line named the hub)."""
    text, env, row, admits = _serve_with_a_queued_job_and_the_hub_down()
    assert "Jupyter Server" in text and "is running at" in text, text[-3000:]
    assert row.job.state.value == "pending" and not admits, text[-3000:]
    line = next((ln for ln in text.splitlines() if "did not say who its users are" in ln), "")
    assert line.startswith("[W ") and env["JUPYTERHUB_API_URL"] in line and "eve" in line, text[-3000:]


@_SERVE
def test_s23_hubadmin23_a1_module_logger_warnings_have_the_apps_prefix() -> None:
    """hubadmin23 A1: a module logger's WARNING (here hub/hubapi.py's "the hub at … does not answer", said
    once per outage since hubadmin24 B13) reached the service log as a bare line, with no level, time or app."""
    text, _env, _row, _admits = _serve_with_a_queued_job_and_the_hub_down()
    lines = [ln for ln in text.splitlines() if "/hub/api/ does not answer (" in ln]
    assert lines and all(ln.startswith("[W ") and "HubSchedApp] jupyter_sched:" in ln for ln in lines), text[-3000:]


def test_s23_hubadmin23_a1_route_package_log_hands_module_records_to_the_app_handlers() -> None:
    import io
    import logging

    from jupyter_sched.extension import log_route

    stream = io.StringIO()
    app = logging.getLogger("A1TestApp")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("[%(levelname)1.1s %(name)s] %(message)s"))
    app.addHandler(handler)
    app.propagate = False
    try:
        log_route.route_package_log(app)
        log_route.route_package_log(app)  # once per process: no second handler
        logging.getLogger("jupyter_sched.hub.membership").warning("jupyter_sched: ha23a left vision")
        logging.getLogger("jupyter_sched.hub.membership").debug("not at the default level")
    finally:
        log_route._ROUTE.target = None
        app.removeHandler(handler)
    assert stream.getvalue() == "[W A1TestApp] jupyter_sched: ha23a left vision\n"


def test_s23_hubadmin23_a5_a_team_leavers_held_job_stays_held_through_a_restart(tmp_path: Path) -> None:
    """The A5 addendum: ha23q's job held on ops (team_left) was admitted at the 2nd restart once a GPU
    freed — the read-back of team_left records ran at the first check, after the first cycle — and a second
    team_left row followed (the job now running)."""
    from jupyter_sched.hub.membership import TEAM_LEFT_ACTION
    from tests.hub.test_red18_team import QUOTAS, _submit

    svc = _service(tmp_path, gpus=2)
    svc.set_quotas(QUOTAS, actor="admin")
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "q": {"": True}}
    roles: dict[str, dict[str, Any]] = {"ana": {"groups": ["teama"], "admin": False},
                                        "q": {"groups": ["teama"], "admin": False}}
    try:
        off = _started(svc)
        ana = _submit(svc, "ana", ["teama"], {"gpus": 2, "team": "teama", "command": SLEEP, "name": "a-full"})
        tick_until(svc, "ana's job to run", lambda: _state(svc, ana)["state"] == "running")
        queued = _submit(svc, "q", ["teama"], {"gpus": 1, "team": "teama", "command": SLEEP, "name": "q-held"})
        roles["q"]["groups"] = []  # an admin removes q from hub group teama
        asyncio.run(offboard_against(svc, off, users, roles))
        assert set(off.held_jobs()) == {queued}

        off = _started(svc)  # restart; the hub has not been asked yet
        svc.cancel(ana, user="ana")  # a GPU frees
        tick_until(svc, "ana's job to end", lambda: _state(svc, ana)["state"] == "cancelled")
        for _ in range(5):
            svc.tick()
        assert _state(svc, queued)["state"] == "pending", "held on the team its owner left, restart or not"
        asyncio.run(offboard_against(svc, off, users, roles))
        for _ in range(3):
            svc.tick()
        assert _state(svc, queued)["state"] == "pending"
        assert _state(svc, queued)["reason"]["code"] == "TeamMembership"
        assert len([r for r in svc.audit(limit=1000) if r["action"] == TEAM_LEFT_ACTION]) == 1
    finally:
        cancel_all_and_close(svc)


def test_s23_hubadmin23_a1_route_never_says_a_line_twice() -> None:
    """A handler the app log shares with the root logger (pytest's capture; an admin's own logging config)
    gets the record once, by propagation: found when test_newuser17_n24 ran after an in-process SchedApp."""
    import logging

    from jupyter_sched.extension import log_route

    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    shared = Keep()
    app = logging.getLogger("A1TwiceApp")
    app.addHandler(shared)
    logging.getLogger().addHandler(shared)
    try:
        log_route.route_package_log(app)
        logging.getLogger("jupyter_sched.hub.forward").warning("jupyter_sched: once")
    finally:
        log_route._ROUTE.target = None
        app.removeHandler(shared)
        logging.getLogger().removeHandler(shared)
    assert [r.getMessage() for r in seen] == ["jupyter_sched: once"]
