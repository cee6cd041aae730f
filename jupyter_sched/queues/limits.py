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

Rules are looked up by team (the queue) and priority class, the most specific first.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import ValidationError, shown
from ..model import JobKind, JobSpec
from ..model.validation import parse_priority

__all__ = ["TimeLimitRule", "effective_limit", "queue_max"]


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


def _rule(spec: JobSpec, rules: Sequence[TimeLimitRule], attr: str) -> float | None:
    best: tuple[int, float] | None = None
    for rule in rules:
        value = getattr(rule, attr)
        if value is None or rule.team not in (None, spec.team) or rule.priority not in (None, spec.priority.value):
            continue
        if best is None or rule.specificity() > best[0]:
            best = (rule.specificity(), value)
    return None if best is None else best[1]


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
