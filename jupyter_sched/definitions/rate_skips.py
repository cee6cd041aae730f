"""Firings skipped over their owner's rate, decided from what the firing pass already holds (session 38).

A due definition whose owner's definitions already fired ``max_per_user_hour`` scheduled runs in the hour is skipped:
no run, no job (red team 15, R2; red team 17, R4; :mod:`.firing`). The pass used to find that out only after reading
the definition's whole row (~180 KB of spec at red29's caps), its newest scheduled run and that run's job, and then
wrote the row back in a transaction of its own: four store round-trips on the firing thread per firing that makes
nothing — 400 a minute for one owner's 100 minutely definitions, for as long as they keep firing.

Now :meth:`RateSkips.decide` says whether a due definition's firings are all over the rate from memory alone: its
firing head (schedule, zone, cursor, version: the pass's one read), its owner, what the pass last wrote of its row at
that version (:class:`Known`: owner, name, skipped firings) and the owner's firings in the hour the pass keeps. The
skips of one pass are then written together (:meth:`DefinitionFiring._write_rate_skips
<.firing.DefinitionFiring>`): ONE transaction, per definition a compare-and-set of its cursor, version and ``skipped``
(:func:`~jupyter_sched.store.definitions.record_skips`, the spec not read) and, an hour apart, its
``definition_skipped`` record (:class:`.skip_log.SkipLog`, as before).

What stays on the full path (the row read, its overlap checked): a definition the pass does not know at its row's
version (its first firing after a start, or after an edit or another server's write), an owner whose hour the pass
has not read yet, a firing under the rate, and a plan with missed firings (downtime: its catch-up and audit). A
firing both over the rate and held by its previous run is said as the rate's (the full path said the run's): either
is true, and the rate is what can be told without a read.

Pure: no store, no clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .model import JobDefinition, SkippedFirings
from .schedule import CronSchedule, plan_firings

__all__ = ["Known", "RateSkip", "RateSkips", "over_rate"]

_HOUR = timedelta(hours=1)
_KNOWN_LIMIT = 40_000
"""Rows remembered before the memory is cleared (a deleted definition's entry is never read again)."""


@dataclass(frozen=True, slots=True)
class Known:
    """What the pass last wrote of a definition's row, valid while the row has ``version``."""

    version: int
    user: str
    name: str
    skipped: SkippedFirings | None


@dataclass(frozen=True, slots=True)
class RateSkip:
    """A due definition whose planned firings are all over its owner's rate.

    Attributes:
        definition: its firing head with the owner, name and skipped firings of :class:`Known`
            (no spec: none is needed to skip).
        instants: each skipped firing and the firings counted in the hour before it.
        cursor: where its cursor moves (the plan's).
    """

    definition: JobDefinition
    instants: tuple[tuple[datetime, int], ...]
    cursor: datetime


def over_rate(fired: deque[tuple[datetime, str]], at: datetime, definition_id: str, limit: int) -> int | None:
    """The firings counted in the hour before ``at`` when ``definition_id``'s firing at ``at`` is over ``limit``
    (the owner's ``fired``: ``(instant, definition id)`` oldest first, pruned here to that hour); None when it may
    fire or was counted already (a firing planned again after a conflict). Counts nothing: the caller does, once
    the firing runs."""
    while fired and fired[0][0] <= at - _HOUR:
        fired.popleft()
    if (at, definition_id) in fired or len(fired) < limit:
        return None
    return len(fired)


@dataclass
class RateSkips:
    """The pass's memory of the rows it wrote, and the decision made from it (module docstring).

    Args:
        limit: the admin's ``definition_max_firings_per_user_hour`` (0: no limit, nothing is decided here).
        grace_s: the admin's ``definition_misfire_grace_s``.
    """

    limit: int
    grace_s: float
    known: dict[str, Known] = field(default_factory=dict)

    def wrote(self, definition: JobDefinition, *, version: int, skipped: SkippedFirings | None) -> None:
        """The pass wrote ``definition``'s row: it now has ``version`` and ``skipped``."""
        if len(self.known) > _KNOWN_LIMIT:
            self.known.clear()
        self.known[definition.id] = Known(version=version, user=definition.user, name=definition.name,
                                          skipped=skipped)

    def forget(self, definition_id: str) -> None:
        """Its row changed elsewhere (a conflict): the next firing reads it."""
        self.known.pop(definition_id, None)

    def decide(self, head: JobDefinition, schedule: CronSchedule, now: datetime,
               fired: Mapping[str, deque[tuple[datetime, str]]]) -> RateSkip | None:
        """A :class:`RateSkip` when every firing of ``head`` (a firing head: id, schedule, zone, cursor, version)
        due at ``now`` is over its owner's rate, told from memory (``fired``: each owner's firings in the hour, as
        the pass keeps them); None when that cannot be told without the row (then the full path decides)."""
        known = self.known.get(head.id)
        if not self.limit or known is None or known.version != head.version or head.cursor is None:
            return None
        owners = fired.get(known.user)
        if owners is None:  # the owner's hour not read from the store yet: the full path reads it
            return None
        plan = plan_firings(schedule, cursor=head.cursor, now=now, grace_s=self.grace_s, run_missed_once=True)
        if plan.missed or plan.catch_up or not plan.fire:  # on-time firings only: the same under either policy
            return None
        instants = []
        for at in plan.fire:
            counted = over_rate(owners, at, head.id, self.limit)
            if counted is None:
                return None
            instants.append((at, counted))
        definition = JobDefinition(id=head.id, name=known.name, user=known.user, team="", schedule=head.schedule,
                                   timezone=head.timezone, cursor=head.cursor, version=head.version,
                                   skipped=known.skipped)
        return RateSkip(definition=definition, instants=tuple(instants), cursor=plan.cursor)
