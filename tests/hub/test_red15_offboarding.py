"""Red team 15, R9: a user the hub no longer lists — their pending job is held (never started as
their account), their running work is reported to admins once and stopped after the grace, their
definitions are paused once; re-added, their held job starts.

Real parts: a ``SchedulerService`` with a real SQLite store, real jobs as processes on simulated
GPUs, the real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback double of the hub's
REST API (``tests/hub/hub_double.py``: deleting a user there is the admin's ``DELETE users/NAME``).
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tornado.httpserver import HTTPServer

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.hubapi import HubAPI
from jupyter_sched.hub.offboard import OWNER_REMOVED_ACTION, OWNER_RETURNED_ACTION, Offboarding
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.store import Store, sqlite_url
from tests.hub.hub_double import TOKEN, hub_app
from tests.in_process import tick_until

NOW = datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc)


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


async def offboard_against(svc: SchedulerService, off: Offboarding, users: dict[str, dict[str, bool]],
                           roles: dict[str, dict[str, Any]] | None = None, groups: set[str] | None = None) -> list[str]:
    """One :meth:`Offboarding.check` against a loopback hub double listing ``users`` (with ``roles``:
    their hub groups and admin flags; ``groups``: groups the hub has that no user may be in); the users
    found removed."""
    port = _free_port()
    server = HTTPServer(hub_app(users, roles=roles, groups=groups))
    server.listen(port, "127.0.0.1")
    try:
        return await off.check(svc.services, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN),
                               off_loop=lambda f, *a, **k: asyncio.to_thread(f, *a, **k))
    finally:
        server.stop()


def test_red15_r9_a_removed_users_work_is_held_reported_paused_and_stopped_after_the_grace(tmp_path: Path) -> None:
    clock = ManualClock(NOW)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=0.0,
                           stop_grace_s=2.0)
    off = Offboarding(grace_s=600.0)
    svc.services.set_held_users(off.held)
    users: dict[str, dict[str, bool]] = {"ana": {"": True}, "eve": {"": True}}
    sleeper = [sys.executable, "-c", "import time; time.sleep(300)"]
    running = svc.submit({"gpus": 1, "command": sleeper, "name": "eve-running"}, user="eve")["id"]
    tick_until(svc, "eve's job to run", lambda: svc.get_job(running, user="eve")["state"] == "running")
    held = svc.submit({"gpus": 1, "command": ["true"], "name": "eve-queued"}, user="eve")["id"]
    (tmp_path / "nightly.py").write_text("print('nightly')\n")
    nightly = svc.services.definitions.create(svc.services.caller("eve", admin=False), parse(CreateDefinitionRequest, {
        "name": "nightly", "script": str(tmp_path / "nightly.py"), "schedule": "0 7 * * *", "timezone": "UTC", "gpus": 0})).id

    async def check() -> list[str]:
        return await offboard_against(svc, off, users)

    def rows(action: str) -> list[dict[str, Any]]:
        return [r for r in svc.audit(limit=1000) if r["action"] == action]

    try:
        assert asyncio.run(check()) == []  # eve is a hub user: nothing happens
        del users["eve"]  # the hub admin deletes eve
        assert asyncio.run(check()) == ["eve"]
        assert asyncio.run(check()) == []  # found once
        (record,) = rows(OWNER_REMOVED_ACTION)
        assert record["user"] == "eve" and record["details"]["held"] == [held]
        assert record["details"]["running"] == [running] and record["details"]["paused_definitions"] == [nightly]
        assert "eve is no longer a user of this hub" in record["message"] and running in record["message"]
        assert svc.services.definitions.get(svc.services.caller("x", admin=True), nightly,
                                            _runs()).paused is True

        # the GPU frees (eve's running job ends): the held job still never starts
        clock.advance(601)  # past the grace: the next check stops eve's running work
        asyncio.run(check())
        tick_until(svc, "eve's running job to stop", lambda: svc.get_job(running, user="eve")["state"] == "cancelled")
        for _ in range(5):
            svc.tick()
        job = svc.get_job(held, user="eve")
        assert job["state"] == "pending", job
        assert job["reason"]["code"] == "OwnerRemoved"
        assert "held: owner no longer a user of this hub" in job["reason"]["message"]

        users["eve"] = {"": False}  # re-added: the hold ends, with one record
        asyncio.run(check())
        assert len(rows(OWNER_RETURNED_ACTION)) == 1
        tick_until(svc, "the held job to start once eve is back",
               lambda: svc.get_job(held, user="eve")["state"] in ("admitted", "running", "succeeded"))
    finally:
        for job_id in (running, held):
            try:
                svc.cancel(job_id, user="eve")
            except Exception:
                pass
        deadline = time.monotonic() + 30
        while svc.list_jobs(user=None, state="admitted,running") and time.monotonic() < deadline:
            svc.tick()
            time.sleep(0.03)
        svc.store.close()


def _runs() -> Any:
    from jupyter_sched.services.models.definitions import GetDefinitionRequest

    return GetDefinitionRequest()
