"""One user's event streams are bounded (red-team 4 finding 1): every event is offered to every
stream and written, as JSON, to each one that may see it, so eve's 1,000 idle streams plus her own
submit/cancel loop made every other user's requests ~20x slower. A user keeps at most
MAX_STREAMS_PER_USER streams per server (one more closes their oldest), and an event's data is
serialised once for all the clients that write it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_sched.extension import events as events_module
from jupyter_sched.extension.events import MAX_STREAMS_PER_USER, EventHub

from .conftest import EVE_TOKEN, JUDY_TOKEN
from .test_events import open_stream, read_event


async def test_redteam4_a_users_oldest_stream_closes_when_they_open_one_too_many() -> None:
    hub = EventHub(queue_size=10)
    eves = [hub.subscribe(owner="eve") for _ in range(MAX_STREAMS_PER_USER + 3)]
    judys = hub.subscribe(owner="judy")
    server_own = hub.subscribe()  # the server's own waits (leases) are not a user's streams
    assert hub.subscribers == MAX_STREAMS_PER_USER + 2
    for old in eves[:3]:
        with pytest.raises(EOFError, match="replaced"):
            await old.next(1)
    hub.publish({"type": "job", "data": {"user": "eve"}})
    for sub in [*eves[3:], judys, server_own]:
        assert await sub.next(1) == {"type": "job", "data": {"user": "eve"}}
    for sub in [*eves, judys, server_own]:
        hub.unsubscribe(sub)
    assert hub.subscribers == 0 and hub._owned == {}  # nothing left counted against anyone


async def test_redteam4_an_event_is_serialised_once_for_all_its_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    real_dumps = events_module.wire_json  # the one JSON writer of events (s29: never NaN nor Infinity)

    def counting_dumps(data: object) -> bytes:
        calls.append(data)
        return real_dumps(data)

    monkeypatch.setattr(events_module, "wire_json", counting_dumps)
    hub = EventHub(queue_size=10)
    subs = [hub.subscribe(lambda event: dict(event), owner=f"u{i}") for i in range(5)]
    hub.publish({"type": "job", "data": {"id": "j-1", "user": "boss"}})
    texts = {hub.text((await sub.next(1) or {})["data"]) for sub in subs}
    assert texts == {'{"id": "j-1", "user": "boss"}'} and len(calls) == 1
    assert hub.text({"id": "j-1", "user": "boss"}) == texts.pop() and len(calls) == 2  # another object: its own


async def _ended(reader: asyncio.StreamReader) -> bool:
    """Read a chunked SSE answer until the server ends it (its last chunk, or the socket closes);
    False when it is still open after 30 s (keep-alive comments keep coming)."""
    async def last_chunk() -> bool:
        while True:
            line = await reader.readline()
            if not line or line == b"0\r\n":
                return True
    try:
        return await asyncio.wait_for(last_chunk(), 30)
    except asyncio.TimeoutError:
        return False


async def test_redteam4_one_user_keeps_at_most_so_many_event_streams_over_http(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str) -> None:
    port = http_server_port[1]
    hub = sched_app.event_hub
    before = hub.subscribers
    eves = []
    judy = await open_stream(port, jp_base_url, JUDY_TOKEN)
    try:
        assert b" 200 " in await asyncio.wait_for(judy[0].readline(), 20)
        for _ in range(MAX_STREAMS_PER_USER + 1):
            eves.append(await open_stream(port, jp_base_url, EVE_TOKEN))
            assert b" 200 " in await asyncio.wait_for(eves[-1][0].readline(), 20)
        assert await _ended(eves[0][0])  # eve's oldest was closed by the server
        assert hub.subscribers == before + 1 + MAX_STREAMS_PER_USER
        _, mine = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "eve-new"}, token=EVE_TOKEN)
        assert (await read_event(eves[-1][0], "job"))["id"] == mine["id"]
        _, hers = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "judy-own"}, token=JUDY_TOKEN)
        assert (await read_event(judy[0], "job"))["id"] == hers["id"]  # another user's stream is untouched
    finally:
        for _, writer in [judy, *eves]:
            writer.close()
