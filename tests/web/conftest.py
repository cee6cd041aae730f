"""Fixtures for the REST surface: a real jupyter_server with jupyter_sched loaded (pytest-jupyter).

The pytest-jupyter plugin is imported here (not via a root ``pytest_plugins``) so its autouse
event-loop fixture applies to these tests only.

Identity: the servers here use :class:`TokenPerUserIdentityProvider`, a real
``IdentityProvider`` subclass that maps each token to a user, as a hub's per-user tokens do —
the double sits at the authentication boundary, not inside our code. ``ivan`` holds the server
token (so ``jp_fetch`` acts as ivan), ``judy`` and ``eve`` are other users, ``boss`` is an admin.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth.identity import IdentityProvider, User
from pytest_jupyter.jupyter_server import *  # noqa: F403  (fixtures + async test hooks)
from tornado.httpclient import HTTPClientError, HTTPResponse

from jupyter_sched.admission import system_caller
from jupyter_sched.errors import SchedError

IVAN_TOKEN = "s3cr3t-test-token"
JUDY_TOKEN = "judy-token-0000"
BOSS_TOKEN = "boss-token-0000"
EVE_TOKEN = "eve-token-0000"
TOKEN_USERS = {IVAN_TOKEN: "ivan", JUDY_TOKEN: "judy", BOSS_TOKEN: "boss", EVE_TOKEN: "eve"}
API = "api/sched"


class TokenPerUserIdentityProvider(IdentityProvider):  # type: ignore[misc]
    """Each token names one user (hub-style per-user tokens); cookies work as in jupyter_server."""

    async def get_user_token(self, handler: Any) -> User | None:
        name = TOKEN_USERS.get(self.get_token(handler) or "")
        return User(username=name, name=name) if name else None


def server_config(tmp_path: Path, **sched: Any) -> dict[str, Any]:
    """jp_server_config body: jupyter_sched enabled on a tmp SQLite store and a simulated inventory."""
    settings: dict[str, Any] = {
        "db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}",
        "log_dir": str(tmp_path / "logs"),
        "inventory_source": "simulated",
        "simulated_gpus": 4,
        "cycle_interval": 0.2,
        "admin_users": {"boss"},
    }
    settings.update(sched)
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True},
                      "identity_provider_class": TokenPerUserIdentityProvider,
                      "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": IVAN_TOKEN},
        "SchedApp": settings,
    }


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path)


@pytest.fixture
def sched_app(jp_serverapp: Any, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    """The loaded SchedApp, started the way ServerApp._post_start starts extensions.

    Teardown cancels whatever a test left running and waits until no job holds a process, so
    no test leaks subprocesses (the engine keeps local jobs running across server stops).
    """
    jp_asyncio_loop.run_until_complete(jp_serverapp.extension_manager.start_extension("jupyter_sched"))
    app = next(iter(jp_serverapp.extension_manager.extension_apps["jupyter_sched"]))
    yield app
    services = app.services
    teardown = system_caller("test-teardown")
    for job in services.list_jobs(state="pending,admitted,running,preempted"):
        with contextlib.suppress(SchedError):
            services.jobs.cancel(teardown, job["id"])

    async def settled() -> bool:
        return not services.list_jobs(state="admitted,running")

    jp_asyncio_loop.run_until_complete(wait_for(settled, timeout_s=30))


Fetch = Callable[..., Awaitable[HTTPResponse]]


@pytest.fixture
def api(sched_app: Any, jp_fetch: Fetch) -> Callable[..., Awaitable[tuple[int, Any]]]:
    """``await api(method, path, body=None, token=IVAN_TOKEN, params=None) -> (status, json)``; never raises on 4xx/5xx."""

    async def call(method: str, path: str, body: Any = None, *, token: str | None = IVAN_TOKEN,
                   params: dict[str, str] | None = None, raw: bytes | None = None,
                   headers: dict[str, str] | None = None) -> tuple[int, Any]:
        hdrs = dict(headers or {})
        hdrs["Authorization"] = f"token {token}" if token else ""
        kwargs: dict[str, Any] = {"method": method, "headers": hdrs, "params": params, "raise_error": False}
        if method in ("POST", "PUT", "PATCH"):
            kwargs["body"] = raw if raw is not None else json.dumps(body if body is not None else {})
        elif raw is not None:
            kwargs["body"] = raw
            kwargs["allow_nonstandard_methods"] = True
        response = await jp_fetch(*[p for p in (API + "/" + path).split("/") if p], **kwargs)
        text = response.body.decode() if response.body else ""
        try:
            payload = json.loads(text) if text else None
        except ValueError:
            payload = text
        return response.code, payload

    return call


@pytest.fixture
def kernel(sched_app: Any, jp_fetch: Fetch) -> Callable[[], Awaitable[str]]:
    """``await kernel() -> id``: a real kernel started in the test's server (``POST api/kernels``).

    A lease must name a kernel its server runs (issue 20 (d): a made-up ``kernel_id`` is a 400), so
    a test that needs a kernel's lease starts one. The POST answers once the kernel process is
    launched; the server shuts its kernels down at teardown."""

    async def start() -> str:
        response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
        return str(json.loads(response.body)["id"])

    return start


class ProofClock:
    """The wall clock :mod:`jupyter_sched.extension.auth_once` ages identity proofs by (``KEEP_S``, a cookie's
    max age): still until :meth:`advance` — a test that counts proofs or takes a recognised session's
    request for granted does not depend on how fast a loaded machine answers (session 21: a proof lapsed
    between the two reads of tests/web/test_issue17_lean_answers.py's pairs). Tornado's own cookie check
    keeps the real clock."""

    def __init__(self) -> None:
        self.now = time.time()

    def time(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def proof_clock(monkeypatch: pytest.MonkeyPatch) -> ProofClock:
    """:class:`ProofClock` in place of the proofs' clock for this test."""
    from jupyter_sched.extension import auth_once

    clock = ProofClock()
    monkeypatch.setattr(auth_once, "time", clock)
    return clock


async def wait_for(predicate: Callable[[], Awaitable[Any]], *, timeout_s: float = 30.0, poll_s: float = 0.1) -> Any:
    """Poll ``predicate`` until it returns a truthy value (returned); fail after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = await predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not reached within {timeout_s} s (last value {value!r})")
        await asyncio.sleep(poll_s)


SLEEP_JOB: dict[str, Any] = {"command": ["sleep", "300"], "time_limit": "10m"}
"""A job body that holds its GPUs for 5 minutes (tests end it; the leftover-job net names one they forget)."""


async def running_job(api: Any, gpus: int = 1, **fields: Any) -> str:
    """Submit ``SLEEP_JOB`` on ``gpus`` GPUs (plus ``fields``, e.g. name) and return its id once it runs."""
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": gpus, **fields})
    assert status == 201, job

    async def running() -> bool:
        _, seen = await api("GET", f"jobs/{job['id']}")
        return bool(seen["state"] == "running")

    await wait_for(running)
    return str(job["id"])


__all__ = ["API", "BOSS_TOKEN", "EVE_TOKEN", "HTTPClientError", "IVAN_TOKEN", "JUDY_TOKEN", "SLEEP_JOB", "running_job",
           "server_config", "wait_for"]
