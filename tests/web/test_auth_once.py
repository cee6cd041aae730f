"""A polling session's token and login cookie are proved once, then recognised while the proof holds (issue 17).

A real jupyter_server with jupyter_sched over jupyter_server's own token ``IdentityProvider`` (the
embedded mode's): the provider's ``get_user`` is counted, so each test sees which requests it
decided and which the server recognised from an identical earlier request
(:mod:`jupyter_sched.extension.auth_once`), and that a changed token, a rotated cookie secret, an
expired cookie, a ``?token=`` argument or another provider always reach the provider.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from tornado import httputil, web

from jupyter_sched.extension import auth_once

from .conftest import API, IVAN_TOKEN, ProofClock, server_config

# proofs age by the test's clock (tests/web/conftest.py ProofClock): a count never depends on how fast a
# loaded machine answers
pytestmark = pytest.mark.usefixtures("sched_app", "proof_clock")


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    config = server_config(tmp_path)
    del config["ServerApp"]["identity_provider_class"]  # jupyter_server's own token provider
    return config


@pytest.fixture
def proofs(jp_serverapp: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Paths of the requests the server's identity provider itself decided. The server's log
    shows no debug records here, as with ``--log-level`` INFO and up (this suite's log capture
    would show them: see :func:`test_with_debug_logging_shown_every_request_reaches_the_provider`)."""
    provider = jp_serverapp.identity_provider
    monkeypatch.setattr(provider.log, "level", logging.INFO)
    provider.log.manager._clear_cache()
    calls: list[str] = []
    real = provider.get_user

    def counting(handler: Any) -> Any:
        calls.append(handler.request.path)
        return real(handler)

    monkeypatch.setattr(provider, "get_user", counting)
    return calls


async def get(jp_fetch: Any, route: str = "me", *, cookie: str | None = None, token: str | None = IVAN_TOKEN,
              params: dict[str, str] | None = None, host: str | None = None) -> tuple[int, str | None]:
    """GET ``api/sched/<route>``: (status, the login cookie the answer set as ``name=value``, or None)."""
    headers = {"Authorization": f"token {token}" if token else ""}
    if cookie:
        headers["Cookie"] = cookie
    if host:
        headers["Host"] = host
    answer = await jp_fetch(*API.split("/"), route, headers=headers, params=params, raise_error=False)
    set_cookie = [c.split(";", 1)[0] for c in answer.headers.get_list("Set-Cookie") if c.startswith("username-")]
    return answer.code, (set_cookie[0] if set_cookie else None)


async def session_cookie(jp_fetch: Any) -> str:
    """The login cookie the server sets on a token request without one (as httpx or a browser keeps it)."""
    status, cookie = await get(jp_fetch)
    assert status == 200 and cookie, "a token request without a cookie is given one"
    return cookie


async def test_repeated_token_and_cookie_requests_are_proved_once(jp_fetch: Any, proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    assert len(proofs) == 1
    for route in ("me", "config", "inventory", "jobs", "queue", "me"):
        status, set_cookie = await get(jp_fetch, route, cookie=cookie)
        assert status == 200, route
        assert set_cookie is None, "the cookie names the token's user: nothing to set again"
    assert len(proofs) == 2, f"one proof of the token and cookie, then recognised: {proofs}"


async def test_issue17_a_recognised_request_parses_no_cookie(jp_fetch: Any, proofs: list[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    cookie = await session_cookie(jp_fetch)
    assert (await get(jp_fetch, cookie=cookie))[0] == 200  # proved: remembered from here
    parsed: list[str] = []
    real = httputil.HTTPServerRequest.cookies

    def counted(request: Any) -> Any:
        parsed.append(request.path)
        return real.fget(request)

    monkeypatch.setattr(httputil.HTTPServerRequest, "cookies", property(counted))
    for route in ("me", "jobs", "queue"):
        assert (await get(jp_fetch, route, cookie=cookie))[0] == 200
    assert len(proofs) == 2 and parsed == [], f"recognised by the headers' text, no cookie parsed: {parsed}"
    # the same login cookie beside another cookie: other header text, proved on its own
    assert (await get(jp_fetch, cookie=f"{cookie}; theme=dark"))[0] == 200
    assert len(proofs) == 3 and parsed, "the provider parsed this request's cookies itself"


async def post_empty(jp_fetch: Any, *, cookie: str | None, token: str | None, params: dict[str, str] | None = None) -> int:
    """Status of ``POST api/sched/jobs`` with an empty body: 400 once authenticated with a token
    (no XSRF check for those), 403 when only a cookie authenticated it (no XSRF token sent)."""
    headers = {"Authorization": f"token {token}" if token else ""}
    if cookie:
        headers["Cookie"] = cookie
    answer = await jp_fetch(*API.split("/"), "jobs", method="POST", body=b"", headers=headers, raise_error=False,
                            allow_nonstandard_methods=True, params=params)
    return int(answer.code)


async def test_a_changed_token_is_decided_by_the_provider_at_once(jp_fetch: Any, jp_serverapp: Any,
                                                                  proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    assert (await get(jp_fetch, cookie=cookie))[0] == 200
    assert await post_empty(jp_fetch, cookie=cookie, token=IVAN_TOKEN) == 400
    assert len(proofs) == 2
    jp_serverapp.identity_provider.token = "a-new-token"
    assert (await get(jp_fetch, cookie=cookie))[0] == 200, "the login cookie alone still lets a GET in (jupyter's rule)"
    assert len(proofs) == 3, "the remembered headers went to the provider on the very next request"
    assert await post_empty(jp_fetch, cookie=cookie, token=IVAN_TOKEN) == 403, \
        "the old token no longer counts: a cookie-only POST without XSRF is refused"
    assert (await get(jp_fetch, token=IVAN_TOKEN))[0] == 403, "without the cookie the old token lets nothing in"
    assert await post_empty(jp_fetch, cookie=cookie, token="a-new-token") == 400


async def test_a_rotated_cookie_secret_sends_the_same_headers_to_the_provider(jp_fetch: Any, jp_serverapp: Any,
                                                                               proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    await get(jp_fetch, cookie=cookie)
    await get(jp_fetch, cookie=cookie)
    assert len(proofs) == 2
    jp_serverapp.web_app.settings["cookie_secret"] = b"a-rotated-secret-of-this-server"
    status, set_cookie = await get(jp_fetch, cookie=cookie)
    assert len(proofs) == 3, "decided by the provider again"
    assert status == 200 and set_cookie is not None and set_cookie != cookie, \
        "the old cookie no longer verifies: the provider gave the token a new session"


async def test_an_expired_or_forged_cookie_is_never_recognised(jp_fetch: Any, jp_serverapp: Any, proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    name, value = cookie.split("=", 1)
    secret = jp_serverapp.web_app.settings["cookie_secret"]
    plain = web.decode_signed_value(secret, name, value.strip('"'))
    assert plain is not None
    old = web.create_signed_value(secret, name, plain, clock=lambda: __import__("time").time() - 32 * 86400)
    stale = f'{name}="{old.decode()}"'
    for _ in range(3):
        status, set_cookie = await get(jp_fetch, cookie=stale)
        assert status == 200 and set_cookie is not None, "an expired cookie names nobody: a new session each time"
    assert len(proofs) == 1 + 3
    forged = web.create_signed_value(b"another-servers-secret", name, plain).decode()  # fresh, wrong signature
    for _ in range(3):
        status, set_cookie = await get(jp_fetch, cookie=f'{name}="{forged}"')
        assert status == 200 and set_cookie is not None, "a cookie that does not verify names nobody, each time"
    assert len(proofs) == 1 + 3 + 3


async def test_a_proof_ends_with_its_cookie_max_age(jp_fetch: Any, jp_serverapp: Any, proofs: list[str],
                                                   proof_clock: ProofClock, monkeypatch: pytest.MonkeyPatch) -> None:
    """By the proofs' clock, not a 1.5 s cookie and a sleep (session 21: three requests on a loaded machine took
    longer than the cookie lived). Tornado's own check keeps the real clock: the cookie stays valid to it."""
    monkeypatch.setattr(auth_once, "KEEP_S", 10 * 86400.0)  # only the cookie's max age can end the proof here
    jp_serverapp.identity_provider.get_secure_cookie_kwargs = {"max_age_days": 2}
    cookie = await session_cookie(jp_fetch)
    await get(jp_fetch, cookie=cookie)
    status, set_cookie = await get(jp_fetch, cookie=cookie)
    assert status == 200 and set_cookie is None and len(proofs) == 2
    proof_clock.advance(2 * 86400 - 60)  # a minute before the cookie's max age: still recognised
    assert (await get(jp_fetch, cookie=cookie))[0] == 200 and len(proofs) == 2
    proof_clock.advance(120)  # a minute past it
    status, _ = await get(jp_fetch, cookie=cookie)
    assert len(proofs) == 3, "past the cookie's max age the provider decides again"
    assert status == 200


async def test_a_proof_is_used_for_keep_s_at_most(jp_fetch: Any, proofs: list[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(auth_once, "KEEP_S", 0.0)
    cookie = await session_cookie(jp_fetch)
    for _ in range(3):
        assert (await get(jp_fetch, cookie=cookie))[0] == 200
    assert len(proofs) == 1 + 3


async def test_a_token_argument_or_another_cookie_always_reaches_the_provider(jp_fetch: Any,
                                                                                proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    await get(jp_fetch, cookie=cookie)
    assert len(proofs) == 2
    for _ in range(2):
        assert (await get(jp_fetch, cookie=cookie, token=None, params={"token": IVAN_TOKEN}))[0] == 200
    assert len(proofs) == 4, "?token= is read before the header: the provider decides"
    assert await post_empty(jp_fetch, cookie=cookie, token=IVAN_TOKEN) == 400  # the header and cookie, recognised
    assert await post_empty(jp_fetch, cookie=cookie, token=IVAN_TOKEN, params={"token": "wrong"}) == 403, \
        "a wrong ?token= beside the remembered header: the provider reads the argument, not the header"
    other = await session_cookie(jp_fetch)
    assert other != cookie
    assert (await get(jp_fetch, cookie=other))[0] == 200
    assert len(proofs) == 7, "another session's cookie is proved on its own"
    assert (await get(jp_fetch, cookie=cookie, token="wrong-token"))[0] == 200  # the cookie alone lets a GET in
    assert len(proofs) == 8, "a wrong token with a known cookie is decided by the provider"
    assert await post_empty(jp_fetch, cookie=cookie, token="wrong-token") == 403


async def test_a_cookie_without_the_token_is_decided_by_the_provider(jp_fetch: Any, proofs: list[str]) -> None:
    cookie = await session_cookie(jp_fetch)
    for _ in range(2):
        assert (await get(jp_fetch, cookie=cookie, token=None))[0] == 200  # a browser: the cookie alone
    assert len(proofs) == 3


async def test_a_foreign_host_is_refused_after_local_ones_were_allowed(jp_fetch: Any) -> None:
    cookie = await session_cookie(jp_fetch)
    assert (await get(jp_fetch, cookie=cookie))[0] == 200
    for _ in range(2):
        status, _ = await get(jp_fetch, cookie=cookie, host="evil.example.com")
        assert status == 403


async def test_with_debug_logging_shown_every_request_reaches_the_provider(
        jp_fetch: Any, jp_serverapp: Any, proofs: list[str], caplog: pytest.LogCaptureFixture) -> None:
    cookie = await session_cookie(jp_fetch)
    jp_serverapp.identity_provider.log.setLevel(logging.DEBUG)  # shown: the capture handler takes every level
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            assert (await get(jp_fetch, cookie=cookie))[0] == 200
    assert len(proofs) == 1 + 3, "the provider's own debug line is written for each request"
    assert sum("Accepting token-authenticated request" in r.getMessage() for r in caplog.records) == 3


class TestAnotherProvider:
    """A provider other than jupyter_server's own (a hub's, this suite's per-user tokens) decides every request."""

    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        return server_config(tmp_path)

    async def test_every_request_reaches_it(self, jp_fetch: Any, proofs: list[str]) -> None:
        cookie = await session_cookie(jp_fetch)
        for _ in range(3):
            assert (await get(jp_fetch, cookie=cookie))[0] == 200
        assert len(proofs) == 4


def test_the_wrapper_reads_and_writes_the_providers_own_settings(jp_serverapp: Any) -> None:
    provider = jp_serverapp.identity_provider
    wrapped = auth_once.ProvenOnce(provider)
    assert wrapped.token == provider.token and wrapped.auth_enabled == provider.auth_enabled
    wrapped.token = "set-through-the-wrapper"
    assert provider.token == "set-through-the-wrapper", "a setting changed through a handler is the provider's"
    with pytest.raises(AttributeError):
        _ = wrapped._not_a_field
