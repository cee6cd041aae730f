"""What a restarted kernel sees (case 029), as a pure plan and through the hub's forwarding service.

The hub test speaks the central service's real REST JSON through an httpx ``MockTransport`` (the
double sits at the wire: no hub runs here); the embedded path runs against real kernels in
``tests/notebook/test_nb_case_029.py``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from jupyter_sched.extension.kernel_gpus import GPU_NOTICE_ENV, KernelLeases, RestartPlan, restart_plan
from jupyter_sched.hub.forward import ForwardingService


def lease(lease_id: str, state: str, uuids: tuple[str, ...] = (), kernel: str = "k1") -> dict[str, Any]:
    return {"id": lease_id, "kind": "lease", "state": state, "kernel_id": kernel, "gpus": 1,
            "allocation": {"node": "n", "gpu_uuids": list(uuids), "gpu_milli": 1000} if uuids else None}


@dataclass(frozen=True)
class PlanCase:
    id: str
    leases: tuple[dict[str, Any], ...]
    release_on_restart: bool
    isolate: bool
    want_visible: str | None          # None: the variable is not touched
    want_release: tuple[str, ...]
    want_notice: str


CASES = [
    PlanCase("a granted lease is kept and re-applied", (lease("l-1", "running", ("GPU-cccc",)),), False, True,
             "GPU-cccc", (), "GPU-cccc re-attached (lease l-1); CUDA_VISIBLE_DEVICES is set in this kernel"),
    PlanCase("release_gpu_on_kernel_restart releases it and hides every GPU", (lease("l-1", "running", ("GPU-cccc",)),),
             True, True, "", ("l-1",), "GPU released on restart; run %gpu to request one"),
    PlanCase("a kernel without a lease sees no GPU", (), False, True, "", (), ""),
    PlanCase("a queued request keeps its place across the restart (newuser39 N2)", (lease("l-2", "pending"),), False,
             True, "", (), "lease l-2 kept across the restart: pending, 1 GPU · waiting for the next scheduling cycle; granted GPUs are set here "
             "once it starts (%gpu status sets them)"),
    PlanCase("of two queued requests one is kept", (lease("l-2", "pending"), lease("l-3", "pending")), False, True,
             "", ("l-3",), "lease l-2 kept across the restart: pending, 1 GPU · waiting for the next scheduling cycle; granted GPUs are set here "
             "once it starts (%gpu status sets them)"),
    PlanCase("release_gpu_on_kernel_restart withdraws a queued request and says so", (lease("l-2", "pending"),), True,
             True, "", ("l-2",), "your queued request l-2 was withdrawn when this kernel restarted "
             "(release_gpu_on_kernel_restart); run %gpu request to ask again"),
    PlanCase("without isolation a kernel without a lease is left alone", (), False, False, None, (), ""),
    PlanCase("two GPUs are kept together", (lease("l-1", "running", ("GPU-a", "GPU-b")),), False, True,
             "GPU-a,GPU-b", (), "GPU-a, GPU-b re-attached (lease l-1); CUDA_VISIBLE_DEVICES is set in this kernel"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_restart_plan(case: PlanCase) -> None:
    plan = restart_plan(list(case.leases), release_on_restart=case.release_on_restart, isolate=case.isolate)
    assert plan.env.get("CUDA_VISIBLE_DEVICES") == case.want_visible
    assert plan.release == case.want_release
    assert plan.notice == case.want_notice == plan.env[GPU_NOTICE_ENV]


def central(leases: list[dict[str, Any]], deleted: list[str], *, fail: bool = False) -> httpx.MockTransport:
    """The central service's ``GET leases`` / ``DELETE leases/{id}`` (its JSON shapes)."""
    def handle(request: httpx.Request) -> httpx.Response:
        if fail:
            return httpx.Response(503, json={"error": {"code": "store_error", "message": "down", "field": None,
                                                       "hint": None}})
        if request.method == "GET" and request.url.path.endswith("/api/sched/leases"):
            assert request.url.params["state"] == "pending,admitted,running"
            return httpx.Response(200, json=leases)
        if request.method == "DELETE":
            deleted.append(request.url.path.rsplit("/", 1)[1])
            return httpx.Response(200, json={"state": "cancelled"})
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "?", "field": None, "hint": None}})
    return httpx.MockTransport(handle)


def test_in_hub_mode_the_kept_grant_comes_from_the_central_service() -> None:
    deleted: list[str] = []

    async def scenario() -> tuple[RestartPlan, RestartPlan]:
        service = ForwardingService("http://hub/services/sched/", "t", kernel_ids=list,
                                    transport=central([lease("l-1", "running", ("GPU-cccc",)),
                                                       lease("l-9", "running", ("GPU-dddd",), kernel="other")], deleted))
        kept = await KernelLeases(service).plan("k1", release_on_restart=False, isolate=True)
        assert deleted == []
        return kept, await KernelLeases(service).plan("k1", release_on_restart=True, isolate=True)

    kept, released = asyncio.run(scenario())
    assert kept.env["CUDA_VISIBLE_DEVICES"] == "GPU-cccc"
    assert released.env["CUDA_VISIBLE_DEVICES"] == "" and deleted == ["l-1"], "only this kernel's lease is released"


def test_when_the_central_service_does_not_answer_the_restarted_kernel_sees_no_gpu() -> None:
    service = ForwardingService("http://hub/services/sched/", "t", kernel_ids=list, transport=central([], [], fail=True))
    plan = asyncio.run(KernelLeases(service).plan("k1", release_on_restart=False, isolate=False))
    assert plan.env["CUDA_VISIBLE_DEVICES"] == "" and "could not reach" in plan.notice


def test_newuser39_N2_in_hub_mode_a_queued_request_is_kept_or_withdrawn_with_its_cause() -> None:
    """The central service's record says why (``DELETE leases/{id}?why=kernel_restart``), as a shutdown's does."""
    asked: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=[lease("l-2", "pending")])
        asked.append(f"{request.url.path.rsplit('/', 1)[1]}?{request.url.query.decode()}")
        return httpx.Response(200, json={"state": "cancelled"})

    async def scenario() -> tuple[RestartPlan, RestartPlan]:
        service = ForwardingService("http://hub/services/sched/", "t", kernel_ids=list,
                                    transport=httpx.MockTransport(handle))
        kept = await KernelLeases(service).plan("k1", release_on_restart=False, isolate=True)
        assert asked == [], "kept: nothing withdrawn"
        return kept, await KernelLeases(service).plan("k1", release_on_restart=True, isolate=True)

    kept, withdrawn = asyncio.run(scenario())
    assert kept.notice.startswith("lease l-2 kept across the restart: pending")
    assert asked == ["l-2?why=kernel_restart"] and "withdrawn when this kernel restarted" in withdrawn.notice
