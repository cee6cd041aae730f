"""Verify 24, V1: made-up job tokens each took a share of the front door's body budget.

Red team 24's R1 fix reserves each unfinished body against ``c.FrontDoor.max_body_bytes_held`` and
a caller's share of it (a quarter). A credential not yet seen authenticated counts as "unproven
from its address" — except a job-shaped token (``jsjob1.…``), which was keyed by its own digest: on a
real hub, 16 connections with made-up job tokens through the proxy (no account) held all 256 MiB,
and every user's POST/PUT was answered 503 "busy" for as long as they were held. Now a job token
leaves its address's unproven share only once it passed the job-token check (it then counts as its
job's owner: verify 25, V2), and the rest of the budget stays for callers who authenticated.

Real parts: the front door on a real TCP port in front of a small tornado application that tells
the front door who a token authenticated as (as the hub's identity provider and the job-token
check do); raw sockets that send half a body and wait.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest

from jupyter_sched.hub.fair_share import CallerKeys, credential_digest

from .test_red20_r1_chunked import _answer
from .test_red24_r1_body_budget import HELD, USERS, BudgetDoor, half_body, reserved, status_and_error

PROVEN_JOB = "token jsjob1.j-real.1.checked"


@pytest.fixture
def door() -> Iterator[BudgetDoor]:
    running = BudgetDoor()
    try:
        for token in USERS:  # each user's token authenticates once (as red team 24 R1's test does)
            assert httpx.post(running.url, content=b"{}", headers={"Authorization": token}, timeout=30).status_code == 200
        yield running
    finally:
        running.stop()


def test_verify24_v1_made_up_job_tokens_share_their_address_and_leave_the_budget_to_others(door: BudgetDoor) -> None:
    held: list[socket.socket] = []
    try:
        # three made-up job tokens from one address, each with a large half-sent body
        held.append(half_body(door, "token jsjob1.made-up-1", 90_000, 50_000))
        reserved(door, 90_000)  # its head read before the next ones arrive
        for fake in ("token jsjob1.made-up-2", "token jsjob1.made-up-3"):
            with half_body(door, fake, 90_000, 1000) as sock:
                sock.shutdown(socket.SHUT_WR)
                head, error = status_and_error(_answer(sock, 10))
            assert head.startswith(b"HTTP/1.1 503"), head  # one share between them, not one each
            # the share of tokens not yet authenticated, said as theirs, not "you already have" (verify 25, V1)
            assert "whose tokens are not yet authenticated holds" in error["message"], error
        # a user who authenticated still gets a large body in (was 503: the made-up tokens held the budget)
        answer = httpx.post(door.url, content=b"x" * 90_000, headers={"Authorization": "token dan"}, timeout=30)
        assert answer.status_code == 200, answer.text
        assert door.guarded.bodies.held <= HELD
    finally:
        for sock in held:
            sock.close()


def test_verify24_v1_only_a_job_token_that_passed_its_check_leaves_the_unproven_share() -> None:
    keys = CallerKeys()
    real, fake = (credential_digest({"Authorization": t}, "/x") for t in (PROVEN_JOB, "token jsjob1.made-up"))
    assert keys.key(real, "10.0.0.1") == keys.key(fake, "10.0.0.1") == "unproven 10.0.0.1"
    keys.learn(real[1], "amy")  # type: ignore[index]  # checked: its job's owner (verify 25, V2)
    assert keys.key(real, "10.0.0.1") == "user amy" and keys.key(fake, "10.0.0.1") == "unproven 10.0.0.1"
