"""A kernel's lease heartbeat: the keeper thread (newuser41 N1, the hub half).

A kernel the server did not start (``released_at_exit``: nbconvert, papermill, ``jupyter console``, a hub
kernel on another host or in a container) gives its lease back at exit; killed (SIGKILL, the OOM killer, its node
lost) it runs nothing. The server checks such a kernel's process itself where it can (same host and pid
namespace: :class:`~jupyter_sched.services.leases_alive.AskerWatch`); elsewhere it hears from the kernel:
:class:`LeaseKeeper` sends ``POST leases/{id}/heartbeat`` every ``lease_heartbeat_interval_s`` (read from
``GET config``) from a daemon thread, and the server withdraws or releases a lease whose heartbeats stop
(:class:`~jupyter_sched.services.leases_alive.HeartbeatWatch`).

The keeper stops, quietly: when told to (the lease released), when the server says the lease ended or is not
its to keep (404, 409, 403), when the server checks the kernel itself (``needed: false``), and at once against a
server without heartbeats (no ``lease_heartbeat_interval_s`` in ``GET config``). A server that does not answer
(restarting, the network) is tried again at the next beat. A heartbeat is no activity: it never keeps idle GPUs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ..errors import AuthorizationError, ConflictError, NotFoundError, SchedError, ValidationError

__all__ = ["LeaseKeeper", "keep_lease"]

_RETRY_CONFIG_S = 30.0
"""Seconds before ``GET config`` is asked again when the server did not answer it."""
_BEAT_TIMEOUT_S = 10.0
"""Longest one heartbeat waits for its answer (one at a time: a slow answer delays the next beat, none queue up;
a beat the server received counts there even when its answer came too late)."""


class LeaseKeeper:
    """Sends ``lease_id``'s heartbeats from a daemon thread until :meth:`stop` (see module docstring).

    Args:
        client_factory: makes the thread's own client (one per thread: the magics' client is the kernel's).
        lease_id: the lease kept.

    Attributes:
        beats: heartbeats the server answered.
        stopped: why the keeper stopped (None while it runs): ``"released"``, ``"not needed"``, ``"ended"``
            (the server's 404/409/403/400 words), ``"server without heartbeats"``.
    """

    def __init__(self, client_factory: Callable[[], Any], lease_id: str) -> None:
        self.lease_id = lease_id
        self._factory = client_factory
        self._stop = threading.Event()
        self.beats = 0
        self.stopped: str | None = None
        self.thread = threading.Thread(target=self._run, name=f"jupyter-sched-heartbeat-{lease_id}", daemon=True)

    def start(self) -> LeaseKeeper:
        """Start the thread; ``self``."""
        self.thread.start()
        return self

    def stop(self, *, wait_s: float = 0.0) -> None:
        """Stop sending (the lease was released); wait up to ``wait_s`` for the thread to end."""
        if self.stopped is None:
            self.stopped = "released"
        self._stop.set()
        if wait_s > 0 and self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(wait_s)

    @property
    def running(self) -> bool:
        return self.thread.is_alive()

    def _run(self) -> None:
        client = self._factory()
        try:
            interval = self._interval(client)
            while interval is not None and not self._stop.is_set():
                try:
                    answer = client.lease_heartbeat(self.lease_id, timeout_s=_BEAT_TIMEOUT_S)
                except (NotFoundError, ConflictError, AuthorizationError, ValidationError) as err:
                    self._end(f"ended: {err}")  # released elsewhere, ended, or an older server's 404 for the route
                    return
                except SchedError:
                    pass  # not answered (a restart, the network): the next beat tries again
                else:
                    self.beats += 1
                    if answer.get("needed") is False:  # the server checks this kernel's process itself
                        self._end("not needed")
                        return
                    given = answer.get("interval_s")
                    interval = float(given) if isinstance(given, (int, float)) and given > 0 else interval
                self._stop.wait(interval)
        finally:
            close = getattr(client, "close", None)
            if callable(close):
                close()

    def _interval(self, client: Any) -> float | None:
        """``lease_heartbeat_interval_s`` from ``GET config`` (asked again while the server does not answer);
        None when the server has no heartbeats (the keeper then stops) or the keeper was stopped meanwhile."""
        while not self._stop.is_set():
            try:
                value = client.config().get("lease_heartbeat_interval_s")
            except SchedError:
                self._stop.wait(_RETRY_CONFIG_S)
                continue
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
                return float(value)
            self._end("server without heartbeats")
            return None
        return None

    def _end(self, why: str) -> None:
        if self.stopped is None:
            self.stopped = why
        self._stop.set()


def keep_lease(client: Any, lease_id: str) -> LeaseKeeper | None:
    """Start a :class:`LeaseKeeper` for ``lease_id`` on a client of its own made like ``client`` (a
    :class:`~jupyter_sched.client.sync.SchedClient`: same server, token and transport); None for any other client
    (a test's stand-in)."""
    from .sync import SchedClient

    if not isinstance(client, SchedClient):
        return None
    connection, transport = client.connection, getattr(client, "_transport", None)

    def own_client() -> SchedClient:
        return SchedClient(connection, timeout_s=_BEAT_TIMEOUT_S, transport=transport, notice=lambda _line: None)

    return LeaseKeeper(own_client, lease_id).start()
