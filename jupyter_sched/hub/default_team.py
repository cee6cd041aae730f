"""Hub mode: a user's default team is the hub group they joined first (newuser38 N3).

A user's teams are their hub groups; the team a request that names none is charged to was the
alphabetically first (known teams first). Added by a hub admin to a second group, ``nlp`` before
``vision``, a user's new work was silently charged to ``nlp``. Now each user's groups keep the order
this service first saw them in (a group joined later goes last; one left drops out, so the next by join
order becomes the default), kept in the audit (action :data:`ORDER_ACTION`, read back at a start), and a
change is said to the user — once on their next submit too (:meth:`TeamOrder.submit_note`): ``you are now also in nlp; new work still goes to vision — --team nlp to
charge it`` (``GET me``'s ``team_note``, ``jupyter-sched status``'s ``team`` line) for :data:`NOTE_S`.

Known teams (with a quota line or policy) still come before groups without one (:func:`resolve_caller`).

The note goes with the teams a request was answered with, read at the same moment (newuser39 n12): a request's
groups come from the identity (cached up to ``token_cache_s``), the order from the hub's poll, and for up to a
minute after a user left ml, ``status`` said ``team cv`` over ``you are now also in cv; new work still goes to ml``.
:meth:`TeamOrder.note` is given the request's groups and default team: groups other than the poll last saw are
said as the change from those to these, and a note that sends new work elsewhere than the request's default
team is not said (nor on a submit charged elsewhere, :meth:`TeamOrder.submit_note`).
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
    no longer in vision; new work now goes to nlp``; "" when nothing the user charges changed. New work goes
    to ``after[0]``."""
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
        self._notes: dict[str, tuple[datetime, str, str]] = {}  # user -> (seen at, note, team new work goes to)
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

    def note(self, user: str, now: datetime, *, groups: Sequence[str] | None = None, default: str | None = None) -> str:
        """The change of ``user``'s groups said within :data:`NOTE_S` of ``now``, else "". ``groups``: the hub groups
        the answer it goes with was read from — when they are not the ones the hub's poll last saw (one of the two
        is fresher), the change from those to these is said, as the answer's teams show it; ``default``: the
        answer's default team — a note sending new work elsewhere is not said (module docstring, newuser39 n12)."""
        with self._lock:
            said, last = self._notes.get(user), self._order.get(user)
        if groups is not None and last is not None and set(groups) != set(last):
            now_in = self.order(user, groups)
            text, goes_to = order_note(last, now_in), now_in[0] if now_in else None
        elif said is not None and (now - said[0]).total_seconds() < NOTE_S:
            text, goes_to = said[1], said[2]
        else:
            return ""
        return text if default is None or goes_to == default else ""

    def noted(self, answer: Any, groups: Sequence[str] | None, now: datetime) -> Any:
        """``GET me``'s ``answer`` (:class:`~jupyter_sched.services.models.quotas.GetMeResponse`) with its
        ``team_note`` (:meth:`note`), said of the hub ``groups`` the answer was read from (the request's caller,
        None: not known) and of its default team: the ``team`` line and its note agree (newuser39 n12)."""
        note = self.note(answer.user, now, groups=groups, default=answer.team)
        return answer.model_copy(update={"team_note": note}) if note else answer

    def submit_note(self, user: str, now: datetime, charged: str | None = None) -> str:
        """:meth:`note`, said once more on ``user``'s next submit that names no team, within :data:`NOTE_S` (the
        submit's answer: CLI ``submit``, ``%gpu request``, ``%%schedule``, the panel's toast), then not again until
        their groups change (newuser38 N3: only ``GET me``/``status`` said it, which a user may not read) — unless
        it sends new work elsewhere than the team the job was ``charged`` to (the request's groups were read after
        a change the hub's poll has not seen yet: newuser39 n12), then said on a later submit."""
        with self._lock:
            said = self._notes.get(user)
            if said is None or user in self._submitted or (now - said[0]).total_seconds() >= NOTE_S:
                return ""
            if charged is not None and said[2] != charged:
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
                    self._notes[user] = (now, note, after[0])
                    self._submitted.discard(user)  # a new change: said on the next submit again
                self._recorded.add(user)
                changed.append(user)
                if self.record is not None:
                    self.record(user, after)
        return changed
