"""Red team 23, R2 (issue 20; security: needs no token): answers nobody reads.

A caller sent whole requests (pipelined, for a 540 KB static file anyone may fetch) on connections
with a 2 KiB receive buffer and never read the answers. Tornado reads a connection's next request only
once the last answer is written, and the front door never cut a connection "being answered": thirty
such connections filled a ceiling of thirty, and every other user's new connection was refused (the
hub's proxy answered 503) for as long as the caller liked.

Now an answer its caller does not read is cut after ``c.FrontDoor.answer_timeout_s``, and at the
ceiling the longest-stalled answer is cut before a newcomer is refused
(:mod:`jupyter_sched.hub.stalled_answers`). Real parts: ``jupyter-sched serve`` as a subprocess
(tests/hub/test_red17_front_door.py's service), real TCP sockets; the bookkeeping's rules on numbers.
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator

import pytest

from jupyter_sched.hub.stalled_answers import MIN_ANSWER_RATE, StalledAnswers
from tests.accounts import shared_dir
from tests.hub.test_red17_front_door import Service

STATIC = "/services/s/static/style/bootstrap.min.css.map"  # jupyter_server's, 540 KB, served without a token


def _unread(service: Service, pipelined: int = 6) -> socket.socket:
    """A connection that asks for ``pipelined`` answers larger than any socket buffer and reads none."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect(("127.0.0.1", service.port))
    sock.sendall(f"GET {STATIC} HTTP/1.1\r\nHost: 127.0.0.1:{service.port}\r\n\r\n".encode() * pipelined)
    return sock


def _held(service: Service, socks: list[socket.socket]) -> int:
    """How many of ``socks`` the service still holds open (its side ESTABLISHED, as ``ss`` lists it).
    Reading the client side cannot tell: its buffer holds answer bytes, and reading would un-stall it."""
    ours = {sock.getsockname()[1] for sock in socks}
    listed = subprocess.run(["ss", "-tnH", "state", "established", f"( sport = :{service.port} )"],
                            capture_output=True, text=True, check=True).stdout
    return sum(1 for line in listed.splitlines() if line.strip() and int(line.split()[-1].rsplit(":", 1)[1]) in ours)


@pytest.fixture()
def folder() -> Iterator[object]:
    with shared_dir() as path:
        yield path


def test_red23_r2_an_answer_nobody_reads_is_cut_after_the_answer_timeout(folder: object) -> None:
    service = Service(folder, "--FrontDoor.answer_timeout_s=3", "--FrontDoor.log_interval_s=1")  # type: ignore[arg-type]
    try:
        socks = [_unread(service) for _ in range(3)]
        time.sleep(1.0)
        assert _held(service, socks) == 3, "cut before its caller had a chance to read"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and _held(service, socks):
            time.sleep(0.5)
        assert _held(service, socks) == 0, "answers nobody read were still held 20 s later"
        assert service.get_api().status_code == 200
        time.sleep(1.5)
        assert "an answer its caller did not read for 3 s" in service.log.read_text()
        for sock in socks:
            sock.close()
    finally:
        service.stop()


def _a_full_ceiling_lets_a_bystander_in(folder: object, unread_for_s: float) -> str:
    """A service with a ceiling of 16 and the answer timeout off (only the ceiling's rules can let anyone
    in), 16 connections whose answers nobody reads, ``unread_for_s`` later three requests of another
    caller: each must be answered 200. Returns the service's log."""
    service = Service(folder, "--FrontDoor.answer_timeout_s=0", "--FrontDoor.max_connections=16",  # type: ignore[arg-type]
                      "--FrontDoor.log_interval_s=1")
    try:
        socks = [_unread(service) for _ in range(16)]
        time.sleep(unread_for_s)
        answers = [service.get_api().status_code for _ in range(3)]
        assert answers == [200, 200, 200], answers
        time.sleep(1.5)  # the front door's summary line
        for sock in socks:
            sock.close()
        return service.log.read_text()
    finally:
        service.stop()


def test_red23_r2_at_the_ceiling_unread_answers_are_cut_before_another_user_is_refused(folder: object) -> None:
    log = _a_full_ceiling_lets_a_bystander_in(folder, 3.5)  # stalled past EVICTABLE_AFTER_S
    # which rule cut them depends on timing: an unread connection between two pipelined answers waits
    # for its next request (the oldest-waiting rule), else it is the answer read least; since verify 23 V5
    # the one caller (this address) is also held to its share of the pressed ceiling, which may act first
    assert "closed at the ceiling" in log or "refused 429: a caller over c.FrontDoor.max_connections_per_user" in log


def test_verify23_v1_young_unread_answers_do_not_keep_a_newcomer_out(folder: object) -> None:
    """Verify 23, V1: a caller that replaced its unread connections before they were 2 s old (the
    longest-stalled rule's minimum) kept one newcomer in six out. At the ceiling any answer with bytes
    waiting on its caller is now cut before a newcomer is refused."""
    _a_full_ceiling_lets_a_bystander_in(folder, 0.5)  # younger than EVICTABLE_AFTER_S


def test_red23_r2_a_slow_reader_is_not_stalled_and_a_drained_answer_forgets_its_count() -> None:
    stalls = StalledAnswers(timeout_s=10)
    stalls.observe("slow", unsent=500_000, written=0, now=0.0)
    stalls.observe("deaf", unsent=500_000, written=0, now=0.0)
    for second in range(1, 31):  # the slow caller reads twice the minimum rate; the deaf one nothing
        stalls.observe("slow", unsent=500_000, written=2 * MIN_ANSWER_RATE * second, now=float(second))
        stalls.observe("deaf", unsent=500_000, written=0, now=float(second))
        if second == 12:
            assert stalls.overdue(12.0) == ["deaf"]
    assert stalls.stalled_for("slow", 30.0) == 0.0
    assert stalls.stalled_for("deaf", 30.0) == 30.0
    assert stalls.most_stalled(30.0) == "deaf"
    stalls.observe("deaf", unsent=0, written=600_000, now=31.0)  # it read everything after all
    assert stalls.stalled_for("deaf", 31.0) == 0.0
    assert StalledAnswers(timeout_s=0).overdue(100.0) == []
