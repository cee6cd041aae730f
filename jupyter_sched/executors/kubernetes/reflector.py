"""List + watch one kind of Kubernetes object into a local cache (client-go's Reflector, in small).

Protocol (``k8s.io/client-go/tools/cache/reflector.go``; API concepts "Efficient detection of
changes"): LIST returns the items and the collection's ``resourceVersion``; WATCH from that
version streams ``ADDED``/``MODIFIED``/``DELETED``/``BOOKMARK`` events, one JSON object per line
over a chunked HTTP/1.1 response, each carrying a newer ``resourceVersion``. When the server
has compacted the history past our version it answers with an ``ERROR`` event (or HTTP status)
holding a ``Status`` with code 410 Gone; the only correct reaction is to LIST again (resync).

The reflector is driven by any list function with the official client's signature
(``CoreV1Api().list_node``, ``BatchV1Api().list_namespaced_job`` bound with ``functools.partial``
…); it calls it with ``_preload_content=False`` and parses raw JSON, so no model classes are
involved and the cache holds the API's own camelCase dicts.

Why not the client's own ``kubernetes.watch.Watch``: it deserialises every event into model
objects (the cache here holds the API's dicts, as the executor and inventory read them), it
cannot be stopped from another thread while a read blocks (``stop`` here shuts the open
response down), and on 410 Gone it raises or, with ``resource_version`` set, retries without
relisting — the resync below is exactly what client-go's Reflector does instead.

Retries back off (issue 17): after a failure the next attempt waits
``min(cap, base · 2^(n-1))`` seconds, half jittered (:class:`~jupyter_sched.backoff.Backoff`),
and the count resets once a watch delivers an event. A 410 whose relist is *itself* too old
(the server compacts faster than we relist) therefore costs a handful of LISTs per minute with
growing gaps, not a tight loop (63 LISTs in 3 s before). While it retries, :attr:`Reflector.reconnecting`
says so ("reconnecting to the Kubernetes API (pods watch) (attempt 3, next in 4 s): HTTP 410").
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ...backoff import Backoff, Reconnecting
from ...errors import ExecutorError

__all__ = ["GONE", "Reflector", "object_key"]

log = logging.getLogger(__name__)

GONE = 410
"""HTTP status of an expired ``resourceVersion``."""


def object_key(obj: Mapping[str, Any]) -> str:
    """Cache key of an object: ``namespace/name`` (``name`` for cluster-scoped objects)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace")
    return f"{namespace}/{meta.get('name')}" if namespace else str(meta.get("name"))


def _lines(response: Any) -> Iterator[bytes]:
    """Split a streamed HTTP body into lines as the chunks arrive."""
    buffer = b""
    for chunk in response.stream(amt=None, decode_content=False):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield line
    if buffer.strip():
        yield buffer


class _Gone(Exception):
    """The watch's resourceVersion is too old: relist."""


class Reflector:
    """Keep ``items()`` equal to the server's objects of one kind, by list + watch.

    Args:
        list_fn: the client's list function for the kind (it must accept ``watch``,
            ``resource_version``, ``timeout_seconds``, ``allow_watch_bookmarks`` and
            ``_preload_content``), with namespace etc. already bound.
        name: what is watched, for logs (``"nodes"``).
        on_change: called (outside the lock) after every change to the cache and after every relist.
        watch_timeout_s: server-side watch timeout (seconds); the watch is renewed from the last
            resourceVersion when it ends.
        retry_s: the first pause before reconnecting after a failure (seconds); it doubles per
            failure up to ``max_retry_s``, half jittered, and resets when a watch delivers an event.
        max_retry_s: the longest pause (seconds).
        list_kwargs: extra arguments for every call (``label_selector``, ``field_selector``).
        rng: uniform [0, 1) source of the jitter (tests).
    """

    def __init__(self, list_fn: Callable[..., Any], *, name: str,
                 on_change: Callable[[], None] | None = None, watch_timeout_s: int = 240,
                 retry_s: float = 1.0, max_retry_s: float = 60.0, list_kwargs: Mapping[str, Any] | None = None,
                 rng: Callable[[], float] = random.random) -> None:
        self._list_fn = list_fn
        self.name = name
        self._on_change = on_change
        self._watch_timeout_s = watch_timeout_s
        self.backoff = Backoff(base_s=retry_s, cap_s=max(retry_s, max_retry_s), jitter=0.5)
        self._rng = rng
        self._failures = 0
        self._retry_at = 0.0
        self._last_error = ""
        self._open_since: float | None = None  # monotonic time the current watch stream opened
        self.settle_s = max(1.0, 2 * retry_s)
        """Seconds a watch must stay open without failing to count as reconnected (a watch that
        fails with 410 at once after every relist never does)."""
        self._kwargs = dict(list_kwargs or {})
        self._lock = threading.Lock()
        self._items: dict[str, dict[str, Any]] = {}
        self._stop = threading.Event()
        self._response: Any = None
        self._thread: threading.Thread | None = None
        self.resource_version = ""
        self.list_count = 0
        """LIST calls made (1 after start; each 410 Gone resync adds one)."""

    # -- lifecycle -----------------------------------------------------------------------------
    def start(self) -> None:
        """LIST synchronously (so the cache is complete on return), then watch in a daemon thread.

        Raises:
            ExecutorError: the first LIST failed (API server unreachable, forbidden).
        """
        self.relist()
        self._thread = threading.Thread(target=self._run, name=f"reflector-{self.name}", daemon=True)
        self._thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        """Stop watching: close the open watch stream and join the thread."""
        self._stop.set()
        response = self._response
        if response is not None:
            shutdown = getattr(response, "shutdown", None)  # urllib3 >= 2.3: unblocks a pending read
            try:
                if shutdown is not None:
                    shutdown()
                else:  # pragma: no cover - older urllib3
                    response.close()
            except OSError:  # pragma: no cover - already closed
                pass
        if self._thread is not None:
            self._thread.join(timeout_s)

    # -- connection state ----------------------------------------------------------------------
    @property
    def reconnecting(self) -> Reconnecting | None:
        """While retrying after a failure: attempt count, seconds to the next try, the error."""
        if self._failures == 0 or self._settled():
            return None
        return Reconnecting(f"the Kubernetes API ({self.name} watch)", self._failures,
                            max(0.0, self._retry_at - time.monotonic()), self._last_error)

    def _settled(self) -> bool:
        opened = self._open_since
        return opened is not None and time.monotonic() - opened >= self.settle_s

    def _failed(self, error: str) -> None:
        """Count a failure and wait out its backoff (or until :meth:`stop`)."""
        if self._settled():  # the last watch ran fine for a while: this is a new episode
            self._failures = 0
        self._open_since = None
        self._failures += 1
        self._last_error = error
        delay = self.backoff.delay(self._failures, self._rng)
        self._retry_at = time.monotonic() + delay
        log.warning("%s", self.reconnecting.message if self.reconnecting else error)
        self._changed()  # listeners show the reconnecting state
        self._stop.wait(delay)

    def _healthy(self) -> None:
        if self._failures:
            log.info("watch of %s is back after %d attempt(s)", self.name, self._failures)
            self._failures = 0
            self._changed()

    # -- cache ---------------------------------------------------------------------------------
    def items(self) -> list[dict[str, Any]]:
        """A copy of the cached objects (the dicts themselves are shared; do not mutate them)."""
        with self._lock:
            return list(self._items.values())

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached object with :func:`object_key` ``key``, or None."""
        with self._lock:
            return self._items.get(key)

    def relist(self) -> None:
        """LIST the kind and replace the cache with the answer (the resync after 410 Gone).

        Raises:
            ExecutorError: the LIST failed.
        """
        try:
            response = self._list_fn(_preload_content=False, **self._kwargs)
            body = json.loads(response.data)
        except Exception as exc:  # the client raises ApiException / urllib3 errors
            raise ExecutorError(f"cannot list {self.name}: {_describe(exc)}",
                                hint="check the API server address and the RBAC rules in server/") from exc
        items = {object_key(item): item for item in body.get("items") or []}
        with self._lock:
            self._items = items
            self.resource_version = str((body.get("metadata") or {}).get("resourceVersion", ""))
            self.list_count += 1
        self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            try:
                self._on_change()
            except Exception:  # a listener's bug must not kill the watch
                log.exception("on_change listener of %s failed", self.name)

    # -- watch loop ----------------------------------------------------------------------------
    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._watch_once()
            except _Gone:
                self._resync("410 Gone")
            except Exception as exc:
                if self._stop.is_set():
                    break
                if getattr(exc, "status", None) == GONE:
                    self._resync("HTTP 410 Gone")
                    continue
                self._failed(f"watch failed: {_describe(exc)}")

    def _resync(self, why: str) -> None:
        """Relist after 410 Gone. The first relist after a healthy watch is immediate; one that
        follows a watch that delivered nothing waits out the backoff first (module docstring)."""
        log.info("watch of %s expired (%s) at resourceVersion %s; relisting", self.name, why,
                 self.resource_version)
        if self._failures and not self._settled():
            self._failed(f"the relisted version was already too old ({why})")
        else:
            self._open_since = None
            self._failures = 1  # the next 410 before any event backs off
            self._last_error = why
            self._retry_at = time.monotonic()
        while not self._stop.is_set():
            try:
                self.relist()
                return
            except ExecutorError as exc:
                self._failed(exc.message)

    def _watch_once(self) -> None:
        response = self._list_fn(
            watch=True, resource_version=self.resource_version, allow_watch_bookmarks=True,
            timeout_seconds=self._watch_timeout_s, _preload_content=False,
            _request_timeout=(10, self._watch_timeout_s + 30), **self._kwargs)
        self._response = response
        self._open_since = time.monotonic()
        try:
            if self._stop.is_set():  # stop() ran while the request was in flight and saw no response
                return
            for line in _lines(response):
                if self._stop.is_set():
                    return
                self._apply(json.loads(line))
                self._healthy()
        finally:
            self._response = None
            response.close()  # never reuse a connection whose stream may be half read
            response.release_conn()

    def _apply(self, event: Mapping[str, Any]) -> None:
        kind = event.get("type")
        obj = event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == GONE:
                raise _Gone()
            raise ExecutorError(f"watch of {self.name} failed: {obj.get('reason')}: {obj.get('message')}")
        version = str((obj.get("metadata") or {}).get("resourceVersion", ""))
        if kind == "BOOKMARK":
            self.resource_version = version or self.resource_version
            return
        key = object_key(obj)
        with self._lock:
            if kind == "DELETED":
                self._items.pop(key, None)
            else:
                self._items[key] = dict(obj)
            if version:
                self.resource_version = version
        self._changed()


def _describe(exc: BaseException) -> str:
    status = getattr(exc, "status", None)
    reason = getattr(exc, "reason", None)
    if status is not None:
        return f"HTTP {status} {reason or ''}".strip()
    return f"{type(exc).__name__}: {exc}"
