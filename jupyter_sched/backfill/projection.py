"""A start estimate for every pending job: conservative-backfill reservations walked in queue order.

:class:`Projection` holds one :class:`~.timeline.Timeline` per capacity unit (a node, or a pool
of identical nodes on large clusters; per GPU model where a node mixes models) and per quota line with a ceiling, built from when the
running jobs end (their time limits; a queue maximum for jobs without one). Pending jobs are then
placed in queue order, each at the earliest time its workers fit on units of one of its flavors
*and* its quota lines have room for its whole duration, and reserved there — so every later job
is estimated behind them (Mu'alem & Feitelson 2001, conservative backfilling; the ETA rules of
case 034: ``p3`` backfills at 60 until ``p0`` takes that slot, then moves to 180).

A job that can start only after a holder without a known end gets ``None`` with the holders
named; a job without a known duration reserves its units for ever.

A fractional job (a share of one GPU) is projected the way the placer packs it (new user 15, N7:
two 0.5-GPU jobs of one team behind one freed GPU were projected an hour apart, one GPU each,
though both started on it together): a share reserved on a whole GPU opens a :class:`SharedGpu`
— that GPU's free milli-GPUs over time while it is held — and a later share of the same sharing
group starts on it as soon as its milli-GPUs are free there, keeping the GPU held until the
last share on it ends; GPUs already shared by running fractions are such slots from now on.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..model import GPU_MILLI
from ..model.frozen import fast_init
from .timeline import Timeline

__all__ = ["Demand", "Estimate", "Option", "Projection", "SharedGpu"]

_NONE: list[tuple[float, str]] = []  # no reservations on a unit (read only)
_UNSEEN = -1.0  # no start worked out yet (a start is never before now, 0.0)

MAX_SHARED_SCAN = 64
"""Shared GPUs of a unit a share is tried on, the first opened first (a pool of a large cluster may
hold thousands: beyond these a share takes a whole GPU of its own, as before session 16)."""
MAX_SHARED_TIE = 16
"""Shared GPUs tried where a whole GPU is free at the share's earliest start already."""
MAX_STEPS = 64
"""Capacity/quota alternations per job before the search gives up (each step moves time forward)."""


@fast_init
@dataclass(frozen=True, slots=True)
class Option:
    """One way to run a job: a flavor's units and the quota lines it would be charged to.

    Attributes:
        flavor: the GPU model (for reasons).
        units: ids of the capacity units it may use.
        lines: ids of the quota lines with a ceiling it would count on.
    """

    flavor: str
    units: tuple[int, ...]
    lines: tuple[int, ...] = ()


@fast_init
@dataclass(frozen=True, slots=True)
class Demand:
    """A pending job as the projection sees it.

    Attributes:
        job_id: the job.
        workers: GPUs per worker (a single-node job has one entry).
        milli: milli-GPUs charged to its quota lines.
        duration: seconds it is expected to run (``math.inf``: no known end).
        after: earliest start allowed (seconds after now; backoff, windows, budgets).
        options: its flavors, in preference order.
        strict: it did not start in this cycle, so its start is after now (the first change of
            its units' capacity at the earliest): "now" is shown only for jobs starting now.
        share: milli-GPUs of one GPU for a fractional job (below 1000; 0: whole GPUs): it may
            start on a GPU that shares of its ``group`` hold (:class:`SharedGpu`).
        group: who it may share a GPU with (the profile's ``gpu_sharing``: ``"*"`` anyone, a
            team, or its own id: nobody).
    """

    job_id: str
    workers: tuple[int, ...]
    milli: int
    duration: float
    after: float
    options: tuple[Option, ...]
    strict: bool = True
    share: int = 0
    group: str = "*"


class SharedGpu:
    """One GPU held by fractional jobs of one sharing ``group`` from ``start`` to ``end`` (seconds
    after now; ``math.inf``: no known end): ``free`` is its free milli-GPUs over time. The unit's
    timeline counts the GPU as taken over ``[start, end)``."""

    __slots__ = ("end", "free", "group", "peak", "room", "start", "starts")

    def __init__(self, group: str, start: float, end: float, free: Timeline, peak: int | None = None) -> None:
        self.group, self.start, self.end, self.free = group, start, end, free
        self.peak = max(free.free) if peak is None else peak  # the most ever free (reservations only lower it)
        self.room = -1  # the most free at once while held, [start, end) (:meth:`_room`); -1: not worked out
        # (milli, duration, after) -> free.earliest of that, until the next take changes ``free``: the
        # shares of a queue come in a few sizes and durations, and each is tried on every shared GPU
        self.starts: dict[tuple[int, float, float], float | None] = {}

    def copy(self) -> SharedGpu:
        other = SharedGpu(self.group, self.start, self.end, self.free.copy(), self.peak)
        other.room = self.room
        return other

    def _room(self) -> int:
        """The most milli-GPUs free at once on this GPU while it is held (the segments of ``free``
        that meet ``[start, end)``): a share can start here only where that many are free, so a
        share larger than this never does (issue 17: a pool's shared GPUs, full ones included, were
        each searched for every share projected)."""
        ts, free = self.free.ts, self.free.free
        i = bisect.bisect_right(ts, self.start) - 1
        room = free[i]
        end, n = self.end, len(ts)
        i += 1
        while i < n and ts[i] < end:
            if free[i] > room:
                room = free[i]
            i += 1
        return room

    def earliest(self, demand: Demand, after: float, unit: Timeline) -> float | None:
        """The earliest start ``>= after`` of ``demand``'s share on this GPU: its milli-GPUs free
        throughout its run, which starts before the GPU is let go and either ends by then or finds
        the GPU's unit free to keep holding it (None: not here)."""
        if demand.group != self.group or self.peak < demand.share:
            return None
        room = self.room
        if room < 0:
            room = self.room = self._room()
        if room < demand.share:
            return None  # the segment a start falls in (before ``end``) has that much free at most
        key = (demand.share, demand.duration, max(after, self.start))
        t = self.starts.get(key, _UNSEEN)
        if t == _UNSEEN:
            t = self.starts[key] = self.free.earliest(*key)
        if t is None or t >= self.end:
            return None
        end = t + demand.duration
        if end > self.end and unit.earliest(1, end - self.end, self.end) != self.end:
            return None
        return t

    def take(self, demand: Demand, start: float, unit: Timeline) -> None:
        """Reserve ``demand``'s share from ``start`` (as :meth:`earliest` found it)."""
        end = start + demand.duration
        self.free.reserve(start, end, demand.share)
        self.room = -1
        self.starts = {}
        if end > self.end:
            unit.reserve(self.end, end, 1)
            self.end = end


@fast_init
@dataclass(frozen=True, slots=True)
class Estimate:
    """Where a demand was reserved.

    Attributes:
        start: seconds after now (None: unknown).
        flavor: the option that gives the earliest start.
        waits_on: holders (running or queued) whose end it waits for, when ``start`` is None, or
            the running jobs whose ends make room for it.
        why: one clause when ``start`` is None.
    """

    start: float | None
    flavor: str = ""
    waits_on: tuple[str, ...] = ()
    why: str = ""


@dataclass
class Projection:
    """Timelines of capacity units and quota lines, and the reservations made on them so far.

    Attributes:
        units: free GPUs over time per unit.
        unit_max: most GPUs one worker can get on the unit (its node size; for a pool, its largest node).
        lines: free milli-GPUs over time per quota line (ceiling minus usage).
        forever: per unit, holders (and reserved jobs) with no known end.
        line_forever: per line, holders with no known end.
        enders: per unit, ``(end, job id)`` of holders with a known end, sorted (to name what a
            start waits for).
        reserved_ends: per unit, ``(end, job id)`` of the jobs reserved on it so far that end
            after they start, sorted: a job reserved on the unit later waits for them too ("after
            j-2 ends" names a queued job, not only running ones) — only on the units it is
            reserved on, and only once they have *ended* (a job reserved ahead that starts when it
            does, or ends on another unit, made it no room: new user 5 finding 4).
        free_longest_first: a gang's equal choices go to the unit free the longest, as the
            placer's go (:meth:`_gang_at`; the EASY replay of ETAs), not to the lowest unit
            index (conservative backfill's plan, which admission itself follows).
        shared: per unit, the GPUs held by fractional jobs (running or reserved), in the order
            they were opened (module doc).
        line_enders: per quota line, ``(end, job id)`` of the holders charged to it with a known
            end, sorted; ``line_reserved_ends``: per line, those of the jobs reserved on it so far.
            A job its quota holds back now waits for *them* — its team's (or its user's) own work —
            not for the jobs whose ends free GPUs (hubadmin24 B5: an nlp job over nlp's quota was
            told "when ha24r's job … ends", a research job).
        whole_lines: the team lines, on which a GPU only one team's shares occupy counts whole (red team 38 R3;
            :mod:`..scheduling.share_charge`): a share that opens a GPU of its own is charged the whole GPU there,
            one that joins a GPU its own group's shares hold (a team, or itself) nothing more (:meth:`line_cost`).
    """

    units: list[Timeline]
    unit_max: list[int]
    lines: list[Timeline] = field(default_factory=list)
    forever: list[list[str]] = field(default_factory=list)
    line_forever: list[list[str]] = field(default_factory=list)
    enders: list[list[tuple[float, str]]] = field(default_factory=list)
    reserved_ends: dict[int, list[tuple[float, str]]] = field(default_factory=dict)
    free_longest_first: bool = False
    shared: dict[int, list[SharedGpu]] = field(default_factory=dict)
    line_enders: list[list[tuple[float, str]]] = field(default_factory=list)
    line_reserved_ends: dict[int, list[tuple[float, str]]] = field(default_factory=dict)
    whole_lines: frozenset[int] = frozenset()
    # within one :meth:`place`: per unit, (start, index) of the shared GPU the search found for the demand's
    # share at that start, so its reservation takes that GPU without searching the unit's shared GPUs again
    # (the same answer: nothing changes between the two; ~2 % of a 100-node cycle, session 29). None outside
    # place(): a caller that searches and reserves itself may change timelines in between (lookahead).
    _slot_hints: dict[int, tuple[float, int]] | None = field(default=None, repr=False, compare=False)

    def copy(self) -> Projection:
        """An independent copy for trial reservations (``enders`` is read-only and shared)."""
        return Projection(units=[u.copy() for u in self.units], unit_max=self.unit_max,
                          lines=[ln.copy() for ln in self.lines], forever=[list(f) for f in self.forever],
                          line_forever=[list(f) for f in self.line_forever], enders=self.enders,
                          reserved_ends={unit: list(ends) for unit, ends in self.reserved_ends.items()},
                          free_longest_first=self.free_longest_first,
                          shared={unit: [g.copy() for g in gs] for unit, gs in self.shared.items()},
                          line_enders=self.line_enders,
                          line_reserved_ends={line: list(ends) for line, ends in self.line_reserved_ends.items()},
                          whole_lines=self.whole_lines)

    def line_cost(self, demand: Demand, line: int, opens: bool) -> int:
        """Milli-GPUs ``demand`` is charged on quota ``line`` as admission charges it (:attr:`whole_lines`):
        ``opens``: a share takes a GPU of its own (else it joins a shared one)."""
        if not demand.share or line not in self.whole_lines:
            return demand.milli
        if opens:
            return GPU_MILLI
        return 0 if demand.group != "*" else demand.milli  # beside its own team's (its own) shares: counted whole

    def room_at(self, t: float) -> bool:
        """Whether anything may start at ``t``: a unit has a whole GPU free, or a shared GPU some
        milli-GPUs."""
        return any(u.at(t) > 0 for u in self.units) or any(
            g.start <= t < g.end and g.free.at(t) > 0 for gs in self.shared.values() for g in gs)

    def _slot(self, demand: Demand, unit: int, after: float, scan: int = MAX_SHARED_SCAN) -> tuple[float, int] | None:
        """The earliest start ``>= after`` of fractional ``demand`` on a shared GPU of ``unit`` (of
        the first ``scan`` opened), and that GPU's index (the first opened among equal starts)."""
        best: tuple[float, int] | None = None
        timeline = self.units[unit]
        group, share = demand.group, demand.share
        for i, gpu in enumerate(self.shared.get(unit, ())[:scan]):
            if gpu.group != group or (best is not None and gpu.start >= best[0]):
                continue
            if gpu.peak < share or 0 <= gpu.room < share:  # :meth:`SharedGpu.earliest`'s first refusals, read
                continue  # here: a pool's shared GPUs are mostly full for a share (~1,200 calls a 100-node cycle)
            t = gpu.earliest(demand, after, timeline)
            if t is not None and (best is None or t < best[0]):
                best = (t, i)
                if t <= after:
                    break  # none starts it earlier
        return best

    def next_change(self, after: float) -> float | None:
        """The first time after ``after`` at which any unit's or line's free capacity changes."""
        times = [c for tl in (*self.units, *self.lines) if (c := tl.next_change(after)) is not None]
        times += [c for gs in self.shared.values() for g in gs
                  if (c := g.free.next_change(after)) is not None and c < g.end]
        return min(times, default=None)

    def place(self, demand: Demand) -> Estimate:
        """Estimate ``demand``'s start and reserve it (module doc)."""
        self._slot_hints = {} if demand.share else None
        try:
            found = self.earliest(demand)
            if found is None:
                return self._unknown(demand)
            start, i, chosen = found
            return self.reserve(demand, start, demand.options[i], chosen)
        finally:
            self._slot_hints = None

    def earliest(self, demand: Demand) -> tuple[float, int, list[tuple[int, int]]] | None:
        """``(start, option index, [(unit, GPUs)])`` of the earliest fit, without reserving (None: never)."""
        best: tuple[float, int, list[tuple[int, int]]] | None = None
        for i, option in enumerate(demand.options):
            found = self._earliest(demand, option)
            if found is not None and (best is None or found[0] < best[0]):
                best = (found[0], i, found[1])
        return best

    def reserve(self, demand: Demand, start: float, option: Option, chosen: Sequence[tuple[int, int]]) -> Estimate:
        """Reserve ``demand`` from ``start`` on ``chosen`` units (and ``option``'s quota lines)."""
        end = start + demand.duration
        whole = demand.share and self.whole_lines
        opens = not whole or any(gpus for _, gpus in chosen)
        short = [line for line in option.lines
                 if self.lines[line].at(demand.after) < (self.line_cost(demand, line, opens) if whole else demand.milli)]
        for unit, gpus in chosen:
            if demand.share and not gpus:  # joins a shared GPU (:meth:`_fit`)
                hint = self._slot_hints.get(unit) if self._slot_hints is not None else None
                found = hint if hint is not None and hint[0] == start else self._slot(demand, unit, start)
                if found is not None and found[0] <= start:
                    self.shared[unit][found[1]].take(demand, start, self.units[unit])
                    gpus = -1
                else:
                    gpus = 1
                    opens = True
            if gpus > 0:
                self.units[unit].reserve(start, end, gpus)
                if demand.share:
                    free = Timeline(1000)
                    free.reserve(start, end, demand.share)
                    self.shared.setdefault(unit, []).append(SharedGpu(demand.group, start, end, free))
            if math.isinf(end):
                self.forever[unit].append(demand.job_id)
        for line in option.lines:
            if cost := (self.line_cost(demand, line, opens) if whole else demand.milli):
                self.lines[line].reserve(start, end, cost)
            if math.isinf(end):
                self.line_forever[line].append(demand.job_id)
        # name the jobs whose end decided the start: the last to end by it on its units, running or
        # reserved ahead (new user 6 F2: "when all4, big2 and big1 end" named two jobs that had ended
        # 70 minutes before all4); both lists are sorted by end
        last, names = _last_enders(start, (ends for unit, _ in chosen
                                           for ends in (self.enders[unit], self.reserved_ends.get(unit, _NONE))))
        if short and self.line_enders:  # its quota has no room now: its own team's work decides (hubadmin24 B5)
            at, own = _last_enders(start, (ends for line in short for ends in (
                self.line_enders[line], self.line_reserved_ends.get(line, _NONE))))
            if own:  # GPUs freed later than the quota is under: both are waited for, the quota's first
                names = [*own, *(n for n in names if n not in own)] if last > at else own
        waits = tuple(dict.fromkeys(names))[:3]
        if math.isfinite(end) and end > start:
            for unit, _ in chosen:
                bisect.insort(self.reserved_ends.setdefault(unit, []), (end, demand.job_id))
            for line in option.lines:
                bisect.insort(self.line_reserved_ends.setdefault(line, []), (end, demand.job_id))
        return Estimate(start=start, flavor=option.flavor, waits_on=waits)

    def unknown(self, demand: Demand) -> Estimate:
        """The estimate of a demand that fits nowhere: what it waits on (see :meth:`place`)."""
        return self._unknown(demand)

    # ------------------------------------------------------------------ search
    def _earliest(self, demand: Demand, option: Option) -> tuple[float, list[tuple[int, int]]] | None:
        t = demand.after
        for _ in range(MAX_STEPS):
            fit = self._fit(demand, option, t)
            if fit is None:
                return None
            start, chosen = fit
            later = start
            whole = demand.share and self.whole_lines  # mostly none: a share's charge counted whole on team lines
            opens = not whole or any(gpus for _, gpus in chosen)
            for line in option.lines:
                ok = self.lines[line].earliest(self.line_cost(demand, line, opens) if whole else demand.milli,
                                               demand.duration, start)
                if ok is None:
                    return None
                later = max(later, ok)
            if later == start:
                if demand.strict and start <= 0:
                    nxt = [c for u in option.units if (c := self.units[u].next_change(0.0)) is not None]
                    nxt += [c for ln in option.lines if (c := self.lines[ln].next_change(0.0)) is not None]
                    if not nxt:
                        return None
                    t = min(nxt)
                    continue
                return start, chosen
            t = later
        return None

    def _fit(self, demand: Demand, option: Option, after: float) -> tuple[float, list[tuple[int, int]]] | None:
        """Earliest time ``>= after`` the workers fit on ``option``'s units, and which units."""
        d = demand.duration
        if len(demand.workers) == 1:
            k = demand.workers[0]
            best: tuple[float, int, int] | None = None
            for unit in option.units:
                if self.unit_max[unit] < k:
                    continue
                t = self.units[unit].earliest(k, d, after) if k else after
                if t is None:
                    continue
                room = self.units[unit].at(t)
                if best is None or (t, room) < (best[0], best[1]):
                    best = (t, room, unit)  # earliest, then the fullest unit (bin packing)
            if demand.share and self.shared:  # a share packs onto a shared GPU first, as the placer packs
                # (a whole GPU free already: a shared one only ties it, so only the first few are tried)
                scan = MAX_SHARED_SCAN if best is None or best[0] > after else MAX_SHARED_TIE
                hints = self._slot_hints
                for unit in option.units:
                    slot = self._slot(demand, unit, after, scan)
                    if slot is not None and hints is not None:
                        hints[unit] = slot
                    if slot is not None and (best is None or slot[0] <= best[0]):
                        best = (slot[0], -1, unit)
                if best is not None and best[1] == -1:
                    return best[0], [(best[2], 0)]
            return None if best is None else (best[0], [(best[2], k)])
        t = after
        for _ in range(4 * MAX_STEPS):
            chosen = self._gang_at(demand, option, t)
            if chosen is not None:
                return t, chosen
            nxt = [c for u in option.units if (c := self.units[u].next_change(t)) is not None]
            if not nxt:
                return None
            t = min(nxt)
        return None

    def _gang_at(self, demand: Demand, option: Option, t: float) -> list[tuple[int, int]] | None:
        """Workers (largest first) on the units with the least room that still hold them, at ``t``;
        among those with equal room, the lowest unit index — or, with ``free_longest_first`` (the
        EASY replay of ETAs), the unit free the longest (:meth:`Timeline.free_since`), as the
        placer takes them: its nodes with ``k`` free GPUs are kept in the order they came to have
        ``k`` free (:attr:`~jupyter_sched.placement.state.Pool.by_free`), so a reservation made
        when running jobs end takes a node that is free already before the nodes those ends free.
        By unit index (until session 13), the replay's EASY reservation took the two nodes a
        running gang's end frees and let a job backfill on the node free already, which the cycle
        then kept for the reservation (``benchmarks/jct_loaded.py``, exact runtimes and no later
        arrivals: 5 of the main replay's 28 ETAs off, by up to 6,090 s; none now). Conservative
        backfill keeps the index: its plan is the rule admission follows (JCT unchanged)."""
        end = t + demand.duration
        room = {u: self.units[u].min_free(t, end) for u in option.units}
        chosen: list[tuple[int, int]] = []
        units = self.units
        for k in sorted(demand.workers, reverse=True):
            fits = [(r, u) for u, r in room.items() if r >= k and self.unit_max[u] >= k]
            if not fits:
                return None
            r, u = min(fits)
            if self.free_longest_first and len(tied := [v for s, v in fits if s == r]) > 1:
                u = min(tied, key=lambda v: (units[v].free_since(k, t), v))
            room[u] = r - k
            chosen.append((u, k))
        merged: dict[int, int] = {}
        for u, k in chosen:
            merged[u] = merged.get(u, 0) + k
        return list(merged.items())

    def _unknown(self, demand: Demand) -> Estimate:
        holders: list[str] = []
        for option in demand.options:
            opens = not demand.share or not any(  # a share packs where its group's shared GPU has room for it
                g.group == demand.group and g.free.at(0.0) >= demand.share for u in option.units
                for g in self.shared.get(u, ()))
            short = [line for line in option.lines if self.lines[line].at(0.0) < self.line_cost(demand, line, opens)]
            if short:  # its quota has no room: only the work charged to that quota gives room (new user 10,
                # N6: eve's quota-held job named amy's lease and jobs as what it waited for)
                for line in short:
                    holders.extend(self.line_forever[line])
                continue
            for unit in option.units:
                holders.extend(self.forever[unit])
            for line in option.lines:
                holders.extend(self.line_forever[line])
        named = tuple(dict.fromkeys(holders))
        if named:
            return Estimate(None, waits_on=named[:5], why="it fits only after jobs without a time limit end")
        if any(self.unit_max[u] >= max(demand.workers, default=0) for o in demand.options for u in o.units):
            return Estimate(None, why="it waits on something other than GPUs freeing up (see the reason); "
                                      "no running job's end changes that")
        return Estimate(None, why="no node of its GPU models can hold one of its workers")


def _last_enders(start: float, lists: Iterable[Sequence[tuple[float, str]]]) -> tuple[float, list[str]]:
    """``(when, up to 3 job ids)``: of the ``(end, job id)`` lists (each sorted), the jobs that end
    last by ``start`` — the ends that decided it (new user 6 F2: not those that ended long before);
    ``(-inf, [])`` when none ends by then."""
    last, names = -math.inf, list[str]()
    for ends in lists:
        i = bisect.bisect_right(ends, (start, "\uffff")) if ends else 0
        if not i or (at := ends[i - 1][0]) < last:
            continue
        if at > last:
            last, names = at, []
        while i and ends[i - 1][0] == at and len(names) < 3:
            names.append(ends[i - 1][1])
            i -= 1
    return last, names


def build_units(free_now: Sequence[int], releases: Sequence[Sequence[tuple[float, int]]]) -> list[Timeline]:
    """One timeline per unit from its free units now and its releases."""
    return [Timeline(f, r) for f, r in zip(free_now, releases, strict=True)]
