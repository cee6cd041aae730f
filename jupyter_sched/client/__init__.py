"""Typed sync and async clients of the jupyter_sched REST API — the API the panel and CLI use too.

Find the server with :func:`connect` (sync) or :func:`connect_async`; both follow the discovery
order documented in :mod:`jupyter_sched.client.discovery`: explicit ``url``/``token``, then the
``JUPYTER_SCHED_*`` variables the server extension injects into its kernels, then JupyterHub's
variables, then the running-server files in the Jupyter runtime dir.

Errors from the server arrive as the :mod:`jupyter_sched.errors` classes; a server that cannot
be found raises :class:`NoServerError` with the fix in its hint.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from ._wire import error_from_response
from .discovery import Connection, NoServerError, discover, discover_probed
from .sync import SchedClient, ServerUnreachableError

if TYPE_CHECKING:
    from .aio import AsyncSchedClient
    from .waiting import JobFailed, WaitTimeout

__all__ = [
    "AsyncSchedClient", "Connection", "JobFailed", "NoServerError", "SchedClient", "ServerUnreachableError",
    "WaitTimeout", "connect", "connect_async", "discover", "error_from_response",
]


def connect(url: str | None = None, token: str | None = None, *, timeout_s: float = 30.0) -> SchedClient:
    """Return a :class:`SchedClient` for ``url`` or the discovered server.

    Args:
        url: server base URL (e.g. ``http://127.0.0.1:8888/``); None = discover.
        token: Jupyter token for ``url``.
        timeout_s: per-request timeout in seconds.

    A hub's scheduler (``…/services/NAME/``) is called with a token the hub mints scoped to that service
    only, not the caller's own hub token (:mod:`.hub_token`, verify25 V7).

    Raises:
        NoServerError: nothing found (message says where it looked and how to fix it).
    """
    from .hub_token import scoped

    connection, probe = discover_probed(url, token, retry_timeout_s=timeout_s)
    return SchedClient(scoped(connection, os.environ, timeout_s=timeout_s), timeout_s=timeout_s, probe=probe)


def connect_async(url: str | None = None, token: str | None = None, *,
                  timeout_s: float = 30.0) -> AsyncSchedClient:
    """Return an :class:`AsyncSchedClient` for ``url`` or the discovered server (see :func:`connect`)."""
    from .aio import AsyncSchedClient
    from .hub_token import scoped

    return AsyncSchedClient(scoped(discover(url, token, retry_timeout_s=timeout_s), os.environ, timeout_s=timeout_s),
                            timeout_s=timeout_s)


def __getattr__(name: str) -> Any:
    """``AsyncSchedClient`` loads on first use: it pulls in asyncio, which the CLI (a new process
    per command) does not need."""
    if name == "AsyncSchedClient":
        from .aio import AsyncSchedClient

        return AsyncSchedClient
    if name in ("JobFailed", "WaitTimeout"):  # what wait() raises (newuser42 N1), loaded with it
        from . import waiting

        return getattr(waiting, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
