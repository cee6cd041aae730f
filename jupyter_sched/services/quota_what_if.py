"""``GET quotas/what-if`` (admins): a past period's usage of a team against a proposed quota line (hubadmin26 B7).

Planning next quarter's lines had only ``PUT quotas {"dry_run": true}``, which judges the lines against the work
running now. This replays the team's billed usage intervals of a past period (the last full calendar quarter by
default) against the proposed line, and against the line in force, with
:func:`jupyter_sched.accounting.what_if.replay_line`: GPU-hours within the guarantee, borrowed, over the limit
(work that would have waited), how long it was above each, its peak. What it cannot say, and says: when the work
held back would have run instead (the rest of the queue would have moved too: that is a simulator's replay).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

from ..accounting.overlaps import resolve_overlaps
from ..accounting.what_if import replay_line
from ..admission import Caller
from ..admission.rules import check_team_name, visible_text
from ..errors import ValidationError
from ..model import ANY_MODEL, QuotaSet
from ..model.periods import period_start
from ..model.units import parse_window, to_iso
from ..wording.quota_what_if import no_line_note, what_if_text
from .context import Context
from .models.quotas import GetQuotaWhatIfRequest, GetQuotaWhatIfResponse
from .team_move import _live_teams, near_hint

__all__ = ["quota_what_if"]


def quota_what_if(ctx: Context, caller: Caller, request: GetQuotaWhatIfRequest,
                  members: Callable[[], set[str]] | None = None) -> GetQuotaWhatIfResponse:
    """The replay of the module docstring. ``members``: the teams someone is in now (hub groups, or the configured
    memberships), for the close names of a team that used nothing and has no line.

    Raises:
        AuthorizationError: not an admin (audited).
        ValidationError: a bad team name (``team``), a timestamp without offset, ``until`` not after ``since``
            (field ``until``), a period that starts in the future (``since``).
    """
    ctx.admission.require_admin(caller, "replaying usage against a proposed quota line", field="team")
    check_team_name(request.team, "team")
    if request.gpu_model is not None:  # echoed in the answer's words
        visible_text(request.gpu_model, "gpu_model", limit=200)
    now = ctx.clock.now()
    since, until = parse_window(request.since, request.until)
    if since is None:
        this_quarter = period_start(now, "quarter")
        since = period_start(this_quarter - timedelta(seconds=1), "quarter")
        until = until or this_quarter
    until = min(until or now, now)
    if since >= now:
        raise ValidationError(f"since is in the future ({to_iso(since)}): there is no usage to replay yet",
                              field="since", hint="give a past period, e.g. the last quarter (leave since out)")
    if until <= since:
        raise ValidationError("until is not after since", field="until", hint="give until after since")
    intervals, _runaways = ctx.store.billed_usage(since=since, until=until)
    intervals, _cut = resolve_overlaps(intervals, now=now)  # each GPU-second once, as the reports count
    # an open interval runs to ``until`` (at most now) in the replay
    team, model = request.team, request.gpu_model
    proposed = replay_line(intervals, team=team, gpu_model=model, guaranteed=request.guaranteed,
                           borrowing_limit=request.borrowing_limit, since=since, until=until)
    line = _line_in_force(ctx.store.quota_set(), team, model)
    in_force = None if line is None else replay_line(intervals, team=team, gpu_model=model, guaranteed=line[0],
                                                     borrowing_limit=line[1], since=since, until=until)
    # the same period with each share as asked (newuser40 n10: "at most 2.1 GPUs at once" while admission counted
    # the team at 3): the figures above count what the usage rows charge, as the quota lines count them
    asked = replay_line([replace(iv, billed=None) for iv in intervals], team=team, gpu_model=model,
                        guaranteed=request.guaranteed, borrowing_limit=request.borrowing_limit, since=since,
                        until=until)
    as_asked = {"asked_gpu_hours": round(asked.used_gpu_hours, 6), "asked_peak_gpus": round(asked.peak_gpus, 6)}
    answer: dict[str, Any] = {
        "team": team, "gpu_model": model, "since": to_iso(since), "until": to_iso(until),
        "proposed": {**proposed.to_dict(), **as_asked},
        "in_force": None if in_force is None else {**in_force.to_dict(), **as_asked}}
    text = what_if_text(answer, now)  # the CLI says it again in its reader's zone (wording.quota_what_if)
    if line is None and not proposed.used_gpu_hours:  # a typo, or a team still to come: said, not refused
        # every team the service knows, not only those of the window: on a quiet install or in a new quarter the
        # usage is empty, and nlpp named no close team though nlp had members and jobs (verify28 V4)
        known = ({i.team for i in intervals} | {q.team for q in ctx.store.quota_set().quotas}
                 | (members() if members is not None else set()) | _live_teams(ctx))
        text += " " + no_line_note(team, near_hint(team, known, "a team still to come?"))
    return GetQuotaWhatIfResponse.model_validate({**answer, "text": text})


def _line_in_force(quotas: QuotaSet, team: str, model: str | None) -> tuple[float, float | None] | None:
    """``(guaranteed, borrowing_limit)`` of ``team``'s team line for ``model`` (None: the any-model line) now;
    None when it has none."""
    for line in quotas.for_team(team):
        if line.gpu_model == (model or ANY_MODEL):
            return line.guaranteed, line.borrowing_limit
    return None
