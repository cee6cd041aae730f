"""Issue 17: every request the central service makes to the hub ends within ``hub_timeout_s``.

A hub (or a proxy in front of it) that holds a request must cost the service one bounded wait, never
an open-ended one: the activity reporter's listing and posts (tests/hub/test_hub_activity.py: a held
request also holds no later report), the group lookup a submit waits on (red team 19, R2), a job
definition owner's lookup, and HubAuth's token check, which JupyterHub's own HTTP client let wait
300 s. The hub is the loopback double (tests/hub/hub_double.py) holding one request until the test
ends; the clients are the production ones. Each wait sits under a 20 s guard only so that a hang
fails instead of blocking the run (``hub_timeout_s`` is 1 s here; the old bounds were 30 s and 300 s).
"""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from jupyterhub.services.auth import HubAuthenticated
from tornado import web
from tornado.httpserver import HTTPServer
from traitlets import TraitError

from jupyter_sched.errors import BusyError
from jupyter_sched.hub.hubapi import HubAPI, HubLookupError, active_users
from jupyter_sched.hub.identity import HubIdentityProvider, bound_token_checks
from tests.hub.hub_double import TOKEN, hub_app

USERS = {"eve": {"": True}}
EVE = {"name": "eve", "kind": "user", "admin": False, "groups": ["nlp"]}
GUARD_S = 20


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


@contextmanager
def held_hub(*hold: str, tokens: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
    """The hub double on its own thread, holding ``hold`` until the block ends: ``(api_url, settings)``."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    port = _free_port()
    state: dict[str, Any] = {}

    def serve() -> None:
        asyncio.set_event_loop(loop)
        state["release"] = asyncio.Event()
        app = hub_app(USERS, hold=hold, release=state["release"], tokens=tokens)
        state["settings"] = app.settings
        state["server"] = HTTPServer(app)
        state["server"].listen(port, "127.0.0.1")
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30)
    try:
        yield f"http://127.0.0.1:{port}/hub/api", state["settings"]
    finally:
        loop.call_soon_threadsafe(state["release"].set)
        loop.call_soon_threadsafe(state["server"].stop)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


def _provider(monkeypatch: pytest.MonkeyPatch, api_url: str, **config: Any) -> HubIdentityProvider:
    for name, value in {"JUPYTERHUB_API_TOKEN": TOKEN, "JUPYTERHUB_API_URL": api_url,
                        "JUPYTERHUB_SERVICE_PREFIX": "/services/jupyter-sched/",
                        "JUPYTERHUB_CLIENT_ID": "service-jupyter-sched", "JUPYTERHUB_SERVICE_NAME": "jupyter-sched"}.items():
        monkeypatch.setenv(name, value)
    return HubIdentityProvider(**config)


@pytest.mark.parametrize("value", [0.0, 0.5, 301.0, math.nan], ids=["0", "under 1 s", "over 300 s", "NaN"])
def test_issue17_hub_timeout_s_is_refused_at_load_naming_the_setting_and_the_fix(value: float) -> None:
    with pytest.raises(TraitError) as refused:
        HubIdentityProvider(hub_timeout_s=value)
    assert "c.HubIdentityProvider.hub_timeout_s" in str(refused.value)
    assert "Fix: set e.g. 10" in str(refused.value)
    assert HubIdentityProvider().hub_timeout_s == 10.0


def test_issue17_a_hub_listing_the_hub_holds_fails_after_the_timeout_saying_so() -> None:
    with held_hub("users") as (api_url, settings):

        async def run() -> None:
            async with asyncio.timeout(GUARD_S):
                await active_users(HubAPI(api_url, TOKEN, timeout_s=1.0))

        with pytest.raises(HubLookupError) as failed:
            asyncio.run(run())
        assert settings["holding"] == {"users"}  # still held: the client gave up, the hub did not answer
    assert failed.value.status == 0
    assert "no answer from the hub" in str(failed.value) and "limit 1 s" in str(failed.value), failed.value


def test_issue17_a_group_lookup_the_hub_holds_is_a_503_after_hub_timeout_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """A submit decides on the hub's user record (red team 19, R2): a held lookup is a 503 within
    ``hub_timeout_s``, not a request held 30 s."""
    with held_hub("user:eve") as (api_url, _settings):
        provider = _provider(monkeypatch, api_url, hub_timeout_s=1.0, membership_fresh_s=0.0)

        async def run() -> Any:
            async with asyncio.timeout(GUARD_S):
                return await provider._roles("eve", EVE, fresh=True)

        with pytest.raises(web.HTTPError) as refused:
            asyncio.run(run())
    assert refused.value.status_code == 503
    assert "retry in a moment" in str(refused.value.log_message)


def test_issue17_an_owner_lookup_the_hub_holds_is_busy_after_hub_timeout_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job definition's firing asks the hub who its owner is (engine thread, blocking): bounded by the
    same setting, and a BusyError (the firing is retried at the next tick)."""
    with held_hub("user:eve") as (api_url, settings):
        provider = _provider(monkeypatch, api_url, hub_timeout_s=1.0)
        with pytest.raises(BusyError) as busy:
            provider.roles_now("eve")
        assert settings["holding"] == {"user:eve"}
    assert "eve" in busy.value.message


class _WhoAmI(HubAuthenticated, web.RequestHandler):  # type: ignore[misc]
    """A request of the central service, as far as authentication goes: the provider's answer.
    (``HubAuthenticated``: HubOAuth would otherwise patch the XSRF check of tornado's
    ``RequestHandler`` class for the rest of the test process.)"""

    async def get(self) -> None:
        try:
            user = await self.settings["provider"].get_user(self)
        except web.HTTPError as exc:
            self.set_status(exc.status_code)
            self.finish({"message": exc.log_message})
            return
        self.finish({"user": None if user is None else user.username})


def test_issue17_a_token_check_the_hub_holds_is_a_503_after_hub_timeout_s(monkeypatch: pytest.MonkeyPatch) -> None:
    """HubAuth checks every request's token with JupyterHub's own HTTP client (aiohttp: 300 s unless
    configured). The service bounds it by ``hub_timeout_s``, and a check the hub did not answer is a 503
    asking to retry, not HubAuth's 500 "Failed to connect to Hub API"."""
    from jupyterhub.httpclient import JupyterHubHTTPClient

    with held_hub("token", tokens={"eve-token": "eve"}) as (api_url, settings):
        provider = _provider(monkeypatch, api_url, hub_timeout_s=1.0)

        async def run() -> list[httpx.Response]:
            JupyterHubHTTPClient.clear_instance()
            assert bound_token_checks(provider.hub_timeout_s)
            port = _free_port()
            server = HTTPServer(web.Application([(r"/me", _WhoAmI)], provider=provider))
            server.listen(port, "127.0.0.1")
            try:
                async with httpx.AsyncClient(timeout=GUARD_S) as client:
                    me = f"http://127.0.0.1:{port}/me"
                    held = await client.get(me, headers={"Authorization": "token eve-token"})
                    answered = await client.get(me, headers={"Authorization": "token eve-token"})  # held once only
                    return [held, answered]
            finally:
                server.stop()
                await JupyterHubHTTPClient.instance().close()

        held, answered = asyncio.run(run())
        assert settings["holding"] == {"token"}
    assert held.status_code == 503, held.text
    assert "could not ask the hub who you are (no connection, or no answer within 1 s); retry in a moment" in held.json()["message"]
    assert (answered.status_code, answered.json()) == (200, {"user": "eve"})
    assert "_xsrf_token_id" not in web.RequestHandler.__dict__  # no XSRF patch left to later tests


def test_issue17_an_explicit_jupyterhub_client_timeout_is_kept() -> None:
    import aiohttp
    from jupyterhub.httpclient import JupyterHubHTTPClient

    async def run() -> float | None:
        JupyterHubHTTPClient.clear_instance()
        try:
            JupyterHubHTTPClient.instance().session_options = {"timeout": aiohttp.ClientTimeout(total=42)}
            assert not bound_token_checks(5.0)
            timeout: aiohttp.ClientTimeout = JupyterHubHTTPClient.instance().session_options["timeout"]
            return timeout.total
        finally:
            JupyterHubHTTPClient.clear_instance()

    assert asyncio.run(run()) == 42


def test_newuser20_n28_a_token_check_while_the_hub_is_down_is_a_503_not_a_500(monkeypatch: pytest.MonkeyPatch) -> None:
    """New user 20, N28: with the hub's API unreachable (nothing listening: a hub restart), every
    authenticated request was a 500 ``http_error`` carrying HubAuth's "Failed to connect to Hub API …
    make sure to set c.JupyterHub.hub_ip" advice. A refused connection is a 503 asking to retry, as a
    check the hub holds is (the test above)."""
    from jupyterhub.httpclient import JupyterHubHTTPClient

    closed = _free_port()  # nothing listens there
    provider = _provider(monkeypatch, f"http://127.0.0.1:{closed}/hub/api", hub_timeout_s=1.0)

    async def run() -> httpx.Response:
        JupyterHubHTTPClient.clear_instance()
        bound_token_checks(provider.hub_timeout_s)
        port = _free_port()
        server = HTTPServer(web.Application([(r"/me", _WhoAmI)], provider=provider))
        server.listen(port, "127.0.0.1")
        try:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                return await client.get(f"http://127.0.0.1:{port}/me", headers={"Authorization": "token eve-token"})
        finally:
            server.stop()
            await JupyterHubHTTPClient.instance().close()

    answer = asyncio.run(run())
    assert answer.status_code == 503, answer.text
    assert "could not ask the hub who you are (no connection" in answer.json()["message"], answer.text


def test_newuser20_n28_a_503_outside_a_handler_s_errors_says_unavailable_and_when_to_retry() -> None:
    """N28's other half: the 503 had code ``http_error``, no hint and no ``Retry-After``."""
    from jupyter_sched.extension.http_errors import RETRY_AFTER_S, http_error_body

    body, headers = http_error_body(503, "the scheduler could not ask the hub who you are (no connection, or no "
                                         "answer within 10 s); retry in a moment", method="GET", route="me",
                                    handler=web.RequestHandler)
    assert body["error"]["code"] == "unavailable" and body["error"]["hint"] == f"retry in {RETRY_AFTER_S} seconds"
    assert headers == {"Retry-After": str(RETRY_AFTER_S)}
