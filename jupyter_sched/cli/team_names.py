"""An unknown ``--team`` said as such (hubadmin25 B14): ``queue --summary --team nosuch`` said "No team has
work pending or running, and no team has a quota line" — false, three had — and ``cancel --all --team
nosuch`` "nothing to cancel": a typo of a team's name read as a team with nothing to do.

A team is known when the quota set names it (a quota line, a budget, a team policy, a membership: GET
quotas, as the caller may read it), work of it is listed, or it is one of the caller's own (GET me: the
default team among them). Only an empty answer is checked: a team
with work (a dissolved team's history too) is a team. Standard library only (the CLI's start-up cost).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..client._wire import Req

__all__ = ["known_teams", "unknown_team"]


def known_teams(quotas: Any, rows: Iterable[Mapping[str, Any]] = ()) -> set[str]:
    """Team names in GET quotas' answer ``quotas`` (lines, budgets, team policies, memberships) and ``rows``."""
    names: set[str] = {str(r.get("team")) for r in rows if r.get("team")}
    if isinstance(quotas, Mapping):
        for key in ("quotas", "budgets", "teams"):
            names |= {str(x["team"]) for x in quotas.get(key) or () if isinstance(x, Mapping) and x.get("team")}
        for teams in (quotas.get("user_teams") or {}).values():
            names |= {str(t) for t in teams or ()}
    return names


def unknown_team(client: Any, team: str | None, *, quotas: Any = None, rows: Iterable[Mapping[str, Any]] = (),
                 has_work: Callable[[], bool] | None = None) -> str | None:
    """``no team nosuch (teams: cv, nlp) — did you mean nlp?`` when ``team`` is given and known nowhere
    (:func:`known_teams`; GET quotas read unless ``quotas`` is given; ``has_work``: whether any work of it is
    stored, asked last — a dissolved team's history makes it a team); None when it is known or not given."""
    if not team:
        return None
    known = known_teams(client.call(Req("GET", "quotas")) if quotas is None else quotas, rows)
    if team in known:
        return None
    me = client.me() if hasattr(client, "me") else {}  # the caller's own teams: the default team among them
    known |= {str(t) for t in (me.get("teams") or ()) if t} if isinstance(me, Mapping) else set()
    if team in known or (has_work is not None and has_work()):
        return None
    close = difflib.get_close_matches(team, sorted(known), n=1)
    listed = ", ".join(sorted(known)) or "none is named yet"
    return f"no team {team} (teams: {listed})" + (f" — did you mean {close[0]}?" if close else "")
