"""Hub mode: a user's default team is the hub group they joined first (newuser38 N3).

A user's teams are their hub groups; the team a request that names none is charged to was the
alphabetically first (known teams first). Added by a hub admin to a second group, ``nlp`` before
``vision``, a user's new work was silently charged to ``nlp``. Now each user's groups keep the order
this service first saw them in (a group joined later goes last; one left drops out, so the next by join
order becomes the default), kept in the audit (action :data:`ORDER_ACTION`, read back at a start), and a
change is said to the user — once on their next submit too (:meth:`TeamOrder.submit_note`): ``you are now also in nlp; new work still goes to vision — --team nlp to
charge it`` (``GET me``'s ``team_note``, ``jupyter-sched status``'s ``team`` line) for :data:`NOTE_S`.

Known teams (with a quota line or policy) still come before groups without one (:func:`resolve_caller`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

__all__ = ["NOTE_S", "ORDER_ACTION", "TeamOrder", "order_note", "record_order"]

ORDER_ACTION = "team_order"
"""Audit action of a user's hub groups in join order (details ``{"user", "teams"}``)."""

NOTE_S = 86400.0
"""Seconds a change of a user's groups is said in ``GET me`` after it was seen."""

_RESTORED = 5000
"""Newest :data:`ORDER_ACTION` records read back at a start."""


def record_order(store: Any, user: str, teams: Sequence[str]) -> None:
    """The audit record of ``user``'s groups in join order (:meth:`TeamOrder.prime` reads it back). Store write."""
    store.add_event(actor="jupyterhub", action=ORDER_ACTION, job_id=None, user=user,
                    message=f"{user}'s teams in join order: {', '.join(teams)} (default {teams[0] if teams else 'none'})",
                    details={"user": user, "teams": list(teams)})


def order_note(before: Sequence[str], after: Sequence[str]) -> str:
    """``you are now also in nlp; new work still goes to vision — --team nlp to charge it``, or ``you are
    no longer in vision; new work now goes to nlp``; "" when nothing the user charges changed."""
    added = [g for g in after if g not in before]
    left = [g for g in before if g not in after]
    if not after or not before:
        return ""
    if after[0] == before[0]:
        if not added:
            return ""
        named = ", ".join(added)
        return (f"you are now also in {named}; new work still goes to {after[0]} — --team {added[0]} to charge "
                f"{'it' if len(added) == 1 else 'one of them'}")
    return (f"you are no longer in {', '.join(left)}; new work now goes to {after[0]}"
            + (f" — --team {after[1]} to charge another" if len(after) > 1 else ""))


class TeamOrder:
    """Per user, their hub groups in the order this service saw them joined (module docstring)."""

    def __init__(self, *, record: Callable[[str, tuple[str, ...]], None] | None = None) -> None:
        self._order: dict[str, tuple[str, ...]] = {}
        self._notes: dict[str, tuple[datetime, str]] = {}
        self._recorded: set[str] = set()
        self._submitted: set[str] = set()  # users whose note a submit's answer said (:meth:`submit_note`)
        self._lock = threading.Lock()
        self.record = record
        """``record(user, teams)``: keep a changed order (the central service writes the audit record)."""

    def prime(self, store: Any) -> None:
        """At a start: the orders kept in the newest :data:`_RESTORED` audit records (store reads)."""
        rows = store.list_events(action=ORDER_ACTION, limit=_RESTORED, newest_first=True)
        for row in sorted(rows, key=lambda r: r.id):
            details = row.details or {}
            user, teams = details.get("user"), details.get("teams")
            if isinstance(user, str) and isinstance(teams, list):
                self._order[user] = tuple(str(t) for t in teams)
                self._recorded.add(user)

    def order(self, user: str, groups: Sequence[str]) -> list[str]:
        """``groups`` in ``user``'s join order (groups never seen before last, alphabetically)."""
        known = self._order.get(user, ())
        given = set(groups)
        return [g for g in known if g in given] + sorted(given - set(known))

    def note(self, user: str, now: datetime) -> str:
        """The change of ``user``'s groups said within :data:`NOTE_S` of ``now``, else ""."""
        said = self._notes.get(user)
        return said[1] if said is not None and (now - said[0]).total_seconds() < NOTE_S else ""

    def submit_note(self, user: str, now: datetime) -> str:
        """:meth:`note`, said once more on ``user``'s next submit that names no team, within :data:`NOTE_S` (the
        submit's answer: CLI ``submit``, ``%gpu request``, ``%%schedule``, the panel's toast), then not again until
        their groups change (newuser38 N3: only ``GET me``/``status`` said it, which a user may not read)."""
        with self._lock:
            said = self._notes.get(user)
            if said is None or user in self._submitted or (now - said[0]).total_seconds() >= NOTE_S:
                return ""
            self._submitted.add(user)
            return said[1]

    def observe(self, models: Mapping[str, Mapping[str, Any]], now: datetime) -> list[str]:
        """The hub poll's user models: each user's groups in join order; the users whose order changed."""
        changed = []
        with self._lock:
            for name, model in models.items():
                groups = model.get("groups")
                if not isinstance(groups, list):  # not said (token scope): unknown, never "in none"
                    continue
                user = str(name)
                before = self._order.get(user)
                after = tuple(self.order(user, [str(g) for g in groups]))
                if before == after:
                    continue
                self._order[user] = after
                if before is None and len(after) < 2 and user not in self._recorded:
                    continue  # one group: no choice to keep yet
                if before is not None and (note := order_note(before, after)):
                    self._notes[user] = (now, note)
                    self._submitted.discard(user)  # a new change: said on the next submit again
                self._recorded.add(user)
                changed.append(user)
                if self.record is not None:
                    self.record(user, after)
        return changed
