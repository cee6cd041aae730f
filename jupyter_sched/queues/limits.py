"""Effective time limits: a queue's default and maximum for jobs that give none (case 033).

Backfill and ETAs need an upper bound on every job's runtime (Lifka 1995; IBM LSF "backfill works
best when all jobs have a run limit"). A job without a limit gets, *for planning*:

1. its queue's **default** when one is configured (Slurm's partition ``DefaultTime``) — the
   service also writes it into the job at submit, so the job is stopped there;
2. else its queue's **maximum** (``MaxTime``): it can run no longer, so that is a safe bound;
3. else none: it cannot be backfilled and the jobs queued behind its GPUs get an honest
   "unknown" naming it.

A job submitted with ``time_limit: 0`` is *unlimited* (:attr:`JobSpec.unlimited`): neither the
default nor the maximum replaces it. A limit of zero is never "ends at once".

Rules are looked up by team (the queue) and priority class, the most specific first. An admin sets
them as ``c.SchedApp.time_limits`` (:func:`time_limit_rules` reads that list). A limit given above
the queue's maximum is refused at submit (:func:`over_max`; admins may), as Slurm refuses a job over
its partition's ``MaxTime``; ``time_limit: 0`` is accepted there too (case 033: with its note, planned as
unlimited, never backfilled) but the job is stopped at the queue's maximum once it starts (:func:`run_limit`):
"no limit" never reaches past what the admin allows (verify28/red28/newuser28: ``--time-limit 0`` ran forever
in a queue whose maximum refused ``--time-limit 2h``). An admin who wants more gives the longer limit itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from ..errors import SchedError, ValidationError, shown
from ..model import JobKind, JobSpec
from ..model.limit_sources import SOURCE_NAMES
from ..model.units import format_duration
from ..model.validation import parse_priority

__all__ = ["SOURCE_NAMES", "TimeLimitRule", "effective_limit", "over_max", "queue_max", "queue_of", "run_limit",
           "time_limit_rules"]

@dataclass(frozen=True, slots=True)
class TimeLimitRule:
    """Default and maximum time limits of a queue (team) and/or class.

    Attributes:
        team: the team (queue) it applies to; None = every team.
        priority: the class it applies to (``high``/``normal``/``low``); None = every class.
        default_s: limit given to jobs that set none (seconds, > 0); None = no default.
        max_s: longest a job may run (seconds, > 0); None = no maximum.

    Raises:
        ValidationError: a non-positive or non-finite number (field ``default_s``/``max_s``), or a
            default above the maximum.
    """

    team: str | None = None
    priority: str | None = None
    default_s: float | None = None
    max_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("default_s", "max_s"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise ValidationError(f"{name} must be a positive number of seconds (got {shown(value)})", field=name,
                                      hint="give e.g. 86400 for one day, or null for none")
        if self.default_s is not None and self.max_s is not None and self.default_s > self.max_s:
            raise ValidationError(f"default_s {self.default_s:g} is above max_s {self.max_s:g}", field="default_s",
                                  hint="make the default at most the maximum")
        if self.priority is not None:  # one rule for class names, case folded (new user 20, N27)
            object.__setattr__(self, "priority", parse_priority(self.priority).value)

    def specificity(self) -> int:
        """2 for team and class, 1 for one of them, 0 for a rule for everyone."""
        return (self.team is not None) + (self.priority is not None)


def _best(spec: JobSpec, rules: Sequence[TimeLimitRule], attr: str) -> TimeLimitRule | None:
    """The most specific rule for ``spec``'s team and class that sets ``attr`` (the first of equals)."""
    best: TimeLimitRule | None = None
    for rule in rules:
        if getattr(rule, attr) is None or rule.team not in (None, spec.team) or \
                rule.priority not in (None, spec.priority.value):
            continue
        if best is None or rule.specificity() > best.specificity():
            best = rule
    return best


def _rule(spec: JobSpec, rules: Sequence[TimeLimitRule], attr: str) -> float | None:
    best = _best(spec, rules, attr)
    return None if best is None else getattr(best, attr)


def queue_of(spec: JobSpec, rules: Sequence[TimeLimitRule], attr: str = "max_s") -> str:
    """Whose ``attr`` (``default_s`` or ``max_s``) applies to ``spec``, in words: ``team cv's queue``, or
    ``team cv's queue for class low`` where the most specific rule setting it names a class."""
    rule = _best(spec, rules, attr)
    return f"team {spec.team}'s queue" + (f" for class {rule.priority}" if rule is not None and rule.priority else "")


def queue_max(spec: JobSpec, rules: Sequence[TimeLimitRule]) -> float | None:
    """The longest limit ``spec``'s queue (team and class) allows, in seconds (None: no maximum): what its
    owner may lengthen a pending job's limit to (hubadmin25 B18, ``PATCH jobs/{id}``)."""
    return _rule(spec, rules, "max_s")


def effective_limit(spec: JobSpec, rules: Sequence[TimeLimitRule]) -> tuple[float | None, str]:
    """The limit to plan with, and where it comes from.

    A kernel's lease has no time limit and takes none from the queue's rules: the engine never
    stops a lease at a limit (it ends when released, its kernel stops, or idle reclaim takes it),
    so planning with one would backfill work in front of a reservation on an end that never
    comes, and tell the user the lease "ends by" a time it does not (new-user finding 32).

    Returns:
        ``(seconds or None, source)`` with source ``"given"``, ``"queue default; none given"``,
        ``"queue max; none given"``, ``"unlimited"`` (``time_limit: 0``), ``"lease"`` (a
        kernel's lease: none) or ``"none given"``.
    """
    if spec.kind is JobKind.LEASE:
        return None, "lease"
    if spec.time_limit_s is not None:
        return spec.time_limit_s, "given"
    if spec.unlimited:
        return None, "unlimited"
    if rules:
        default = _rule(spec, rules, "default_s")
        if default is not None:
            return default, "queue default; none given"
        maximum = _rule(spec, rules, "max_s")
        if maximum is not None:
            return maximum, "queue max; none given"
    return None, "none given"


def run_limit(spec: JobSpec, rules: Sequence[TimeLimitRule]) -> tuple[float | None, str]:
    """The limit a job is stopped at once it starts, and where it comes from: :func:`effective_limit`, except that
    ``time_limit: 0`` (unlimited) is stopped at its queue's maximum where one applies — ``(max_s, "queue max;
    unlimited asked")``. Planning keeps reading it as unlimited until it starts (case 033)."""
    if spec.kind is not JobKind.LEASE and spec.time_limit_s is None and spec.unlimited:
        maximum = _rule(spec, rules, "max_s")
        if maximum is not None:
            return maximum, "queue max; unlimited asked"
    return effective_limit(spec, rules)


_RULE_KEYS = tuple(f.name for f in fields(TimeLimitRule))
_RULES_HINT = ('e.g. [{"team": "cv", "default_s": 14400, "max_s": 86400}, {"priority": "low", "max_s": 604800}]: '
               "seconds; team and priority may be left out (every team / class)")


def time_limit_rules(raw: Any, where: str = "time_limits") -> tuple[TimeLimitRule, ...]:
    """``c.SchedApp.time_limits`` (a list of objects with keys ``team``, ``priority``, ``default_s``, ``max_s``)
    as rules; None or empty: none.

    Raises:
        ValidationError: not a list of objects, an unknown key, a bad value, or two rules for the same team and
            class — naming ``time_limits[i]`` (or ``time_limits[i].<key>``) and the fix.
    """
    if raw is None:
        return ()
    if not isinstance(raw, (list, tuple)):
        raise ValidationError(f"{where} must be a list of rules (got {shown(raw)})", field=where, hint=_RULES_HINT)
    rules: list[TimeLimitRule] = []
    seen: dict[tuple[str | None, str | None], int] = {}
    for index, item in enumerate(raw):
        place = f"{where}[{index}]"
        if not isinstance(item, dict):
            raise ValidationError(f"{place} must be an object (got {shown(item)})", field=place, hint=_RULES_HINT)
        unknown = sorted(str(key) for key in item if key not in _RULE_KEYS)
        if unknown:
            raise ValidationError(f"{place} has an unknown key {unknown[0]!r}", field=f"{place}.{unknown[0]}",
                                  hint=f"use {', '.join(_RULE_KEYS)}")
        for key in ("team", "priority"):
            if item.get(key) is not None and (not isinstance(item[key], str) or not item[key].strip()):
                raise ValidationError(f"{place}.{key} must be a name (got {shown(item[key])})", field=f"{place}.{key}",
                                      hint="leave it out for every " + ("team" if key == "team" else "class"))
        if item.get("default_s") is None and item.get("max_s") is None:
            raise ValidationError(f"{place} gives neither default_s nor max_s", field=place, hint=_RULES_HINT)
        try:
            rule = TimeLimitRule(**item)
        except SchedError as err:
            err.field = f"{place}.{err.field}" if err.field else place
            raise
        pair = (rule.team, rule.priority)
        if pair in seen:
            raise ValidationError(f"{place} is a second rule for team {rule.team or 'any'} and class "
                                  f"{rule.priority or 'any'} (first: {where}[{seen[pair]}])", field=place,
                                  hint="merge the two into one rule")
        seen[pair] = index
        rules.append(rule)
    return tuple(rules)


def over_max(spec: JobSpec, rules: Sequence[TimeLimitRule]) -> tuple[str, float, str] | None:
    """Why the limit ``spec`` gives is above its queue's maximum: ``(what was asked, the maximum in seconds, whose
    maximum it is)``, e.g. ``("time limit 2h00m", 3600.0, "team cv's queue for class low")``; None when within
    it, or when it gives none (planned with the queue's default or maximum) or ``time_limit: 0`` (unlimited:
    accepted as case 033 says, and stopped at the maximum once it starts: :func:`run_limit`). A lease has none
    to check.

    The asked limit is said to the second when whole minutes would read as the maximum itself (verify28 V2:
    "time limit 1h00m is above the maximum (1h00m)" for 3,601 s)."""
    rule = _best(spec, rules, "max_s") if spec.kind is not JobKind.LEASE else None
    if rule is None or rule.max_s is None:
        return None
    whose = queue_of(spec, rules)
    if spec.time_limit_s is None or spec.time_limit_s <= rule.max_s:
        return None
    asked = format_duration(spec.time_limit_s)
    if asked == format_duration(rule.max_s):
        asked = exact_duration(spec.time_limit_s)
    return f"time limit {asked}", rule.max_s, whose


def exact_duration(seconds: float) -> str:
    """``seconds`` to the second (a tenth where it has one): ``1h00m01s``, ``2h00m00.5s``, ``59m59s`` — where
    :func:`~..model.units.format_duration`'s whole minutes would hide a difference that matters."""
    whole, tenth = divmod(round(seconds * 10), 10)
    hours, rest = divmod(whole, 3600)
    minutes, sec = divmod(rest, 60)
    said = f"{sec:02d}.{tenth}s" if tenth else f"{sec:02d}s"
    return f"{hours}h{minutes:02d}m{said}" if hours else f"{minutes}m{said}"
