"""Long-polling leases (issue 17): ``POST leases?wait_ms=`` and ``GET leases/{id}?wait_ms=`` answer
once the engine decided, so ``%gpu request`` needs no poll loop (the server has 4 simulated GPUs)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest


async def test_a_lease_that_fits_comes_back_granted_from_the_post_itself(sched_app: Any, api: Any, kernel: Any) -> None:
    status, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, params={"wait_ms": "20000"})
    assert status == 201, lease
    assert lease["state"] in ("admitted", "running") and lease["allocation"], lease


async def test_a_waiting_get_answers_when_the_gpus_are_released(sched_app: Any, api: Any, kernel: Any) -> None:
    _, holder = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, params={"wait_ms": "20000"})
    assert holder["allocation"], holder
    status, queued = await api("POST", "leases", {"gpus": 2, "kernel_id": await kernel()}, params={"wait_ms": "300"})
    assert status == 201 and queued["state"] == "pending", "nothing free: the wait ran out with it pending"
    status, still = await api("GET", f"leases/{queued['id']}", params={"wait_ms": "300"})
    assert status == 200 and still["state"] == "pending" and still["reason"], still

    waiting = asyncio.ensure_future(api("GET", f"leases/{queued['id']}", params={"wait_ms": "20000"}))
    await asyncio.sleep(0.3)
    assert not waiting.done(), "answered while the lease was still pending"
    status, _ = await api("DELETE", f"leases/{holder['id']}")
    assert status == 200
    status, granted = await waiting
    assert status == 200 and granted["state"] in ("admitted", "running") and granted["allocation"], granted


async def test_a_waiting_get_of_another_users_lease_is_refused_at_once(sched_app: Any, api: Any, kernel: Any) -> None:
    from .conftest import JUDY_TOKEN

    _, lease = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()})
    status, body = await api("GET", f"leases/{lease['id']}", token=JUDY_TOKEN, params={"wait_ms": "20000"})
    assert status == 403, body  # another user's live lease: forbidden (newuser29 n5)


@pytest.mark.parametrize("value", ["-1", "25001", "soon"])
async def test_a_bad_wait_names_the_argument(sched_app: Any, api: Any, kernel: Any, value: str) -> None:
    kid_bad = await kernel()
    status, body = await api("POST", "leases", {"gpus": 1, "kernel_id": kid_bad}, params={"wait_ms": value})
    assert status == 400 and body["error"]["field"] == "wait_ms", body
    _, leases = await api("GET", "leases")
    assert leases == [] or all(lease["kernel_id"] != kid_bad for lease in leases), "a refused request created a lease"


async def test_on_a_server_that_does_not_lead_the_wait_answers_from_the_store() -> None:
    """Another server's engine decides (its events never reach this one): the waiter re-reads
    every poll interval and answers the stored decision, long before ``wait_ms``."""
    from jupyter_sched.extension.events import EventHub
    from jupyter_sched.extension.lease_wait import LeaseWaiter
    from jupyter_sched.services.models import Job

    def lease(state: str) -> Job:
        return Job.model_validate({"id": "l-1", "name": "n", "user": "ivan", "team": "t", "kind": "lease",
                                   "priority": "normal", "state": state, "resources": {"gpus": 1}})

    reads: list[str] = []

    async def reread() -> Job:  # the store as the other server's engine leaves it: decided on the 3rd read
        reads.append("read")
        return lease("admitted" if len(reads) >= 3 else "pending")

    with LeaseWaiter(EventHub(queue_size=10), "ivan") as waiter:
        answer = await asyncio.wait_for(waiter.decided(lease("pending"), 20_000, reread, poll_s=0.05), 10)
    assert answer.state == "admitted" and len(reads) == 3
