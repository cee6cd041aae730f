"""Red team 15, R6 and its addendum: in hub mode an idle kernel's lease is released by the normal
idle rule, and idle work is no JupyterHub activity.

Real parts: the service built by ``from_config`` on SQLite with test-sized idle windows (see
``conftest.IDLE_SETTINGS``), its engine and telemetry ladder, and the central service's kernel
state source — :class:`~jupyter_sched.hub.liveness.KernelReports`, fed as ``PUT api/sched/kernels``
feeds it (parsed by the handler's own :func:`~jupyter_sched.hub.liveness.parse_states`). The hub
activity report goes through the real :class:`~jupyter_sched.hub.hubapi.HubAPI` to the loopback
double of the hub's REST API (``tests/hub/hub_double.py``).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from tornado.httpserver import HTTPServer

from jupyter_sched.hub.activity import report_activity
from jupyter_sched.hub.hubapi import HubAPI
from jupyter_sched.hub.liveness import KernelReport, KernelReports, parse_report, parse_states
from tests.hub.hub_double import TOKEN, hub_app

from .conftest import Driver, make_service


def _report(reports: KernelReports, body: dict[str, Any], *, at: datetime, user: str = "ana") -> None:
    server, kernels = parse_report(body)
    reports.record(KernelReport(user=user, server=server, kernels=kernels, received_at=at,
                                states=parse_states(body, kernels, now=at)))


def _audit(svc: Any, job_id: str) -> list[dict[str, Any]]:
    return list(reversed(svc.audit(job_id=job_id, limit=1000)))


def _state(svc: Any, job_id: str) -> str:
    return str(svc.get_job(job_id, user="ana", is_admin=True)["state"])


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _post_activity(svc: Any) -> tuple[list[str], dict[str, Any]]:
    posts: dict[str, Any] = {}

    async def run() -> list[str]:
        port = _free_port()
        server = HTTPServer(hub_app({"ana": {"": True}}, posts=posts))
        server.listen(port, "127.0.0.1")
        try:
            return await report_activity(svc, HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN))
        finally:
            server.stop()

    return asyncio.run(run()), posts


def test_red15_r6_an_idle_kernel_reported_by_its_user_server_loses_its_lease_by_the_normal_rule(
        tmp_path: Path) -> None:
    # busy_kernel_window_s far away: only the normal window (4 s + 2 s grace) can release the lease
    svc = make_service(tmp_path, idle_busy_kernel_window_s=3600.0)
    reports = KernelReports()
    svc.set_kernel_source(lambda: reports.activity(datetime.now(timezone.utc)))
    long_ago = (datetime.now(timezone.utc) - timedelta(hours=1)).isoformat()
    body = {"server": "", "kernels": ["k-ana"], "states": {"k-ana": {"execution_state": "idle",
                                                                    "last_activity": long_ago}}}
    drive = Driver(svc)
    _report(reports, body, at=datetime.now(timezone.utc))
    lease = svc.submit({"gpus": 1, "kernel_id": "k-ana"}, user="ana", kind="lease")
    drive.run(lambda: _state(svc, lease["id"]) == "running", timeout_s=30, what="the lease to run")
    # the addendum: once the idle rule lists the lease, it is no activity of its owner
    drive.run(lambda: any(c.job_id == lease["id"] for c in svc.engine.idle.candidates), timeout_s=30,
              what="the lease to be listed as idle")
    reported, posts = _post_activity(svc)
    assert reported == [] and posts == {}, "an idle lease kept its owner's server alive"

    def refreshed() -> bool:  # the user server reports every 30 s; here at every check
        _report(reports, body, at=datetime.now(timezone.utc))
        return _state(svc, lease["id"]) == "cancelled"

    drive.run(refreshed, timeout_s=60, what="the idle kernel's lease to be released")
    reclaim = [r for r in _audit(svc, lease["id"]) if r["action"] == "idle_reclaim"][-1]
    assert reclaim["details"]["evidence"]["rule"] == "kernel_and_gpu", reclaim
    assert reclaim["details"]["action"] == "release"
    assert "kernel idle and GPU < 5 %" in reclaim["message"]


def test_red15_r6_a_lease_whose_kernel_state_is_unknown_is_said_unknown_and_stays_activity_free(
        tmp_path: Path) -> None:
    """An older user server reports ids only: the kernel's state is unknown. Its reason says the
    state is unknown in hub mode — never that the kernel is busy or keeps running; and since red
    team 17, R8 an unknown state is not the busy-kernel rule either: it is judged by the normal lease
    rule (a little later), so with a notify-only lease mode nothing is freed."""
    svc = make_service(tmp_path, idle_busy_kernel_window_s=3600.0, idle_lease_action="notify")
    reports = KernelReports()
    svc.set_kernel_source(lambda: reports.activity(datetime.now(timezone.utc)))
    drive = Driver(svc)
    _report(reports, {"server": "", "kernels": ["k-old"]}, at=datetime.now(timezone.utc))
    lease = svc.submit({"gpus": 1, "kernel_id": "k-old"}, user="ana", kind="lease")

    def reported_ids_only() -> bool:
        _report(reports, {"server": "", "kernels": ["k-old"]}, at=datetime.now(timezone.utc))
        return any(r["action"] == "idle_reclaim" for r in _audit(svc, lease["id"]))

    drive.run(reported_ids_only, timeout_s=60, what="the unknown kernel's lease to be reported idle")
    reclaim = [r for r in _audit(svc, lease["id"]) if r["action"] == "idle_reclaim"][-1]
    assert reclaim["details"]["evidence"]["rule"] == "kernel_unknown"
    assert "kernel state unknown in hub mode" in reclaim["message"], reclaim["message"]
    assert "busy" not in reclaim["message"] and "keeps running" not in reclaim["message"], reclaim["message"]
    assert _state(svc, lease["id"]) == "running"  # notify: nothing freed
    reported, _ = _post_activity(svc)
    assert reported == [], "a lease with an unknown kernel and idle GPUs counted as activity"


def test_red18_r3_another_users_report_of_a_kernel_id_never_speaks_for_its_owner(tmp_path: Path) -> None:
    """Kernel ids are in every account's ``ps``: bob reported ana's busy kernel as idle every few
    seconds, and since all reports were one map keyed by kernel id (the last one winning), ana's
    lease was reclaimed "while idle" with her cell still running (red team 18, R3). A kernel's
    state is now read only from its owner's reports: bob's report of the same id is his alone."""
    svc = make_service(tmp_path, idle_busy_kernel_window_s=3600.0)  # only the normal window can release it
    reports = KernelReports()
    svc.set_kernel_source(lambda: reports.activity(datetime.now(timezone.utc)))
    drive = Driver(svc)
    now = datetime.now(timezone.utc)
    busy = {"server": "", "kernels": ["k-ana"], "states": {"k-ana": {"execution_state": "busy",
                                                                    "last_activity": now.isoformat()}}}
    forged = {"server": "", "kernels": ["k-ana"], "states": {"k-ana": {
        "execution_state": "idle", "last_activity": (now - timedelta(hours=1)).isoformat()}}}
    _report(reports, busy, at=now)
    _report(reports, forged, at=now, user="bob")  # reported after ana's: it used to win
    assert reports.activity(now) and all(v["execution_state"] == "busy" or k.startswith("bob")
                                         for k, v in reports.activity(now).items())
    lease = svc.submit({"gpus": 1, "kernel_id": "k-ana"}, user="ana", kind="lease")
    drive.run(lambda: _state(svc, lease["id"]) == "running", timeout_s=30, what="the lease to run")

    def listed_under_the_busy_kernel_rule() -> bool:
        _report(reports, busy, at=datetime.now(timezone.utc))
        _report(reports, forged, at=datetime.now(timezone.utc), user="bob")
        return any(c.job_id == lease["id"] for c in svc.engine.idle.candidates)

    drive.run(listed_under_the_busy_kernel_rule, timeout_s=30, what="the idle GPU to be noticed")
    deadline = datetime.now(timezone.utc) + timedelta(seconds=10)  # past the normal window (4 s + 2 s grace)

    def past_the_normal_window() -> bool:
        listed_under_the_busy_kernel_rule()
        return datetime.now(timezone.utc) > deadline

    drive.run(past_the_normal_window, timeout_s=30, what="the normal window to pass")
    assert _state(svc, lease["id"]) == "running", "bob's report of ana's kernel id released her busy kernel's lease"
    listed = [c for c in svc.engine.idle.candidates if c.job_id == lease["id"]]
    assert listed and listed[0].kernel_busy, listed  # judged by her own server's word: busy
    assert not [r for r in _audit(svc, lease["id"]) if r["action"] == "idle_reclaim"
                and r["details"]["evidence"]["rule"] == "kernel_and_gpu"]
