"""A user's held work in a few words, for "where you stand" (``GET me``'s ``held``; newuser38 n24).

Hub user n38b left team nlp; ``jupyter-sched status`` said ``my work    1 pending`` — nothing else — while that
job was held: "n38b is no longer a member of team nlp … it never starts charged to nlp". Every standing hold
(a job whose reason code is one of :data:`~jupyter_sched.scheduling.gates.HELD_CODES`: a person's hold, its
owner removed from the hub or not yet confirmed, a team or class left, a quota row that does not read, a
reinstall under the running server) is said apart from the work that waits to start, to its owner, with what
to do: ``held: never starts (you left team nlp) — cancel and resubmit with --team vision``.

:func:`held_kind` turns one held job's reason into ``(code, what, fix)`` in the second person (``GET me`` is
the owner's own answer); :func:`held_groups` counts a user's held jobs per ``(code, what)``. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["HeldGroup", "held_groups", "held_kind", "held_line"]

HeldGroup = tuple[str, int, str, str]
"""``(code, jobs, what, fix)``: one kind of hold of one user's jobs (``GET me``'s ``held[]``)."""


def _names(values: Any) -> list[str]:
    return [str(v) for v in values] if isinstance(values, (list, tuple)) else []


def _resubmit(teams: Sequence[str], left: str) -> str:
    """``cancel and resubmit with --team vision`` — to the teams its owner is in now."""
    others = [t for t in teams if t != left]
    if len(others) == 1:
        return f"cancel and resubmit with --team {others[0]}"
    if others:
        return f"cancel and resubmit with --team (one of {', '.join(others)})"
    return f"cancel it, or ask an admin to add you to a team (or back to {left})"


def held_kind(code: str, details: Mapping[str, Any], message: str, unblock: str, job_id: str) -> tuple[str, str]:
    """``(what, fix)`` of one of the reader's own held jobs: ``("never starts (you left team nlp)", "cancel and
    resubmit with --team vision")``. ``details``, ``message``, ``unblock``: its pending reason's; a hold kind this
    does not know is said by its reason's own words."""
    team = str(details.get("team") or "")
    if code == "TeamMembership":
        teams = _names(details.get("teams"))
        if details.get("priority"):
            granted = str(details["priority"])
            return (f"never starts (priority {granted} is no longer granted to you in team {team})",
                    f"cancel and resubmit with a class granted in {team}, or ask an admin to grant {granted} again")
        if details.get("vanished"):
            return f"never starts (team {team} is no hub group any more)", _resubmit(teams, team)
        return f"never starts (you left team {team})", _resubmit(teams, team)
    if code == "OwnerRemoved":
        groups = _names(details.get("groups"))
        back = f" and to your group{'s' if len(groups) > 1 else ''} {', '.join(groups)}" if groups else ""
        return "never starts (you are no longer a user of this hub)", f"ask an admin to re-add you on the hub{back}"
    if code == "OwnerUnconfirmed":
        return ("waits for the hub to confirm you (the scheduler service just started)",
                "nothing to do: it goes on once the hub answers")
    if code == "Held":
        by = str(details.get("by") or "")
        if details.get("admin"):
            return f"held by an admin ({by})", f"ask an admin to release it: jupyter-sched release {job_id}"
        return f"held by {by}", f"release it: jupyter-sched release {job_id}"
    if code == "QuotaRowUnreadable":
        return (f"waits: a quota row of team {team} does not read",
                "ask an admin to repair or remove it (jupyter-sched doctor)")
    if code == "Reinstalled":
        fix = ("ask an admin to restart the scheduler service" if details.get("service")
               else "restart jupyter lab (the jobs stay pending)")
        return "waits: jupyter_sched was reinstalled under the running server", fix
    return message, unblock


def held_groups(held: Iterable[tuple[str, str, Mapping[str, Any], str, str]]) -> list[HeldGroup]:
    """``held``: ``(job id, code, details, message, unblock)`` of one user's held jobs, in queue order → one
    :data:`HeldGroup` per ``(code, what)``, by code. A fix naming one job (``release it:
    jupyter-sched release j-…``) is said for several as ``release each: jupyter-sched release ID (…)``."""
    groups: dict[tuple[str, str], list[Any]] = {}
    for job_id, code, details, message, unblock in held:
        what, fix = held_kind(code, details, message, unblock, job_id)
        entry = groups.setdefault((code, what), [0, fix, job_id])
        entry[0] += 1
    out: list[HeldGroup] = []
    for (code, what), (n, fix, first) in groups.items():
        one = f"it: jupyter-sched release {first}"
        if n > 1 and one in fix:
            fix = fix.replace(one, "each: jupyter-sched release ID (jupyter-sched jobs lists them)")
        out.append((code, int(n), what, str(fix)))
    return sorted(out, key=lambda g: (g[0], g[2]))  # the same order every cycle (held jobs have no place)


def held_line(group: Mapping[str, Any]) -> str:
    """``1 held: never starts (you left team nlp) — cancel and resubmit with --team vision`` from one
    ``GET me`` ``held[]`` entry ("" when it is not one)."""
    jobs, what, fix = group.get("jobs"), group.get("what"), group.get("fix")
    if not isinstance(jobs, int) or not what:
        return ""
    return f"{jobs} held: {what}" + (f" — {fix}" if fix else "")
