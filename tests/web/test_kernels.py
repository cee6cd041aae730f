"""Kernels started by the server know where the scheduler is; their leases end with them."""

from __future__ import annotations

import json
from typing import Any

from jupyter_sched.extension.kernels import kernel_states

from .conftest import IVAN_TOKEN, wait_for

READ_ENV = ("import os; print('|'.join(os.environ.get(k, '') for k in "
            "('JUPYTER_SCHED_URL', 'JUPYTER_SCHED_TOKEN', 'JUPYTER_SCHED_KERNEL_ID')))")


async def run_in_kernel(km: Any, code: str) -> str:
    client = km.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        msg_id = client.execute(code)
        out = []
        while True:
            msg = await client.get_iopub_msg(timeout=30)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                out.append(msg["content"]["text"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return "".join(out)
    finally:
        client.stop_channels()


async def test_kernels_get_the_scheduler_url_token_and_their_id_and_leases_end_with_them(
        sched_app: Any, jp_serverapp: Any, jp_fetch: Any, api: Any) -> None:
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    km = jp_serverapp.kernel_manager.get_kernel(kernel_id)
    url, token, seen_id = (await run_in_kernel(km, READ_ENV)).strip().split("|")
    assert seen_id == kernel_id
    assert token == IVAN_TOKEN
    assert url == jp_serverapp.connection_url
    state = kernel_states(jp_serverapp.kernel_manager)[kernel_id]
    assert isinstance(state["pid"], int) and state["execution_state"] in ("idle", "busy", "starting")

    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": kernel_id})
    assert status == 201, lease
    assert lease["kind"] == "lease"

    async def lease_state() -> str:
        _, current = await api("GET", f"leases/{lease['id']}")
        return str(current["state"])

    await wait_for(lambda: _is(lease_state, "running"))
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    await wait_for(lambda: _is_terminal(lease_state))


async def _is(get: Any, want: str) -> bool:
    return bool(await get() == want)


async def _is_terminal(get: Any) -> bool:
    return await get() in ("cancelled", "succeeded", "failed", "lost")


async def test_issue20_d_a_lease_for_a_kernel_this_server_does_not_run_is_refused_naming_kernel_id(
        sched_app: Any, api: Any, kernel: Any) -> None:
    """Issue 20 (d): a lease naming a kernel the server does not run (a typo, a stale id) was
    granted with a warning and held GPUs that neither %gpu release nor the kernel's end could free.
    It is a 400 naming ``kernel_id`` and the fix, audited, and no lease is made; a running kernel's
    lease and a lease bound to no kernel (said in its answer) are still granted."""
    from .conftest import BOSS_TOKEN

    status, refused = await api("POST", "leases", {"gpus": 1, "kernel_id": "k-typo"})
    assert status == 400, refused
    error = refused["error"]
    assert error["field"] == "kernel_id" and error["code"] == "validation_error", error
    assert error["message"] == ("kernel_id: no kernel 'k-typo' runs on this server, so neither %gpu release nor the "
                                "kernel's end would free the GPUs"), error
    assert "leave kernel_id out" in error["hint"] and "JUPYTER_SCHED_KERNEL_ID" in error["hint"], error
    _, leases = await api("GET", "leases", params={"state": "pending,admitted,running"})
    assert [lease for lease in leases if lease.get("kernel_id") == "k-typo"] == [], "a refused request made a lease"
    _, audit = await api("GET", "audit", params={"action": "refused", "user": "ivan"}, token=BOSS_TOKEN)
    assert any(record["details"].get("field") == "kernel_id" for record in audit), audit

    status, bound = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()})
    assert status == 201 and "warnings" not in bound, bound
    status, loose = await api("POST", "leases", {"gpus": 1})
    assert status == 201 and loose["warnings"][0].startswith("this lease is bound to no kernel"), loose
