"""Lease long polls are bounded per user (red-team 3 finding 2): a wait whose client hung up ends
at once (it used to keep waiting, and re-reading the lease, for the whole ``wait_ms``), and only
``MAX_POLLING_WAITS`` of one user's waits re-read the store at a time. One user's 700 dropped
waits on a server that does not lead had slowed every other user's ``GET me`` 176-fold."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_sched.extension.events import EventHub
from jupyter_sched.extension.lease_wait import MAX_POLLING_WAITS, LeaseWaiter
from jupyter_sched.services.models import Job

from .conftest import API, EVE_TOKEN, wait_for


def _pending(user: str = "eve") -> Job:
    return Job.model_validate({"id": "l-1", "name": "n", "user": user, "team": "t", "kind": "lease",
                               "priority": "normal", "state": "pending", "resources": {"gpus": 1}})


async def test_redteam3_a_long_poll_whose_client_hangs_up_stops_waiting(sched_app: Any, api: Any, kernel: Any,
                                                                        http_server_port: Any, jp_base_url: str) -> None:
    _, hold = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, token=EVE_TOKEN, params={"wait_ms": "20000"})
    assert hold["allocation"], hold
    _, queued = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=EVE_TOKEN)
    assert queued["state"] == "pending", queued
    hub, port = sched_app.event_hub, http_server_port[1]
    before = hub.subscribers
    writers = []
    for _ in range(5):
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {jp_base_url}{API}/leases/{queued['id']}?wait_ms=25000 HTTP/1.1\r\n"
                     f"Host: 127.0.0.1:{port}\r\nAuthorization: token {EVE_TOKEN}\r\n\r\n".encode())
        await writer.drain()
        writers.append(writer)

    async def all_waiting() -> bool:
        return hub.subscribers >= before + 5

    await wait_for(all_waiting)
    for writer in writers:
        writer.close()

    async def all_ended() -> bool:  # well before the 25 s the waits asked for
        return hub.subscribers == before

    await wait_for(all_ended, timeout_s=15)
    status, still = await api("GET", f"leases/{queued['id']}", token=EVE_TOKEN)
    assert status == 200 and still["state"] == "pending", "hanging up does not touch the lease"


async def test_redteam3_only_so_many_of_one_users_waits_re_read_the_store() -> None:
    hub = EventHub(queue_size=10)
    reads: dict[str, int] = {}

    def reread_of(name: str) -> Any:
        async def reread() -> Job:
            reads[name] = reads.get(name, 0) + 1
            return _pending("ana" if name == "ana" else "eve")
        return reread

    waits = [LeaseWaiter(hub, "eve") for _ in range(MAX_POLLING_WAITS + 3)]
    other = LeaseWaiter(hub, "ana")
    for waiter in (*waits, other):
        waiter.__enter__()
    try:
        answers = await asyncio.gather(
            *(w.decided(_pending(), 1500, reread_of(f"eve-{i}"), poll_s=0.02) for i, w in enumerate(waits)),
            other.decided(_pending("ana"), 1500, reread_of("ana"), poll_s=0.02))
    finally:
        for waiter in (*waits, other):
            waiter.__exit__()
    assert all(a.state == "pending" for a in answers)
    polled = [reads[f"eve-{i}"] for i in range(MAX_POLLING_WAITS)]
    beyond = [reads[f"eve-{i}"] for i in range(MAX_POLLING_WAITS, MAX_POLLING_WAITS + 3)]
    assert min(polled) > 1, polled
    assert beyond == [1, 1, 1], "waits beyond the cap read once, when their wait ends"
    assert reads["ana"] > 1, "another user's wait is not counted against eve's"

    late = LeaseWaiter(hub, "eve")  # the cap is given back when the waits end
    with late:
        await late.decided(_pending(), 200, reread_of("late"), poll_s=0.02)
    assert reads["late"] > 1


async def test_redteam3_one_users_many_waits_leave_another_user_answered(sched_app: Any, api: Any, kernel: Any, jp_http_port: int,
                                                                          jp_base_url: str) -> None:
    """Red-team 3 finding 2, the other side: while one user keeps more waits open than may re-read
    the store, another user's plain requests and her own long poll are answered, and every one of
    the first user's waits is still answered once its lease is decided."""
    import json

    from tornado.httpclient import AsyncHTTPClient

    from .conftest import JUDY_TOKEN

    client = AsyncHTTPClient(force_instance=True, max_clients=100)  # the shared one queues past 10

    async def wait_on(lease_id: str) -> tuple[int, Any]:
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}{API}/leases/{lease_id}?wait_ms=25000"
        reply = await client.fetch(url, headers={"Authorization": f"token {EVE_TOKEN}"}, request_timeout=60)
        return reply.code, json.loads(reply.body)

    hub = sched_app.event_hub
    _, holder = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, token=EVE_TOKEN, params={"wait_ms": "20000"})
    assert holder["allocation"], holder
    _, queued = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=EVE_TOKEN)
    assert queued["state"] == "pending", queued
    subscribers = hub.subscribers
    many = 2 * MAX_POLLING_WAITS + 4
    opened = [asyncio.ensure_future(wait_on(queued["id"])) for _ in range(many)]

    async def all_open() -> bool:
        return hub.subscribers == subscribers + many

    await wait_for(all_open)
    status, me = await api("GET", "me", token=JUDY_TOKEN)
    assert status == 200 and me, me
    status, judys = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=JUDY_TOKEN,
                              params={"wait_ms": "300"})
    assert status == 201 and judys["state"] == "pending", judys
    assert not any(task.done() for task in opened), "eve's waits were still open while judy was answered"
    status, _ = await api("DELETE", f"leases/{holder['id']}", token=EVE_TOKEN)
    assert status == 200
    answers = await asyncio.gather(*opened)
    client.close()
    assert all(code == 200 and lease["state"] in ("admitted", "running") for code, lease in answers), answers


async def test_redteam3_a_user_may_hold_only_so_many_waits_open(sched_app: Any, api: Any, kernel: Any, jp_http_port: int,
                                                                jp_base_url: str, monkeypatch: Any) -> None:
    """Red-team 3 finding 2, last part: the waits one user may hold open at once are capped (each is
    an event subscription every engine event is offered to, for up to 25 s); one more is refused
    429 ``busy`` naming ``wait_ms`` — a POST so refused submits nothing — while the same request
    without ``wait_ms`` and another user's waits are answered as before."""
    import json

    from tornado.httpclient import AsyncHTTPClient

    from jupyter_sched.extension import lease_wait

    from .conftest import JUDY_TOKEN

    monkeypatch.setattr(lease_wait, "MAX_OPEN_WAITS", 3)
    client = AsyncHTTPClient(force_instance=True, max_clients=20)

    async def wait_on(lease_id: str) -> tuple[int, Any]:
        url = f"http://127.0.0.1:{jp_http_port}{jp_base_url}{API}/leases/{lease_id}?wait_ms=25000"
        reply = await client.fetch(url, headers={"Authorization": f"token {EVE_TOKEN}"}, request_timeout=60)
        return reply.code, json.loads(reply.body)

    hub = sched_app.event_hub
    _, holder = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, token=EVE_TOKEN, params={"wait_ms": "20000"})
    _, queued = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=EVE_TOKEN)
    subscribers = hub.subscribers
    opened = [asyncio.ensure_future(wait_on(queued["id"])) for _ in range(3)]

    async def all_open() -> bool:
        return hub.subscribers == subscribers + 3

    await wait_for(all_open)
    status, refused = await api("GET", f"leases/{queued['id']}", token=EVE_TOKEN, params={"wait_ms": "1000"})
    assert status == 429 and refused["error"]["code"] == "busy" and refused["error"]["field"] == "wait_ms", refused
    _, before = await api("GET", "leases", token=EVE_TOKEN)
    status, refused = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=EVE_TOKEN,
                                params={"wait_ms": "1000"})
    assert status == 429, refused
    _, after = await api("GET", "leases", token=EVE_TOKEN)
    # the same leases (their rows may have moved meanwhile: a later cycle re-words the queued one's reason)
    assert [lease["id"] for lease in after] == [lease["id"] for lease in before], "a refused wait submits nothing"
    status, plain = await api("GET", f"leases/{queued['id']}", token=EVE_TOKEN)
    assert status == 200 and plain["state"] == "pending"
    status, judys = await api("POST", "leases", {"gpus": 1, "kernel_id": await kernel()}, token=JUDY_TOKEN,
                              params={"wait_ms": "200"})
    assert status == 201, judys
    await api("DELETE", f"leases/{holder['id']}", token=EVE_TOKEN)
    answers = await asyncio.gather(*opened)
    client.close()
    assert all(code == 200 for code, _ in answers), answers
    status, again = await api("GET", f"leases/{queued['id']}", token=EVE_TOKEN, params={"wait_ms": "100"})
    assert status == 200, again  # the waits ended: the cap is free again


def test_the_api_description_of_wait_ms_states_the_per_user_cap_it_enforces() -> None:
    """A client learns of the cap from openapi.yaml (and the panel's generated types), not by
    meeting a 429: the description names the number lease_wait enforces."""
    from importlib.resources import files

    import yaml

    from jupyter_sched.extension import lease_wait

    spec = yaml.safe_load(files("jupyter_sched.extension").joinpath("openapi.yaml").read_text())
    for path, method in (("/leases", "post"), ("/leases/{lease_id}", "get")):
        operation = spec["paths"][path][method]
        (wait_ms,) = [p for p in operation["parameters"] if p["name"] == "wait_ms"]
        text = wait_ms["description"]
        assert f"At most {lease_wait.MAX_OPEN_WAITS} of a user's requests wait at once" in text, (path, text)
        assert "429" in text
