"""verify26 V11: a flood with a FRESH made-up token per request still 429'd an honest user's first request.

verify25 V4's fix remembered a token once the hub had refused it (``CallerKeys.refuse``), so a made-up token
sent again counted apart. A made-up token never sent before is unknown until the hub answers, so a flood of
new random tokens (they cost nothing) filled the share of "tokens not yet seen authenticated" of their host,
and the first request of every other account of that host (every account of a LocalProcessSpawner hub), and
after a service restart of every account, was answered 429 while the flood lasted.

Now the front door asks the hub who a credential not yet seen names BEFORE its request is counted
(:class:`~jupyter_sched.hub.front_door.GuardedHTTPServer`'s ``check_credential``; the service's check is
:mod:`jupyter_sched.hub.first_check`: HubAuth's cached token check, a cookie's signature, a job token's MAC),
a few checks at once and in turn: a real token's first request counts as its user, a made-up one as "refused
PEER", and the share of unchecked tokens is left to requests the hub could not be asked about.

Real parts: ``jupyter-sched serve`` as a subprocess after a fresh start (nobody's token seen), the hub double
speaking the hub's API (``GET /hub/api/user`` answers 403 to a token it does not know, 0.5 s later: a busy hub),
raw sockets.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

import pytest
from jupyterhub.services.auth import HubOAuth
from tornado.httputil import HTTPHeaders
from tornado.web import HTTPError, create_signed_value

from jupyter_sched.hub.fair_share import credential_of
from jupyter_sched.hub.first_check import credential_check
from jupyter_sched.hub.front_door import Unchecked
from jupyter_sched.services.job_tokens import JobTokens
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service, _free_port
from tests.hub.test_verify23_v5_pipelined_share import _hub, _me, ceiling_service


@pytest.fixture
def service() -> Iterator[Service]:
    """A freshly started service (as after a restart) with verify 26's ceiling of 30 (share 8), asking a hub that
    takes 0.5 s to refuse a made-up token (a hub busy with the flood)."""
    with ceiling_service(refuse_after_s=0.5) as running:
        yield running


def fresh_token_flood(service: Service | Any, connections: int, each: int, path: str = "/services/s/api/sched/me",
                      forwarded_for: str | None = None) -> list[socket.socket]:
    """``connections`` sockets to ``service.port``, each pipelining ``each`` ``GET path`` with a NEW random token per
    request (``X-Forwarded-For: forwarded_for`` when given, as the hub's proxy appends) and reading nothing (2 KiB
    receive buffer), as verify 26's ``flood1.py forged``."""
    socks = []
    xff = f"X-Forwarded-For: {forwarded_for}\r\n" if forwarded_for else ""
    for _ in range(connections):
        data = b"".join(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{service.port}\r\n"
                        f"Authorization: token {secrets.token_hex(16)}\r\n{xff}\r\n".encode() for _ in range(each))
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
        try:
            sock.connect(("127.0.0.1", service.port))
            sock.sendall(data)
        except OSError:
            pass
        socks.append(sock)
    return socks


def test_verify26_v11_fresh_made_up_tokens_do_not_429_any_honest_first_request_after_a_restart(service: Service) -> None:
    socks = fresh_token_flood(service, 30, 200)
    try:
        time.sleep(1.0)  # the flood holds the ceiling
        # every account's first request since the service started: none of their tokens was seen before
        answers = {user: _me(service, user) for user in ("alice", "bob", "carol", "dave", "erin")}
    finally:
        for sock in socks:
            sock.close()
    assert answers == dict.fromkeys(answers, 200), answers
    time.sleep(1.5)  # the front door's summary line: the flood was refused, not let in
    log = service.log.read_text()
    assert "credentials the hub names nobody by" in log, log[-3000:]


def test_verify26_v11_the_services_check_names_made_up_cookies_and_forged_job_tokens_nobody_without_the_hub() -> None:
    """The service's check (:func:`~jupyter_sched.hub.first_check.credential_check`) covers every kind of made-up
    credential, not only hub tokens: a cookie whose signature does not hold and a job token whose MAC does not
    verify name nobody without asking the hub; a real token, in a header or in the signed OAuth cookie, names its
    user through HubAuth's own check (and cache); a genuine job token is left to the service's job-token check;
    a hub that does not answer is no answer (the front door then pauses checking)."""
    with _hub() as api:
        auth = HubOAuth(api_url=api, api_token=TOKEN, oauth_client_id="service-jupyter-sched", cache_max_age=30)
        secret = b"s" * 32
        tokens = JobTokens(b"j" * 32)
        app = SimpleNamespace(identity_provider=SimpleNamespace(hub_auth=auth),
                              web_app=SimpleNamespace(settings={"cookie_secret": secret}))
        check = credential_check(app)
        services = SimpleNamespace(job_tokens=SimpleNamespace(tokens=tokens))

        def ask(headers: dict[str, str], target: str = "/services/s/api/sched/me") -> object:
            kind = credential_of(headers, target)[0]  # type: ignore[index]
            with patch("jupyter_sched.hub.oversize.sched_app", return_value=SimpleNamespace(services=services)):
                try:
                    return asyncio.run(check(kind, HTTPHeaders(headers), target))
                except Unchecked:
                    return "unchecked"

        def signed(value: str) -> str:
            return create_signed_value(secret, auth.cookie_name, value).decode()

        assert ask({"Authorization": "token token-of-alice"}) == "alice"
        assert ask({"Authorization": f"token {secrets.token_hex(16)}"}) is None  # the hub's 403
        assert ask({}, "/services/s/api/sched/me?token=token-of-bob") == "bob"
        assert ask({"Cookie": f"{auth.cookie_name}={signed('token-of-carol')}; jupyterhub-session-id=s1"}) == "carol"
        assert ask({"Cookie": f"{auth.cookie_name}={signed(secrets.token_hex(16))}"}) is None
        with patch.object(HubOAuth, "user_for_token", side_effect=AssertionError("asked the hub")):
            assert ask({"Cookie": f"{auth.cookie_name}={secrets.token_hex(40)}"}) is None  # forged signature
            assert ask({"Cookie": "_xsrf=abc; other=1"}) is None  # no hub cookie at all
            forged = f"jsjob1.{secrets.token_hex(8)}.1.{'A' * 43}"
            assert ask({"Authorization": f"token {forged}"}) is None
            assert ask({"Authorization": f"token {tokens.mint('job-1', 1)}"}) == "unchecked"
    down = HubOAuth(api_url=f"http://127.0.0.1:{_free_port()}/hub/api", api_token=TOKEN,
                    oauth_client_id="service-jupyter-sched")
    app.identity_provider.hub_auth = down
    with pytest.raises(HTTPError):  # HubAuth's "Failed to connect to Hub API": no answer, not "nobody"
        asyncio.run(check("token", HTTPHeaders({"Authorization": "token token-of-alice"}), "/x"))
