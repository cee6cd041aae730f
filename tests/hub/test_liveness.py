"""Leases bound to live kernels in hub mode (jupyter_sched.hub.liveness), and the hub's pages.

The decision is table-driven (pure). The periodic decision, :func:`leases_to_release`, runs the
real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double of
tests/hub/hub_double.py (JupyterHub's paged JSON; the real hub runs in the slow integration test,
which repeats the page-size and kill -9 scenarios end to end).
"""

from __future__ import annotations

import asyncio
import socket
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.errors import ValidationError
from jupyter_sched.hub.hubapi import HubAPI, active_users, user_servers
from jupyter_sched.hub.liveness import (
    GONE_KERNEL,
    REPORT_LATENCY_S,
    SERVER_STOPPED,
    KernelReport,
    KernelReports,
    gone_leases,
    leases_to_release,
    parse_report,
)
from tests.hub.hub_double import TOKEN, hub_app

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def lease(lid: str, user: str = "ana", kernel: str = "k-1", *, age_s: float = 600) -> dict[str, Any]:
    return {"id": lid, "user": user, "kernel_id": kernel, "state": "running",
            "submitted_at": (T0 - timedelta(seconds=age_s)).isoformat()}


def report(server: str, *kernels: str, user: str = "ana", at: datetime = T0) -> KernelReport:
    return KernelReport(user=user, server=server, kernels=frozenset(kernels), received_at=at)


@pytest.mark.parametrize(
    "leases, reports, active, want",
    [
        pytest.param([lease("l-1", kernel="k-1"), lease("l-2", kernel="k-2")], [report("", "k-1")], [""], ["l-2"],
                     id="a kernel the user's only server no longer reports is gone"),
        pytest.param([lease("l-1", kernel="k-1")], [report("", "k-1")], [""], [],
                     id="a reported kernel keeps its lease"),
        pytest.param([lease("l-1", kernel="k-9")], [report("", "k-1"), report("gpu", "k-9")], ["", "gpu"], [],
                     id="a kernel on the user's other named server is alive"),
        pytest.param([lease("l-1", kernel="k-9")], [report("", "k-1")], ["", "gpu"], [],
                     id="nothing is released while one active server has not reported (just after a restart)"),
        pytest.param([lease("l-1", kernel="k-9")], [report("", "k-1")], None, [],
                     id="nothing is released when the hub did not say which servers are active"),
        pytest.param([lease("l-1", kernel="k-9")], [report("", "k-1")], [], [],
                     id="a user without an active server is the reaper's case, not this rule's"),
        pytest.param([lease("l-1", kernel="k-9", age_s=REPORT_LATENCY_S - 1)], [report("", "k-1")], [""], [],
                     id="a report that may have been built before the lease existed does not count"),
        pytest.param([lease("l-1", kernel="k-9", age_s=REPORT_LATENCY_S + 1)], [report("", "k-1")], [""], ["l-1"],
                     id="a report built after the lease existed counts"),
    ],
)
def test_gone_leases(leases: list[dict[str, Any]], reports: list[KernelReport], active: list[str] | None,
                     want: list[str]) -> None:
    by_server = {r.server: r for r in reports}
    assert [x["id"] for x in gone_leases(leases, by_server, active)] == want


@pytest.mark.parametrize(
    "body, field",
    [
        pytest.param({"server": 3, "kernels": []}, "server", id="server must be a string"),
        pytest.param({"server": "x" * 300, "kernels": []}, "server", id="server is bounded"),
        pytest.param({"server": "", "kernels": "k-1"}, "kernels", id="kernels must be a list"),
        pytest.param({"server": "", "kernels": [1]}, "kernels", id="kernel ids are strings"),
        pytest.param({"server": "", "kernels": ["k"] * 10_001}, "kernels", id="the list is bounded"),
    ],
)
def test_bad_reports_name_the_field(body: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_report(body)
    assert err.value.field == field


def test_reports_of_servers_that_stopped_are_forgotten() -> None:
    reports = KernelReports()
    reports.record(report("", "k-1"))
    reports.record(report("gpu", "k-2"))
    reports.record(report("", "k-3", user="bob"))
    reports.forget("ana", [""])
    assert set(reports.of("ana")) == {""} and set(reports.of("bob")) == {""}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def with_hub(users: dict[str, dict[str, bool]], coro: Any, **options: Any) -> Any:
    async def run() -> Any:
        port = _free_port()
        server = HTTPServer(hub_app(users, **options))
        server.listen(port, "127.0.0.1")
        try:
            return await coro(HubAPI(f"http://127.0.0.1:{port}/hub/api", TOKEN))
        finally:
            server.stop()

    return asyncio.run(run())


USERS = {"ana": {"": True}, "bob": {"": False}, "carol": {"": True}, "dave": {"": True}, "erin": {"": True}}


def test_every_page_is_read_when_the_hubs_page_size_is_below_the_active_users() -> None:
    seen = with_hub(USERS, active_users, page_max=1)
    assert sorted(seen) == ["ana", "carol", "dave", "erin"]


def test_a_user_missing_from_the_listing_is_unknown_until_asked_alone() -> None:
    leases = [lease("l-ana", "ana"), lease("l-bob", "bob"), lease("l-dave", "dave"), lease("l-gone", "zoe")]

    async def decide(hub: HubAPI) -> Any:
        return await leases_to_release(leases, hub, KernelReports())

    # dave moved between pages and was not listed: asked alone, he is active, so his lease stays
    decided = with_hub(USERS, decide, page_max=1, hidden={"dave"})
    assert sorted((x["id"], why) for x, why in decided) == [("l-bob", SERVER_STOPPED), ("l-gone", SERVER_STOPPED)]


def test_kernel_reports_release_gone_kernels_in_the_periodic_decision() -> None:
    reports = KernelReports()
    reports.record(report("", "k-1", user="ana"))
    reports.record(report("", "k-other", user="carol"))
    leases = [lease("l-ana", "ana", "k-1"), lease("l-carol", "carol", "k-2")]

    async def decide(hub: HubAPI) -> Any:
        return await leases_to_release(leases, hub, reports)

    decided = with_hub(USERS, decide, page_max=2)
    assert [(x["id"], why) for x, why in decided] == [("l-carol", GONE_KERNEL)]


def test_a_hub_that_does_not_answer_about_a_user_releases_nothing() -> None:
    async def ask(hub: HubAPI) -> Any:
        return await user_servers(hub, "ana")

    async def unreachable() -> Any:
        return await ask(HubAPI(f"http://127.0.0.1:{_free_port()}/hub/api", TOKEN, timeout_s=5))

    assert asyncio.run(unreachable()) is None
    assert with_hub(USERS, ask) == [""]
    assert with_hub(USERS, lambda hub: user_servers(hub, "nobody-here")) == []
