"""State shared by the phases of one cycle (the per-cycle ledger, plugins and decisions so far).

:class:`CycleContext` holds what every phase reads and writes; the phases are small mixins in
their own modules — :mod:`.gates` (class grant, backoff, windows, budget), :mod:`.preempt`
(reclaim and priority preemption), :mod:`.eta` (pending reasons with ETA and EASY reservation) —
combined by :class:`~.cycle._Cycle` (STYLE §3: the cycle reads like a table of contents).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..backfill.easy import Reservation
from ..model import Job, PendingReason
from ..placement.fragmentation import cycle_placement
from ..placement.placer import Flavor, Placer
from ..placement.reasons import FitReason
from .ledger import CycleLedger, Holder
from .profile import SchedulingProfile
from .reasons import FlavorOutcome
from .snapshot import Admit, AuditRecord, Pend, Preempt, Reject, Snapshot

__all__ = ["CAPACITY_CODES", "RESERVE_PREFIX", "CycleContext"]

RESERVE_PREFIX = "\0reserve:"
"""Ledger holder key prefix for an EASY reservation mask."""

CAPACITY_CODES = frozenset({"WaitingForCapacity", "Fragmented", "UnhealthyGpu"})
"""Primary codes for which a preemption refusal is worth explaining."""


class CycleContext:
    """The mutable state of one cycle (never shared between cycles).

    Attributes:
        snap / now / profile: the cycle's input and policy.
        ledger / state / quota: capacity and quota usage (:class:`CycleLedger`) with ``what_if``.
        placer: placement plugins over ``state``.
        admits / preempts / pends / rejects / audit / nominations: decisions so far, in order.
        reservations: EASY reservation per GPU model (first capacity-blocked job).
        quota_etas: first quota-blocked job per (team, model), for "queued behind" ETAs.
        shapes / cap_cache / outcome_cache / reason_cache: per-cycle memo tables keyed by request
            shape and ledger version (jobs of one shape share flavors, reasons and outcomes).
        victims / in_flight: jobs preempted this cycle / still stopping from an earlier preemption.
        admitted: jobs admitted this cycle (their end times feed ETAs).
    """

    def __init__(self, snapshot: Snapshot, profile: SchedulingProfile) -> None:
        self.snap = snapshot
        self.now: datetime = snapshot.now
        self.profile = profile
        self.ledger = CycleLedger(snapshot)
        self.state = self.ledger.state
        self.quota = self.ledger.quota
        self.placer = Placer(self.state, cycle_placement(profile.placement, snapshot.inventory, snapshot.jobs))
        self.admits: list[Admit] = []
        self.preempts: list[Preempt] = []
        self.pends: list[Pend] = []
        self.rejects: list[Reject] = []
        self.audit: list[AuditRecord] = []
        self.nominations: dict[str, Any] = {}
        self.reservations: dict[str, Reservation] = {}
        self.quota_etas: dict[tuple[str, str], str] = {}
        self.shapes: dict[tuple[object, ...], tuple[tuple[Flavor, ...], FitReason | None]] = {}
        self.cap_cache: dict[tuple[object, ...], FitReason] = {}
        # Outcomes and reasons shared by jobs of one shape while capacity is unchanged (kept alive
        # for the whole cycle, so their ids are stable cache keys).
        self.outcome_cache: dict[tuple[object, ...], FlavorOutcome] = {}
        self.reason_cache: dict[tuple[object, ...], tuple[PendingReason, str, Mapping[str, Any]]] = {}
        self.victims: set[str] = set()
        self.preemption_attempts = 0
        self._covered: set[str] | None = None
        self._cand_index: tuple[dict[str, list[Holder]], dict[tuple[str, str], list[Holder]]] | None = None
        self._refusal = ""
        self.policies = {p.team: p for p in snapshot.quotas.teams}
        self.gated = bool(self.policies or profile.windows or snapshot.quotas.budgets) or any(
            j.not_before is not None for j in snapshot.jobs)
        self.admitted: dict[str, Job] = {}
        self.in_flight = self._in_flight_victims()

    def _in_flight_victims(self) -> set[str]:
        """Jobs still holding GPUs nominated for a pending preemptor: already being preempted."""
        st = self.state
        nominated = {st.uuid_to_gpu[u] for j in self.snap.jobs if j.nominated is not None and not j.state.holds_gpus
                     for u in j.nominated.all_gpu_uuids() if u in st.uuid_to_gpu}
        if not nominated:
            return set()
        return {h for h, hold in st.holdings.items() if not h.startswith("\0")
                and any(g in nominated for g, _ in hold.gpus)}
