"""Run code in a kernel of a (hub-spawned) Jupyter server, as a browser does: over the kernel's
websocket (``api/kernels/{id}/channels``), Jupyter messaging protocol 5.3 in JSON frames.

Used by the multi-user hub test to run ``%%schedule`` in a user's real kernel through the proxy.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone

__all__ = ["Execution", "execute", "start"]


@dataclass
class Execution:
    """What one ``execute_request`` produced."""

    status: str = ""
    stdout: str = ""
    stderr: str = ""
    results: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def text(self) -> str:
        return self.stdout + self.stderr + "".join(self.results) + (self.error or "")


def _message(session: str, code: str) -> tuple[str, str]:
    msg_id = uuid.uuid4().hex
    return msg_id, json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request",
                   "version": "5.3", "date": datetime.now(timezone.utc).isoformat()},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    })


async def _execute(ws_url: str, token: str, code: str, timeout_s: float) -> Execution:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    request = HTTPRequest(ws_url, headers={"Authorization": f"token {token}"}, request_timeout=60)
    connection = await websocket_connect(request)
    session = uuid.uuid4().hex
    msg_id, frame = _message(session, code)
    await connection.write_message(frame)
    out = Execution()
    replied = idle = False
    try:
        async with asyncio.timeout(timeout_s):
            while not (replied and idle):
                raw = await connection.read_message()
                if raw is None:
                    raise RuntimeError("the kernel websocket closed")
                message = json.loads(raw)
                if message.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                kind, content = message["header"]["msg_type"], message.get("content", {})
                if kind == "stream":
                    if content.get("name") == "stderr":
                        out.stderr += content.get("text", "")
                    else:
                        out.stdout += content.get("text", "")
                elif kind in ("execute_result", "display_data"):
                    out.results.append(str(content.get("data", {}).get("text/plain", "")))
                elif kind == "error":
                    out.error = f"{content.get('ename')}: {content.get('evalue')}"
                elif kind == "execute_reply":
                    replied, out.status = True, str(content.get("status"))
                elif kind == "status" and content.get("execution_state") == "idle":
                    idle = True
    finally:
        connection.close()
    return out


def execute(server_url: str, token: str, kernel_id: str, code: str, *, timeout_s: float = 180) -> Execution:
    """Run ``code`` in ``kernel_id`` of the server at ``server_url`` (http URL ending in ``/``)."""
    ws_url = server_url.replace("http://", "ws://", 1) + f"api/kernels/{kernel_id}/channels"
    return asyncio.run(_execute(ws_url, token, code, timeout_s))


async def _start(ws_url: str, token: str, code: str, timeout_s: float) -> None:
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    connection = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {token}"},
                                                     request_timeout=60))
    msg_id, frame = _message(uuid.uuid4().hex, code)
    await connection.write_message(frame)
    try:
        async with asyncio.timeout(timeout_s):
            while True:
                raw = await connection.read_message()
                if raw is None:
                    raise RuntimeError("the kernel websocket closed")
                message = json.loads(raw)
                if (message.get("parent_header", {}).get("msg_id") == msg_id
                        and message["header"]["msg_type"] == "status"
                        and message.get("content", {}).get("execution_state") == "busy"):
                    return
    finally:
        connection.close()


def start(server_url: str, token: str, kernel_id: str, code: str, *, timeout_s: float = 60) -> None:
    """Start ``code`` in ``kernel_id`` and return once the kernel says it is busy running it (the
    cell goes on after the websocket closes: a user who ran a long cell and closed the tab)."""
    ws_url = server_url.replace("http://", "ws://", 1) + f"api/kernels/{kernel_id}/channels"
    asyncio.run(_start(ws_url, token, code, timeout_s))
