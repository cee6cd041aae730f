"""One real server for a test module of ``jupyter-sched`` subprocesses, and what one such run gave.

The set-up the CLI modules shared line for line (duplicates D2, session 38: tests/web/test_s38_defs_cli_one_server.py
and tests/onboarding/test_cli_firsthour.py): a real ``jupyter server`` subprocess of
:class:`tests.reliability.harness.EmbeddedServer` (SQLite, simulated GPUs, per-user tokens at the identity boundary),
started once for the module and killed after it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.reliability.harness import EmbeddedServer

TLS = httpx.create_ssl_context()
"""One TLS context for the test clients of these servers (``httpx.Client(verify=TLS)``): a client left to make its
own builds one and loads the CA bundle into it, ~27 ms of CPU per client (0.1 ms with this one) — and the modules'
``api(server, token)`` helpers make a client per request, polls included (s42-speed)."""


@dataclass
class Run:
    """One ``jupyter-sched`` subprocess: its exit status and what it printed."""

    code: int
    out: str
    err: str


def server_for_module(tmp_path_factory: pytest.TempPathFactory, folder: str, users: Mapping[str, str], *,
                  before_kill: Callable[[EmbeddedServer], None] | None = None, **sched: Any) -> Iterator[EmbeddedServer]:
    """Start one server in a fresh ``folder`` under pytest's temporary root with ``users`` (token → name) and
    ``sched`` settings (``admin_users``, ``simulated_gpus``, …); yield it; then ``before_kill`` (e.g. stop the
    module's jobs: they outlive a killed server by design) and kill it. For a module-scoped fixture:
    ``yield from server_for_module(...)``."""
    srv = EmbeddedServer.start(tmp_path_factory.mktemp(folder), users=users, **sched)
    try:
        yield srv
    finally:
        try:
            if before_kill is not None:
                before_kill(srv)
        finally:
            srv.kill()
