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
The bound aggregates, it never drops (red team 18, R1: 60 cheap refusals of one kind bought the
right to probe another user's job with no named record):

- one *kind* of refusal (its status, request and field) takes at most half of a user's places a
  minute, so a flood of one kind leaves room for the others;
- a refusal that names another user's object (``target``: the job or lease id probed) is written
  the first time in the minute for each kind and target, beyond those places (at most
  ``per_minute`` such rows), so probing someone's work is always on the record by name;
- what was only counted is reported per kind and target (``by_kind``) when the minute ends —
  with the next refusal of anyone, or by :meth:`RefusalWindows.flush` from the engine's tick.

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
from dataclasses import dataclass, field
from typing import NamedTuple

from ..model import QuotaSet
from ..store import Store

__all__ = ["RecentQuotaSet", "RefusalSummary", "RefusalWindows", "SubmitBuckets"]


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


MAX_KINDS_KEPT = 50
"""Kinds (and targets) counted one by one in a user's minute; more are counted as ``(other kinds)``."""
OTHER_KINDS = "(other kinds)"


class RefusalSummary(NamedTuple):
    """A minute that ended with refusals only counted: whose, how many, and how many of each kind
    (``"403 POST jobs (team)"``; a targeted one ends with the id probed)."""

    user: str
    counted: int
    by_kind: dict[str, int]


@dataclass
class _Window:
    """One user's refusals in the current minute: when it began (monotonic s), how many were
    written (untargeted, and targeted), how many only counted, per kind."""

    started: float
    written: int = 0
    targeted: int = 0
    counted: int = 0
    written_by_kind: dict[str, int] = field(default_factory=dict)
    counted_by_kind: dict[str, int] = field(default_factory=dict)


class RefusalWindows:
    """Per-user refusal minutes (thread-safe): which refusals are written one by one, which only
    counted, and the counts of minutes that ended (module docstring).

    Args:
        per_minute: untargeted refusals of one user written one by one per minute (one kind: at
            most half of them); also the most targeted ones written beyond those.
        window_s: the length of a minute (seconds).
        monotonic: the clock of those minutes (seconds).
    """

    def __init__(self, *, per_minute: int, window_s: float = 60.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.per_minute = per_minute
        self.per_kind = max(1, per_minute // 2)
        self.window_s = window_s
        self.monotonic = monotonic
        self._windows: dict[str, _Window] = {}
        self._lock = threading.Lock()

    def take_place(self, user: str, kind: str = "", target: str | None = None) -> tuple[bool, list[RefusalSummary]]:
        """Whether ``user``'s refusal of ``kind`` (naming ``target``, another user's job or lease
        id, if any) may be written one by one this minute (else it is counted), and the summary of
        every minute that has ended with refusals only counted (each reported once)."""
        now = self.monotonic()
        with self._lock:
            ended = self._ended(now)
            window = self._windows.setdefault(user, _Window(started=now))
            key = kind if target is None else f"{kind} {target}"
            done = window.written_by_kind.get(key, 0)
            if target is not None and done == 0 and window.targeted < self.per_minute:
                window.targeted += 1  # the first probe of each object a minute is always named
                allowed = True
            else:
                allowed = window.written < self.per_minute and done < self.per_kind
                if allowed:
                    window.written += 1
            if allowed:
                window.written_by_kind[key] = done + 1
            else:
                window.counted += 1
                if key not in window.counted_by_kind and len(window.counted_by_kind) >= MAX_KINDS_KEPT:
                    key = OTHER_KINDS
                window.counted_by_kind[key] = window.counted_by_kind.get(key, 0) + 1
        return allowed, ended

    def flush(self) -> list[RefusalSummary]:
        """The summaries of the minutes that have ended (each reported once), without a refusal
        to carry them: a user who stops after a flood is still reported."""
        with self._lock:
            return self._ended(self.monotonic())

    def _ended(self, now: float) -> list[RefusalSummary]:
        ended = [(who, w) for who, w in self._windows.items() if now - w.started >= self.window_s]
        for who, _ in ended:
            del self._windows[who]
        return [RefusalSummary(who, w.counted, dict(w.counted_by_kind)) for who, w in ended if w.counted]


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
