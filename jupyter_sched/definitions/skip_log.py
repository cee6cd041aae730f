"""The audit records of skipped firings: one ``definition_skipped`` record per definition per hour.

A firing is skipped over its owner's rate (``definition_max_firings_per_user_hour``; red team 15, R2) or
while the definition's previous run holds it (its overlap policy, new user 34 n1; a spent budget,
hubadmin24 B11). A record per skipped firing made a job flood a row flood (red team 17, R4: 6,000
rows an hour from one user), so the first skip is recorded at once and later ones are counted and
said in the next record, an hour after the last at the earliest. The counts between two records are
kept by the leading engine's :class:`SkipLog` (a restart starts them afresh). Pure: no store, no clock.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from ..model.units import clock_text
from .model import JobDefinition

__all__ = ["SkipLog", "SkipState"]

_HOUR = timedelta(hours=1)


@dataclass
class SkipState:
    """A definition's skipped firings since its last ``definition_skipped`` record."""

    recorded_at: datetime
    """The instant of the last record: the next one comes an hour after it at the earliest."""
    count: int = 0
    since: datetime | None = None
    last: datetime | None = None
    fired: int = 0
    why: str = ""
    """What skipped them when not the owner's rate (the previous run that holds them, and its reason)."""
    cause: str = ""
    """``waiting``, ``unfinished``, ``budget`` (:class:`.overlap.OverlapDecision`); "" for the rate."""


class SkipLog:
    """Each definition's skips not recorded yet, and their records' words.

    Args:
        max_per_user_hour: the admin's ``definition_max_firings_per_user_hour`` (said in a rate skip's words).
    """

    def __init__(self, max_per_user_hour: int) -> None:
        self.max_per_user_hour = max_per_user_hour
        self._pending: dict[str, SkipState] = {}

    def keep(self, definition_id: str, state: SkipState | None) -> None:
        """After the pass committed: ``state`` is ``definition_id``'s skips not recorded yet (None: none)."""
        if state is None:
            self._pending.pop(definition_id, None)
        else:
            self._pending[definition_id] = state

    def records(self, definition: JobDefinition, skips: list[tuple[datetime, int]], *,
                fired_again: datetime | None, now: datetime, why: str = "",
                cause: str = "") -> tuple[SkipState | None, list[tuple[str, dict[str, Any]]]]:
        """The audit records of ``skips`` (``(instant, firings counted in the hour before it)``) and
        the definition's skip state after them (kept only once the pass commits). One record per
        definition per hour: the first skip is recorded at once; later ones are counted and said
        in the next record, due an hour after the last one at a skip or at the next firing that
        runs (red team 17, R4). ``why`` / ``cause``: what skips them when not the rate (the previous
        run: :class:`.overlap.OverlapDecision`); a change of cause is recorded at once (of cause, not of
        words: a waiting run's reason changes its numbers at every firing)."""
        state = self._pending.get(definition.id)
        state = None if state is None else replace(state)
        records: list[tuple[str, dict[str, Any]]] = []
        if state is not None and skips and state.cause != cause:  # the rate then the budget, or back: said anew
            if state.count:
                records.append(self._record(definition, state, now))
            state = None
        for at, fired in skips:
            if state is None:
                state = SkipState(recorded_at=at, why=why, cause=cause)
            state.count, state.since, state.last, state.fired, state.why = \
                state.count + 1, state.since or at, at, fired, why
            if (state.count == 1 and state.recorded_at == at) or at >= state.recorded_at + _HOUR:
                records.append(self._record(definition, state, now))
                state = SkipState(recorded_at=at, why=why, cause=cause)
        if fired_again is not None and state is not None and state.count and \
                fired_again >= state.recorded_at + _HOUR:
            records.append(self._record(definition, state, now))
            state = None
        return state, records

    def _record(self, definition: JobDefinition, state: SkipState, now: datetime) -> tuple[str, dict[str, Any]]:
        assert state.since is not None and state.last is not None
        cap = state.why or self.rate_text(definition, state.fired, state.last, now)
        if state.count == 1:
            head = f"definition {definition.name!r} skipped its firing of {clock_text(state.last, now)}"
        else:
            head = (f"definition {definition.name!r}: {state.count} firings skipped since "
                    f"{clock_text(state.since, now)} (the last at {clock_text(state.last, now)})")
        message = (f"{head}: {cap}; no run is written for a skipped firing, and its further skips are counted "
                   "in one record an hour")
        details: dict[str, Any] = {"definition_id": definition.id, "skipped": state.count,
                                   "since": state.since.isoformat(), "last": state.last.isoformat()}
        if state.why:  # the previous run holds it (a spent budget, hubadmin24 B11; the overlap policy, n1)
            details["cause"] = state.cause
        else:
            details["max_firings_per_user_hour"] = self.max_per_user_hour
        return message, details

    def rate_text(self, definition: JobDefinition, fired: int, last: datetime | None = None,
                   now: datetime | None = None) -> str:
        """Why a firing over its owner's rate is skipped (``fired``: the firings counted in the hour
        before it, the last skipped at ``last`` when said in an audit record)."""
        before = f" before {clock_text(last, now or last)}" if last is not None else ""
        return (f"{definition.user}'s definitions already fired {fired} runs in the hour{before}, the most this "
                f"server allows per user (c.SchedApp.definition_max_firings_per_user_hour = {self.max_per_user_hour})")
