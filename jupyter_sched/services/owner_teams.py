"""A job charged to a team without a quota line, read by its owner: which of their teams have one.

Such a job pends for ever (:func:`jupyter_sched.scheduling.cycle._above_ceiling`, ``details.never ==
"quota"``, ``details.unlisted``, ``details.field == "team"``): the way out is to resubmit it to a team
with a line. The scheduling core knows the quota lines but not who is in which team (hub groups,
``user_teams``); its sentence said "resubmit with a team of yours that has a quota line" and named none
(new user 23, N6: root was in ml and cv, both with lines). The reader's own
:class:`~jupyter_sched.admission.Caller` knows their teams, so the owner's reads add them here —
``details.owner_teams_with_lines`` (their teams other than the job's with a team line, in their order)
and ``details.owner_is_admin`` — and the reason's words name them
(:func:`jupyter_sched.wording.reasons.unblock_sentence`). Nobody else's read carries them: another
user's teams are theirs (red team 23, R1).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..admission import Caller
from ..model import QuotaSet

__all__ = ["unlined_team", "with_owner_teams"]


def unlined_team(reason: Any) -> bool:
    """Is ``reason`` (wire shape) that of a job whose team has no quota line, which can never start there?"""
    details = reason.get("details") if isinstance(reason, dict) else None
    return isinstance(details, dict) and details.get("never") == "quota" and details.get("unlisted") is True \
        and details.get("field") == "team"


def with_owner_teams(data: dict[str, Any], caller: Caller, quotas: Callable[[], QuotaSet]) -> None:
    """Add ``owner_teams_with_lines`` and ``owner_is_admin`` to the reason details of ``data`` (a job dict)
    when ``caller`` owns it and its reason is :func:`unlined_team` (in place; else nothing). ``quotas``:
    the quota set in force, asked only then."""
    reason = data.get("reason")
    if data.get("user") != caller.user or not unlined_team(reason):
        return
    assert isinstance(reason, dict)
    lines = quotas()
    team = data.get("team")
    lined = [t for t in caller.teams if t != team and lines.for_team(t)]
    data["reason"] = {**reason, "details": {**reason["details"], "owner_teams_with_lines": lined,
                                            "owner_is_admin": caller.admin}}
