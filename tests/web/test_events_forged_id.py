"""A forged ``Last-Event-ID`` resumes nothing and breaks nothing (red-team 3 finding 7): a client
that sends another user's id range replays only its own view, and an id whose number is not plain
ASCII digits of a sequence number ('²' passes ``str.isdigit`` but not ``int``; 5,000 digits pass
it but exceed ``int``'s limit) is told it lagged instead of a 500 with a traceback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_sched.extension.events import EventHub

from .conftest import API, EVE_TOKEN, JUDY_TOKEN
from .test_events import read_event

FORGED = {"a superscript digit": "{epoch}-\u00b2", "5,000 digits": "{epoch}-" + "9" * 5000,
          "arabic-indic digits": "{epoch}-\u0661\u0662"}


@pytest.mark.parametrize("last", list(FORGED.values()), ids=list(FORGED))
async def test_redteam3_a_forged_event_id_number_is_told_it_lagged(last: str) -> None:
    hub = EventHub(queue_size=10)
    hub.publish({"type": "job", "data": {"n": 0}})
    sub = hub.subscribe(last_event_id=last.format(epoch=hub.epoch))
    assert await sub.next(1) == {"type": "lagged", "data": {"resumed": False}}


async def test_redteam3_a_forged_last_event_id_over_http_is_an_event_stream(sched_app: Any, api: Any,
                                                                            http_server_port: Any, jp_base_url: str) -> None:
    status, secret = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "judy-secret"}, token=JUDY_TOKEN)
    assert status == 201
    port = http_server_port[1]
    for last in (f"{sched_app.event_hub.epoch}-\u00b2", f"{sched_app.event_hub.epoch}-0"):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {jp_base_url}{API}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Authorization: token {EVE_TOKEN}\r\n".encode() + b"Last-Event-ID: " + last.encode("latin-1")
                     + b"\r\n\r\n")
        await writer.drain()
        try:
            status_line = (await asyncio.wait_for(reader.readline(), 20)).decode()
            assert " 200 " in status_line, status_line
            if last.endswith("-0"):  # from the first event on: only what eve may see is replayed
                status, _ = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "name": "eve-marker"},
                                      token=EVE_TOKEN)
                seen = []
                while "eve-marker" not in str(seen[-1:]):
                    seen.append(await read_event(reader, "job"))
                assert not any(secret["id"] in str(data) or "judy" in str(data) for data in seen), seen
            else:
                assert await read_event(reader, "lagged") == {"resumed": False}
        finally:
            writer.close()
