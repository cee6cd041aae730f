"""Each team's reclaim cool-down as the reader may see it: ``GET me``'s ``reclaim_cooldowns`` (their own teams)
and ``GET quotas``' (every team) — newuser38 n21: after n38a's release held team vision's reclaims, a teammate's
``status`` and ``jupyter-sched quotas`` said nothing until a job of theirs waited on it.

Read from the leading engine's last full cycle (``DecisionApplier.reclaims``: the snapshot's reclaims of the
last hour, no store read) and the profile's ``reclaim_cooldown_s``. Who gave up what they took is a teammate's
name: said to the team's members and to admins; another team reads only until when (and that it is a
cool-down), which tells them how long their borrowed GPUs are safe from that team's reclaims.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from ..model.units import to_iso
from ..scheduling.preempt.cooldown import team_cooldowns
from ..wording.quota import reclaim_paused_text

__all__ = ["cooldown_views"]


def cooldown_views(engine: Any, now: datetime, *, teams: Iterable[str] | None = None,
                   named: Callable[[str], bool] = lambda team: True, reader: str = "") -> list[dict[str, Any]]:
    """``reclaim_cooldowns`` entries (``services.models.quotas.ReclaimCooldownView``'s fields) of ``teams`` (None:
    every team), by team name, whose reclaims wait at ``now``; ``named(team)``: the reader may read who ended the
    work (its members, admins) — else ``user``, ``cause`` and ``actor`` are left out. [] where this server does not
    lead the scheduling or nothing is held. ``reader``: whose own work or act is said "your"/"you" in ``text``."""
    if not getattr(engine, "is_leader", False) or not engine.applier.reclaims:
        return []
    found = team_cooldowns(engine.applier.reclaims, float(getattr(engine.profile, "reclaim_cooldown_s", 0.0) or 0.0),
                           now)
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
