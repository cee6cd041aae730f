"""Leases bound to live kernels in hub mode (jupyter_sched.hub.liveness), and the hub's pages.

The decision is table-driven (pure). The periodic decision, :func:`leases_to_release`, runs the
real :class:`~jupyter_sched.hub.hubapi.HubAPI` against the loopback hub double of
tests/hub/hub_double.py (JupyterHub's paged JSON; the real hub runs in the slow integration test,
which repeats the page-size and kill -9 scenarios end to end).
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.hub.hubapi import HubAPI, active_users, user_servers
from jupyter_sched.hub.liveness import (
    GONE_KERNEL,
    HUB_RECHECK_S,
    HUB_SERVERS_TTL_S,
    MAX_SERVERS_PER_USER,
    NO_SERVER,
    REPORT_KEEP_S,
    REPORT_LATENCY_S,
    SERVER_STOPPED,
    KernelReport,
    KernelReports,
    gone_leases,
    leases_to_release,
    parse_report,
)
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.hub.hub_double import TOKEN, hub_app
from tests.runtime.builders import T0 as ENGINE_T0

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
        pytest.param({"server": "", "kernels": [f"k-{i}" for i in range(1_001)]}, "kernels",
                     id="no server runs more than 1,000 kernels"),
        pytest.param({"server": "", "kernels": ["k" * 129]}, "kernels", id="a kernel id is at most 128 characters"),
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
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


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


# ---- bounded memory: reports from any hub user (red-team finding 16) -----------------------------

def test_made_up_server_names_never_grow_the_reports_beyond_a_bound_per_user() -> None:
    clock = [1_000.0]
    reports = KernelReports(monotonic=lambda: clock[0])
    kernels = [f"{i:036d}" for i in range(1_000)]
    for i in range(200):  # a hostile user inventing server names
        reports.record(report(f"fake-{i}", *kernels, user="mallory"))
    reports.record(report("", "k-1"))
    assert reports.count() == MAX_SERVERS_PER_USER + 1
    assert "fake-199" in reports.of("mallory") and "fake-0" not in reports.of("mallory")  # the oldest dropped
    reports.keep_users({"ana"})  # reported just now: kept a while, for a new lease's kernel_id check
    assert "fake-199" in reports.of("mallory")
    clock[0] += REPORT_KEEP_S
    reports.keep_users({"ana"})  # mallory holds no kernel-bound lease and stopped reporting: nothing kept
    assert reports.count() == 1 and reports.of("mallory") == {}


class CountingHub:
    """The real :class:`HubAPI` against the loopback double, counting requests."""

    def __init__(self, hub: HubAPI) -> None:
        self.hub, self.asked = hub, 0

    async def request(self, method: str, path: str, body: Any = None, *, paginated: bool = False) -> Any:
        self.asked += 1
        return await self.hub.request(method, path, body, paginated=paginated)


def test_a_report_is_checked_against_the_servers_the_hub_lists_and_the_hub_is_asked_sparingly() -> None:
    clock = [1_000.0]
    reports = KernelReports(monotonic=lambda: clock[0])

    async def scenario(api: HubAPI) -> list[Any]:
        hub = CountingHub(api)
        out: list[Any] = [await reports.servers_for(hub, "ana", ""), hub.asked]
        out += [await reports.servers_for(hub, "ana", ""), hub.asked]  # remembered: not asked again
        out += [await reports.servers_for(hub, "ana", "fake-1"), hub.asked]  # unknown, asked < 10 s ago: not asked
        clock[0] += HUB_RECHECK_S + 1
        out += [await reports.servers_for(hub, "ana", "fake-2"), hub.asked]  # unknown: asked once more
        out += [await reports.servers_for(hub, "ana", "fake-3"), hub.asked]  # again within 10 s: not asked
        clock[0] += HUB_SERVERS_TTL_S
        out += [await reports.servers_for(hub, "ana", ""), hub.asked]  # the remembered list grew old
        out += [await reports.servers_for(hub, "nobody-here", ""), hub.asked]
        return out

    got = with_hub({"ana": {"": True, "gpu": True, "old": False}}, scenario)
    assert got == [("", "gpu"), 1, ("", "gpu"), 1, ("", "gpu"), 1, ("", "gpu"), 2, ("", "gpu"), 2,
                   ("", "gpu"), 3, (), 4]

    async def silent() -> Any:
        return await KernelReports().servers_for(HubAPI(f"http://127.0.0.1:{_free_port()}/hub/api", TOKEN,
                                                        timeout_s=5), "ana", "")

    assert asyncio.run(silent()) is None  # the hub did not answer: nothing is decided (the report is not kept)


def test_the_periodic_decision_forgets_reports_of_users_without_kernel_bound_leases() -> None:
    clock = [1_000.0]
    reports = KernelReports(monotonic=lambda: clock[0])
    reports.record(report("", "k-1", user="ana"))
    reports.record(report("", "k-x", user="bob"))
    reports.record(report("", "k-y", user="carol"))
    clock[0] += REPORT_KEEP_S  # nobody reported since

    async def decide(hub: HubAPI) -> Any:
        return await leases_to_release([lease("l-ana", "ana", "k-1")], hub, reports)

    assert with_hub(USERS, decide) == []
    assert reports.count() == 1 and set(reports.of("ana")) == {""}

    async def none_left(hub: HubAPI) -> Any:
        return await leases_to_release([], hub, reports)

    assert with_hub(USERS, none_left) == [] and reports.count() == 0


# ---- leases without a kernel (red-team finding 6) --------------------------------------------------

def test_a_lease_without_a_kernel_is_bound_to_its_owner_having_a_running_server() -> None:
    kernelless = {**lease("l-bob", "bob"), "kernel_id": None}  # bob's only server stopped
    kept = {**lease("l-ana", "ana"), "kernel_id": None}  # ana has a running server: nothing to follow, kept
    absent = {**lease("l-zoe", "zoe"), "kernel_id": None}  # the hub does not know zoe at all

    async def decide(hub: HubAPI) -> Any:
        return await leases_to_release([kernelless, kept, absent], hub, KernelReports())

    decided = with_hub(USERS, decide, page_max=1)
    assert sorted((x["id"], why) for x, why in decided) == [("l-bob", NO_SERVER), ("l-zoe", NO_SERVER)]
    assert "no kernel" not in SERVER_STOPPED and "without a kernel" in NO_SERVER


def test_a_granted_lease_says_what_it_is_bound_to(tmp_path: Any) -> None:
    clock = ManualClock(ENGINE_T0)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now), inventory=SimulatedInventory(2, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=clock, cycle_interval_s=60.0)
    bound = svc.submit({"gpus": 1, "kernel_id": "k-1"}, user="ana", kind="lease")
    loose = svc.submit({"gpus": 1}, user="ana", kind="lease")
    svc.tick()
    assert svc.get_job(bound["id"], user="ana")["message"] == "GPUs bound to the kernel"
    assert svc.get_job(loose["id"], user="ana")["message"] == "GPUs held by the lease (no kernel is bound to it)"
