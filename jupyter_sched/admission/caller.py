"""``Caller``: who is asking, as the admission step decided it once for one request.

Services receive a :class:`Caller` and never look the caller up again: the user name, the teams
the caller may charge, the priority classes granted per team and the admin flag are fixed for the
whole request. Build one with :func:`jupyter_sched.admission.resolve_caller` (pure) or
:meth:`jupyter_sched.admission.Admission.caller` (reads the stored quota set first).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["DEFAULT_CLASSES", "PRIORITY_CLASSES", "Caller", "PriorityGrants", "system_caller"]

PRIORITY_CLASSES = ("high", "normal", "low")
"""The three priority classes (DESIGN.md *Semantics*)."""

DEFAULT_CLASSES: frozenset[str] = frozenset({"normal", "low"})
"""Classes every team may use unless its team policy says otherwise; ``high`` is granted to nobody
by default (an admin grants it: ``c.SchedApp.priority_grants`` or a team policy's
``allowed_priorities``)."""


@dataclass(frozen=True, slots=True, eq=False)
class Caller:
    """The authenticated caller of one request.

    Attributes:
        user: the user name work is owned by (never taken from a request body).
        teams: the teams the caller may charge, the default (primary) team first; never empty
            for a person (a system caller has none and submits nothing).
        granted: per team the caller may charge, the priority classes they may use in it (for an
            admin also every team an admin named: admins may charge any known team).
        admin: may use admin routes and see or act on other users' work.
    """

    user: str
    teams: tuple[str, ...]
    granted: Mapping[str, frozenset[str]] = field(default_factory=lambda: MappingProxyType({}))
    admin: bool = False

    @property
    def default_team(self) -> str | None:
        """The team a request that names none is charged to (the first of ``teams``)."""
        return self.teams[0] if self.teams else None

    def may_charge(self, team: str) -> bool:
        """True for one of the caller's teams; for an admin, also any team an admin named."""
        return team in self.teams or (self.admin and team in self.granted)

    def classes_for(self, team: str) -> frozenset[str]:
        """Priority classes the caller may use in ``team`` (empty when not a member)."""
        return self.granted.get(team, frozenset())

    def __repr__(self) -> str:
        return f"Caller(user={self.user!r}, teams={self.teams!r}, admin={self.admin})"


@dataclass(frozen=True, slots=True)
class PriorityGrants:
    """Priority classes an admin granted beyond the team policies (``c.SchedApp.priority_grants``).

    Attributes:
        users: user name → classes that user may use in every team they belong to.
        teams: team name → classes every member may use when charging that team.
    """

    users: Mapping[str, frozenset[str]] = field(default_factory=dict)
    teams: Mapping[str, frozenset[str]] = field(default_factory=dict)


def system_caller(name: str) -> Caller:
    """A caller for the service's own work (activity reports, the hub's lease reaper, metrics):
    admin, in no team, granted nothing. Never built from a request."""
    return Caller(user=name, teams=(), admin=True)
