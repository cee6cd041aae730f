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
