"""Synchronous client of the jupyter_sched REST API (httpx).

Example::

    from jupyter_sched.client import connect
    sched = connect()                      # discovery: see jupyter_sched.client.discovery
    job = sched.submit({"gpus": 1, "command": ["python", "train.py"]})
    for chunk in sched.follow_logs(job["id"]):
        print(chunk, end="")

Every method raises the :mod:`jupyter_sched.errors` class the server raised
(``ValidationError`` for 400, ``NotFoundError`` for 404, ...), and
:class:`ServerUnreachableError` when the server does not answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any

import httpx
from httpx_sse import connect_sse

from ..errors import SchedError
from ._routes import routes
from ._wire import Req, error_from_response, event_from_sse, unwrap_list
from .discovery import Connection

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SchedClient", "ServerUnreachableError", "usage_frame"]

DEFAULT_TIMEOUT_S = 30.0


class ServerUnreachableError(SchedError):
    """The server did not answer (connection refused, timeout)."""

    code = "server_unreachable"


def unreachable(conn: Connection, exc: Exception) -> ServerUnreachableError:
    """Build the error for a failed connection to ``conn``."""
    return ServerUnreachableError(
        f"cannot reach the jupyter_sched server at {conn.url} ({type(exc).__name__}: {exc})",
        hint="is the Jupyter server still running? restart it, or connect(url, token) to another one")


def headers_for(conn: Connection) -> dict[str, str]:
    """Request headers: the token (Jupyter / JupyterHub ``Authorization: token``) and JSON."""
    headers = {"Accept": "application/json"}
    if conn.token:
        headers["Authorization"] = f"token {conn.token}"
    return headers


def usage_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Usage rows → a pandas DataFrame (one row per user/team/model/period as the server returns)."""
    import pandas as pd

    return pd.DataFrame.from_records(rows)


class SchedClient:
    """Typed synchronous client; one method per REST route.

    Args:
        connection: where the server is (see :func:`jupyter_sched.client.discover`).
        timeout_s: per-request timeout in seconds (default 30).
        transport: an httpx transport (tests use ``httpx.MockTransport`` to speak the wire format).
    """

    def __init__(self, connection: Connection, *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.connection = connection
        self._http = httpx.Client(base_url=connection.api_url, headers=headers_for(connection),
                                  timeout=timeout_s, transport=transport)

    @property
    def kernel_id(self) -> str | None:
        """This kernel's id as the server knows it (None outside server-started kernels)."""
        return self.connection.kernel_id

    def close(self) -> None:
        """Close the HTTP connection pool."""
        self._http.close()

    def __enter__(self) -> SchedClient:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def call(self, req: Req, *, timeout_s: float | None = None) -> Any:
        """Send ``req``; return the decoded JSON (or text for non-JSON answers).

        Raises:
            SchedError subclass: the server's error; ServerUnreachableError: no answer.
        """
        try:
            response = self._http.request(
                req.method, req.path, params=dict(req.params) or None,
                json=req.body if req.body is not None else None,
                timeout=timeout_s if timeout_s is not None else httpx.USE_CLIENT_DEFAULT)
        except httpx.TransportError as exc:
            raise unreachable(self.connection, exc) from None
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.text)
        if not response.content:
            return None
        if "json" in response.headers.get("content-type", "json"):
            return response.json()
        return response.text

    # --- routes ---------------------------------------------------------------------------
    def config(self) -> dict[str, Any]:
        """``GET config``: what this backend supports."""
        return dict(self.call(routes.config()))

    def me(self) -> dict[str, Any]:
        """``GET me``: the caller (name, team, admin flag, quota, usage)."""
        return dict(self.call(routes.me()))

    def inventory(self) -> dict[str, Any]:
        """``GET inventory``: nodes, flat ``gpus`` list, ``simulated`` and ``nvml`` status."""
        return dict(self.call(routes.inventory()))

    def submit(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST jobs``: submit a job; returns the job (201).

        Raises:
            ValidationError (400), QuotaError / UnschedulableError (422: can never fit).
        """
        return dict(self.call(routes.submit(body)))

    def jobs(self, *, state: str | None = None, kind: str | None = None, user: str | None = None,
             all_users: bool = False) -> list[dict[str, Any]]:
        """``GET jobs``: my jobs, newest first; admins may name another ``user`` or ask for ``all_users``.

        Args:
            state: a state name or comma-separated names (``pending,running``).
            kind: ``training``, ``inference`` or ``lease``.
        """
        return unwrap_list(self.call(routes.jobs(state=state, kind=kind, user=user, all_users=all_users)), "jobs")

    def job(self, job_id: str) -> dict[str, Any]:
        """``GET jobs/{id}``. Raises NotFoundError."""
        return dict(self.call(routes.job(job_id)))

    def cancel(self, job_id: str) -> dict[str, Any]:
        """``DELETE jobs/{id}``: cancel; returns the job. Raises NotFoundError, ConflictError."""
        return dict(self.call(routes.cancel(job_id)))

    def logs(self, job_id: str, *, offset: int = 0, limit: int = 65536, follow: bool = False) -> dict[str, Any]:
        """``GET jobs/{id}/logs``: ``{"text", "offset", "next_offset", "finished"}`` (offsets in bytes)."""
        return dict(self.call(routes.logs(job_id, offset=offset, limit=limit, follow=follow),
                              timeout_s=DEFAULT_TIMEOUT_S * 2 if follow else None))

    def follow_logs(self, job_id: str, *, offset: int = 0, poll_s: float = 0.5) -> Iterator[str]:
        """Yield log text as it appears until the job has finished and all output is read.

        Args:
            offset: byte offset to start at.
            poll_s: seconds to wait between reads when nothing new arrived.
        """
        while True:
            chunk = self.logs(job_id, offset=offset, follow=True)
            text = str(chunk.get("text") or "")
            next_offset = int(chunk.get("next_offset", offset + len(text.encode())))
            if text:
                yield text
            if chunk.get("finished") and next_offset == offset:
                return
            if next_offset == offset:
                time.sleep(poll_s)
            offset = next_offset

    def dryrun(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST dryrun``: would it fit, where and when — without enqueuing."""
        return dict(self.call(routes.dryrun(body)))

    def leases(self) -> list[dict[str, Any]]:
        """``GET leases``: my interactive leases."""
        return unwrap_list(self.call(routes.leases()), "leases")

    def request_lease(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``POST leases``: ask for GPUs for a kernel (``kernel_id`` in the body); returns the lease."""
        return dict(self.call(routes.request_lease(body)))

    def lease(self, lease_id: str) -> dict[str, Any]:
        """``GET leases/{id}``."""
        return dict(self.call(routes.lease(lease_id)))

    def release_lease(self, lease_id: str) -> dict[str, Any]:
        """``DELETE leases/{id}``: release (or withdraw a queued request)."""
        return dict(self.call(routes.release_lease(lease_id)) or {})

    def keepalive(self, lease_id: str) -> dict[str, Any]:
        """``POST leases/{id}/keepalive``: mark the lease as in use (resets idle reclamation)."""
        return dict(self.call(routes.keepalive(lease_id)) or {})

    def queue(self) -> list[dict[str, Any]]:
        """``GET queue``: pending and running work with position, reason and ETA."""
        return unwrap_list(self.call(routes.queue()), "queue")

    def quotas(self) -> dict[str, Any]:
        """``GET quotas``."""
        return dict(self.call(routes.quotas()))

    def set_quotas(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``PUT quotas`` (admin). Raises AuthorizationError, ValidationError."""
        return dict(self.call(routes.set_quotas(body)))

    def idle_policy(self) -> dict[str, Any]:
        """``GET idle-policy``: ``{"default": POLICY, "by_priority": {class: POLICY}, "active",
        "retention_s"}`` (seconds, %; see :mod:`jupyter_sched.reclaim.codec`)."""
        return dict(self.call(routes.idle_policy()))

    def set_idle_policy(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """``PUT idle-policy`` (admin; audited): ``{"default": {...}, "by_priority": {...}}``, keys
        left out keep their value. Returns the policy now in force. Raises AuthorizationError,
        ValidationError (field e.g. ``idle.normal.window_s``)."""
        return dict(self.call(routes.set_idle_policy(body)))

    def profiles(self) -> list[dict[str, Any]]:
        """``GET profiles``: admin-defined request templates."""
        return unwrap_list(self.call(routes.profiles()), "profiles")

    def telemetry(self, *, gpu: str | None = None, job: str | None = None) -> Any:
        """``GET telemetry?gpu=&job=``: recent utilization (%) and memory (MiB) samples."""
        return self.call(routes.telemetry(gpu=gpu, job=job))

    def audit(self, **filters: Any) -> list[dict[str, Any]]:
        """``GET audit`` (admin)."""
        return unwrap_list(self.call(routes.audit(**filters)), "audit")

    def usage(self, **filters: Any) -> pd.DataFrame:
        """``GET usage`` as a DataFrame (GPU-seconds allocated / utilized, cost)."""
        return usage_frame(unwrap_list(self.call(routes.usage(**filters)), "usage"))

    def metrics(self) -> str:
        """``GET metrics``: Prometheus exposition text."""
        return str(self.call(routes.metrics()))

    def events(self) -> Iterator[dict[str, Any]]:
        """``GET events`` (Server-Sent Events): yield ``{"type", "data"}`` until the stream ends."""
        try:
            with connect_sse(self._http, "GET", routes.events().path,
                             timeout=httpx.Timeout(DEFAULT_TIMEOUT_S, read=None)) as source:
                response = source.response
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response.status_code, response.text)
                for sse in source.iter_sse():  # httpx-sse decodes the stream (issue 17)
                    yield event_from_sse(sse.event if sse.event != "message" else "", sse.data)
        except httpx.TransportError as exc:
            raise unreachable(self.connection, exc) from None
