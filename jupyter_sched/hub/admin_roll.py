"""Who the scheduler treats as an admin on a hub, by name, in the service's log (newuser38 n7).

Three sources make a scheduler admin on a hub (hubadmin23 A8): the hub's admins, ``c.SchedApp.admin_users`` of the
service's config, and a caller whose token holds the scope ``c.HubIdentityProvider.admin_scope``. The start-up line
used to name only the sources (``scheduler admins: the hub's admins, holders of the scope …``): an admin new to the
hub could not confirm from the log that the hub admin they had just made was one. Now the log names them:

- at start, ``c.SchedApp.admin_users`` by name and that the hub's admins are named once its user list is read
  (the service reads it right after start, then every ``c.HubSchedApp.hub_poll_interval_s``);
- at that first read, every admin by name with where it comes from (``carol (hub admin)``); again whenever the
  hub's admins change (``+amy``, ``-carol``), not at every read;
- a scope holder is a property of a token, not of a user the hub lists: named once, at their first request as
  an admin (:meth:`AdminRoll.scope_admin`).

Names are escaped as the look-alike refusal shows them (:func:`~.lookalike_names.shown_name`): a hub name is text
its admin or authenticator chose, and the log is read in a terminal.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from .lookalike_names import shown_name

__all__ = ["AdminRoll"]

SHOWN = 20
"""Most names one line lists; the rest are counted (``and 3 more``)."""

_HUB = "hub admin"
_CONFIG = "c.SchedApp.admin_users"


def _names(names: Iterable[str]) -> str:
    ordered = sorted(names)
    said = ", ".join(shown_name(n) for n in ordered[:SHOWN])
    return said + (f" and {len(ordered) - SHOWN} more" if len(ordered) > SHOWN else "")


class AdminRoll:
    """The scheduler admins the log names (module docstring).

    Args:
        admin_scope: ``c.HubIdentityProvider.admin_scope``.
        admin_users: ``c.SchedApp.admin_users``.
    """

    def __init__(self, admin_scope: str, admin_users: Iterable[str]) -> None:
        self.admin_scope = admin_scope
        self.admin_users = frozenset(str(n) for n in admin_users)
        self.hub_admins: frozenset[str] | None = None
        """The hub's admins as last read (None: not read yet)."""
        self._scope_said: set[str] = set()
        self._lock = threading.Lock()  # requests resolve callers on threads

    def _scope_clause(self) -> str:
        return (f"; also any caller whose token holds the scope {self.admin_scope} "
                "(c.HubIdentityProvider.admin_scope), named here at their first request")

    def line(self) -> str:
        """``scheduler admins: carol (hub admin), boss (c.SchedApp.admin_users); also any caller …`` — each name
        once with its sources; before the hub's user list is read, the hub's admins are said to come then."""
        hub = self.hub_admins or frozenset()
        sources: dict[str, list[str]] = {}
        for name in sorted(hub | self.admin_users):
            sources[name] = [s for s, member in ((_HUB, name in hub), (_CONFIG, name in self.admin_users)) if member]
        shown = sorted(sources)[:SHOWN]
        names = ", ".join(f"{shown_name(n)} ({', '.join(sources[n])})" for n in shown)
        if len(sources) > SHOWN:
            names += f" and {len(sources) - SHOWN} more"
        if self.hub_admins is None:
            pending = "the hub's admins (named here once the hub's user list is read)"
            names = f"{names}, and {pending}" if names else pending
        elif not names:
            names = f"no one by name (the hub has no admin and {_CONFIG} is empty)"
        return f"scheduler admins: {names}{self._scope_clause()}"

    def seen(self, models: Mapping[str, Mapping[str, Any]]) -> str | None:
        """The hub's user models as a poll read them: the line to log at the first read and when the hub's admins
        changed (who was added or removed said first), else None."""
        admins = frozenset(str(name) for name, model in models.items() if model.get("admin") is True)
        with self._lock:
            before, self.hub_admins = self.hub_admins, admins
        if before is None:
            return self.line()
        if before == admins:
            return None
        change = "; ".join(part for part in (
            f"now a hub admin: {_names(admins - before)}" if admins - before else "",
            f"no longer a hub admin: {_names(before - admins)}" if before - admins else "") if part)
        return f"{change} — {self.line()}"

    def scope_admin(self, name: str, *, hub_admin: bool) -> str | None:
        """The line to log the first time ``name`` is an admin through the admin scope alone (neither a hub admin
        nor in ``c.SchedApp.admin_users``), else None."""
        if hub_admin or name in self.admin_users:
            return None
        with self._lock:
            if name in self._scope_said:
                return None
            self._scope_said.add(name)
        return (f"scheduler admins: {shown_name(name)} is one through the scope {self.admin_scope} of the token of "
                "this request (c.HubIdentityProvider.admin_scope)")
