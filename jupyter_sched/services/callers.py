"""The service layer's state around the pure admission step: the quota set callers are resolved
from, and each user's refusal minute (issue 17).

**The callers' quota set.** Every request resolves its :class:`~jupyter_sched.admission.Caller`
(teams and priority classes) from the quota set in force. :meth:`Store.quota_set
<jupyter_sched.store.Store.quota_set>` keeps the decoded set, but still opens a transaction and
asks the database for the ``quotas`` change counter each time: under ``status_bench``'s load
(50 panels polling, ``jupyter-sched status``) that was 9.5 % of the server's GIL samples, for a
set that changes a few times a day. :class:`RecentQuotaSet` asks the store again only when

- this process replaced the quota set through the same :class:`~jupyter_sched.store.Store`
  (``Store.quotas_written`` moved): the next caller already sees it, exactly as before; or
- ``recheck_s`` seconds passed since the last read (default 1 s): a replacement by *another*
  process sharing the store (a second server of a hub, an admin's CLI on the database) reaches
  caller resolution here within that bound.

Only team membership and priority classes of the caller are concerned. Authentication runs on
every request unchanged (a revoked token fails at once), and what a submit is checked against
(its quota lines, budgets, policies) is read fresh in its own transaction
(:meth:`~.jobs.JobsService.prepare`): a user moved out of a team by another process may, for at
most ``recheck_s``, be resolved with their old teams, and their request is then still judged
against the new quota lines.

**Refusal minutes.** :class:`RefusalWindows` is the per-user counting behind
``Admission.record_refusal``'s bound (at most ``REFUSAL_RECORDS_PER_MINUTE`` refusals of one user
written one by one a minute): state, a lock and a clock, so it lives here and not in the pure
admission package, which asks it through :class:`~jupyter_sched.admission.gate.RefusalLimiter`.

**Submit rates.** :class:`SubmitBuckets` keeps each user's token bucket behind
``c.SchedApp.max_submits_per_user_minute`` (new user 17, N11), asked through
:class:`~jupyter_sched.admission.gate.SubmitRate`. Written here rather than taken from a library:
tornado and jupyter_server have no request rate limit (jupyter_server's ``iopub_*_rate_limit`` are
for kernel output only), and pyrate-limiter (installed here, for schemathesis) keeps a sliding
log of every item with a leaker thread per bucket and answers a refused non-blocking take with
``False``, not the wait a ``Retry-After`` needs — a token bucket is two numbers per user. Per
server process: a hub runs one central service, so one bucket per user.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..model import QuotaSet
from ..store import Store

__all__ = ["RecentQuotaSet", "RefusalWindows", "SubmitBuckets"]


class RecentQuotaSet:
    """``quota_set()`` for resolving callers: the store's set, asked again only after a local
    replacement or ``recheck_s`` seconds (module docstring).

    Args:
        store: the store (its ``quota_set()`` and ``quotas_written``).
        recheck_s: seconds a read serves before the store is asked again (0: every call).
        monotonic: the clock of ``recheck_s`` (seconds).
    """

    def __init__(self, store: Store, *, recheck_s: float = 1.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.store = store
        self.recheck_s = recheck_s
        self.monotonic = monotonic
        self._kept: tuple[float, int, QuotaSet] | None = None  # (read at, store's quotas_written then, set)

    def __call__(self) -> QuotaSet:
        """The quota set in force, as of at most ``recheck_s`` ago (this process's changes: now).

        Raises:
            StoreError: the store failed.
        """
        now, written = self.monotonic(), self.store.quotas_written
        kept = self._kept  # one read of the attribute: another request thread may replace it
        if kept is not None and kept[1] == written and now - kept[0] < self.recheck_s:
            return kept[2]
        quota_set = self.store.quota_set()
        # ``written`` was read before the store: a replacement committed meanwhile moved the
        # counter, so this read is asked again next time rather than kept past that change
        self._kept = (now, written, quota_set)
        return quota_set


@dataclass
class _Window:
    """One user's refusals in the current minute: when it began (monotonic s), how many were
    written, how many only counted."""

    started: float
    written: int = 0
    counted: int = 0


class RefusalWindows:
    """Per-user refusal minutes (thread-safe): which refusals are written one by one, which only
    counted, and the counts of minutes that ended (module docstring).

    Args:
        per_minute: refusals of one user written one by one per minute.
        window_s: the length of a minute (seconds).
        monotonic: the clock of those minutes (seconds).
    """

    def __init__(self, *, per_minute: int, window_s: float = 60.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.window_s = window_s
        self.monotonic = monotonic
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()

    def take_place(self, user: str) -> tuple[bool, list[tuple[str, int]]]:
        """Whether ``user``'s refusal may be written one by one this minute (else it is counted),
        and ``(user, counted)`` of every minute that has ended with refusals only counted (each
        reported once)."""
        now = self.monotonic()
        with self._lock:
            ended = [(who, w) for who, w in self._windows.items() if now - w.started >= self.window_s]
            for who, _ in ended:
                del self._windows[who]
            window = self._windows.setdefault(user, _Window(started=now))
            allowed = window.written < self.per_minute
            if allowed:
                window.written += 1
            else:
                window.counted += 1
        return allowed, [(who, w.counted) for who, w in ended if w.counted]


class SubmitBuckets:
    """Per-user token buckets of submits (thread-safe; module docstring): a bucket holds at most
    ``per_minute`` tokens, refilled at ``per_minute`` a minute; a submit takes one.

    Args:
        monotonic: the clock (seconds).
        keep: users kept before full buckets are forgotten (a full bucket is the state of a user
            never seen, so forgetting it changes nothing).
    """

    def __init__(self, *, monotonic: Callable[[], float] = time.monotonic, keep: int = 10_000) -> None:
        self.monotonic = monotonic
        self.keep = keep
        self._buckets: dict[str, tuple[float, float]] = {}  # user -> (tokens, at)
        self._lock = threading.Lock()

    def take(self, user: str, per_minute: int) -> float:
        """Take one of ``user``'s tokens: 0.0 when taken, else the seconds until one is there."""
        now, rate = self.monotonic(), per_minute / 60.0
        with self._lock:
            tokens, at = self._buckets.get(user, (float(per_minute), now))
            tokens = min(float(per_minute), tokens + (now - at) * rate)
            if tokens >= 1.0:
                self._buckets[user] = (tokens - 1.0, now)
                if len(self._buckets) > self.keep:
                    self._forget_full(now, per_minute)
                return 0.0
            self._buckets[user] = (tokens, now)
            return (1.0 - tokens) / rate

    def _forget_full(self, now: float, per_minute: int) -> None:
        full = [u for u, (tokens, at) in self._buckets.items() if tokens + (now - at) * per_minute / 60.0 >= per_minute]
        for user in full:
            del self._buckets[user]
