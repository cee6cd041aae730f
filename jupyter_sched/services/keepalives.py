"""Until when each lease's keepalive keeps it, from the store: what every server's lease rows say.

``%gpu keepalive`` (``POST leases/{id}/keepalive``) writes the lease's one keepalive as an ``idle_keepalive`` audit
record whose details carry ``keepalive_until`` and the allocation (``attempt``) it is for
(:meth:`~.leases.LeasesService.keepalive`); the leading engine's idle ladder picks it up from there. A lease row's
``idle_release.keepalive_until`` (newuser39 n11: ``not before 16:16 UTC: kept while idle until then``) was read
from that engine's ladder cache — which a server that does not lead never fills, and which lags a cycle where it
does (s40-views). :class:`StoredKeepalives` reads the same records on every server: the first read takes the
action's records of the longest keepalive the idle policy allows (on its index), later ones only those past the
last id seen, and only when the store's ``jobs`` counter moved (the keepalive's transaction writes the lease's row
too).
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from ..errors import SchedError
from ..model import Job, parse_utc
from ..store import Store

__all__ = ["ACTION", "PAGE", "StoredKeepalives"]

ACTION = "idle_keepalive"
"""The audit action a keepalive is written as (:meth:`~.leases.LeasesService.keepalive`)."""
PAGE = 5000
"""Records read per query (more are read page by page)."""


class StoredKeepalives:
    """Each lease's keepalive end, read from the audit (module docstring); safe from several request threads.

    Args:
        store: the store the ``idle_keepalive`` records are read from.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._lock = threading.Lock()
        self._after: int | None = None  # the last record id read (None: nothing read yet)
        self._version: int | None = None  # the store's ``jobs`` counter at that read
        self._until: dict[str, tuple[int, datetime]] = {}  # lease id -> (attempt, keepalive until)

    def until(self, job: Job, now: datetime, longest_s: float) -> datetime | None:
        """When ``job``'s keepalive of its current allocation ends, while that is after ``now``; else None.
        ``longest_s``: the longest keepalive the idle policy allows (seconds; the first read goes back that far)."""
        self._refresh(now, longest_s)
        kept = self._until.get(job.id)
        if kept is None or kept[0] != job.attempts or kept[1] <= now:
            return None
        return kept[1]

    def _refresh(self, now: datetime, longest_s: float) -> None:
        """Read the records written since the last read, unless the ``jobs`` counter says none was."""
        version = self.store.jobs_version_now()
        if version is not None and version >= 0 and version == self._version and self._after is not None:
            return
        with self._lock, self.store.transaction(write=False) as tx:
            if version is None:
                version = tx.jobs_version()
            first = self._after is None
            since = now - timedelta(seconds=max(0.0, longest_s)) if first else None
            top = 0
            if first:  # later reads go on from the log's newest record, whatever the first one found
                newest = tx.list_events(newest_first=True, limit=1)
                top = newest[0].id if newest else 0
            while True:
                page = tx.list_events(action=ACTION, after_id=self._after, since=since, limit=PAGE)
                for event in page:
                    self._after = max(self._after or 0, event.id)
                    self._note(event.job_id, event.details)
                if len(page) < PAGE:
                    break
            self._after = max(self._after or 0, top)
            self._version = version
            for lease in [i for i, (_, until) in self._until.items() if until <= now]:
                del self._until[lease]  # over: said by no row again (the dict holds live keepalives only)

    def _note(self, lease: str | None, details: object) -> None:
        """One ``idle_keepalive`` record: its lease's keepalive end for its allocation (a later record wins)."""
        if not lease or not isinstance(details, dict):
            return
        until, attempt = details.get("keepalive_until"), details.get("attempt")
        if not isinstance(until, str) or not isinstance(attempt, int):
            return
        try:
            self._until[lease] = (attempt, parse_utc(until, field="keepalive_until"))
        except SchedError:  # a time this release cannot read: that lease's rows say no keepalive
            return
