"""Running work is reported to JupyterHub as activity, so idle culling spares busy users' servers.

The pure part (which users, which servers, which body) is table-driven. The report itself runs
a real ``SchedulerService`` (real jobs as processes, simulated GPUs) and the real
:class:`~jupyter_sched.hub.hubapi.HubAPI` against a loopback HTTP server that speaks JupyterHub's
REST API JSON for the calls involved — a double, because a JupyterHub here is only started by the
slow integration test: ``GET /hub/api/users?state=active`` paged as the hub pages it (``limit``
capped at ``api_page_max_limit``; ``{"items", "_pagination"}`` with the pagination media type,
else the first page as a bare list), ``GET /hub/api/users/{name}`` and
``POST /hub/api/users/{name}/activity``, which, like the hub's ``ActivityAPIHandler``, refuses
unknown users (404), unknown server names (400) and bodies without ``last_activity``/``servers``.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.activity import active_servers, activity_bodies, report_activity
from jupyter_sched.hub.hubapi import HubAPI
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.hub.hub_double import TOKEN, hub_app

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)
STAMP = "2026-11-29T12:00:00Z"
HUB_USERS = {"ana": {"": True, "gpu": True, "old": False}, "bob": {}, "carol": {"": True}}
"""Users the loopback hub knows: server name -> active?"""


def job(user: str, state: str = "running", kind: str = "training") -> dict[str, Any]:
    return {"id": f"{user}-{state}", "user": user, "state": state, "kind": kind}


@pytest.mark.parametrize(
    "work, servers, want",
    [
        pytest.param([job("ana")], {"ana": [""]},
                     {"ana": {"last_activity": STAMP, "servers": {"": {"last_activity": STAMP}}}},
                     id="a running job keeps the user's default server active"),
        pytest.param([job("ana", kind="lease"), job("ana", "admitted")], {"ana": ["", "gpu"]},
                     {"ana": {"last_activity": STAMP, "servers": {"": {"last_activity": STAMP},
                                                                  "gpu": {"last_activity": STAMP}}}},
                     id="a live lease and an admitted job count once, for every active server"),
        pytest.param([job("bob")], {"ana": [""]}, {"bob": {"last_activity": STAMP}},
                     id="a user without an active server gets last_activity only"),
        pytest.param([job("ana", "pending"), job("ana", "succeeded"), job("ana", "preempted")], {"ana": [""]}, {},
                     id="pending, finished and preempted work is not activity"),
    ],
)
def test_activity_bodies(work: list[dict[str, Any]], servers: dict[str, list[str]],
                         want: dict[str, Any]) -> None:
    assert activity_bodies(work, servers, now=NOW) == want


def test_active_servers_leave_out_stopped_ones_and_odd_entries() -> None:
    users = [{"name": "ana", "servers": {"": {"ready": True}, "old": {"stopped": True}}},
             {"name": "bob"}, "not a user"]
    assert active_servers(users) == {"ana": [""], "bob": []}


# ---- against a loopback server speaking the hub API (tests/hub/hub_double.py) ------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def gated(tmp_path: Path, name: str) -> list[str]:
    gate = str(tmp_path / name)
    return [sys.executable, "-c", f"import os, time\nwhile not os.path.exists({gate!r}):\n    time.sleep(0.02)\n"]


@pytest.mark.parametrize("page_max", [200, 1], ids=["one page", "a page size below the active users"])
def test_the_service_posts_running_work_as_activity_through_the_hub_api(tmp_path: Path, page_max: int) -> None:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(3, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0,
                           stop_grace_s=5.0)
    ids = [svc.submit({"gpus": 1, "command": gated(tmp_path, "gate")}, user=user)["id"]
           for user in ("ana", "bob", "dave")]  # dave is unknown to the hub
    try:
        deadline = time.monotonic() + 60
        while {svc.get_job(i, user="x", is_admin=True)["state"] for i in ids} != {"running"}:
            assert time.monotonic() < deadline, "the jobs did not start"
            svc.tick()
            time.sleep(0.03)
        posts: dict[str, Any] = {}

        async def run() -> list[str]:
            port = _free_port()
            server = HTTPServer(hub_app(HUB_USERS, posts=posts, page_max=page_max))
            server.listen(port, "127.0.0.1")
            try:
                return await report_activity(svc, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN))
            finally:
                server.stop()

        reported = asyncio.run(run())
    finally:
        (tmp_path / "gate").touch()
        deadline = time.monotonic() + 60
        while svc.list_jobs(user=None, state="admitted,running") and time.monotonic() < deadline:
            svc.tick()
            time.sleep(0.03)
        svc.store.close()
    assert reported == ["ana", "bob"]  # dave's report was refused (404) and did not stop the others
    assert posts == {"ana": {"last_activity": STAMP, "servers": {"": {"last_activity": STAMP},
                                                                 "gpu": {"last_activity": STAMP}}},
                     "bob": {"last_activity": STAMP}}
