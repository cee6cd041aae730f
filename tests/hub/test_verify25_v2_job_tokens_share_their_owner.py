"""Verify 25, V2: each checked job token had a share of the front door's body budget of its own.

Verify 24's V1 fix made a job token (``jsjob1.…``) a caller of its own once it passed the job-token
check. On a real hub one team member ran four zero-GPU jobs, had each job's token checked once (any
request on the progress route) and held a quarter of ``c.FrontDoor.max_body_bytes_held`` with each:
all 256 MiB, so every other user's writes (the admin's ``PUT quotas`` too) were answered 503 — and a
token kept its share after its run ended. Now a checked job token counts as its job's owner (the
user the job-token check names), so all of one user's jobs share that user's one share.

Real parts: the front door on a real TCP port in front of a small tornado application that tells
the front door who a token authenticated as, as the job-token check does (the job's owner) and the
hub's identity provider does (the user); raw sockets that send half a body and wait.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
import tornado.web

from jupyter_sched.hub import front_door
from jupyter_sched.hub.fair_share import CallerKeys, credential_digest
from jupyter_sched.hub.front_door import GuardedHTTPServer

from .test_red20_r1_chunked import _answer
from .test_red24_r1_body_budget import HELD, LIMIT, BudgetDoor, half_body, reserved, status_and_error

JOBS = {f"token jsjob1.j-mal-{n}.1.checked": "mal" for n in range(4)}
"""Four of mal's jobs' tokens: the job-token check names their owner, mal."""
TOKENS = {**JOBS, "token amy": "amy", "token mal": "mal"}


class _Owned(tornado.web.RequestHandler):
    def post(self) -> None:
        if user := TOKENS.get(self.request.headers.get("Authorization", "")):
            front_door.note_caller(self.request, user)  # as the job-token check / hub.identity do
        self.write({"received": len(self.request.body)})


class _JobDoor(BudgetDoor):
    def server(self, app: tornado.web.Application) -> GuardedHTTPServer:
        self.guarded = GuardedHTTPServer(tornado.web.Application([("/echo", _Owned)]), body_timeout=30.0,
                                         max_body_bytes=LIMIT, max_body_bytes_held=HELD)
        return self.guarded


@pytest.fixture
def door() -> Iterator[_JobDoor]:
    running = _JobDoor()
    try:
        for token in TOKENS:  # each token is checked once (a job's first progress report; a user's first call)
            assert httpx.post(running.url, content=b"{}", headers={"Authorization": token}, timeout=30).status_code == 200
        yield running
    finally:
        running.stop()


def test_verify25_v2_one_users_job_tokens_share_that_users_one_share(door: _JobDoor) -> None:
    held: list[socket.socket] = []
    tokens = list(JOBS)
    try:
        held.append(half_body(door, tokens[0], 90_000, 50_000))
        reserved(door, 90_000)  # its head read before the next ones arrive
        for token in tokens[1:]:
            with half_body(door, token, 90_000, 1000) as sock:
                sock.shutdown(socket.SHUT_WR)
                head, error = status_and_error(_answer(sock, 10))
            # failed before: each job token a caller of its own — taken, until the whole budget was held
            assert head.startswith(b"HTTP/1.1 503"), head
            assert "per caller" in error["message"], error
        # another user still gets a large body in (was 503: mal's jobs held the whole budget)
        answer = httpx.post(door.url, content=b"x" * 90_000, headers={"Authorization": "token amy"}, timeout=30)
        assert answer.status_code == 200, answer.text
        assert door.guarded.bodies.held <= HELD
    finally:
        for sock in held:
            sock.close()


def test_verify25_v2_a_checked_job_token_is_keyed_as_its_owner() -> None:
    keys = CallerKeys()
    job = credential_digest({"Authorization": next(iter(JOBS))}, "/x")
    assert job is not None and job[0] == "job"
    assert keys.key(job, "10.0.0.1") == "unproven 10.0.0.1"  # not yet checked (verify 24, V1)
    keys.learn(job[1], "mal")  # what the front door does once the job-token check named the owner
    assert keys.key(job, "10.0.0.1") == "user mal"
