"""Each team's reclaim cool-down as the reader may see it: ``GET me``'s ``reclaim_cooldowns`` (their own teams)
and ``GET quotas``' (every team) — newuser38 n21: after n38a's release held team vision's reclaims, a teammate's
``status`` and ``jupyter-sched quotas`` said nothing until a job of theirs waited on it.

Read from the store (:class:`StoredCooldowns`: the audit's reclaims of the last hour and their takers' rows, as
the engine's :class:`~..engine.reclaim_history.ReclaimHistory` reads them for the core) and the profile's
``reclaim_cooldown_s`` — so every server on the store says the same (s40-views: they came from the leading
engine's last cycle, and another embedded server on the same database said none). Who gave up what they took is
a teammate's name: said to the team's members and to admins; another team reads only until when (and that it is a
cool-down), which tells them how long their borrowed GPUs are safe from that team's reclaims.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from ..engine.reclaim_history import ReclaimHistory
from ..model.units import to_iso
from ..scheduling.preempt.cooldown import team_cooldowns
from ..scheduling.snapshot import ReclaimTaken
from ..store import Store
from ..wording.quota import reclaim_paused_text

__all__ = ["Cooling", "StoredCooldowns", "cooldown_views"]

Cooling = Mapping[str, tuple[ReclaimTaken, datetime]]
"""Per team whose reclaims wait, the taker that dropped what it took and until when (:func:`team_cooldowns`)."""


class StoredCooldowns:
    """Each team's reclaim cool-down now, from the store: the same on every server sharing it.

    Args:
        store: the store the audit's ``reclaim`` records and the takers' rows are read from.
        cooldown_s: ``() -> seconds``: the profile's ``reclaim_cooldown_s`` (0: none).

    One :class:`~..engine.reclaim_history.ReclaimHistory` of its own (new audit records only, after the first
    read of the last hour); its answer is kept while the store's ``jobs`` counter and the second are unchanged
    (a reclaim and a taker's end both write job rows), so ``GET me`` pollers share one read a second.
    """

    def __init__(self, store: Store, cooldown_s: Callable[[], float]) -> None:
        self.store = store
        self.cooldown_s = cooldown_s
        self._history = ReclaimHistory(store)
        self._kept: tuple[tuple[int, datetime, float], Cooling] | None = None

    def __call__(self, now: datetime, version: int | None = None) -> Cooling:
        """Per team whose reclaims wait at ``now``: the taker and until when (empty with no cool-down set).
        ``version``: the store's ``jobs`` counter where the caller read it (``GET me``'s transaction: on
        PostgreSQL, which has no read outside one); None: read here where that is cheap (SQLite), else not kept."""
        cool = float(self.cooldown_s() or 0.0)
        if cool <= 0:
            return {}
        if version is None:
            version = self.store.jobs_version_now()
        key = None if version is None or version < 0 else (version, now.replace(microsecond=0), cool)
        kept = self._kept
        if key is not None and kept is not None and kept[0] == key:
            return kept[1]
        found = team_cooldowns(self._history(now, {}), cool, now)  # the history locks its own memo
        if key is not None:
            self._kept = (key, found)
        return found


def cooldown_views(found: Cooling, now: datetime, *, teams: Iterable[str] | None = None,
                   named: Callable[[str], bool] = lambda team: True, reader: str = "") -> list[dict[str, Any]]:
    """``reclaim_cooldowns`` entries (``services.models.quotas.ReclaimCooldownView``'s fields) of ``teams`` (None:
    every team), by team name, of ``found`` (:class:`StoredCooldowns`' answer at ``now``); ``named(team)``: the
    reader may read who ended the work (its members, admins) — else ``user``, ``cause`` and ``actor`` are left out.
    ``reader``: whose own work or act is said "your"/"you" in ``text``."""
    if not found:
        return []
    wanted = sorted(found) if teams is None else [t for t in dict.fromkeys(teams) if t in found]
    out = []
    for team in wanted:
        took, until = found[team]
        if named(team):
            out.append({"team": team, "until": to_iso(until), "user": took.user, "cause": took.cause,
                        "actor": took.actor or None, "lease": took.lease,
                        "text": reclaim_paused_text(team, until, now, user=took.user, cause=took.cause,
                                                    actor=took.actor, lease=took.lease, reader=reader)})
        else:
            out.append({"team": team, "until": to_iso(until), "text": reclaim_paused_text(team, until, now)})
    return out
