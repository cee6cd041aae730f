"""Red team 19, R5 on a real hub: a body over the service's cap (``c.FrontDoor.max_body_bytes``,
17 MiB) sent through JupyterHub's proxy gets the service's JSON 413 naming ``body`` and the limit, and is
audited as a refusal of the hub user whose token it carried.
Before the fix the service answered 413 and closed at once while configurable-http-proxy was still
writing the body: the reset made it answer its own HTML "503 Service Unavailable"
(``write ECONNRESET``). The service now reads and drops the rest of the body (bounded) before closing.

The last two tests, red team 39's R6 and red team 18's R4 on a real hub, came here from modules of their own (session
41: each started a hub, ~20 s, for its one test): see their docstrings.

Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts, ``jupyter-sched serve`` as root on PostgreSQL; the request carries amy's own hub token.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.hub.front_door import MAX_BODY_BYTES
from tests.accounts import Account

from .hub_harness import SERVICE, Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "red19r5")


def test_red19_r5_a_body_over_the_cap_through_the_hub_proxy_gets_the_services_json_413(
        hub: Hub, users: dict[str, Account]) -> None:
    token = hub.token_for(users["amy"].name)
    big = b'{"gpus": 0, "command": ["true"], "source": "' + b"x" * (MAX_BODY_BYTES + (1 << 20)) + b'"}'
    for _ in range(2):  # and again: the proxy's connection to the service is not left broken
        answer = httpx.post(f"{hub.service_url}api/sched/jobs", content=big, timeout=120,
                            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        assert answer.status_code == 413, (answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith("application/json"), answer.headers
        error = answer.json()["error"]
        assert error["code"] == "too_large" and error["field"] == "body", error
        assert f"{MAX_BODY_BYTES:,}" in error["message"] and f"{len(big):,}" in error["message"], error
    fine = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {token}"}, timeout=60)
    assert fine.status_code == 200, fine.text[:300]
    # audited as amy's refusal (before: only a per-minute count in the front door's log line)
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's oversize request audited")
    row = refused()[0]
    assert f"{len(big):,} bytes" in row["message"] and "api/sched/jobs" in str(row), row


def test_red20_r1_a_chunked_body_over_the_cap_through_the_hub_proxy_gets_the_json_413_and_is_audited(
        hub: Hub, users: dict[str, Account]) -> None:
    # fails before the fix: the proxy's HTML 503 (write ECONNRESET: tornado closed mid-body), no audit row
    token = hub.token_for(users["amy"].name)

    def pieces() -> Iterator[bytes]:  # no Content-Length: sent chunked, as red20/a32_chunked.py
        yield b'{"gpus": 0, "command": ["true"], "source": "'
        for _ in range(MAX_BODY_BYTES // (1 << 20) + 2):
            yield b"x" * (1 << 20)
        yield b'"}'

    for _ in range(2):  # and again: the proxy's connection to the service is not left broken
        answer = httpx.post(f"{hub.service_url}api/sched/jobs", content=pieces(), timeout=120,
                            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        assert answer.status_code == 413, (answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith("application/json"), answer.headers
        error = answer.json()["error"]
        assert error["code"] == "too_large" and error["field"] == "body", error
        assert f"{MAX_BODY_BYTES:,}" in error["message"] and "chunked" in error["message"], error
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "chunked" in row["message"]]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's chunked oversize request audited")
    assert "api/sched/jobs" in str(refused()[0]), refused()[0]


def test_red21_r4_a_body_in_one_byte_chunks_at_the_service_port_gets_the_json_400_and_is_audited_once(
        hub: Hub, users: dict[str, Account]) -> None:
    # fails before the fix: every 1-byte chunk was read on the service's loop (red21/a5_tinychunks.py "direct"),
    # the body reached the handlers, and nothing was audited
    import json
    import socket

    token = hub.token_for(users["amy"].name)
    body = json.dumps({"gpus": 0, "command": ["true"], "name": "x", "pad": "y" * 3_000}).encode()
    wire = b"".join(b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body))) + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", hub.service_port), timeout=10) as sock:
        sock.sendall(f"POST /services/{SERVICE}/api/sched/dryrun HTTP/1.1\r\nHost: x\r\nAuthorization: token {token}\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + wire)
        sock.settimeout(20)
        answer = b""
        try:
            while piece := sock.recv(65536):
                answer += piece
        except (TimeoutError, ConnectionError):
            pass
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert json.loads(text)["error"]["field"] == "body"
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "chunks of at least" in row["message"]]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's finely chunked request audited")
    assert len(refused()) == 1 and "api/sched/dryrun" in str(refused()[0]), refused()


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
    """Red team 39, R6 on a real hub: a hub user's slow Content-Length body is cut 408 at the service's front door,
    and the holder is audited (before, such bodies held the bodies' budget for ``body_timeout_s`` each, unnamed, and
    every other user's submit was answered 503 ``busy``). Real parts as the tests above; the request carries amy's
    own hub token, sent straight to the service's port (any local account can).

    Here at the end of this module: its audit check counts amy's body refusals that say "came too slowly", which no
    test above writes; theirs take the newest refusal of amy's (this one's would be it).
    """
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


def test_red18_r4_a_job_queued_on_a_group_its_owner_left_is_held_until_they_are_added_back(
        hub: Hub, users: dict[str, Account]) -> None:
    """Red team 18, R4 on a real hub: a job queued on a team (hub group) by a member whom an admin then
    removes from the group is held (``TeamMembership``, one ``team_left`` record), never starts charged to
    that team when its GPUs free, and starts once the admin adds the user back.

    Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
    OS accounts, ``jupyter-sched serve`` as root on PostgreSQL (``hub_poll_interval_s`` 1 s); requests with
    each user's own hub token; group changes through the hub's REST API as an admin makes them (the
    service reads ``groups`` from the user models its ``read:users`` token sees). What the service
    writes after a change is polled for with a deadline (CI's hub host is slower).

    Here, last in this module (session 41: its own module started a hub, ~20 s, for it alone): it needs the hub's
    GPUs free (no test above holds one) and it leaves eve in vision (no test after it).
    """
    amy, eve = users["amy"].name, users["eve"].name
    # eve joins amy's group vision before her first request (a request's groups are cached per token)
    joined = hub.api("POST", "groups/vision/users", {"users": [eve]})
    assert joined.status_code == 200, joined.text
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def submit(user: str, body: dict[str, Any]) -> str:
        made = httpx.post(f"{api}jobs", json=body, headers={"Authorization": f"token {tokens[user]}"}, timeout=60)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def job(job_id: str) -> dict[str, Any]:
        got = httpx.get(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert got.status_code == 200, got.text
        return dict(got.json())

    def left() -> list[dict[str, Any]]:
        rows = httpx.get(f"{api}audit", params={"limit": 500, "user": eve, "action": "team_left"}, timeout=60,
                         headers={"Authorization": f"token {tokens['carol']}"})
        assert rows.status_code == 200, rows.text
        return list(rows.json())

    full = submit(amy, {"gpus": hub.gpus, "team": "vision", "command": ["sleep", "300"], "name": "r4-full"})
    queued = ""
    try:
        hub.wait_for(lambda: job(full)["state"] == "running", 60, "amy's job to run")
        queued = submit(eve, {"gpus": 1, "team": "vision", "command": ["true"], "name": "r4-queued-vision"})
        removed = hub.api("DELETE", "groups/vision/users", {"users": [eve]})
        assert removed.status_code == 200, removed.text
        hub.wait_for(lambda: (job(queued).get("reason") or {}).get("code") == "TeamMembership", 60,
                     "eve's queued job to be held")
        reason = job(queued)["reason"]
        assert f"held: {eve} is no longer a member of team vision" in reason["message"], reason
        hub.wait_for(lambda: bool(left()), 60, "the team_left record")
        (row,) = left()
        assert row["details"]["held"] == [queued] and row["details"]["team"] == "vision", row

        stop = httpx.delete(f"{api}jobs/{full}", headers={"Authorization": f"token {tokens[amy]}"}, timeout=60)
        assert stop.status_code == 200, stop.text
        hub.wait_for(lambda: job(full)["state"] == "cancelled", 60, "amy's job to stop")
        end = time.monotonic() + 4  # several cycles and group checks (1 s each) with vision's GPUs free
        while time.monotonic() < end:
            assert job(queued)["state"] == "pending", job(queued)
            time.sleep(0.5)

        back = hub.api("POST", "groups/vision/users", {"users": [eve]})
        assert back.status_code == 200, back.text
        hub.wait_for(lambda: job(queued)["state"] in ("admitted", "running", "succeeded"), 60,
                     "the held job to start once eve is back in vision")
    finally:
        for job_id in (queued, full):
            if job_id:
                httpx.delete(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
