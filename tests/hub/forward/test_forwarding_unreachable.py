"""A forwarding user server whose central service does not answer: 502 with the API's error shape."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": "user-server-token"},
        # nothing listens on the discard port
        "SchedApp": {"hub_service_url": "http://127.0.0.1:9/", "hub_service_token": "hub-token"},
    }




async def test_an_unreachable_central_service_answers_502_in_our_words(
        sched_app: Any, jp_fetch: Any, caplog: pytest.LogCaptureFixture) -> None:
    """Red-team finding 9: the body says what happened and what to do, never the service's
    internal address or the HTTP library's exception class (those go to the server log)."""
    for method, path, body in (("GET", ("jobs",), None), ("POST", ("jobs",), json.dumps({"gpus": 1, "command": ["true"]}))):
        response = await jp_fetch("api", "sched", *path, method=method, body=body, raise_error=False)
        assert response.code == 502, (method, path)
        text = response.body.decode()
        error = json.loads(text)["error"]
        assert error["code"] == "hub_service_unreachable"
        # issue 17: the server's retry loop says when it tries again (tests/hub/forward/test_central_reconnect.py)
        assert error["message"].startswith(
            "the scheduler service does not answer: reconnecting to the central service (attempt "), error
        assert error["details"]["reconnecting"]["target"] == "the central service"
        assert "hub admin" in error["hint"]
        assert not any(leak in text for leak in ("127.0.0.1", ":9/", "Error", "httpx", "services/")), text
    assert any("127.0.0.1:9" in r.getMessage() and "ConnectError" in r.getMessage() for r in caplog.records)


async def test_the_event_stream_of_an_unreachable_central_service_carries_the_reconnecting_state(
        sched_app: Any, jp_fetch: Any) -> None:
    chunks: list[bytes] = []
    seen = asyncio.Event()

    def on_chunk(chunk: bytes) -> None:
        chunks.append(chunk)
        if b"event: connection" in b"".join(chunks):
            seen.set()

    stream = asyncio.ensure_future(jp_fetch("api", "sched", "events", streaming_callback=on_chunk,
                                            request_timeout=60, raise_error=False))
    await asyncio.wait_for(seen.wait(), 30)
    stream.cancel()
    text = b"".join(chunks).decode()
    data = json.loads(text.split("event: connection\ndata: ", 1)[1].split("\n", 1)[0])
    assert data["central"]["message"].startswith("reconnecting to the central service (attempt ")
    assert "127.0.0.1" not in text
