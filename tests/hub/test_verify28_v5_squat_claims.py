"""verify28 V5 / red28 R7: any user's token posted a squat report blaming another account, root or the service's
own uid, for minutes the service was serving (it answered that very request), 999,999,999 times — audited as
"it was held by account eve (uid 1023), not the service". What the service knows, it now checks: the report is
refused 400 naming the field (the handler audits it as a refusal, as every malformed report: verify26 V8's test)
when a holder is the service's own uid, when a refusal lies after the service began listening, or when the count
is more than its window could hold; and a row taken words the holder as the reporter's claim.

Real parts: :func:`~jupyter_sched.hub.squat_log.parse_squat_report` and :func:`~.squat_message` as the route calls
them, and a :class:`~jupyter_sched.hub.front_door.GuardedHTTPServer` on a real socket for when it began listening.
"""

from __future__ import annotations

import asyncio
import os
import socket
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest
import tornado.web

from jupyter_sched.errors import ValidationError
from jupyter_sched.hub.front_door import GuardedHTTPServer
from jupyter_sched.hub.refusals import _listening_since
from jupyter_sched.hub.squat_log import parse_squat_report, squat_message

NOW = datetime(2026, 12, 6, 1, 56, 53, tzinfo=timezone.utc)
UP = NOW - timedelta(minutes=20)  # the service began listening 20 minutes ago


def _report(uid: int | None, first: datetime, last: datetime, count: int) -> dict[str, Any]:
    return {"refusals": [{"holder_uid": uid, "address": "127.0.0.1:19905", "first_at": first.isoformat(),
                          "last_at": last.isoformat(), "count": count}]}


@pytest.mark.parametrize("uid,first,last,count,field", [
    (1023, NOW - timedelta(minutes=4), NOW, 5000, "last_at"),  # eve blamed while the service was up (red28 R7)
    (1023, UP - timedelta(minutes=4), UP + timedelta(minutes=1), 50, "last_at"),
    (os.geteuid(), UP - timedelta(minutes=4), UP - timedelta(minutes=3), 5, "holder_uid"),  # the service's own
    (1023, UP - timedelta(minutes=4), UP - timedelta(minutes=3), 999_999_999, "count"),  # 60 s cannot hold it
    (1023, UP - timedelta(seconds=2), UP - timedelta(seconds=2), 11, "count"),
])
def test_verify28_v5_a_squat_report_the_service_knows_false_is_refused_naming_the_field(
        uid: int, first: datetime, last: datetime, count: int, field: str) -> None:
    with pytest.raises(ValidationError) as refused:
        parse_squat_report(_report(uid, first, last, count), NOW, listening_since=UP,
                           own_uids={os.getuid(), os.geteuid()})
    assert refused.value.field == field, refused.value


def test_verify28_v5_a_credible_report_is_taken_and_worded_as_the_reporters_claim() -> None:
    held = parse_squat_report(_report(1023, UP - timedelta(minutes=4), UP - timedelta(seconds=1), 28), NOW,
                              listening_since=UP, own_uids={os.geteuid()})
    assert [(h.uid, h.count) for h in held] == [(1023, 28)]
    said = squat_message("mal", held[0], "eve", UP)
    assert said.startswith("mal's Jupyter server says it refused to send its token to the scheduler's address "
                           "127.0.0.1:19905 28 times from "), said
    assert ("it says the address was held by account eve (uid 1023), not the service (the reporting server's word; "
            "the service checked that the holder is not its own account and that its process listening since "
            f"{UP:%Y-%m-%d %H:%M:%S} UTC was not listening then; whether an earlier process of the service was, it "
            "cannot tell)") in said


def test_verify28_v5_the_route_knows_when_the_front_door_began_listening() -> None:
    """On an event loop of its own (``asyncio.run``): the server registers its socket on the current loop, and the
    loop an earlier test of this process left current may be closed ("Event loop is closed" under pytest-xdist,
    where another order of files runs in each process)."""

    async def check() -> None:
        server = GuardedHTTPServer(tornado.web.Application([]))
        sock = socket.socket()
        try:
            sock.bind(("127.0.0.1", 0))
            sock.setblocking(False)
            assert _listening_since({"serverapp": SimpleNamespace(http_server=server)}) is None
            before = datetime.now(timezone.utc) - timedelta(seconds=1)
            server.add_sockets([sock])
            since = _listening_since({"serverapp": SimpleNamespace(http_server=server)})
            assert since is not None and before <= since <= datetime.now(timezone.utc) + timedelta(seconds=1)
        finally:
            server.stop()
            sock.close()

    asyncio.run(check())
    assert _listening_since({}) is None
