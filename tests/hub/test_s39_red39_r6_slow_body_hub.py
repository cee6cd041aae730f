"""Red team 39, R6 on a real hub: a hub user's slow Content-Length body is cut 408 at the service's front door, and
the holder is audited (before, such bodies held the bodies' budget for ``body_timeout_s`` each, unnamed, and every
other user's submit was answered 503 ``busy``).

Real parts, as tests/hub/test_red19_r5_body.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real OS accounts,
``jupyter-sched serve`` as root on PostgreSQL; the request carries amy's own hub token, sent straight to the
service's port (any local account can).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.accounts import Account

from .hub_harness import SERVICE, Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "red39r6")


def _answer(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    try:
        while piece := sock.recv(65536):
            data += piece
    except (TimeoutError, ConnectionError):
        pass
    return data


def test_red39_r6_a_slow_content_length_body_is_cut_408_and_its_sender_audited(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name
    token = hub.token_for(amy)
    me = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {token}"}, timeout=60)
    assert me.status_code == 200, me.text[:300]  # her token counts as amy at the front door from now on
    length = 1_000_000
    with socket.create_connection(("127.0.0.1", hub.service_port), timeout=10) as sock:
        sock.sendall(f"POST /services/{SERVICE}/api/sched/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: token {token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode() + b"{" + b" " * 99)
        # meanwhile another user's small request is answered as usual
        other = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {hub.token_for(eve)}"},
                          timeout=60)
        assert other.status_code == 200, other.text[:300]
        answer = _answer(sock, 30)  # nothing more is sent: cut once past the grace
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:300]
    error = json.loads(text)["error"]
    assert error["code"] == "slow_body" and error["field"] == "body", error
    assert f"{length:,} bytes came too slowly: 100 bytes in" in error["message"], error
    assert "c.FrontDoor.body_timeout_s" in error["hint"], error
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def cut() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": amy, "action": "refused"},
                         headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "came too slowly" in row["message"]]

    hub.wait_for(lambda: len(cut()) >= 1, 30, "amy's slow body audited")
    assert len(cut()) == 1 and "api/sched/jobs" in str(cut()[0]), cut()
