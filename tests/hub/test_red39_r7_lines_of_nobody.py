"""red39 R7 (LOW-MEDIUM): requests that name nobody wrote one or two service log lines each, unthrottled.

From any local process, no hub account needed: a foreign ``Host`` header (jupyter_server's host check, before any
handler), an unknown path under the service prefix, a malformed request line, a POST without ``_xsrf``, a made-up job
token — ~4.5 MB of service log a minute. red29 had throttled only the made-up hub token's two lines. Now every such
kind is written once a minute and the next one says how many were not written
(:class:`jupyter_sched.extension.request_log.Repeats`); a named user's lines are all written.

Real parts: ``jupyter-sched serve`` with the hub double (it names nobody by a made-up token), real sockets, its log.
"""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import httpx

from jupyter_sched.extension.request_log import REPEATS_EVERY_S, Repeats
from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub

ROUNDS = 25

KINDS = {  # what each request writes, by a piece of its line
    "foreign host": "Blocking request with non-local 'Host' evil.example",
    "unknown path": "404 GET /services/s/nothing/here (@",
    "job token": "-> 401: this job token is not valid here",
    "job token access": "401 GET /services/s/api/sched/me (job-token@",
    "no xsrf": "403 POST /services/s/api/sched/jobs (127.0.0.1): '_xsrf' argument missing",
    "malformed": "Malformed HTTP message from",
    "xsrf cookie": "Setting new xsrf cookie for",
}


def test_red39_r7_requests_that_name_nobody_write_each_kind_of_line_once_a_minute() -> None:
    with shared_dir("jsched-r39r7-") as shared, _hub() as api:
        folder = shared / "svc"
        folder.mkdir()
        service = Service(folder, hub_api=api, hub_token=TOKEN)
        try:
            statuses: set[int] = set()
            with httpx.Client(timeout=30) as client, httpx.Client(timeout=30, cookies={"c": "v"}) as with_cookie:
                for _ in range(ROUNDS):
                    statuses.add(client.get(service.base + "api/sched/me", headers={"Host": "evil.example"}).status_code)
                    statuses.add(client.get(service.base + "nothing/here").status_code)
                    statuses.add(client.get(service.base + "api/sched/me",
                                            headers={"Authorization": "token jsjob1.j-x.1.AAAA"}).status_code)
                    statuses.add(with_cookie.post(service.base + "api/sched/jobs", content=b"{}").status_code)
                    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
                        sock.sendall(b"BLAH\r\n\r\n")
                        sock.recv(100)
        finally:
            service.stop()
        log = Path(service.log).read_text(errors="replace").splitlines()
    assert statuses == {401, 403, 404}, statuses  # each was refused, as before
    counts = {kind: sum(piece in line for line in log) for kind, piece in KINDS.items()}
    assert all(count == 1 for count in counts.values()), counts  # were 25 each (the cookie: once per cookie-less request)


def test_red39_r7_the_line_after_a_minute_counts_the_ones_not_written() -> None:
    now = [500.0]
    written: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            written.append(record.getMessage())

    handler = Collect()
    handler.addFilter(Repeats(lambda: now[0]))
    logger = logging.getLogger("red39-r7-repeats")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    host = "Blocking request with non-local 'Host' evil.example (evil.example). If the server should be accessible …"
    try:
        for _ in range(30):
            logger.warning(host)
            logger.info("Malformed HTTP message from 127.0.0.1: Malformed HTTP request line")
            logger.warning("404 GET /x (127.0.0.1): no route")
            logger.warning("405 GET /x (127.0.0.1): method")
            logger.info("an honest line")
            now[0] += 1.0
        assert written[:5] == [host, "Malformed HTTP message from 127.0.0.1: Malformed HTTP request line",
                               "404 GET /x (127.0.0.1): no route", "405 GET /x (127.0.0.1): method", "an honest line"]
        assert written.count("an honest line") == 30 and len(written) == 4 + 30, written  # statuses apart, the rest kept
        now[0] += REPEATS_EVERY_S
        logger.warning(host)
        logger.warning("404 GET /x (127.0.0.1): no route")
        assert written[-2] == (f"{host} (and 29 more requests blocked for a Host header this server does not answer "
                               "to in the 90 s before, not written one by one)"), written[-2]
        assert written[-1].endswith("(and 29 more requests refused 404 before a handler named anyone in the 90 s "
                                    "before, not written one by one)"), written[-1]
        logger.error(host)  # another level: not this kind's line, written
        assert written[-1] == host
    finally:
        logger.removeHandler(handler)
