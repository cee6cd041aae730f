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
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import Any

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
        retry_s: pause before reconnecting after a transport error (seconds).
        list_kwargs: extra arguments for every call (``label_selector``, ``field_selector``).
    """

    def __init__(self, list_fn: Callable[..., Any], *, name: str,
                 on_change: Callable[[], None] | None = None, watch_timeout_s: int = 240,
                 retry_s: float = 1.0, list_kwargs: Mapping[str, Any] | None = None) -> None:
        self._list_fn = list_fn
        self.name = name
        self._on_change = on_change
        self._watch_timeout_s = watch_timeout_s
        self._retry_s = retry_s
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
                log.info("watch of %s expired (410 Gone) at resourceVersion %s; relisting",
                         self.name, self.resource_version)
                self._relist_until_ok()
            except Exception as exc:
                if self._stop.is_set():
                    break
                if getattr(exc, "status", None) == GONE:
                    self._relist_until_ok()
                    continue
                log.warning("watch of %s failed: %s; retrying", self.name, _describe(exc))
                self._stop.wait(self._retry_s)

    def _relist_until_ok(self) -> None:
        while not self._stop.is_set():
            try:
                self.relist()
                return
            except ExecutorError as exc:
                log.warning("%s", exc)
                self._stop.wait(self._retry_s)

    def _watch_once(self) -> None:
        response = self._list_fn(
            watch=True, resource_version=self.resource_version, allow_watch_bookmarks=True,
            timeout_seconds=self._watch_timeout_s, _preload_content=False,
            _request_timeout=(10, self._watch_timeout_s + 30), **self._kwargs)
        self._response = response
        try:
            if self._stop.is_set():  # stop() ran while the request was in flight and saw no response
                return
            for line in _lines(response):
                if self._stop.is_set():
                    return
                self._apply(json.loads(line))
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
