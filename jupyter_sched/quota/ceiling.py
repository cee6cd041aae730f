"""A request above a quota ceiling that nothing running can free: said in one sentence at submit
(:func:`jupyter_sched.admission.rules.check_ceiling`, a 422) and by the scheduling cycle for a job
already pending when an admin lowered the quota under it (new user 18, N12: it waited with "It
starts when nu18b's own running work leaves room under nu18b's cap…", which never happens)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..model import ANY_MODEL, GPU_MILLI, ResourceRequest
from ..model.units import gpus_phrase
from ..wording.quota import UNLISTED_SETTING, unlisted_text
from .ledger import Line, QuotaLedger

__all__ = ["UNLISTED_SETTING", "CeilingExceeded", "Stranded", "binding_ceiling", "ceiling_exceeded", "unlisted_fix",
           "unlisted_warning"]


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


def _stranded_text(work: Stranded, limit: float, *, yours: bool) -> str:
    parts = []
    waiting = [f"{n} pending {what}{'s' if n != 1 else ''}" for n, what in ((work.pending, "job"),
                                                                          (work.leases, "lease request")) if n]
    if waiting:
        never = "can never start" if limit == 0 else f"ask for more than {gpus_phrase(limit)} and can never start"
        parts.append(f"its {' and '.join(waiting)} {never}")
    if work.holding > limit:
        parts.append(f"its running work holds {gpus_phrase(work.holding)}, {gpus_phrase(work.holding - limit)} over "
                     f"that (it keeps running)")
    return (f"{unlisted_text(work.team, limit, who='it', yours=yours)}; {' and '.join(parts)} — give it a line with "
            f"PUT quotas, or raise {UNLISTED_SETTING}")


def unlisted_fix(team: str, others: Iterable[str], *, admin: bool = False, mine: Iterable[str] = ()) -> str:
    """The fix for a request on ``team``, which has no quota line, by a member of ``others`` (their
    teams that have one; ``mine``: all their teams). To an ``admin`` the fix they make themselves:
    a line with PUT quotas or the setting (new user 20, N3: a personal server's owner, the admin, was
    told "ask an admin"); to others, what to ask an admin for. The option is named once, where a
    team of theirs with a line can be chosen (``submit with --team <one of yours with a line: ml>``),
    and "none of your teams (default) has one" where none can (N3: "(you are in none)" read as "in
    no team")."""
    listed, all_mine = sorted(others), sorted(set(mine) | {team})
    if admin:
        fix = (f'add a quota line for team {team} with PUT quotas (e.g. {{"team": "{team}", "guaranteed": 0, '
               f'"borrowing_limit": 4}}) or set {UNLISTED_SETTING} (GPUs; None = no limit)')
    else:
        fix = f"ask an admin to add a quota line for team {team} (PUT quotas) or to raise {UNLISTED_SETTING}"
    if listed:
        return f"{fix}, or submit with --team <one of yours with a line: {', '.join(listed)}>"
    return f"{fix}; none of your teams ({', '.join(all_mine)}) has one"


def ceiling_exceeded(line: Line, req: ResourceRequest) -> CeilingExceeded:
    """The sentence for ``req`` above ``line``'s ceiling (see :func:`binding_ceiling`)."""
    ceiling, guaranteed, borrow = (_gpus(line.ceiling or 0), _gpus(line.guaranteed), _gpus(line.borrowing_limit or 0))
    whose = f"the per-user limit of {line.user} in team {line.team}" if line.user is not None \
        else f"the limit of team {line.team}"
    on = "" if line.model == ANY_MODEL else f" of {line.model}"
    requested = _gpus(req.total_milli)
    field, most = "gpus", f"at most {gpus_phrase(ceiling)}"
    per_worker = _gpus(req.gpus * req.gpu_milli)
    if req.groups:  # a gang of groups: the total across them is what to change (new user 18, N17)
        field, most = "groups", f"at most {gpus_phrase(ceiling)} across its groups"
    elif req.workers > 1 and 0 < per_worker <= ceiling:
        # a gang whose workers fit one by one: the worker count is what to change (issue 20:
        # "workers" blamed on "gpus", which the user had set to 1)
        fit = int(ceiling // per_worker)
        field, most = "workers", f"at most {fit} worker{'s' if fit != 1 else ''} of {gpus_phrase(per_worker)}"
    if line.unlisted:  # a team without a quota line (red team 19, R3): the team is what to change
        return CeilingExceeded(
            message=f"{unlisted_text(line.team, ceiling)}, so {gpus_phrase(requested)} can never start on it",
            field="team", most="a team of yours that has a quota line",
            details={"requested": requested, "ceiling": ceiling, "guaranteed": 0, "borrowing_limit": borrow,
                     "team": line.team, "user": None, "model": line.model, "unlisted": True})
    return CeilingExceeded(
        message=(f"{gpus_phrase(requested)} can never fit {whose}: {gpus_phrase(ceiling)}{on} "
                 f"(guaranteed {guaranteed:g} + borrowing limit {borrow:g})"),
        field=field, most=most,
        details={"requested": requested, "ceiling": ceiling, "guaranteed": guaranteed, "borrowing_limit": borrow,
                 "team": line.team, "user": line.user, "model": line.model})
