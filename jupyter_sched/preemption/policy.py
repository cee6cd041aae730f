"""Who may evict whom: ``PreemptionPolicy`` (inside a team) and ``ReclaimPolicy`` (across teams).

Two small plugin families (STYLE §4), chosen by name — the preemption policy in the scheduling
profile, the reclaim policy per team (:attr:`jupyter_sched.model.TeamPolicy.reclaim`, default
from the profile). They only say whether one running job is a *candidate* victim for one pending
job; which candidates are evicted (the minimal set) is :mod:`.victims`' job, and when reclaim
applies at all (the preemptor stays within its team's guarantee, the victim's team is
borrowing) is the cycle's (DESIGN.md *Reclaim*).

Semantics follow Kueue's ``ClusterQueue.preemption``
(https://kueue.sigs.k8s.io/docs/concepts/preemption/):

* ``withinClusterQueue`` → :data:`PREEMPTION_POLICIES`: ``lower-class`` (a higher class evicts
  jobs of the profile's ``preemptible_classes``, default ``low``), ``lower-or-newer-equal``
  (also jobs of the *same* class submitted later — Kueue's ``LowerOrNewerEqualPriority``; never
  the job's own class when that class is not preemptible at all), ``never``;
* ``reclaimWithinCohort`` → :data:`RECLAIM_POLICIES`: ``any`` (borrowed work is preemptible
  whatever its class — DESIGN.md's default), ``lower-or-equal``, ``lower``, ``never``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from ..errors import ValidationError
from ..model import Job
from ..model.quota import RECLAIM_RULES

__all__ = ["PREEMPTION_POLICIES", "RECLAIM_POLICIES", "PreemptionPolicy", "ReclaimPolicy",
           "preemption_policy", "reclaim_policy"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


class PreemptionPolicy(Protocol):
    """May ``preemptor`` evict ``victim`` of its own team?"""

    @property
    def name(self) -> str:
        """The policy's name in a profile."""
        ...

    def may_preempt(self, preemptor: Job, victim: Job) -> bool:
        """True when ``victim`` (running, same team) is a candidate victim for ``preemptor`` (pending)."""
        ...


class ReclaimPolicy(Protocol):
    """May ``preemptor`` (within its team's guarantee) reclaim ``victim`` of a borrowing team?"""

    @property
    def name(self) -> str:
        """The rule's name (:data:`jupyter_sched.model.quota.RECLAIM_RULES`)."""
        ...

    def may_reclaim(self, preemptor: Job, victim: Job) -> bool:
        """True when ``victim`` (running, another team that borrows) is a candidate for ``preemptor``."""
        ...

    def protects(self, preemptor: Job) -> str:
        """One clause saying what the rule protects for ``preemptor``, e.g.
        ``"jobs of class normal or higher"`` (used in pending reasons)."""
        ...


@dataclass(frozen=True, slots=True)
class LowerClass:
    """A higher class evicts jobs of the preemptible classes (Kueue ``LowerPriority``)."""

    preemptible: tuple[str, ...] = ("low",)
    name: str = "lower-class"

    def may_preempt(self, preemptor: Job, victim: Job) -> bool:
        return (victim.spec.priority.rank < preemptor.spec.priority.rank
                and victim.spec.priority.value in self.preemptible)


@dataclass(frozen=True, slots=True)
class LowerOrNewerEqual:
    """:class:`LowerClass`, plus jobs of the same preemptible class submitted later (Kueue
    ``LowerOrNewerEqualPriority``): the older job of a class wins over the newer."""

    preemptible: tuple[str, ...] = ("low",)
    name: str = "lower-or-newer-equal"

    def may_preempt(self, preemptor: Job, victim: Job) -> bool:
        mine, theirs = preemptor.spec.priority, victim.spec.priority
        if theirs.value not in self.preemptible:
            return False
        if theirs.rank < mine.rank:
            return True
        return theirs is mine and ((victim.submitted_at or _EPOCH), victim.id) > (
            (preemptor.submitted_at or _EPOCH), preemptor.id)


@dataclass(frozen=True, slots=True)
class NeverPreempt:
    """No eviction inside a team."""

    name: str = "never"

    def may_preempt(self, preemptor: Job, victim: Job) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class ReclaimRule:
    """Reclaim borrowed jobs by class compared with the preemptor's.

    Attributes:
        name: the rule's name.
        min_gap: how many ranks the preemptor's class must stand above the victim's (``None``:
            any class; 0: lower or equal; 1: strictly lower).
        never: reclaim nothing.
    """

    name: str
    min_gap: int | None
    never: bool = False

    def may_reclaim(self, preemptor: Job, victim: Job) -> bool:
        if self.never:
            return False
        if self.min_gap is None:
            return True
        return preemptor.spec.priority.rank - victim.spec.priority.rank >= self.min_gap

    def protects(self, preemptor: Job) -> str:
        cls = preemptor.spec.priority.value
        if self.never:
            return "every borrowed job"
        if self.min_gap is None:
            return "nothing"
        if self.min_gap <= 0:
            return f"borrowed jobs of a class above {cls}"
        return f"borrowed jobs of class {cls} or above"


RECLAIM_POLICIES: dict[str, ReclaimPolicy] = {
    "any": ReclaimRule("any", None),
    "lower-or-equal": ReclaimRule("lower-or-equal", 0),
    "lower": ReclaimRule("lower", 1),
    "never": ReclaimRule("never", None, never=True),
}
"""Reclaim policies by name (:data:`jupyter_sched.model.quota.RECLAIM_RULES`)."""
assert tuple(RECLAIM_POLICIES) == RECLAIM_RULES

PREEMPTION_POLICIES = ("lower-class", "lower-or-newer-equal", "never")
"""Names a profile's ``preemption_policy`` may take."""


def preemption_policy(name: str, preemptible: tuple[str, ...]) -> PreemptionPolicy:
    """The within-team policy called ``name``.

    Raises:
        ValidationError: unknown name (field ``preemption_policy``).
    """
    if name == "lower-class":
        return LowerClass(preemptible)
    if name == "lower-or-newer-equal":
        return LowerOrNewerEqual(preemptible)
    if name == "never":
        return NeverPreempt()
    raise ValidationError(f"unknown preemption policy {name!r}", field="preemption_policy",
                          hint="use one of " + ", ".join(PREEMPTION_POLICIES))


def reclaim_policy(name: str) -> ReclaimPolicy:
    """The reclaim policy called ``name``.

    Raises:
        ValidationError: unknown name (field ``reclaim_policy``).
    """
    policy = RECLAIM_POLICIES.get(name)
    if policy is None:
        raise ValidationError(f"unknown reclaim policy {name!r}", field="reclaim_policy",
                              hint="use one of " + ", ".join(RECLAIM_POLICIES))
    return policy
