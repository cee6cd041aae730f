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
import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from prometheus_client import CollectorRegistry
from tornado.httpserver import HTTPServer

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.activity import (
    ActivityCollector,
    ActivityReporter,
    active_servers,
    activity_bodies,
    report_activity,
)
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
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def gated(tmp_path: Path, name: str) -> list[str]:
    gate = str(tmp_path / name)
    return [sys.executable, "-c", f"import os, time\nwhile not os.path.exists({gate!r}):\n    time.sleep(0.02)\n"]


@contextlib.contextmanager
def running_service(tmp_path: Path, users: tuple[str, ...],
                    gpus: dict[str, int] | None = None) -> Iterator[SchedulerService]:
    """A real service on a frozen clock (``NOW``) with one running job per user (processes that
    wait on a gate file; 1 GPU each unless ``gpus`` says); the jobs end and the store closes on exit."""
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(3, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(NOW), cycle_interval_s=0.0,
                           stop_grace_s=5.0)
    ids = [svc.submit({"gpus": (gpus or {}).get(user, 1), "command": gated(tmp_path, "gate")}, user=user)["id"]
           for user in users]
    try:
        deadline = time.monotonic() + 60
        while {svc.get_job(i, user="x", is_admin=True)["state"] for i in ids} != {"running"}:
            assert time.monotonic() < deadline, "the jobs did not start"
            svc.tick()
            time.sleep(0.03)
        yield svc
    finally:
        (tmp_path / "gate").touch()
        deadline = time.monotonic() + 60
        while svc.list_jobs(user=None, state="admitted,running") and time.monotonic() < deadline:
            svc.tick()
            time.sleep(0.03)
        svc.store.close()


@pytest.mark.parametrize("page_max", [200, 1], ids=["one page", "a page size below the active users"])
def test_the_service_posts_running_work_as_activity_through_the_hub_api(tmp_path: Path, page_max: int) -> None:
    posts: dict[str, Any] = {}
    with running_service(tmp_path, ("ana", "bob", "dave")) as svc:  # dave is unknown to the hub

        async def run() -> list[str]:
            port = _free_port()
            server = HTTPServer(hub_app(HUB_USERS, posts=posts, page_max=page_max))
            server.listen(port, "127.0.0.1")
            try:
                return await report_activity(svc, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN))
            finally:
                server.stop()

        reported = asyncio.run(run())
    assert reported == ["ana", "bob"]  # dave's report was refused (404) and did not stop the others
    assert posts == {"ana": {"last_activity": STAMP, "servers": {"": {"last_activity": STAMP},
                                                                 "gpu": {"last_activity": STAMP}}},
                     "bob": {"last_activity": STAMP}}


def test_red32_r5_a_cpu_only_batch_job_is_no_server_activity(tmp_path: Path) -> None:
    """red32 R5: one ``sleep 100000`` on 0 GPUs kept its owner's idle server (and kernels) from the hub's culler for
    ever — it needs no server and costs no GPU-hours. Now only leases and GPU work count."""
    posts: dict[str, Any] = {}
    with running_service(tmp_path, ("ana", "bob"), gpus={"bob": 0}) as svc:

        async def run() -> list[str]:
            port = _free_port()
            server = HTTPServer(hub_app(HUB_USERS, posts=posts, page_max=200))
            server.listen(port, "127.0.0.1")
            try:
                return await report_activity(svc, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN))
            finally:
                server.stop()

        reported = asyncio.run(run())
    assert reported == ["ana"] and set(posts) == {"ana"}, posts


# ---- issue 17: a hub that holds a request holds no later report ----------------------------------

LATER = NOW + timedelta(minutes=1)
LATER_STAMP = "2026-11-29T12:01:00Z"


async def _until(ready: Callable[[], bool], what: str) -> None:
    """Yield to the loop until ``ready()`` (a guard of 60 s turns a hang into a failure naming ``what``)."""
    async with asyncio.timeout(60):
        while not ready():
            await asyncio.sleep(0.01)
    assert ready(), what


@pytest.mark.parametrize("held", ["activity:ana", "users"],
                         ids=["the hub holds ana's activity post", "the hub holds the user listing"])
def test_issue17_a_hub_that_holds_one_activity_request_still_gets_the_next_ticks_report(
        tmp_path: Path, held: str) -> None:
    """Issue 17: one report ran at a time and its hub requests one after another, each waiting up
    to the hub timeout, so one request the hub (or a busy proxy) held held every later report. Now
    the next tick's report arrives while the first still waits; ana's held post is not sent twice."""
    posts: dict[str, Any] = {}
    with running_service(tmp_path, ("ana", "bob")) as svc:

        async def run() -> tuple[list[str], list[str], list[str]]:
            release = asyncio.Event()
            app = hub_app(HUB_USERS, posts=posts, hold={held}, release=release)
            port = _free_port()
            server = HTTPServer(app)
            server.listen(port, "127.0.0.1")
            hub = HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN, timeout_s=300)  # the hold outlasts the test
            reporter = ActivityReporter()
            try:
                first = reporter.tick(svc, hub)
                assert first is not None
                await _until(lambda: held in app.settings["holding"], f"the hub to hold {held}")
                svc.clock.set(LATER)  # ManualClock
                second = reporter.tick(svc, hub)
                assert second is not None, "the next tick started no report"
                async with asyncio.timeout(60):
                    reported_next = await second  # while the first report still waits on the hub
                assert not first.done()
                release.set()
                reported_first = await first
                third = reporter.tick(svc, hub)
                assert third is not None
                return reported_next, reported_first, await third
            finally:
                release.set()
                server.stop()

        reported_next, reported_first, reported_after = asyncio.run(run())
    if held == "users":  # the first report is held before it posts anything
        assert reported_next == ["ana", "bob"]
    else:  # ana's post is in flight: bob's goes on, ana's is not sent twice
        assert reported_next == ["bob"]
        assert "ana" in reported_first
    assert reported_after == ["ana", "bob"]
    assert posts["bob"]["last_activity"] == LATER_STAMP
    assert posts["ana"]["last_activity"] == LATER_STAMP  # the third report's, whatever the first sent


def test_issue17_a_refused_activity_post_is_logged_with_the_hubs_answer_counted_and_sent_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The warning says what the hub answered (it said only the status), the failures are counted in
    ``GET metrics`` (``jupyter_sched_hub_activity_posts_failed_total``), and the next tick tries again."""
    posts: dict[str, Any] = {}
    reporter = ActivityReporter()
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ActivityCollector(reporter))
    with running_service(tmp_path, ("ana", "dave")) as svc:  # dave is unknown to the hub: 404

        async def run() -> list[list[str]]:
            port = _free_port()
            server = HTTPServer(hub_app(HUB_USERS, posts=posts))
            server.listen(port, "127.0.0.1")
            hub = HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN)
            out = []
            try:
                for _ in range(2):
                    task = reporter.tick(svc, hub)
                    assert task is not None
                    out.append(await task)
                return out
            finally:
                server.stop()

        with caplog.at_level(logging.WARNING, logger="jupyter_sched.hub.activity"):
            reported = asyncio.run(run())
    assert reported == [["ana"], ["ana"]]
    warnings = [r.getMessage() for r in caplog.records if r.name == "jupyter_sched.hub.activity"]
    assert len(warnings) == 2, caplog.text
    assert "hub answered 404: No such user: dave" in warnings[0] and "will retry" in warnings[0], warnings
    assert reporter.failed_posts == 2
    assert registry.get_sample_value("jupyter_sched_hub_activity_posts_failed_total") == 2
    assert registry.get_sample_value("jupyter_sched_hub_activity_reports_in_flight") == 0
