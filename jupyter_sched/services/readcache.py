"""Answers of polled reads kept while what they were computed from is unchanged (issue 17).

Fifty panels polling ``GET queue`` and ``GET jobs`` each second asked the server to read, decode,
validate and serialise the same pages again and again: with 20,000 jobs stored one server
process was busy with that alone, and ``jupyter-sched status`` waited behind it. An answer here
is kept with the :class:`ReadVersion` it was computed at and served again while the version is
current:

- the store's ``jobs`` change counter (:meth:`~jupyter_sched.store.StoreTx.jobs_version`),
  incremented by every committed transaction that wrote a job row, in any process sharing the
  store — a submit, cancel or decision by this server or another is seen by the next read;
- the leading engine's latest pending reasons (:attr:`~jupyter_sched.engine.engine.Engine.reasons`,
  overlaid on stored rows by :meth:`~.context.Context.live`): compared by identity, since every
  cycle replaces the mapping (the version holds a reference, so an identity is never reused);
- whether this server leads, and whether the inventory is simulated (every job answer says so).

Keys name the caller's view (user, admin) and the request's arguments, so one user's answer is
never served to another. Only answers of the current version are kept (the first answer of a
new version drops the others), so memory holds one answer per (route, caller, arguments) that
was asked since the last change, at most ``limit``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

__all__ = ["ReadCache", "ReadVersion"]


@dataclass(frozen=True, eq=False)
class ReadVersion:
    """What a kept answer was computed from (see module docstring)."""

    jobs: int
    leader: bool
    reasons: object
    simulated: bool

    def same(self, other: ReadVersion) -> bool:
        """True when an answer computed at ``other`` is still right at ``self``."""
        return (self.jobs == other.jobs and self.jobs >= 0 and self.leader == other.leader
                and self.reasons is other.reasons and self.simulated == other.simulated)


class ReadCache:
    """Answers by key at one :class:`ReadVersion` (thread-safe: the request threads share it).

    Args:
        limit: answers kept at most (least recently used dropped first); 0 keeps none.
    """

    def __init__(self, limit: int = 256) -> None:
        self.limit = limit
        self.hits = 0
        self.misses = 0
        self._version: ReadVersion | None = None
        self._answers: OrderedDict[Hashable, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, version: ReadVersion) -> Any | None:
        """The answer kept for ``key`` if it was computed at ``version``; else None."""
        with self._lock:
            if self._version is not None and version.same(self._version) and key in self._answers:
                self._answers.move_to_end(key)
                self.hits += 1
                return self._answers[key]
            self.misses += 1
            return None

    def put(self, key: Hashable, version: ReadVersion, answer: Any) -> None:
        """Keep ``answer`` for ``key`` at ``version`` (answers of another version are dropped)."""
        if not self.limit or version.jobs < 0:
            return
        with self._lock:
            if self._version is None or not version.same(self._version):
                self._answers.clear()
                self._version = version
            self._answers[key] = answer
            self._answers.move_to_end(key)
            while len(self._answers) > self.limit:
                self._answers.popitem(last=False)
