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
from .ledger import Line, QuotaLedger

__all__ = ["UNLISTED_SETTING", "CeilingExceeded", "binding_ceiling", "ceiling_exceeded", "unlisted_fix", "unlisted_warning"]


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


UNLISTED_SETTING = "c.SchedApp.unlisted_team_borrowing_limit"
"""The setting that bounds the teams without a quota line (said to admins in the fixes)."""


def unlisted_warning(teams: Iterable[str], limit: float | None) -> str | None:
    """An admin's warning (``GET quotas``, the start-up log) naming ``teams``, which have work or
    members but no quota line, and what they get under ``limit`` (GPUs, None = no limit); None
    when there are none."""
    named = sorted(teams)
    if not named:
        return None
    if limit is None:
        gets = f"no limit: they may borrow every idle GPU ({UNLISTED_SETTING} is None)"
    else:
        who = "each" if len(named) > 1 else "it"  # one team: "it may use 0 GPUs" (verify19: "each" read oddly)
        gets = f"{who} may use {gpus_phrase(limit)} (guaranteed 0 + borrowing limit {limit:g}, {UNLISTED_SETTING})"
    return (f"team{'s' if len(named) > 1 else ''} {', '.join(named)} ha{'ve' if len(named) > 1 else 's'} no quota "
            f"line: {gets}; give them a line with PUT quotas")


def unlisted_fix(team: str, others: Iterable[str]) -> str:
    """The fix for a request on ``team``, which has no quota line, by a member of ``others``
    (their teams that have one): ``ask an admin to add one (PUT quotas) or submit with --team …``."""
    mine = sorted(others)
    where = f"submit with --team <one of yours: {', '.join(mine)}>" if mine \
        else "submit on a team that has one (you are in none)"
    return (f"ask an admin to add one for team {team} (PUT quotas) or {where}; admins: set "
            f"{UNLISTED_SETTING} (GPUs; None = no limit)")


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
            message=(f"team {line.team} has no quota line: teams without one may use {gpus_phrase(ceiling)} "
                     f"(guaranteed 0 + borrowing limit {borrow:g}, {UNLISTED_SETTING}), so "
                     f"{gpus_phrase(requested)} can never start on it"),
            field="team", most="a team of yours that has a quota line",
            details={"requested": requested, "ceiling": ceiling, "guaranteed": 0, "borrowing_limit": borrow,
                     "team": line.team, "user": None, "model": line.model, "unlisted": True})
    return CeilingExceeded(
        message=(f"{gpus_phrase(requested)} can never fit {whose}: {gpus_phrase(ceiling)}{on} "
                 f"(guaranteed {guaranteed:g} + borrowing limit {borrow:g})"),
        field=field, most=most,
        details={"requested": requested, "ceiling": ceiling, "guaranteed": guaranteed, "borrowing_limit": borrow,
                 "team": line.team, "user": line.user, "model": line.model})
