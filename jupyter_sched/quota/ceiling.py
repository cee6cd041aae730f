"""A request above a quota ceiling that nothing running can free: said in one sentence at submit
(:func:`jupyter_sched.admission.rules.check_ceiling`, a 422) and by the scheduling cycle for a job
already pending when an admin lowered the quota under it (new user 18, N12: it waited with "It
starts when nu18b's own running work leaves room under nu18b's cap…", which never happens)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import ANY_MODEL, GPU_MILLI, QuotaSet, ResourceRequest
from ..model.units import gpus_phrase
from ..wording.quota import UNLISTED_SETTING, no_gpus_fix, unlisted_text
from .ledger import Line, QuotaLedger, line_applies

__all__ = ["UNLISTED_SETTING", "CeilingExceeded", "no_gpus_fix", "Stranded", "binding_ceiling", "ceiling_exceeded", "scope_warnings",
           "uncovered", "unlisted_fix", "unlisted_warning", "unlisted_words"]


def _gpus(milli: int) -> float:
    value = milli / GPU_MILLI
    return int(value) if value == int(value) else round(value, 3)


def binding_ceiling(ledger: QuotaLedger, team: str, user: str, milli: int, models: Iterable[str]) -> Line | None:
    """The line that keeps a request of ``milli`` from ever fitting on every one of ``models`` —
    the tightest line it exceeds on the model that comes closest (so "at most N" can fit) — or
    None when it fits its ceilings on one model with nothing else running."""
    binding: list[Line] = []
    for model in models:
        over = [line for line in ledger.applicable(team, user, model)
                if line.ceiling is not None and line.ceiling < milli]
        if not over:
            return None
        binding.append(min(over, key=lambda line: line.ceiling or 0))
    return max(binding, key=lambda line: line.ceiling or 0) if binding else None


@dataclass(frozen=True, slots=True)
class CeilingExceeded:
    """Why a request can never fit a quota line: ``message`` (``4 GPUs can never fit the per-user
    limit of bo in team b: 1 GPU (guaranteed 1 + borrowing limit 0)``), the ``field`` to change,
    ``most`` (``at most 1 GPU`` / ``at most 2 workers of 1 GPU``) and the numbers."""

    message: str
    field: str
    most: str
    details: dict[str, Any]

    @property
    def unlisted(self) -> bool:
        """The line is that of a team without a quota line of its own (red team 19, R3)."""
        return bool(self.details.get("unlisted"))


@dataclass(frozen=True, slots=True)
class Stranded:
    """What a team without a quota line has that its limit blocks (new user 20, N4): ``pending``
    jobs and ``leases`` (lease requests) asking for more GPUs than it may use — they can never
    start — and ``holding`` GPUs its running work holds (GPUs)."""

    team: str
    pending: int = 0
    leases: int = 0
    holding: float = 0.0


MAX_STRANDED_SAID = 10
"""Teams said with their stranded work, each in a warning of its own (:func:`unlisted_warning`)."""


def unlisted_warning(teams: Iterable[str], limit: float | None, *, stranded: Iterable[Stranded] = (),
                     first: Iterable[str] = ()) -> list[str]:
    """An admin's warnings (``GET`` / ``PUT quotas``, the start-up log) naming ``teams``, which have
    work or members but no quota line, and what they get under ``limit`` (GPUs, None = no limit):
    empty when there are none. A team in ``stranded`` with work its limit blocks gets a warning of
    its own saying that work — ``team default has no quota line: it may use 0 GPUs (…), you included; its
    300 pending jobs can never start and its running work holds 3 GPUs, 3 GPUs over that`` — (new
    user 20, N4: "give them a line" said nothing of the 300 jobs it stranded); the teams in ``first``
    (the admin's own) come first, said with "you included"; the others share one line, as do those
    past the first :data:`MAX_STRANDED_SAID` with blocked work (a hub of many groups: a bounded answer).
    """
    named = sorted(set(teams))
    if not named:
        return []
    if limit is None:
        return [f"team{'s' if len(named) > 1 else ''} {', '.join(named)} ha{'ve' if len(named) > 1 else 's'} no "
                f"quota line: no limit: they may borrow every idle GPU ({UNLISTED_SETTING} is None)"]
    mine = [t for t in dict.fromkeys(first) if t in named]
    work = {s.team: s for s in stranded if s.team in named and (s.pending or s.leases or s.holding > limit)}
    ordered = [*mine, *(t for t in named if t not in mine)]
    own = [t for t in ordered if t in work][:MAX_STRANDED_SAID]
    said = [_stranded_text(work[t], limit, yours=t in mine) for t in own]
    rest = [t for t in ordered if t not in own]
    if rest:
        who = "each" if len(rest) > 1 else "it"  # one team: "it may use 0 GPUs" (verify19: "each" read oddly)
        text = unlisted_text(rest, limit, who=who, yours=len(rest) == 1 and rest[0] in mine)
        said.append(f"{text}; give {'them' if len(rest) > 1 else 'it'} a line with PUT quotas")
    return said


def scope_warnings(quotas: QuotaSet, models: Iterable[str], limit: float | None, *,
                   first: Iterable[str] = (), reader: str | None = None) -> list[str]:
    """An admin's warnings (GET / PUT quotas) naming the scopes of teams *with* lines that no line
    covers, which the unlisted line bounds (red team 20, R2): a team with lines for some of the GPU
    ``models`` present only (``team vision has no quota line for model H100: it may use 0 GPUs
    there …``), a team named only by per-user lines (``team ghost has only a quota line for user
    red20a: its other members may use 0 GPUs …``). ``limit``: the setting (GPUs; None = no limit,
    nothing said: those scopes borrow as before). The teams in ``first`` (the admin's own) come
    first; at most :data:`MAX_STRANDED_SAID` warnings, then one naming how many more teams. ``reader``
    (the admin asking) is told "you included" only where the scope takes them in: not of a team's
    "other members" when a line of the team names ``reader`` (verify 21, V7)."""
    if limit is None or not quotas.quotas:
        return []
    present = list(dict.fromkeys(models))
    teams = list(dict.fromkeys(q.team for q in quotas.quotas))
    mine = [t for t in dict.fromkeys(first) if t in teams]
    said: list[str] = []
    for team in [*mine, *sorted(t for t in teams if t not in mine)]:
        own = quotas.for_team(team)
        lines_of: dict[str, list[str]] = {}
        for q in quotas.quotas:
            if q.team == team and q.user is not None:
                lines_of.setdefault(q.user, []).append(q.gpu_model)
        members = sorted(lines_of)
        if not own:
            text = unlisted_text(team, limit, members=members, yours=team in mine and reader not in lines_of,
                                 lines_of=lines_of)
            said.append(f"{text}{_members_elsewhere(lines_of, present, limit)}; give the team a line with PUT quotas")
            continue
        left = [m for m in present if not any(line_applies(q.gpu_model, m) for q in own)]
        if left:  # the members named as excepted are those whose own lines apply there (verify20 V6)
            excepted = [u for u in members if all(any(line_applies(g, m) for g in lines_of[u]) for m in left)]
            text = unlisted_text(team, limit, models=left, members=excepted,
                                 yours=team in mine and reader not in excepted)
            said.append(f"{text}; give it a line for {'them' if len(left) > 1 else 'it'} (or for \"*\") with PUT quotas")
    if len(said) > MAX_STRANDED_SAID:
        more = len(said) - MAX_STRANDED_SAID
        said = [*said[:MAX_STRANDED_SAID],
                f"and {more} more team{'s' if more > 1 else ''} with GPU models or members no quota line covers"]
    return said


def _members_elsewhere(lines_of: dict[str, list[str]], present: Sequence[str], limit: float) -> str:
    """``; red20a's line is for A100 only: on H100 red20a may use 0 GPUs too`` — the members of a
    team without team lines whose own lines leave GPU models present uncovered (verify20 V6: the
    admin's warning said nothing of H100 for the named user of an A100 line)."""
    parts = []
    for user, models in lines_of.items():
        left = [m for m in present if not any(line_applies(g, m) for g in models)]
        if left:
            parts.append(f"{user}'s line{'s are' if len(models) > 1 else ' is'} for {', '.join(models)} only: on "
                         f"{', '.join(left)} {user} may use {gpus_phrase(limit)} too")
    return "".join(f"; {p}" for p in parts)


def _stranded_text(work: Stranded, limit: float, *, yours: bool) -> str:
    parts = []
    waiting = [f"{n} pending {what}{'s' if n != 1 else ''}" for n, what in ((work.pending, "job"),
                                                                          (work.leases, "lease request")) if n]
    if waiting:
        never = "can never start" if limit == 0 else f"ask for more than {gpus_phrase(limit)} and can never start"
        parts.append(f"its {' and '.join(waiting)} {never}")
    if work.holding > limit:
        parts.append(f"its running work holds {gpus_phrase(work.holding)}, {gpus_phrase(work.holding - limit)} over "
                     f"that (it runs on as borrowed work: another team's reclaim of its guaranteed GPUs can take "
                     f"it)")
    return (f"{unlisted_text(work.team, limit, who='it', yours=yours)}; {' and '.join(parts)} — give it a line with "
            f"PUT quotas, or raise {UNLISTED_SETTING}")


def unlisted_fix(team: str, others: Iterable[str], *, admin: bool = False, mine: Iterable[str] = (),
                 models: Sequence[str] = (), covered: Sequence[str] = (), user: str | None = None,
                 own: Sequence[str] = ()) -> str:
    """The fix for a request on ``team``, which has no quota line, by a member of ``others`` (their
    teams that have one; ``mine``: all their teams). To an ``admin`` the fix they make themselves:
    a line with PUT quotas or the setting (new user 20, N3: a personal server's owner, the admin, was
    told "ask an admin"); to others, what to ask an admin for. The option is named once, where a
    team of theirs with a line can be chosen (``submit with --team <one of yours with a line: ml>``),
    and "none of your teams (default) has one" where none can (N3: "(you are in none)" read as "in
    no team"). A team with lines for the GPU models ``covered`` only, asked on ``models`` (red team
    20, R2): the line is one for the team on such a model, the option ``--model`` (one it covers).
    A ``user`` whose own lines in the team name the models ``own`` only (verify20 V6): the line is
    one for them (or the team) on such a model, the option ``--model`` one their lines name."""
    listed, all_mine = sorted(others), sorted(set(mine) | {team})
    on = f" on model {models[0]}" if models else ""
    whom = f"user {user} in team {team} (or for the team)" if user and own else f"team {team}"
    if admin:
        example = (f'"team": "{team}", ' + (f'"user": "{user}", ' if user and own else "")
                   + (f'"gpu_model": "{models[0]}", ' if models else ""))
        fix = (f'add a quota line for {whom}{on} with PUT quotas (e.g. {{{example}"guaranteed": 0, '
               f'"borrowing_limit": 4}}) or set {UNLISTED_SETTING} (GPUs; None = no limit)')
    else:
        fix = f"ask an admin to add a quota line for {whom}{on} (PUT quotas) or to raise {UNLISTED_SETTING}"
    named = sorted(set(own) - {ANY_MODEL}) if user and own else []
    if named:
        return f"{fix}, or submit with --model <one you have a line for: {', '.join(named)}>"
    if covered:
        return f"{fix}, or submit with --model <one team {team} has a line for: {', '.join(covered)}>"
    if listed:
        return f"{fix}, or submit with --team <one of yours with a line: {', '.join(listed)}>"
    return f"{fix}; none of your teams ({', '.join(all_mine)}) has one"


def uncovered(line: Line, models: Iterable[str]) -> list[str]:
    """Of ``models`` (GPU models present), those an unlisted ``line`` counts for its team: the ones
    no team line of the team names (all of them for a team without team lines)."""
    return [m for m in dict.fromkeys(models) if not any(line_applies(c, m) for c in line.covered)]


def _valid_most(ceiling: float) -> str:
    """The largest GPU request under ``ceiling`` (GPUs) that is itself accepted: requests are whole
    GPUs or a share below 1 (:func:`~jupyter_sched.model.validation.parse_gpus`), so a ceiling of 1.5
    says ``1 GPU (or a share below 1)``, not ``1.5 GPUs``, which is refused (new user 20, N25)."""
    if ceiling < 1 or ceiling == int(ceiling):
        return gpus_phrase(ceiling)
    return f"{gpus_phrase(int(ceiling))} (or a share below 1)"


def _elsewhere(ledger: QuotaLedger, line: Line, said: Sequence[str], models: Sequence[str], milli: int,
               user: str | None, to_user: bool) -> str:
    """``; on H100: team vision has no quota line for model H100: it may use 0 GPUs there (…)`` — the
    line that bounds the request on each of ``models`` that ``line``'s sentence (about ``said``) does
    not cover: a request allowed on A100 and H100 was told only "can never fit the limit of team
    vision: 2 GPUs of A100" (verify20 V3's kind). Empty when ``line`` covers them all."""
    parts: list[str] = []
    for model in models:
        if model in said or (not line.unlisted and line_applies(line.model, model)):
            continue
        over = [ln for ln in ledger.applicable(line.team, user or "", model) if ln.ceiling is not None
                and ln.ceiling < milli]
        if not over:
            continue
        other = min(over, key=lambda ln: ln.ceiling or 0)
        if other.unlisted:
            parts.append(unlisted_words(other, _gpus(other.ceiling or 0), [model], user=user, to_user=to_user)[0])
            continue
        whose = f"the per-user limit of {other.user} in team {other.team}" if other.user is not None \
            else f"the limit of team {other.team}"
        parts.append(f"on {model} {whose} is {gpus_phrase(_gpus(other.ceiling or 0))}")
    return "".join(f"; {p}" for p in dict.fromkeys(parts))


def ceiling_exceeded(line: Line, req: ResourceRequest, models: Iterable[str] = (), *,
                     user: str | None = None, ledger: QuotaLedger | None = None,
                     to_user: bool = True) -> CeilingExceeded:
    """The sentence for ``req`` above ``line``'s ceiling (see :func:`binding_ceiling`); ``models``:
    the GPU models it was tried on, named when the line is that of a team's models without a line
    (red team 20, R2: ``team vision has no quota line for model H100: it may use 0 GPUs there``).
    ``user``: who asks — a member whose own lines name other models only is told of their line
    (verify20 V6: ``your quota line in team ghost (user ve20a) is for A100 only: on H100 you may use
    0 GPUs``; she was told "its *other* members may use 0 GPUs"). ``ledger``: the lines in force —
    given, the models ``line`` does not cover are said too, each with the line that bounds it there.
    ``to_user``: the words are for ``user`` (a refusal); else for whoever reads a queued job's reason
    (``the quota line of user ve20a in team ghost is for A100 only: on H100 ve20a may use 0 GPUs``)."""
    tried = list(dict.fromkeys(models))
    ceiling, guaranteed, borrow = (_gpus(line.ceiling or 0), _gpus(line.guaranteed), _gpus(line.borrowing_limit or 0))
    whose = f"the per-user limit of {line.user} in team {line.team}" if line.user is not None \
        else f"the limit of team {line.team}"
    on = "" if line.model == ANY_MODEL else f" of {line.model}"
    requested = _gpus(req.total_milli)
    field, most = "gpus", f"at most {_valid_most(ceiling)}"
    per_worker = _gpus(req.gpus * req.gpu_milli)
    if req.groups:  # a gang of groups: the total across them is what to change (new user 18, N17)
        field, most = "groups", f"at most {_valid_most(ceiling)} across its groups"
    elif req.workers > 1 and 0 < per_worker <= ceiling:
        # a gang whose workers fit one by one: the worker count is what to change (issue 20:
        # "workers" blamed on "gpus", which the user had set to 1)
        fit = int(ceiling // per_worker)
        field, most = "workers", f"at most {fit} worker{'s' if fit != 1 else ''} of {gpus_phrase(per_worker)}"
    if line.unlisted:  # a scope without a quota line (red team 19 R3, red team 20 R2): the team or model to change
        words, left_out, own = unlisted_words(line, ceiling, tried, user=user, to_user=to_user)
        if ledger is not None:
            words += _elsewhere(ledger, line, left_out or tried, tried, req.total_milli, user, to_user)
        named = sorted({*line.covered, *own} - {ANY_MODEL})
        holder = ("you have" if to_user else f"{user} has") if own else f"team {line.team} has"
        field, most = ("model", f"a GPU model {holder} a line for "
                                f"({', '.join(named)})") if named else ("team", "a team of yours that has a quota line")
        return CeilingExceeded(
            # "so this 3-GPU job can never start": GPUs do not start, jobs do (new user 23, N6: "so 3 GPUs can
            # never start on it")
            message=f"{words}, so this {round(requested, 3):g}-GPU job can never start", field=field, most=most,
            details={"requested": requested, "ceiling": ceiling, "guaranteed": 0, "borrowing_limit": borrow,
                     "team": line.team, "user": None, "model": line.model, "unlisted": True,
                     "covered": list(line.covered), "uncovered": left_out, "members": list(line.members),
                     **({"own_models": own} if own else {})})
    elsewhere = _elsewhere(ledger, line, (), tried, req.total_milli, user, to_user) if ledger is not None else ""
    return CeilingExceeded(
        message=(f"{gpus_phrase(requested)} can never fit {whose}: {gpus_phrase(ceiling)}{on} "
                 f"(guaranteed {guaranteed:g} + borrowing limit {borrow:g}){elsewhere}"),
        field=field, most=most,
        details={"requested": requested, "ceiling": ceiling, "guaranteed": guaranteed, "borrowing_limit": borrow,
                 "team": line.team, "user": line.user, "model": line.model})


def unlisted_words(line: Line, limit: float, models: Sequence[str], *, user: str | None = None,
                   to_user: bool = True) -> tuple[str, list[str], list[str]]:
    """:func:`~jupyter_sched.wording.quota.unlisted_text` for an unlisted ``line`` read by ``user``
    about ``models`` (GPU models tried): ``(words, uncovered, own)`` — the models its scope has
    there (those no team line names, nor ``user``'s own lines), and ``user``'s own line models in
    the team (empty when they have none). Members are named as excepted only where their own lines
    apply on every model said (verify20 V6: a member whose line names A100 only was said to be
    excepted on H100 too). ``to_user``: see :func:`ceiling_exceeded`."""
    own = line.models_of(user)
    left_out = uncovered(line, models) if line.covered else []
    if own:
        left_out = [m for m in uncovered(line, models) if not any(line_applies(o, m) for o in own)]
        return (unlisted_text(line.team, limit, models=left_out, covered=line.covered, user=user, own=own,
                              to_user=to_user), left_out, own)
    if line.covered:
        members = line.members_on(left_out) if left_out else list(line.members)
        words = unlisted_text(line.team, limit, models=left_out, covered=() if left_out else line.covered,
                              members=members)
        return words, left_out, own
    lines_of = {u: line.models_of(u) for u in line.members}
    return unlisted_text(line.team, limit, members=line.members, lines_of=lines_of), left_out, own
