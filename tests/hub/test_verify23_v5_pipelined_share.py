"""Verify 23, V5 (red team 23 R2's "per-user" half): one user's pipelined requests held the service.

A hub user with a token opened 30 connections (the ceiling, lowered to 30) and pipelined 200 small
``GET me`` on each without reading: the answers were small and got written, so none counted as unread
(R2), but every connection stayed "being answered" while its backlog lasted, and every other user was
refused for 15 to 20 s, unaudited.

Now a pipelined request is taken only once the caller has its earlier answers (bytes unacknowledged
in the kernel's send queue count), and while the ceiling is pressed one caller may have at most
``c.FrontDoor.max_connections_per_user`` connections being answered; beyond it a request is answered
429 from its head (audited once per user a minute). The caller is the hub user per request, so
JupyterHub's proxy, carrying many users on shared connections from one address, is not one caller
(:mod:`jupyter_sched.hub.fair_share`).

Real parts: ``jupyter-sched serve`` as a subprocess (tests/hub/test_red17_front_door.py's service)
asking the hub double (tests/hub/hub_double.py) on its own thread about tokens, real TCP sockets.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from tornado.httpserver import HTTPServer

from jupyter_sched.hub.fair_share import SHARE_SETTING, CallerKeys, FairShare, credential_digest, default_share
from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN, hub_app
from tests.hub.test_red17_front_door import Service, _free_port
from tests.hub.test_red23_r2_unread_answers import _held

USERS = ("alice", "bob", "carol", "dave", "erin")
TOKENS = {f"token-of-{name}": name for name in USERS}


@contextmanager
def _hub(refuse_after_s: float = 0.0) -> Iterator[str]:
    """The hub double on its own thread, knowing :data:`USERS` and their tokens: its API URL (``refuse_after_s``:
    seconds its token check takes to refuse a token it does not know)."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    port = _free_port()
    state: dict[str, Any] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        users = {name: {"": True} for name in USERS} | {"jupyter-sched": {}}  # the service token answers as a user
        app = hub_app(users, tokens={**TOKENS, TOKEN: "jupyter-sched"}, refuse_after_s=refuse_after_s)
        state["server"] = HTTPServer(app)
        state["server"].listen(port, "127.0.0.1")
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        yield f"http://127.0.0.1:{port}/hub/api"
    finally:
        loop.call_soon_threadsafe(state["server"].stop)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


@contextmanager
def ceiling_service(refuse_after_s: float = 0.0) -> Iterator[Service]:
    """A service with a ceiling of 30 (as verify 23's demo) and the default share (8), asking the hub double
    (``refuse_after_s``: seconds it takes to refuse a token it does not know)."""
    with shared_dir() as folder, _hub(refuse_after_s) as api:
        running = Service(folder, "--FrontDoor.max_connections=30", "--FrontDoor.log_interval_s=1",
                          "--FrontDoor.header_timeout_s=60", hub_api=api, hub_token=TOKEN)
        try:
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with ceiling_service() as running:
        yield running


def _me(service: Service, user: str, client: httpx.Client | None = None) -> int | str:
    """``user``'s ``GET me`` (a new connection unless ``client``): its status, or the failure's name."""
    try:
        answer = (client or httpx).get(service.base + "api/sched/me", headers={"Authorization": f"token token-of-{user}"},
                                       timeout=30)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    return answer.status_code


def _pipelining(service: Service, user: str | None, connections: int, each: int, path: str = "api/sched/me") -> list[socket.socket]:
    """``connections`` sockets (2 KiB receive buffer), each sending ``each`` pipelined ``GET path`` as
    ``user`` (None: no token) and reading nothing, as verify 23's ``v_trickle.py cycle 30 me … 200``."""
    auth = f"Authorization: token token-of-{user}\r\n" if user else ""
    request = f"GET /services/s/{path} HTTP/1.1\r\nHost: 127.0.0.1:{service.port}\r\n{auth}\r\n".encode()
    socks = []
    for _ in range(connections):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        try:
            sock.connect(("127.0.0.1", service.port))
            sock.sendall(request * each)
        except OSError:  # refused at the ceiling (the code before the fix)
            pass
        socks.append(sock)
    return socks


def _refusals(service: Service, user: str) -> list[dict[str, Any]]:
    with sqlite3.connect(service.log.parent / "store.sqlite") as db:
        rows = db.execute("SELECT details FROM events WHERE action = 'refused' AND user = ?", (user,)).fetchall()
    return [json.loads(details) for (details,) in rows]


def test_verify23_v5_one_users_pipelined_connections_at_the_ceiling_do_not_keep_another_user_out(service: Service) -> None:
    # fails before the fix: bob's new connections were reset at the ceiling while alice's backlog lasted
    assert _me(service, "alice") == 200  # alice's token authenticated once: from now on it counts as alice
    socks = _pipelining(service, "alice", 30, 200)
    try:
        answers = [_me(service, "bob") for _ in range(5)]
        held = _held(service, socks)
        assert answers == [200] * 5, answers
        assert held > 0, "alice's connections were all gone before bob asked: the test proved nothing"
    finally:
        for sock in socks:
            sock.close()
    time.sleep(1.5)  # the front door's summary line
    log = service.log.read_text()
    assert f"refused 429: a caller over {SHARE_SETTING}" in log or "closed at the ceiling" in log, log[-3000:]


def test_verify23_v5_over_the_share_is_a_429_naming_the_setting_audited_once(service: Service) -> None:
    # fails before the fix: nothing bounded one user's connections being answered, and nothing was audited
    assert _me(service, "erin") == 200
    before = len(_refusals(service, "erin"))
    socks = _pipelining(service, "erin", 30, 40)
    try:
        heads = []
        for sock in socks:  # read what each connection got first: a 200 (within the share) or the 429
            sock.settimeout(30)
            try:
                heads.append(sock.recv(4096))
            except OSError:
                heads.append(b"")
    finally:
        for sock in socks:
            sock.close()
    refused = [head for head in heads if head.startswith(b"HTTP/1.1 429")]
    assert refused, [head[:60] for head in heads]
    assert b"Retry-After: 2" in refused[0] and SHARE_SETTING.encode() in refused[0]
    assert b'"field": "connections"' in refused[0]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(_refusals(service, "erin")) == before:
        time.sleep(0.2)
    rows = _refusals(service, "erin")[before:]
    assert len(rows) == 1, rows  # once a minute per user, however many were refused
    assert rows[0]["status"] == 429 and rows[0]["field"] == "connections", rows[0]


def test_verify23_v5_a_user_on_one_keep_alive_connection_is_never_refused_while_the_ceiling_is_pressed(
        service: Service) -> None:
    socks = _pipelining(service, "alice", 30, 200)
    try:
        with httpx.Client() as client:  # one keep-alive connection, 50 requests one after another
            answers = [_me(service, "bob", client) for _ in range(50)]
    finally:
        for sock in socks:
            sock.close()
    assert answers == [200] * 50, answers


def test_verify23_v5_the_proxy_carrying_three_users_on_shared_connections_is_not_one_caller(service: Service) -> None:
    """JupyterHub's proxy: 12 keep-alive connections from one address (more than the share of 8),
    each carrying carol's, dave's and erin's requests in turn, while alice presses the ceiling. The
    lanes go turn by turn together, so each user has 4 requests in flight (within the share) and the
    proxy's address 12 (past it, were the address the caller)."""
    for user in ("carol", "dave", "erin"):
        assert _me(service, user) == 200
    socks = _pipelining(service, "alice", 30, 200)
    turns = threading.Barrier(12)

    def relay(lane: int) -> list[int | str]:
        answers: list[int | str] = []
        with httpx.Client(limits=httpx.Limits(max_connections=1)) as client:
            for turn in range(9):
                turns.wait(60)
                answers.append(_me(service, ("carol", "dave", "erin")[(lane + turn) % 3], client))
        return answers

    try:
        with ThreadPoolExecutor(12) as pool:
            answers = [status for lane in pool.map(relay, range(12)) for status in lane]
    finally:
        for sock in socks:
            sock.close()
    assert answers.count(200) == len(answers), [(i, a) for i, a in enumerate(answers) if a != 200] + [service.log.read_text()[-2500:]]


def test_verify23_v5_pipelined_small_answers_nobody_reads_are_cut_after_the_answer_timeout(tmp_path: Path) -> None:
    """R2's rule counted only bytes tornado still buffered: 300 small pipelined answers sat in the
    kernel's send queue, all "written", and the connection was never stalled (held until the idle timeout)."""
    with shared_dir() as folder:
        service = Service(folder, "--FrontDoor.answer_timeout_s=3", "--FrontDoor.header_timeout_s=120",
                          "--FrontDoor.log_interval_s=1")
        try:
            socks = _pipelining(service, None, 2, 3000, "api")
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and _held(service, socks):
                time.sleep(0.5)
            assert _held(service, socks) == 0, "pipelined answers nobody read were still held 30 s later"
            time.sleep(1.5)
            assert "an answer its caller did not read for 3 s, pipelined requests waiting" in service.log.read_text()
            for sock in socks:
                sock.close()
        finally:
            service.stop()


def test_verify23_v5_the_caller_is_the_user_per_request_never_the_proxy_address() -> None:
    keys = CallerKeys()
    amy, bob = (credential_digest({"Authorization": f"token {t}"}, "/x") for t in ("tok-amy", "tok-bob"))
    assert keys.key(amy, "127.0.0.1") == keys.key(bob, "127.0.0.1") == "unproven 127.0.0.1"  # not yet seen authenticated
    keys.learn(amy[1], "amy")  # type: ignore[index]
    keys.learn(bob[1], "bob")  # type: ignore[index]
    assert keys.key(amy, "127.0.0.1") == "user amy" and keys.key(bob, "127.0.0.1") == "user bob"
    assert keys.key(credential_digest({}, "/x?token=tok-amy"), "10.0.0.9") == "user amy"  # any connection, any address
    assert keys.key(credential_digest({"Authorization": "token made-up"}, "/x"), "127.0.0.1") == "unproven 127.0.0.1"
    assert keys.key(None, "127.0.0.1") == "address 127.0.0.1"  # no credential at all: its own share
    job = credential_digest({"Authorization": "token jsjob1.abc"}, "/x")
    assert keys.key(job, "127.0.0.1") == "unproven 127.0.0.1"  # a job token not yet checked (verify 24, V1)
    keys.learn(job[1], "amy")  # type: ignore[index]
    assert keys.key(job, "127.0.0.1") == "user amy"  # checked once: its job's owner (verify 25, V2)
    assert credential_digest({"Cookie": "jupyterhub-services=abc"}, "/x")[0] == "cookie"  # type: ignore[index]
    assert credential_digest({}, "/x") is None

    fair = FairShare(share=2, ceiling=10)
    for conn, who in (("p1", "user amy"), ("p2", "user bob"), ("p3", "user amy"), ("p4", "user bob")):
        fair.answering(conn, who)
    assert not fair.over("p5", "user amy", open_connections=7), "shares apply only from 75 % of the ceiling"
    assert fair.over("p5", "user amy", open_connections=8) and not fair.over("p5", "user carol", open_connections=8)
    assert fair.most_over() is None  # nobody is past the share
    fair.answering("p5", "user amy")
    assert fair.most_over() == "p5"  # amy's latest
    fair.done("p1")  # between two requests: still amy's connection, closed only after those she is answered on
    # (verify 24, V3: an idle connection of the hub proxy's pool carries whoever's request it sends next)
    assert fair.most_over(waiting={"p1"}) == "p5"
    assert fair.most_over(waiting={"p1"}, spare={"p3", "p5"}) == "p1"
    assert fair.most_over(waiting={"p1"}, spare={"p1", "p3", "p5"}) is None
    fair.forget("p1")
    assert fair.most_over() is None
    assert fair.to_audit("user amy", 0.0) == 1 and fair.to_audit("user amy", 30.0) is None
    assert fair.to_audit("user amy", 61.0) == 2  # the one counted meanwhile, and this one
    assert default_share(30) == 8 and default_share(1000) == 100


def test_verify23_v5_a_share_below_minus_one_is_refused_at_load_naming_the_setting_and_the_fix() -> None:
    from traitlets import TraitError

    from jupyter_sched.hub.front_door import FrontDoor

    with pytest.raises(TraitError, match=r"max_connections_per_user = -2: must be -1 \(off\).*Fix: set e\.g\. 16"):
        FrontDoor(max_connections_per_user=-2)
    assert FrontDoor(max_connections_per_user=-1).max_connections_per_user == -1
