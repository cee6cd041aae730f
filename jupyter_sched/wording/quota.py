"""A user's quota in one line, from ``GET me``: ``jupyter-sched status``'s ``quota`` line and ``%gpu``'s
``Quota:`` line say it in the same words (new user 11, N21; new user 12's brief: ``%gpu`` had none)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ..model.units import clock_text, gpus_phrase

__all__ = ["DOCTOR_FIX", "UNLISTED_SETTING", "ask_for_gpus", "reclaim_cooldown_line", "reclaim_paused_text", "no_gpus_fix", "quota_source_text", "unreadable_row_text", "unreadable_scope", "full_team_limit", "quota_lines", "quota_text", "unlisted_text"]

UNLISTED_SETTING = "c.SchedApp.unlisted_team_borrowing_limit"
"""The setting that bounds the teams without a quota line (said to admins in the fixes)."""

DOCTOR_FIX = ("an admin repairs or removes the row: `jupyter-sched doctor` lists it with its entry id, then "
              "`jupyter-sched doctor repair ID COLUMN=VALUE` or `jupyter-sched doctor remove ID`")
"""How a quarantined quota, budget or team policy row is mended (verify27 V6)."""


def no_gpus_fix(team: str, user: str | None, *, admin: bool = False, queued: bool = False) -> str:
    """THE fix for GPU work under a quota line whose limit is 0 GPUs (newuser34 n2: "ask for at most 0 GPUs"):
    what runs there and who changes it — ``team vision may use no GPUs: only CPU-only work runs there
    (--gpus 0); or ask an admin to give team vision a quota``. ``user``: a per-user line of 0 (its member
    is limited, not the team); ``admin``: the reader sets quotas (``PUT quotas``); ``queued``: said of a
    job already queued (the refusal's words for the submit, the reason's ``unblock`` for the queue)."""
    who = f"user {user} in team {team}" if user else f"team {team}"
    give = (f"raise the per-user limit of {user} in team {team}" if user else f"give team {team} a quota")
    give = f"{give} (PUT quotas)" if admin else f"ask an admin to {give}"
    run = "cancel it and resubmit it as CPU-only work (--gpus 0)" if queued else \
        "only CPU-only work runs there (--gpus 0)"
    return f"{who} may use no GPUs: {run}; or {give}"


def unreadable_scope(table: str, team: str, user: str | None, gpu_model: str = "*") -> str:
    """Whose new GPU work a row that does not read holds: ``team nlp``, ``user eve in team nlp``, with
    `` on A100`` for a quota row of one GPU model (verify27 V6)."""
    who = f"user {user} in team {team}" if user else f"team {team}"
    return who + (f" on {gpu_model}" if table == "quotas" and gpu_model not in ("", "*") else "")


def unreadable_row_text(error: str, table: str, team: str, user: str | None, gpu_model: str = "*") -> str:
    """THE words for a quota line, budget or team policy row the store cannot read (verify27 V6: it
    failed open, the cap gone in silence): read fail-closed, said the same in the waiting job's reason,
    GET quotas' warnings (``jupyter-sched quotas``) and the service log — ``quota row 1 (team nlp,
    model *) does not read (…): new GPU work of team nlp waits until an admin repairs or removes the
    row (`jupyter-sched doctor`)``. ``error``: the quarantine's sentence."""
    return (f"{error}: new GPU work of {unreadable_scope(table, team, user, gpu_model)} waits until an admin "
            f"repairs or removes the row (`jupyter-sched doctor`)")


def unlisted_text(team: str | Sequence[str], limit: float, *, who: str = "teams without one",
                  yours: bool = False, models: Sequence[str] = (), covered: Sequence[str] = (),
                  members: Sequence[str] = (), user: str | None = None, own: Sequence[str] = (),
                  lines_of: Mapping[str, Sequence[str]] | None = None, to_user: bool = True) -> str:
    """THE words for a team's scope without a quota line while other lines exist (red team 19, R3;
    red team 20, R2: per scope): the queue's reason, the submit refusal, ``status`` / ``%gpu`` and
    PUT quotas' warnings all open with them (new user 20, N2: status said "guaranteed 0 GPUs,
    borrowing limit 0 (at most 0) … until that much is released" where the queue said "can never start"):
    ``team default has no share of the GPUs (no quota line): teams without one may use 0 GPUs
    (c.SchedApp.unlisted_team_borrowing_limit)``; ``team vision has no share of the H100 GPUs (no quota line for
    that model): it may use 0 GPUs there (…)`` — plain words first, the trade word after (newuser30 N4);
    ``team ghost has only a quota line for user red20a: its other members may use 0 GPUs (…)``;
    to a ``user`` whose own lines name other models only (verify20 V6: she was told "its *other*
    members"): ``your quota line in team ghost (user red20a) is for A100 only: on H100 you may use 0
    GPUs (…)``.

    Args:
        team: the team, or several (``teams nlp, ops have no share of the GPUs (no quota line): each may use …``).
        limit: GPUs such a team may use (the setting; >= 0).
        who: the subject of "may use" (``it`` in a warning about one team, ``each`` for several);
            a team with lines of its own reads ``it`` / ``its other members`` whatever is given.
        yours: the reader is in the team (``…, you included``).
        models: the GPU models the scope is about (those its team lines leave out; for ``user``,
            those neither the team's nor the user's lines name): said by name.
        covered: the GPU models its team lines name (said when ``models`` is not known, and to ``user``).
        members: the users of the team whose lines of their own govern them there (others than ``user``).
        user: the reader, when ``own`` names their lines in the team (none applying on ``models``).
        own: the GPU models (or ``*``) of ``user``'s own lines in the team.
        lines_of: per member, the GPU models of their lines, said beside them when not ``*``
            (``a quota line for user red20a (A100)``).
        to_user: the words are for ``user`` (a refusal, ``status``): "your … you may use"; else
            (a queued job's reason, which others read too) ``the quota line of user red20a in team
            ghost is for A100 only: on H100 red20a may use 0 GPUs (…)``.
    """
    names = [team] if isinstance(team, str) else list(team)
    some = "" if limit == 0 else ", none of them guaranteed"
    you = ", you included" if yours else ""
    if len(names) == 1 and user and own:  # the reader has lines of their own, for other models only
        where = f"on {', '.join(models)}" if models else "on other GPU models"
        if to_user:
            head = (f"team {names[0]} has quota lines only for {', '.join(covered)} and yours (user {user}) is"
                    if covered else f"your quota line in team {names[0]} (user {user}) is")
        else:
            head = (f"team {names[0]} has quota lines only for {', '.join(covered)} and user {user}'s is"
                    if covered else f"the quota line of user {user} in team {names[0]} is")
        shared = "" if limit == 0 else " with the team's other work without a line"
        return (f"{head} for {', '.join(own)} only: {where} {'you' if to_user else user} may use "
                f"{gpus_phrase(float(limit))}{shared}{some} ({UNLISTED_SETTING})")
    scoped = len(names) == 1 and bool(models or covered or members)
    if not scoped:
        subject = f"team {names[0]} has" if len(names) == 1 else f"teams {', '.join(names)} have"
        # plain words first, the trade word after (newuser30 N4: "has no quota line: teams without one may use 0 GPUs")
        return (f"{subject} no share of the GPUs (no quota line): {who} may use {gpus_phrase(float(limit))}{some} "
                f"({UNLISTED_SETTING}){you}")
    users = ", ".join(members)
    if models or covered:  # team lines for some GPU models: the others are the uncovered scope
        head = (f"team {names[0]} has no share of the {', '.join(models)} GPUs (no quota line for "
                f"{'those models' if len(models) > 1 else 'that model'})"
                if models else f"team {names[0]} has quota lines only for {', '.join(covered)}")
        subject = f"its members other than {users}" if members else "it"
        where, on = (" there", "") if models else ("", "on other GPU models ")
        return f"{head}: {on}{subject} may use {gpus_phrase(float(limit))}{where}{some} ({UNLISTED_SETTING}){you}"
    said = [_member(u, (lines_of or {}).get(u, ())) for u in members]
    lines = f"quota lines for users {', '.join(said)}" if len(members) > 1 else f"a quota line for user {said[0]}"
    return (f"team {names[0]} has only {lines}: its other members{you}{',' if you else ''} may use {gpus_phrase(float(limit))}{some} "
            f"({UNLISTED_SETTING})")


def _member(user: str, models: Sequence[str]) -> str:
    """``red20a`` or ``red20a (A100)``: a member with the models of their lines, when not every model."""
    named = [m for m in dict.fromkeys(models) if m != "*"]
    return f"{user} ({', '.join(named)})" if named and len(named) == len(list(dict.fromkeys(models))) else user


def _gpus(value: Any) -> str:
    return gpus_phrase(float(value or 0))  # one GPU-count formatter: never "1 GPUs" (new user 17, N22)


def reclaim_paused_text(team: str, until: datetime, now: datetime | None, *, user: str = "", cause: str = "",
                        actor: str = "", lease: bool = False, reader: str = "") -> str:
    """A team's reclaim cool-down as its members read it in ``status`` / ``%gpu`` / the panel's Quota section
    (newuser38 n21: only a pending job's reason said it, so a teammate learnt it from a job that waited):
    ``vision: reclaims paused until 11:08 UTC (cool-down after n38a's release): its jobs take no borrowed GPUs
    back until then``. ``user``: the owner of the work that took GPUs back and gave them up (a teammate's name:
    said to the team's members only); ``cause``/``actor``: how it ended and who ended it
    (:func:`~.preemption.reclaim_end_text`); ``lease``: it was a kernel's lease; ``reader``: who reads it — their
    own work and act are "your"/"you" (``after your release``). Without ``user`` (another team's reader):
    ``vision: reclaims paused until 11:08 UTC (a reclaim cool-down): …``."""
    from .preemption import reclaim_end_text  # wording.reasons imports this module, and preemption it

    kind = "lease" if lease else "job"
    if not user:
        return (f"{team}: reclaims paused until {clock_text(until, now)} (a reclaim cool-down): its jobs take no "
                "borrowed GPUs back until then")
    whose = "your" if reader and user == reader else f"{user}'s"
    if cause in ("release", "cancel") and actor and actor != user:
        who = "you" if reader and actor == reader else actor
        after = f"after {who} {'released' if cause == 'release' else 'cancelled'} {whose} {kind}"
    elif cause in ("release", "cancel"):
        after = f"after {whose} {cause}"
    else:
        after = f"after {whose} {kind} gave up the GPUs it took back ({reclaim_end_text(cause)})"
    return (f"{team}: reclaims paused until {clock_text(until, now)} (cool-down {after}): its jobs take no "
            "borrowed GPUs back until then")


def reclaim_cooldown_line(entry: Mapping[str, Any], now: datetime | None, reader: str | None = None) -> str:
    """:func:`reclaim_paused_text` of one ``GET me`` / ``GET quotas`` ``reclaim_cooldowns[]`` entry, as of ``now``
    (the reader's zone in the CLI); "" when it is over or not one. ``reader``: who reads it (``GET me``'s
    ``user``); None where the answer does not say (``GET quotas``): the server's ``text``, written for its caller
    ("your release" to the releaser), with its clocks in the reader's zone (s40-views: ``jupyter-sched quotas``
    said "n38a's release" to n38a)."""
    from ..model.periods import said_to_reader
    from .reasons import wire_time  # wording.reasons imports this module

    until = wire_time(entry.get("until"))
    if until is None or not entry.get("team") or (now is not None and until <= now):
        return ""
    text = entry.get("text")
    if reader is None and isinstance(text, str) and text:
        return said_to_reader(text, now)
    return reclaim_paused_text(str(entry["team"]), until, now, user=str(entry.get("user") or ""),
                               cause=str(entry.get("cause") or ""), actor=str(entry.get("actor") or ""),
                               lease=bool(entry.get("lease")), reader=reader or "")


def quota_text(me: Mapping[str, Any], now: datetime | None = None) -> str:
    """``team ml: guaranteed 2 GPUs, borrowing limit 1 GPU (at most 3 GPUs); 2 GPUs in use by the team, 1 GPU
    of them yours`` from ``GET me``: one line (joined by newlines) per team in ``by_team`` — the
    caller's default team, then each other team their GPU-holding work is charged to — each saying
    that team's quota lines, what the team holds and what of it is the caller's (new user 18, N1:
    "2 GPUs in use by the team, 4 GPUs of them yours", the caller's total beside one team's). A line
    of one GPU model or of the caller alone is said as such; a team without a line of its own
    (``by_team[].unlisted``) in :func:`unlisted_text`'s words. See :func:`quota_lines`."""
    return "\n".join(quota_lines(me, now))


def quota_lines(me: Mapping[str, Any], now: datetime | None = None) -> list[str]:
    """:func:`quota_text`'s lines (``jupyter-sched status`` indents those after the first); each team's reclaim
    cool-down (``reclaim_cooldowns``) on the line after its quota line (:func:`reclaim_paused_text`, as of
    ``now``: the clock's when None)."""
    now = now or datetime.now(timezone.utc)
    default = str(me.get("team") or "")
    teams = [t for t in me.get("by_team") or () if isinstance(t, Mapping) and t.get("team")]
    paused = {str(c.get("team")): said for c in me.get("reclaim_cooldowns") or ()
              if isinstance(c, Mapping) and (said := reclaim_cooldown_line(c, now, str(me.get("user") or "")))}
    if teams:
        lines = []
        for t in teams:
            lines.append(_team_line(str(t["team"]), t.get("quotas"), t.get("in_use"), t.get("yours"),
                                    default=str(t["team"]) == default, unlisted=bool(t.get("unlisted")),
                                    rest=t.get("held_whole"),
                                    scope=_scope_text(str(t["team"]), t.get("unlisted_scope"),
                                                      str(me.get("user") or ""))))
            if str(t["team"]) in paused:
                lines.append(paused.pop(str(t["team"])))
        return [*lines, *paused.values()]
    # an older server: its default team only, beside what the caller holds in all
    in_use = me.get("in_use") if isinstance(me.get("in_use"), Mapping) else {}
    return [_team_line(default, me.get("quotas"), me.get("team_in_use"), (in_use or {}).get("gpus"), default=True,
                       rest=me.get("team_held_whole")), *paused.values()]


def full_team_limit(me: Mapping[str, Any]) -> float | None:
    """The GPUs the caller's default team may hold (guaranteed + borrowing limit of its one
    whole-team line for every model) when it holds so many now that one more GPU would wait; else
    None (room left, no limit, or lines per model or per user, which one number cannot say).

    Args:
        me: ``GET me`` (``team``, ``by_team[].quotas`` / ``in_use`` in GPUs).
    """
    default = str(me.get("team") or "")
    entry = next((t for t in me.get("by_team") or () if isinstance(t, Mapping) and str(t.get("team")) == default), None)
    if entry is None:
        return None
    lines = [q for q in entry.get("quotas") or () if isinstance(q, Mapping)]
    if len(lines) != 1 or lines[0].get("user") or lines[0].get("gpu_model") not in (None, "*"):
        return None
    limit = lines[0].get("borrowing_limit")
    if not isinstance(limit, (int, float)):
        return None  # no limit: a request waits for free GPUs, not for the quota
    cap = float(lines[0].get("guaranteed") or 0) + float(limit)
    return cap if float(entry.get("in_use") or 0) + 1 > cap + 1e-9 else None


def ask_for_gpus(me: Mapping[str, Any], ask: str, *, room: str | None = None) -> str:
    """How to ask for GPUs, ``ask`` (``%gpu request 1``), after the quota lines of ``me`` (GET me):
    ``Ask with: %gpu request 1``; when the default team can start no GPU work (no quota line, a
    borrowing limit of 0 for such teams) the request would only queue for ever: ``Team ml can start no
    GPU work until an admin gives it a quota line`` and, where another team of the caller can,
    ``ask with: %gpu request 1 --team cv`` (new user 21, N9: %gpu said both). ``room``: another
    team of the caller where a request would start now (the caller's dry run), said when the
    default team holds all its quota allows (:func:`full_team_limit`): ``Team ml holds all 4 GPUs
    its quota allows, so %gpu request 1 would wait; team cv has room: %gpu request 1 --team cv``
    (new user 22: ``Ask with: %gpu request 1`` right under ``4 GPUs in use by the team``)."""
    default = str(me.get("team") or "")
    teams = [t for t in me.get("by_team") or () if isinstance(t, Mapping) and t.get("team")]

    def shut(team: Mapping[str, Any]) -> bool:
        lines = [q for q in team.get("quotas") or () if isinstance(q, Mapping)]
        return bool(team.get("unlisted")) and bool(lines) and float(lines[0].get("borrowing_limit") or 0) == 0

    if not any(str(t["team"]) == default and shut(t) for t in teams):
        cap = full_team_limit(me) if room and room != default else None
        if cap is not None:
            return (f"Team {default} holds all {_gpus(cap)} its quota allows, so {ask} would wait; "
                    f"team {room} has room: {ask} --team {room}")
        return f"Ask with: {ask}"
    other = next((str(t["team"]) for t in teams if str(t["team"]) != default and not shut(t)), "")
    scope = next((t.get("unlisted_scope") for t in teams if str(t["team"]) == default), None)
    said = (f"You can start no GPU work in team {default} until an admin gives you a quota line"  # verify21 V6
            if isinstance(scope, Mapping) and scope.get("members") and not scope.get("models")
            else f"Team {default} can start no GPU work until an admin gives it a quota line")
    return f"{said}; ask with: {ask} --team {other}" if other else f"{said}."


def _scope_text(team: str, scope: Any, user: str) -> str:
    """``team vision has no quota line for model H100: it may use 0 GPUs there (…)`` from ``by_team[].
    unlisted_scope`` — the GPU models where no line of the team (nor the reader's own) applies, in
    the queue's words (verify20 V4: status showed vision's A100 line, not that H100 was 0 GPUs for
    it); "" without one (an older server, every model covered)."""
    if isinstance(scope, Mapping) and not scope.get("models") and scope.get("members"):
        # a team named only by other members' lines: the submit refusal's words (verify21 V6)
        lines_of = scope.get("member_models") if isinstance(scope.get("member_models"), Mapping) else {}
        return unlisted_text(team, float(scope.get("borrowing_limit") or 0), yours=True,
                             members=[str(u) for u in scope.get("members") or ()],
                             lines_of={str(u): [str(m) for m in ms or ()] for u, ms in (lines_of or {}).items()})
    if not isinstance(scope, Mapping) or not scope.get("models"):
        return ""
    models = [str(m) for m in scope.get("models") or ()]
    covered = [str(m) for m in scope.get("covered") or ()]
    own = [str(m) for m in scope.get("own") or ()]
    limit = float(scope.get("borrowing_limit") or 0)
    if own:
        return unlisted_text(team, limit, models=models, covered=covered, user=user, own=own)
    return unlisted_text(team, limit, models=models, members=[str(u) for u in scope.get("members") or ()])


def _team_line(team: str, quotas: Any, team_in_use: Any, mine: Any, *, default: bool, unlisted: bool = False,
               scope: str = "", rest: Any = None) -> str:
    in_use = _in_use_text(team_in_use, mine, rest)
    lines = [q for q in quotas or () if isinstance(q, Mapping)]
    if unlisted and lines:  # the line of a team without one of its own: the queue's words (new user 20, N2)
        most = float(lines[0].get("borrowing_limit") or 0)
        if scope:  # named only by other members' lines: they may use GPUs, the reader not (verify21 V6)
            return f"{scope}; {in_use}{_unlisted_over(most, mine, own=True)}"
        return f"{unlisted_text(team, most)}; {in_use}{_unlisted_over(most, team_in_use)}"
    parts = []
    for q in sorted(lines, key=lambda q: (q.get("user") is not None, str(q.get("gpu_model") or "*"))):
        model = str(q.get("gpu_model") or "*")
        whose = ("you" if default else f"you in team {team}") if q.get("user") else f"team {team}"
        on = "" if model == "*" else f" on {model}"
        limit = q.get("borrowing_limit")
        if limit is None:
            bounds = "no borrowing limit"
        else:  # a unit on every number (new user 20, N2: "borrowing limit 0 (at most 0)")
            most = float(q.get("guaranteed") or 0) + float(limit)
            bounds = f"borrowing limit {_gpus(limit)} (at most {_gpus(most)})"
        parts.append(f"{whose}{on}: guaranteed {_gpus(q.get('guaranteed'))}, {bounds}")
    text = "; ".join(parts) if parts else f"team {team} has no GPUs set aside and no limit (no quota)"
    if scope:  # the models its lines leave out (verify20 V4)
        text = f"{text}; {scope}"
    over = _over(lines, team_in_use=team_in_use, mine=mine)
    if team_in_use is not None:
        return f"{text}; {in_use}{over}"
    return f"{text}; {_gpus(mine)} in use by you{over}"


def _in_use_text(team_in_use: Any, mine: Any, rest: Any) -> str:
    """``2 GPUs in use by the team, 1 GPU of them yours`` — the team's use as its quota lines count it (``GET me``'s
    ``in_use``), and where GPUs only the team's shares hold count whole (``rest``: their unused rest, GPUs), said
    once (newuser39 n5: "2 GPUs in use by the team, 1.7 GPUs of them yours" read as 0.3 GPU someone else's):
    ``2 GPUs in use by the team (all yours: 1.7 GPUs asked; a GPU only the team's shares hold counts whole against
    the line)``."""
    used = f"{_gpus(team_in_use)} in use by the team"
    left = float(rest) if isinstance(rest, (int, float)) else 0.0
    if left <= 0:
        return f"{used}, {_gpus(mine)} of them yours"
    asked = float(team_in_use or 0) - left
    if abs(float(mine or 0) - asked) < 1e-6:
        return f"{used} (all yours: {_gpus(mine)} asked; a GPU only the team's shares hold counts whole against the line)"
    return (f"{used}, {_gpus(mine)} of them yours ({_gpus(left)} of the {float(team_in_use or 0):g} "
            f"{'is' if left <= 1 else 'are'} the unused rest of GPUs only the team's shares hold, counted whole "
            "against the line)")


def _unlisted_over(limit: float, team_in_use: Any, *, own: bool = False) -> str:
    """What a team without a line may start: with a limit of 0 no GPU work at all, whatever runs
    (it started before the first line); above 0, nothing more while it holds more than that.
    ``own``: the team has other members' lines, the reader none (``team_in_use`` is then the reader's
    GPUs in it): said of the reader's work, not the team's (verify21 V6)."""
    used = float(team_in_use) if isinstance(team_in_use, (int, float)) else 0.0
    if limit == 0:
        # it runs on, but as borrowed work (a team without a line has no guarantee): never promised to
        # keep running (hubadmin23 A11: a renamed team's job was reclaimed after such a promise)
        kept = (" (what it holds runs on as borrowed work: another team's reclaim of its guaranteed GPUs can take "
                "it)") if used > 0 else ""
        if own:
            return f" — none of your GPU work in the team can start until you get a line{kept}"
        return f" — no GPU work of the team can start until it gets a line{kept}"
    if used > limit:
        return (f" — {_gpus(used - limit)} over the {_gpus(limit)} it may use: nothing more of the team starts "
                f"until that much is released")
    return ""


def _over(lines: list[Mapping[str, Any]], *, team_in_use: Any, mine: Any) -> str:
    """`` — 1 GPU over the team's limit of 1 GPU: nothing more of the team starts until that much is
    released`` when what runs is above a limit (all models: a line of one model has no usage here to
    compare) — a quota lowered below what already ran, which status said nothing about (new user 13,
    N9: "at most 1; 2 GPUs in use by the team")."""
    for q in lines:
        limit = q.get("borrowing_limit")
        used = mine if q.get("user") else team_in_use
        if limit is None or q.get("gpu_model") not in (None, "*") or not isinstance(used, (int, float)):
            continue
        most = float(q.get("guaranteed") or 0) + float(limit)
        if float(used) > most:
            whose, who = ("your cap", "of yours") if q.get("user") else ("the team's limit", "of the team")
            return (f" — {_gpus(float(used) - most)} over {whose} of {_gpus(most)}: nothing more {who} starts "
                    f"until that much is released")
    return ""


def quota_source_text(set_by: str, set_at: datetime, *, config: bool, setting: str = "c.SchedApp.quotas",
                      now: datetime | None = None) -> str:
    """Who set the quota lines (or memberships) in force, the words after "set by": ``root with PUT quotas at
    Dec 6 09:09 UTC`` or ``the config file (c.SchedApp.quotas) at Dec 6 09:09 UTC`` — the time by the one clock
    renderer (:func:`~..model.units.clock_text`: the reader's zone in the CLI, ``09:09 UTC`` on ``now``'s day).
    New user 30, n9: ``set by PUT quotas by root at 2026-12-06 09:09 UTC`` (by … by, a raw date-time).
    ``set_by``: the admin of the last PUT quotas (ignored where ``config``); ``setting``: the config file's
    setting (``c.SchedApp.user_teams`` for memberships)."""
    when = clock_text(set_at, now)
    return f"the config file ({setting}) at {when}" if config else f"{set_by} with PUT quotas at {when}"
