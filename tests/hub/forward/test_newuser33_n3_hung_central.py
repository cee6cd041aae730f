"""A hung central service (alive, not answering) is said on the panel's stream (newuser33 N3).

SIGSTOP on ``jupyter-sched serve`` kept its TCP connections open: the user server passed on an event
stream that never ended nor spoke again, so the panel said LIVE for minutes. Real parts: the user
server is pytest-jupyter's ``jp_serverapp`` forwarding over the network; the central service is the
in-process double of ``tests/hub_service_double.py`` (a real HTTP server on a free port) whose handler
stops answering on cue — a stopped process cannot be timed to the second inside a test.
"""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest

from jupyter_sched.hub import forward
from tests.hub_service_double import serve_service_double

HUNG = threading.Event()
RELEASED = threading.Event()


class HungCentral(BaseHTTPRequestHandler):
    """The central's wire answers: its event stream sends one event, then nothing; while :data:`HUNG`,
    no request is answered (the process is stopped) until :data:`RELEASED`."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _hang(self) -> None:
        if HUNG.is_set():
            RELEASED.wait(60)

    def do_GET(self) -> None:
        self._hang()
        if self.path.split("?")[0].endswith("/api/sched/events"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b'event: job\ndata: {"id": "j-before", "state": "pending"}\n\n')
            self.wfile.flush()
            RELEASED.wait(60)  # silent, no keep-alive: the stopped process's open stream
            return
        body = json.dumps({"mode": "central"} if self.path.split("?")[0].endswith("/config") else []).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self) -> None:  # the kernel report
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.do_GET()


@pytest.fixture
def central_url() -> Any:
    HUNG.clear()
    RELEASED.clear()
    with serve_service_double(HungCentral) as url:
        yield url
        RELEASED.set()


@pytest.fixture
def jp_server_config(central_url: str) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": "user-server-token-n33"},
        "SchedApp": {"hub_service_url": central_url, "hub_service_token": "hub-token-n33", "events_keepalive_s": 0.4,
                     "kernel_report_interval_s": 0},
    }


async def test_newuser33_n3_a_hung_central_is_said_on_the_stream_and_its_return_too(
        sched_app: Any, jp_fetch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(forward, "_PROBE_TIMEOUT_S", 1.0)  # the check of a silent stream, as the retry loop's probe
    chunks: list[bytes] = []
    changed = asyncio.Event()

    def on_chunk(chunk: bytes) -> None:
        chunks.append(chunk)
        changed.set()

    async def said(text: bytes) -> str:
        while text not in b"".join(chunks):
            changed.clear()
            await asyncio.wait_for(changed.wait(), 30)
        return b"".join(chunks).decode()

    stream = asyncio.ensure_future(jp_fetch("api", "sched", "events", streaming_callback=on_chunk,
                                            request_timeout=90, raise_error=False))
    try:
        await said(b"j-before")  # the central's stream passed on
        HUNG.set()  # the service stops answering; its stream stays open and silent
        text = await said(b"event: connection")
        data = json.loads(text.split("event: connection\ndata: ", 1)[1].split("\n", 1)[0])
        assert data["central"]["attempt"] >= 1
        assert data["central"]["message"].startswith("reconnecting to the central service (attempt "), data
        RELEASED.set()  # it answers again: said on the same stream, which then ends (the client reconnects)
        await said(b'data: {"central": null}')
        response = await asyncio.wait_for(stream, 30)
        assert response.code == 200
    finally:
        RELEASED.set()
        stream.cancel()
