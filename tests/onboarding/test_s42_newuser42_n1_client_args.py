"""newuser42 N1, in-process: the Python client's arguments are checked at the call, nothing sent, and its
``since``/``until`` read as the CLI's ``--since`` reads them.

``submit("echo hi")`` said "dictionary update sequence element #0 has length 1; 2 is required";
``cancel(None)`` asked the server for the job 'None'; ``usage(since="2026-12-01")`` was refused where
``jupyter-sched usage --since 2026-12-01`` took it as the reader's midnight. The transport here is
httpx's MockTransport only to prove that no request leaves (it records what would be sent; no answer of
it is read): the keyword forms and ``wait`` against the real server are in
tests/web/test_s42_newuser42_n1_client.py.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from datetime import date, datetime, timezone
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.admin_views import _when
from jupyter_sched.cli.local_when import LocalWhen, in_zone
from jupyter_sched.client import SchedClient
from jupyter_sched.client.aio import AsyncSchedClient
from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.local_zone import caller_zone
from jupyter_sched.client.when import when_param
from jupyter_sched.errors import ValidationError

CONN = Connection(url="http://127.0.0.1:9/", token="t")


@pytest.fixture
def sent() -> list[httpx.Request]:
    return []


@pytest.fixture
def client(sent: list[httpx.Request]) -> SchedClient:
    def record(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(500)

    return SchedClient(CONN, transport=httpx.MockTransport(record))


WRONG: list[tuple[str, Callable[[SchedClient], Any], type[Exception], tuple[str, ...]]] = [
    ("string body", lambda c: c.submit("echo hi"), TypeError,  # type: ignore[arg-type]
     ("body must be a dict", "got str 'echo hi'", 'submit(command=["python", "train.py"], gpus=1)')),
    ("body and keywords", lambda c: c.submit({"command": ["x"]}, gpus=2, name="a"), TypeError,
     ("not both", "a body and gpus=, name=")),
    ("nothing", lambda c: c.submit(), TypeError, ("submit() needs the request",)),
    ("command line as text", lambda c: c.submit(command="python train.py", gpus=1), TypeError,
     ("command must be a list", "['python', 'train.py']", "shlex.split")),
    ("lease body text", lambda c: c.request_lease("2"), TypeError, ("body must be a dict", "request_lease(gpus=1")),  # type: ignore[arg-type]
    ("lease both", lambda c: c.request_lease({"gpus": 1}, gpus=2), TypeError, ("not both", "gpus=")),
    ("cancel None", lambda c: c.cancel(None), TypeError, ("job_id must be a job's id or name", "NoneType None")),  # type: ignore[arg-type]
    ("job int", lambda c: c.job(3), TypeError, ("job_id must be", "got int 3")),  # type: ignore[arg-type]
    ("job empty", lambda c: c.job(" "), ValidationError, ("job_id is empty",)),
    ("release None", lambda c: c.release_lease(None), TypeError, ("lease_id must be a lease id", "NoneType")),  # type: ignore[arg-type]
    ("wait None", lambda c: c.wait(None), TypeError, ("job must be a job's id or name", "NoneType")),  # type: ignore[arg-type]
    ("wait negative", lambda c: c.wait("j-1", timeout=-1), ValidationError, ("timeout must be 0 or more",)),
    ("wait no duration", lambda c: c.wait("j-1", timeout="soon"), ValidationError, ("timeout",)),
    ("usage since number", lambda c: c.usage(since=20261201), TypeError, ("since must be a date or time",)),
    ("usage since words", lambda c: c.usage(since="last tuesday"), ValidationError, ("since:", "is no date or time")),
    ("audit until no day", lambda c: c.audit(until="2026-02-30"), ValidationError, ("no calendar date",)),
]


@pytest.mark.parametrize(("call", "error", "words"), [case[1:] for case in WRONG], ids=[case[0] for case in WRONG])
def test_newuser42_N1_a_wrong_argument_is_refused_at_the_call_naming_it_nothing_sent(
        client: SchedClient, sent: list[httpx.Request], call: Callable[[SchedClient], Any], error: type[Exception],
        words: tuple[str, ...]) -> None:
    with pytest.raises(error) as raised:
        call(client)
    text = str(raised.value) if not isinstance(raised.value, ValidationError) else raised.value.message
    for word in words:
        assert word in text, text
    if isinstance(raised.value, ValidationError) and raised.value.field:
        assert raised.value.field in ("job_id", "since", "until", "timeout")
    assert sent == []  # refused here: the server never saw it


def test_newuser42_N1_the_async_client_refuses_the_same_at_the_call() -> None:
    asyncio.run(_async_refusals())


async def _async_refusals() -> None:
    seen: list[httpx.Request] = []

    def record(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(500)

    client = AsyncSchedClient(CONN, transport=httpx.MockTransport(record))
    try:
        with pytest.raises(TypeError, match="body must be a dict"):
            await client.submit("echo hi")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="not both"):
            await client.request_lease({"gpus": 1}, gpus=1)
        with pytest.raises(TypeError, match="job_id must be"):
            await client.cancel(None)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="job must be"):
            await client.wait(None)  # type: ignore[arg-type]
        with pytest.raises(ValidationError, match="is no date or time"):
            await client.usage(since="last tuesday")
    finally:
        await client.aclose()
    assert seen == []


@pytest.mark.parametrize("zone", ["America/Los_Angeles", "Asia/Kolkata", "UTC"])
@pytest.mark.parametrize("typed", ["2026-12-01", "2026-12-01 09:30", "2026-12-01T09:30:00+02:00", "2026-12-01T09:30Z"])
def test_newuser42_N1_since_is_read_as_the_clis_since(monkeypatch: pytest.MonkeyPatch, zone: str, typed: str) -> None:
    monkeypatch.setenv("TZ", zone)
    cli = _when(typed)  # the CLI's option type, then resolved in the reader's zone as its main does
    cli_sent = in_zone(cli, caller_zone()) if isinstance(cli, LocalWhen) else cli
    assert when_param(typed, "since") == cli_sent
    if typed == "2026-12-01":  # the reader's midnight, not UTC's (the CLI's README example)
        expected = {"America/Los_Angeles": "2026-12-01T00:00:00-08:00", "Asia/Kolkata": "2026-12-01T00:00:00+05:30",
                    "UTC": "2026-12-01T00:00:00Z"}[zone]
        assert cli_sent == expected
        assert when_param(date(2026, 12, 1), "since") == expected  # a date object: the same midnight
        assert when_param(datetime(2026, 12, 1), "since") == expected  # a naive datetime: the reader's
    assert when_param(datetime(2026, 12, 1, 8, tzinfo=timezone.utc), "until") == "2026-12-01T08:00:00Z"


def test_newuser42_N1_the_clis_since_keeps_its_refusals() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="no calendar date"):
        _when("2026-02-30")
    with pytest.raises(argparse.ArgumentTypeError, match="is no date or time"):
        _when("12:30")
    ago = _when("7d")
    assert isinstance(ago, str) and not isinstance(ago, LocalWhen) and ago.endswith("Z")


def test_verify42_v1_a_time_that_is_none_says_its_fix_once() -> None:
    from jupyter_sched.client.when import when_param

    with pytest.raises(ValidationError) as refused:
        when_param("bogus", "since")
    said = str(refused.value)
    assert refused.value.message == "since: 'bogus' is no date or time", refused.value.message
    assert said.count("write a date, e.g. 2026-12-01") == 1, said
