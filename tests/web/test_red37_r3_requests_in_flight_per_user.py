"""red37 R3: one hub user's sixteen request loops (``GET jobs/{id}/logs?limit=1048576``, or any cheap GET:
``me``, ``jobs/{id}``) held all eight quick request threads of ``jupyter-sched serve``; every other user's
``GET me`` went 0.03 -> 0.30 s and their submit->start 0.3 -> 2.3 s (max 7.6 s) while the loops ran, and each
1 MiB log answer was JSON-encoded on the event loop. On a shared service one user's requests now take at most
half the request threads at once (the rest wait in that user's own line on the loop, holding no thread; past
``QUICK_WAITING_PER_USER`` of them, 429 with Retry-After), and a log chunk is encoded on its request thread.

The real server of ``tests/web/conftest.py`` (per-user tokens) with ``per_user_in_flight`` switched on — the
one thing ``HubSchedApp`` sets differently (checked below) — so no hub starts; the held requests block on an
event in a spy around the service's reads (no timing)."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from tornado.httpclient import AsyncHTTPClient

from jupyter_sched.extension import web
from jupyter_sched.extension.app import SchedApp
from jupyter_sched.extension.hangup import StopsOnHangUp
from jupyter_sched.extension.per_user_lines import QUICK_WAITING_PER_USER
from jupyter_sched.hub.central import HubSchedApp
from jupyter_sched.services.models import GetJobLogsResponse

from .conftest import EVE_TOKEN, IVAN_TOKEN, wait_for

JOB = {"gpus": 0, "command": ["python", "-c", "print('hello')"]}


def test_red37_r3_the_hub_service_bounds_each_users_requests_and_an_embedded_server_does_not() -> None:
    assert HubSchedApp.per_user_in_flight and not SchedApp.per_user_in_flight


async def test_red37_r3_one_users_twenty_requests_hold_at_most_half_the_threads_and_anothers_me_is_answered(
        sched_app: Any, api: Any, jp_http_port: int, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    status, job = await api("POST", "jobs", JOB)
    assert status == 201, job
    monkeypatch.setattr(sched_app, "per_user_in_flight", True)  # as HubSchedApp
    jobs, release, lock = sched_app.services.jobs, threading.Event(), threading.Lock()
    held = {"now": 0, "most": 0, "started": 0}

    def spied(real: Any) -> Any:
        def read(*args: Any, **kwargs: Any) -> Any:
            with lock:
                held["now"] += 1
                held["started"] += 1
                held["most"] = max(held["most"], held["now"])
            try:
                assert release.wait(60)
                return real(*args, **kwargs)
            finally:
                with lock:
                    held["now"] -= 1
        return read

    monkeypatch.setattr(jobs, "logs", spied(jobs.logs))
    monkeypatch.setattr(jobs, "get", spied(jobs.get))
    bound = sched_app.request_threads // 2
    client = AsyncHTTPClient(force_instance=True, max_clients=32)  # jp_fetch's shared client sends 10 at once
    try:
        base = f"http://localhost:{jp_http_port}{jp_base_url}api/sched/jobs/{job['id']}"
        flood = [asyncio.ensure_future(client.fetch(url, headers={"Authorization": f"token {IVAN_TOKEN}"},
                                                    raise_error=False, request_timeout=120))
                 for url in [f"{base}/logs?limit=1048576"] * 10 + [base] * 10]

        async def all_in_line() -> bool:  # every one of ivan's requests has reached his gate (or a thread)
            return held["started"] > bound or (
                held["started"] == bound and sched_app._quick_lines.of.get("ivan", [None, 0])[1] >= 20)

        await wait_for(all_in_line, timeout_s=60)
        status, me = await api("GET", "me", token=EVE_TOKEN)  # answered by a free thread while ivan's are held
        assert status == 200 and me["user"] == "eve", me
        assert held["started"] == bound and held["most"] == bound, held  # the other 16 wait, holding no thread
    finally:
        release.set()
    try:
        answers = await asyncio.wait_for(asyncio.gather(*flood), 60)
    finally:
        client.close()
    assert [answer.code for answer in answers] == [200] * 20, [answer.body[:200] for answer in answers]
    assert held["most"] == bound and sched_app._quick_lines.of == {}, (held, sched_app._quick_lines.of)


async def test_red37_r3_past_the_waiting_line_one_users_next_request_is_429_with_retry_after(
        sched_app: Any, api: Any, jp_fetch: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sched_app, "per_user_in_flight", True)
    release = threading.Event()
    try:
        held = [asyncio.ensure_future(sched_app.quick_off_loop("ivan", release.wait, 60))
                for _ in range(QUICK_WAITING_PER_USER)]

        async def full() -> bool:
            return sched_app._quick_lines.of.get("ivan", [None, 0])[1] >= QUICK_WAITING_PER_USER

        await wait_for(full, timeout_s=30)
        response = await jp_fetch("api", "sched", "me", headers={"Authorization": f"token {IVAN_TOKEN}"},
                                  raise_error=False)
        assert response.code == 429 and response.headers["Retry-After"] == "1", response.body
        error = json.loads(response.body)["error"]
        assert error["code"] == "busy" and "requests are waiting for your earlier ones" in error["message"], error
        assert "retry in 1 s" in error["hint"], error
        status, me = await api("GET", "me", token=EVE_TOKEN)  # another user's line is their own
        assert status == 200 and me["user"] == "eve", me
    finally:
        release.set()
    await asyncio.wait_for(asyncio.gather(*held), 60)


async def test_red37_r3_a_log_chunk_is_encoded_on_its_request_thread_not_on_the_event_loop(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    status, job = await api("POST", "jobs", JOB)
    assert status == 201, job
    encoded_on: list[str] = []
    real = web._serialised

    def spied(answer: Any) -> bytes:
        if isinstance(answer, GetJobLogsResponse):
            encoded_on.append(threading.current_thread().name)
        return real(answer)

    monkeypatch.setattr(web, "_serialised", spied)
    status, chunk = await api("GET", f"jobs/{job['id']}/logs", params={"limit": "1048576"})
    assert status == 200 and "next_offset" in chunk, chunk
    assert len(encoded_on) == 1 and encoded_on[0].startswith("jupyter-sched-api"), encoded_on


async def test_red37_r3_a_service_calls_own_user_keyword_reaches_it_through_the_gate(
        sched_app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub's kernel report lists its caller's live leases with ``self.call(list_jobs, user=...)``: the gate
    takes its own user positionally, so that keyword still reaches the service call (and is not the gate's)."""
    monkeypatch.setattr(sched_app, "per_user_in_flight", True)
    seen = await sched_app.quick_off_loop("ivan", lambda **kwargs: kwargs, user="judy", state="running")
    assert seen == {"user": "judy", "state": "running"} and sched_app._quick_lines.of == {}


async def test_red37_r3_a_read_whose_client_hung_up_in_its_users_line_is_never_made(
        sched_app: Any, api: Any, jp_http_port: int, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    status, job = await api("POST", "jobs", JOB)
    assert status == 201, job
    monkeypatch.setattr(sched_app, "per_user_in_flight", True)
    jobs, release, lock = sched_app.services.jobs, threading.Event(), threading.Lock()
    started, closed = [0], []
    real_get = jobs.get

    def held_get(*args: Any, **kwargs: Any) -> Any:
        with lock:
            started[0] += 1
        assert release.wait(60)
        return real_get(*args, **kwargs)

    real_close = StopsOnHangUp.on_connection_close

    def seen_close(self: Any) -> None:
        closed.append(self.request.path)
        real_close(self)

    monkeypatch.setattr(jobs, "get", held_get)
    monkeypatch.setattr(StopsOnHangUp, "on_connection_close", seen_close)
    bound, path = sched_app.request_threads // 2, f"{jp_base_url}api/sched/jobs/{job['id']}"
    client = AsyncHTTPClient(force_instance=True, max_clients=32)
    try:
        held = [asyncio.ensure_future(client.fetch(f"http://localhost:{jp_http_port}{path}", raise_error=False,
                                                   headers={"Authorization": f"token {IVAN_TOKEN}"}))
                for _ in range(bound)]

        async def all_held() -> bool:
            return started[0] >= bound

        await wait_for(all_held, timeout_s=60)
        _, writer = await asyncio.open_connection("127.0.0.1", jp_http_port)
        writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: token {IVAN_TOKEN}\r\n\r\n".encode())
        await writer.drain()

        async def in_line() -> bool:
            return sched_app._quick_lines.of.get("ivan", [None, 0])[1] > bound

        await wait_for(in_line, timeout_s=60)
        writer.close()

        async def hung_up() -> bool:
            return bool(closed)

        await wait_for(hung_up, timeout_s=60)
        release.set()
        assert [answer.code for answer in await asyncio.wait_for(asyncio.gather(*held), 60)] == [200] * bound

        async def line_empty() -> bool:
            return not sched_app._quick_lines.of

        await wait_for(line_empty, timeout_s=60)
        assert started[0] == bound, started  # the hung-up request's read was never made
    finally:
        release.set()
        client.close()
