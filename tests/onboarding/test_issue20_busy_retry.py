"""Issue 20 (session 18's testers): a 429 with ``Retry-After`` is retried a bounded number of times.

The server answers a submit over ``max_submits_per_user_minute`` with 429 ``busy`` and a
``Retry-After`` in seconds (nothing done). The kernel's client and the CLI raised it at once; now
both wait it out and resend, at most three times, saying so (``server busy: retrying in 2 s
(1/3)``), and a 429 still refused after that — or one without ``Retry-After``, the pending cap — is
one line saying when to retry. Through the CLI's own HTTP (:class:`StdlibHttp` on a real socket
answering scripted bytes) and the async client (httpx's ``MockTransport``); no sleeping: the wait is
recorded.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Iterator

import httpx
import pytest

from jupyter_sched.cli.main import error_line
from jupyter_sched.client import SchedClient
from jupyter_sched.client.aio import AsyncSchedClient
from jupyter_sched.client.discovery import Connection
from jupyter_sched.errors import BusyError
from jupyter_sched.magics.core import _one_line

from .test_cli_http import ScriptedServer, send

RATE = {"error": {"code": "busy", "message": "ivan is submitting faster than 6 a minute, the most per user "
                                              "(c.SchedApp.max_submits_per_user_minute)",
                  "field": "max_submits_per_user_minute", "hint": "retry in 2 s",
                  "details": {"retry_after_s": 2, "limit_per_minute": 6}}}
CAP = {"error": {"code": "busy", "message": "ivan has 2 pending jobs; at most 2 per user "
                                             "(c.SchedApp.max_pending_jobs_per_user)",
                 "field": "max_pending_jobs_per_user", "hint": "wait for some to start or cancel them",
                 "details": {"pending": 2, "limit": 2}}}
JOB = {"id": "j-1", "state": "pending"}


def answer(status: int, body: object, *headers: str) -> bytes:
    data = json.dumps(body).encode()
    extra = "".join(f"{h}\r\n" for h in headers)
    return (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n{extra}\r\n"
            ).encode() + data


@pytest.fixture
def server() -> Iterator[Callable[..., ScriptedServer]]:
    started: list[ScriptedServer] = []

    def start(*raw: bytes) -> ScriptedServer:
        started.append(ScriptedServer([send(r) for r in raw]))
        return started[-1]

    yield start
    for s in started:
        s.close()


def client_of(url: str, said: list[str], slept: list[float]) -> SchedClient:
    return SchedClient(Connection(url.removesuffix("api/sched/"), token="t"), timeout_s=5,
                       notice=said.append, sleep=slept.append)


def test_issue20_busy_a_429_with_retry_after_is_sent_again_after_it_and_said(
        server: Callable[..., ScriptedServer]) -> None:
    """Failed before: the first 429 was raised."""
    busy = answer(429, RATE, "Retry-After: 2")
    scripted = server(busy, busy, answer(201, JOB))
    said: list[str] = []
    slept: list[float] = []
    with client_of(scripted.url, said, slept) as client:
        assert client.submit({"gpus": 1, "command": ["true"]}) == JOB
    assert said == ["server busy: retrying in 2 s (1/3)", "server busy: retrying in 2 s (2/3)"]
    assert slept == [2.0, 2.0] and len(scripted.requests) == 3
    assert all(r.startswith(b"POST /base/api/sched/jobs ") for r in scripted.requests)


def test_issue20_busy_past_the_retries_is_one_line_with_when_to_retry(server: Callable[..., ScriptedServer]) -> None:
    busy = answer(429, RATE, "Retry-After: 2")
    scripted = server(busy, busy, busy, busy, answer(201, JOB))
    said: list[str] = []
    slept: list[float] = []
    with client_of(scripted.url, said, slept) as client, pytest.raises(BusyError) as info:
        client.submit({"gpus": 1, "command": ["true"]})
    assert len(scripted.requests) == 4 and slept == [2.0] * 3, "three retries, never a fourth"
    assert said[-1] == "server busy: retrying in 2 s (3/3)"
    err = info.value
    assert err.message.endswith("(c.SchedApp.max_submits_per_user_minute) (still refused after 3 retries)")
    assert err.hint is not None and re.fullmatch(r"retry after \d\d:\d\d:\d\d UTC \(in 2 s\)", err.hint), err.hint
    line = error_line("submit", err)
    assert "\n" not in line and line.startswith("jupyter-sched submit: ivan is submitting faster") \
        and "still refused after 3 retries" in line and "retry after " in line, line
    magic = _one_line(err)
    assert "\n" not in magic and "Retry after " in magic, magic


@pytest.mark.parametrize(("raw", "hint"), [
    pytest.param(answer(429, CAP), "wait for some to start or cancel them",
                 id="the pending cap has no Retry-After: it lasts until work ends, raised at once"),
    pytest.param(answer(429, RATE, "Retry-After: 600"), "retry after ",
                 id="a wait longer than a minute is said, not waited"),
])
def test_issue20_busy_what_a_retry_cannot_fix_is_raised_at_once(server: Callable[..., ScriptedServer],
                                                                raw: bytes, hint: str) -> None:
    scripted = server(raw, answer(201, JOB))
    said: list[str] = []
    slept: list[float] = []
    with client_of(scripted.url, said, slept) as client, pytest.raises(BusyError) as info:
        client.submit({"gpus": 1, "command": ["true"]})
    assert len(scripted.requests) == 1 and said == [] and slept == []
    assert info.value.hint is not None and info.value.hint.startswith(hint), info.value.hint
    assert "still refused" not in info.value.message


def test_issue20_busy_the_async_client_retries_the_same_way() -> None:
    answers = [httpx.Response(429, json=RATE, headers={"Retry-After": "3"})] * 2 + [httpx.Response(201, json=JOB)]
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return answers[len(sent) - 1]

    said: list[str] = []
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    async def run() -> object:
        async with AsyncSchedClient(Connection("http://sched.test/"), transport=httpx.MockTransport(handler),
                                    notice=said.append, sleep=sleep) as client:
            return await client.submit({"gpus": 1, "command": ["true"]})

    assert asyncio.run(run()) == JOB
    assert said == ["server busy: retrying in 3 s (1/3)", "server busy: retrying in 3 s (2/3)"] and slept == [3.0, 3.0]


def test_issue20_busy_the_default_notice_is_a_line_on_stderr(server: Callable[..., ScriptedServer],
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    scripted = server(answer(429, RATE, "Retry-After: 0"), answer(201, JOB))
    with SchedClient(Connection(scripted.url.removesuffix("api/sched/"), token="t"), timeout_s=5) as client:
        assert client.submit({"gpus": 1, "command": ["true"]}) == JOB
    captured = capsys.readouterr()
    assert captured.err == "server busy: retrying in 0 s (1/3)\n" and captured.out == ""
