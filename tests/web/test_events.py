"""Push events: SSE over a real socket, and the bounded per-client fan-out."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from jupyter_sched.extension.events import EventHub

from .conftest import API, IVAN_TOKEN, JUDY_TOKEN


async def open_stream(port: int, base_url: str, token: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {base_url}{API}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 f"Authorization: token {token}\r\nAccept: text/event-stream\r\n\r\n".encode())
    await writer.drain()
    return reader, writer


async def read_event(reader: asyncio.StreamReader, wanted: str) -> dict[str, Any]:
    """Read SSE lines until an event of type ``wanted`` arrives; return its data."""
    event_type = ""
    while True:
        line = (await asyncio.wait_for(reader.readline(), 20)).decode().strip()
        if line.startswith("event: "):
            event_type = line[len("event: "):]
        elif line.startswith("data: ") and event_type == wanted:
            data: dict[str, Any] = json.loads(line[len("data: "):])
            return data


async def test_job_events_stream_to_their_owner_over_sse(sched_app: Any, api: Any, http_server_port: Any,
                                                         jp_base_url: str) -> None:
    port = http_server_port[1]
    reader, writer = await open_stream(port, jp_base_url, IVAN_TOKEN)
    try:
        status_line = (await reader.readline()).decode()
        assert " 200 " in status_line
        _, job = await api("POST", "jobs", {"gpus": 1, "command": ["true"]})
        data = await read_event(reader, "job")
        assert data["id"] == job["id"] and data["user"] == "ivan"
    finally:
        writer.close()


async def test_other_users_job_events_are_not_streamed(sched_app: Any, api: Any, http_server_port: Any,
                                                       jp_base_url: str) -> None:
    reader, writer = await open_stream(http_server_port[1], jp_base_url, JUDY_TOKEN)
    try:
        await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "ivans"})
        _, judys = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "judys"}, token=JUDY_TOKEN)
        data = await read_event(reader, "job")
        assert data["user"] == "judy" and data["id"] == judys["id"]
    finally:
        writer.close()


async def test_a_slow_client_is_dropped_not_buffered_forever() -> None:
    hub = EventHub(queue_size=3)
    slow, fast = hub.subscribe(), hub.subscribe()
    for n in range(3):
        hub.publish({"type": "job", "data": {"n": n}})
        assert (await fast.next(1)) == {"type": "job", "data": {"n": n}}
    hub.publish({"type": "job", "data": {"n": 3}})  # slow never read: its 4th event overflows
    assert slow.dropped and slow.pending == 1  # only the end marker is left
    with pytest.raises(EOFError, match="slow client"):
        await slow.next(1)
    assert hub.subscribers == 1 and hub.dropped_clients == 1
    assert (await fast.next(1)) == {"type": "job", "data": {"n": 3}}
    await hub.stop()
    with pytest.raises(EOFError):
        await fast.next(1)


async def test_the_hub_pumps_an_async_iterator_and_counts_by_type() -> None:
    async def source() -> Any:
        for kind in ("job", "preempted", "preempted"):
            yield {"type": kind, "data": {}}

    hub = EventHub(queue_size=10)
    sub = hub.subscribe()
    hub.start(source())
    got = [await sub.next(1) for _ in range(3)]
    assert [e["type"] for e in got if e] == ["job", "preempted", "preempted"]
    assert hub.counts["preempted"] == 2
    await hub.stop()


async def test_a_client_resuming_after_its_last_event_id_gets_what_it_missed_through_its_view() -> None:
    hub = EventHub(queue_size=10)
    first = hub.subscribe()
    for n, user in enumerate(("ivan", "judy", "ivan")):
        hub.publish({"type": "job", "data": {"n": n, "user": user}})
    got = [await first.next_with_id(1) for _ in range(3)]
    ids = [item[1] for item in got if item]
    assert len(set(ids)) == 3 and all(i.startswith(hub.epoch + "-") for i in ids)
    ivans = hub.subscribe(lambda e: e if e["data"]["user"] == "ivan" else None, last_event_id=ids[0])
    assert await ivans.next_with_id(1) == ({"type": "job", "data": {"n": 2, "user": "ivan"}}, ids[2])
    assert await ivans.next(0.05) is None  # judy's event was never ivan's to see, nothing else is due


@pytest.mark.parametrize("last", ["another-epoch-1", "garbage", "{epoch}-999"], ids=["a restarted server", "not an id",
                                                                                     "an id from the future"])
async def test_a_client_that_cannot_resume_is_told_it_lagged(last: str) -> None:
    hub = EventHub(queue_size=10)
    hub.publish({"type": "job", "data": {"n": 0}})
    sub = hub.subscribe(last_event_id=last.format(epoch=hub.epoch))
    assert await sub.next(1) == {"type": "lagged", "data": {"resumed": False}}


async def test_events_no_longer_kept_are_not_replayed_half() -> None:
    hub = EventHub(queue_size=10, replay_size=2)
    sub = hub.subscribe()
    for n in range(4):
        hub.publish({"type": "job", "data": {"n": n}})
    first = await sub.next_with_id(1)
    assert first is not None
    late = hub.subscribe(last_event_id=first[1])  # events 1..3 missed, only 2..3 kept
    assert await late.next(1) == {"type": "lagged", "data": {"resumed": False}}
    assert await late.next(0.05) is None


async def test_the_sse_stream_resumes_after_last_event_id(sched_app: Any, api: Any, http_server_port: Any,
                                                           jp_base_url: str) -> None:
    port = http_server_port[1]
    reader, writer = await open_stream(port, jp_base_url, IVAN_TOKEN)
    try:
        _, first = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "first"})
        event_id = ""
        while True:  # the id of the first job's event
            line = (await asyncio.wait_for(reader.readline(), 20)).decode().strip()
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("data: ") and first["id"] in line:
                break
    finally:
        writer.close()
    _, second = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "second"})  # while away
    await asyncio.sleep(0.5)  # decided and started meanwhile: its "pending" event can only come from the replay
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {jp_base_url}{API}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                 f"Authorization: token {IVAN_TOKEN}\r\nLast-Event-ID: {event_id}\r\n\r\n".encode())
    await writer.drain()
    try:
        head = []
        while (line := (await asyncio.wait_for(reader.readline(), 20)).decode().strip()):
            head.append(line.lower())
        assert "x-jupyter-sched-resume: 1" in head
        while (data := await read_event(reader, "job"))["id"] != second["id"]:
            pass  # the first job's later events, missed too
        assert data["state"] == "pending", f"the missed submit event is replayed first, got {data['state']}"
    finally:
        writer.close()
