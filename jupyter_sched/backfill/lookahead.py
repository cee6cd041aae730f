"""ETAs by replaying the scheduler's own rules forward in time (no new arrivals).

A single pass that reserves every queued job in today's queue order (:class:`~.projection.Projection`
on its own) predicts the start each job would get if the order never changed and every job were
protected — conservative backfill. The scheduler does neither: the order moves as time passes
(fair share follows the usage that running jobs accrue; ``short-first`` ages waiting jobs), and
EASY backfill protects only the first blocked job per GPU model, so later jobs jump ahead of the
second one whenever they do not delay the first. On the loaded replay of
``benchmarks/jct_loaded.py`` with exact runtimes and every job queued at once, that single pass
was off by 30 % (fair share, EASY) and 63 % (short-first) of the median wait.

:func:`lookahead` instead steps from one capacity change to the next (a job ending, a gate
opening) and at each step does what a cycle would do then: order the remaining jobs with the
caller's queue order *at that time*, start every job that fits — under EASY only when, run for its
time limit (what backfill checks), it does not delay the first blocked job's reservation, under
conservative backfill when it delays no reservation made before it — and reserve the blocked
ones (the first per GPU model blocked by capacity, or all). Under EASY the first job a quota line keeps
waiting holds the line's room as the cycle holds it (later jobs charged to the line start only where they
end by its start or fit beside it: :func:`..backfill.easy.keeps_room`, the cycle's rule) and, first on its
GPU model, the GPUs it starts on; other jobs waiting on their quota are not protected, as in the cycle.
EASY's reservation is made as the cycle makes it
(:mod:`.easy`): on the jobs then running held to their time limits (``holds``; the replay's own
starts too), not to their expected ends — on expected ends it came earlier than the cycle's, so
the replay let fewer jobs backfill than admission then did and put their ETAs too late. Where units are nodes, the
reservation keeps from each step the GPUs free then that the placer gives it at its start, on the node the
cycle's walk stops on, and each start takes the GPUs the placer gives it (``gpus``: :mod:`..scheduling.eta_gpus`;
newuser38 n23: counted per node, the GPU free at a step was kept though the placer left it out). A job's start in
this replay is its ETA. This is the event
loop of a discrete-event simulator over the projection's timelines (Mu'alem & Feitelson 2001 keep
reservations the same way; Slurm's backfill plans ``squeue --start`` by walking its own rules
over a node-time map). Pure; bounded by ``max_steps``.

A job about to start may be refused by ``budget`` (newuser35 N6: the GPU-hour budget its start would find spent
by the work started before it): it is then moved to the time the budget gives (its reset) and replayed from there.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import groupby
from operator import attrgetter
from typing import Protocol

from .easy import keeps_room, outlasts
from .projection import Demand, Estimate, Option, Projection

__all__ = ["BudgetGate", "GpuPicks", "Hold", "lookahead"]

Order = Callable[[float, Sequence[str], Mapping[str, tuple[float, float]]], list[str]]
"""``(t, job ids still queued, {job id: (start, end)} started so far) -> those ids in queue order at t``."""

BudgetGate = Callable[[str, float, float], "float | None"]
"""``(job id, start t, expected end) -> None`` when the job may start at t (it is then charged from t to its end),
else the later time (seconds after now) it may start from (:mod:`..scheduling.eta_budget`)."""


class GpuPicks(Protocol):
    """The placer's GPU-level picks on the replay's units (:class:`..scheduling.eta_gpus.NodeGpus`): which of the
    GPUs a reservation gets are free now (:func:`_keep_shadow`), and which GPUs each start takes."""

    def keep(self, unit: int, count: int, t: float, start: float, *, freed_first: bool = False) -> int | None:
        """Of ``count`` GPUs reserved on ``unit`` from ``start``, how many are free at ``t`` (kept from then) —
        ``freed_first``: the GPUs freed by then are placed on first; None: unknown (the count's rule)."""

    def node(self, units: Sequence[int], count: int, t: float, start: float) -> int | None:
        """The unit of ``units`` a one-worker job of ``count`` GPUs reserved from ``start`` is placed on at ``t``;
        None: unknown (the count's choice)."""

    def place(self, units: Sequence[int], count: int, t: float, *, around: bool = False) -> int | None:
        """The unit of ``units`` (each holds it at ``t``) the placer gives a one-worker job of ``count`` GPUs
        starting at ``t``, ``around`` the GPUs kept for a reservation then; None: unknown (the count's choice: the
        fullest, the first among equals)."""

    def take(self, job_id: str, unit: int, count: int, t: float, end: float, latest: float, *, around: bool) -> int:
        """``job_id``'s start at ``t`` holds ``count`` GPUs of ``unit`` to ``end`` (``latest`` at the most), off those kept
        at ``t`` when it goes ``around`` the reservation; returns how many kept GPUs it took (it ends by then)."""


@dataclass(frozen=True, slots=True)
class Hold:
    """A running job as EASY's reservation sees it: it holds ``units`` (``(unit, GPUs)``) and ``milli``
    milli-GPUs of the quota ``lines`` it is charged to until its ``latest`` end (start + time limit;
    ``math.inf``: none), though it is expected to end at ``expected`` (seconds after now). ``holder``: its job id
    (the order in which the reservation's walk releases jobs that end at one instant)."""

    units: tuple[tuple[int, int], ...]
    expected: float
    latest: float
    lines: tuple[int, ...] = ()
    milli: int = 0
    holder: str = ""


def lookahead(proj: Projection, demands: Mapping[str, Demand], limits: Mapping[str, float], order: Order, *,
              protect: str, holds: Sequence[Hold] = (), max_steps: int = 10_000,
              budget: BudgetGate | None = None,
              around: dict[str, tuple[str, float | None]] | None = None,
              ceilings: Sequence[int] = (), first_order: list[str] | None = None,
              gpus: GpuPicks | None = None) -> dict[str, Estimate]:
    """Replay the queue forward on ``proj`` (module doc) and say where each job starts.

    Args:
        proj: free capacity over time (running jobs ending at their expected ends); the jobs
            started in the replay are reserved on it.
        demands: the queued jobs (their ``duration`` is the expected runtime; ``after`` a gate).
        limits: per job id, the time limit backfill checks (``math.inf``: none); EASY only.
        order: the queue order at a time.
        protect: which blocked jobs get a reservation later jobs may not delay: ``"first"`` per
            GPU model (EASY), ``"all"`` (conservative) or ``"none"`` (no backfill rules:
            whatever fits starts).
        holds: under EASY, the running jobs on ``proj`` whose time limit ends after their
            expected end (module doc: EASY reserves as if they ran to their limits).
        max_steps: capacity changes replayed at most.
        budget: refuses a start a spent budget keeps off, with the time it may start from (module doc).
        around: under EASY, filled with ``job id -> (reserved job id, its start on limits in seconds after now or
            None: it never fits on them)`` for each job started while another job held its GPU model's reservation
            (backfilled around it); a job missing from it started in queue order, nothing blocked ahead of it on
            its model — what a waiting job's line says of a job queued behind it that starts first (newuser35 N7:
            jobs the fair order put ahead were called backfill that "cannot delay this job past" its reservation).
        ceilings: under EASY, each quota line's ceiling (milli-GPUs; ``proj.lines`` order). The first job a line keeps
            waiting at a step holds the line's room as the cycle holds it (:func:`_hold_room`, s37-eta): a later job
            charged to the line starts then only where it ends by the held job's start or fits the room left beside
            it (:func:`..backfill.easy.keeps_room`, :func:`..scheduling.admit.room_held`'s rule).
        first_order: filled with the queue's order at the first step where a job starts — who goes first when GPUs
            next free, what the queue's positions say (newuser38 N2: "#1" by the order now was projected to start
            after "#2", which an election due before then put first); left empty where no job starts.

    Returns:
        Per job id that starts within the replay, its :class:`Estimate` (start in seconds after
        now, ``waits_on`` the jobs whose end made room); jobs missing never started in it.
    """
    started: dict[str, Estimate] = {}
    spans: dict[str, tuple[float, float]] = {}
    running = [h for h in holds if h.latest > h.expected]
    charges = [h for h in holds if h.lines] if ceilings else []  # every charge to a line, for _hold_room's walk
    remaining = [j for j in demands]
    if budget is not None:
        demands = dict(demands)  # a job a budget moves gets its later ``after``
    t = _next_event(proj, demands, remaining, 0.0)
    for _ in range(max_steps):
        if t is None or not remaining:
            break
        if proj.room_at(t):  # nothing can start while nothing is free
            trial = proj.copy()
            latest: Projection | None = None  # EASY: the view its reservation is made on (built once per step)
            reserved: set[str] = set()
            unprotected: set[str] = set()  # flavors whose first blocked job has no reservation (never fits)
            shadows: dict[str, float] = {}  # per flavor, when its reserved job starts on ``latest``
            holders: dict[str, str] = {}  # per flavor, the job holding its reservation at t
            rooms: dict[int, _Room] = {}  # per quota line, the room held for the first job it keeps waiting at t
            ordered = order(t, remaining, spans)
            for job_id in ordered:
                demand = demands[job_id]
                if demand.after > t:
                    continue
                if protect != "all" and (protect == "none" or demand.options[0].flavor in reserved) \
                        and not _may_fit_at(trial, demand, t):
                    continue  # cannot start at t and needs no reservation: skip the search
                found = trial.earliest(replace(demand, after=t, strict=False))
                if found is None:
                    continue
                start, i, chosen = found
                option = demand.options[i]
                limit = max(limits.get(job_id, demand.duration), demand.duration)
                if start <= t and rooms and any(
                        (room := rooms.get(line)) is not None and room.job_id != job_id
                        and keeps_room(t + limit, room.eta, demand.milli, room.spare) for line in option.lines):
                    continue  # the line's room is held for an earlier job it would delay (admit.room_held)
                where: tuple[int, list[tuple[int, int]]] | None = None
                if start <= t and (protect != "first" or option.flavor not in reserved
                                   or option.flavor in unprotected
                                   or (where := _backfills(latest, demand, limits, t, shadows.get(option.flavor),
                                                           (i, chosen))) is not None):
                    if where is not None:  # around the reservation: on the units it fits beside it
                        i, chosen = where
                        option = demand.options[i]
                    if gpus is not None and not demand.share and len(demand.workers) == 1 and len(chosen) == 1:
                        by = shadows.get(option.flavor)
                        goes_around = where is not None and by is not None and t + limit > by
                        chosen = _placed(latest if goes_around and latest is not None else trial, gpus, demand,
                                         option, chosen, t, limit if goes_around else demand.duration, goes_around)
                    if budget is not None and (until := budget(job_id, t, t + demand.duration)) is not None:
                        demands[job_id] = replace(demand, after=until)  # type: ignore[index]
                        continue
                    started[job_id] = proj.reserve(demand, t, option, chosen)
                    beside = chosen  # what it holds beside the GPUs kept for the reservation (``latest``)
                    if gpus is not None:
                        # off the GPUs kept for the reservation unless it ends by then; where it takes them (it ends
                        # by then: admit._may_bypass) they are kept already, so it holds no more of ``latest``
                        by = shadows.get(option.flavor)
                        took = [gpus.take(job_id, unit, count, t, t + demand.duration, t + limit,
                                          around=by is None or t + limit > by) for unit, count in chosen]
                        if not demand.share:
                            beside = [(unit, count - k) for (unit, count), k in zip(chosen, took, strict=True)]
                    for line in option.lines if rooms else ():  # takes the spare of each room it outlasts
                        if (room := rooms.get(line)) is not None and room.job_id != job_id \
                                and outlasts(t + limit, room.eta):
                            room.spare = max(0, room.spare - demand.milli)
                    if around is not None and (holder := holders.get(option.flavor)) is not None:
                        around[job_id] = (holder, shadows.get(option.flavor))
                    trial.reserve(demand, t, option, chosen)
                    spans[job_id] = (t, t + demand.duration)
                    if protect == "first" and limit > demand.duration:
                        running.append(Hold(tuple(chosen), t + demand.duration, t + limit, option.lines, demand.milli))
                    if ceilings and option.lines:
                        charges.append(Hold((), t + demand.duration, t + limit, option.lines, demand.milli, job_id))
                    if latest is not None:
                        latest.reserve(replace(demand, duration=limit), t, option, beside)
                    if not trial.room_at(t):
                        break  # full: nothing else starts at t, and reservations only decide starts at t
                elif protect == "all":
                    trial.reserve(demand, start, option, chosen)
                elif protect == "first" and ceilings and (short := [
                        line for line in option.lines if line not in rooms
                        and trial.lines[line].at(t) < demand.milli]):
                    # held by its quota line (the cycle: pending._hold_headroom), and the GPUs it starts on where
                    # no job blocked ahead of it reserves its model (a GPU reservation, as the branch below makes)
                    if all(demand.milli <= ceilings[line] for line in short):
                        if latest is None:
                            running = [h for h in running if h.expected > t]
                            latest = _latest_view(proj, running)
                        shadow = _hold_room(latest, demand, option, short, t, rooms, charges)
                        if shadow is not None and option.flavor not in reserved:
                            reserved.add(option.flavor)
                            holders[option.flavor] = job_id
                            shadows[option.flavor] = shadow[0]
                            _keep_shadow(latest, demand, option, shadow, t, now_first=False, gpus=gpus)
                elif protect == "first" and option.flavor not in reserved and not _quota_blocked(trial, demand, option, t):
                    reserved.add(option.flavor)
                    holders[option.flavor] = job_id
                    if latest is None:
                        running = [h for h in running if h.expected > t]
                        latest = _latest_view(proj, running)
                    found = latest.earliest(replace(demand, after=t, strict=False))
                    if found is None:
                        unprotected.add(option.flavor)
                    else:
                        shadows[option.flavor] = found[0]
                        _keep_shadow(latest, demand, demand.options[found[1]], found, t, gpus=gpus)
            if first_order is not None and not first_order and len(started) > len(demands) - len(remaining):
                first_order.extend(ordered)  # the first step where a job starts: the order positions follow
            remaining = [j for j in remaining if j not in started]
        t = _next_event(proj, demands, remaining, t)
    return started


@dataclass(slots=True)
class _Room:
    """A quota line's room held at one step of the replay (:class:`..backfill.easy.Headroom`'s, in seconds after
    now): for ``job_id`` from ``eta`` (None: unknown — nothing is kept), ``spare`` milli-GPUs left beside it then."""

    job_id: str
    eta: float | None
    spare: int


def _hold_room(latest: Projection, demand: Demand, option: Option, short: Sequence[int], t: float,
               rooms: dict[int, _Room], charges: Sequence[Hold] = ()) -> tuple[float, int, list[tuple[int, int]]] | None:
    """``demand``, kept waiting at ``t`` by its quota lines ``short`` (none of whose ceilings it exceeds), holds their
    room as :func:`..scheduling.pending._hold_headroom` holds it: from the earliest time it fits them and the GPUs
    with running work held to its time limits (``latest``), with the room each has left beside it then — what
    the reservation's walk has released by the time it fits (:func:`_walked_spare`). Returns that fit
    (:meth:`.projection.Projection.earliest`'s, on ``option``), None when it never fits."""
    found = latest.earliest(replace(demand, after=t, strict=False, options=(option,)))
    eta = None if found is None else found[0]
    spare = {} if eta is None else _walked_spare(latest, demand, short, t, eta, charges)
    for line in short:
        rooms[line] = _Room(demand.job_id, eta, spare.get(line, 0))
    return None if found is None else (found[0], 0, found[2])


def _walked_spare(latest: Projection, demand: Demand, short: Sequence[int], t: float, eta: float,
                  charges: Sequence[Hold]) -> dict[int, int]:
    """Per line of ``short``, the milli-GPUs left beside ``demand`` at ``eta``: :func:`..backfill.easy.walk_ends`
    releases the work charged to them by latest end, then job id, and stops once ``demand`` fits — so of the
    charges (``charges``, by job id) ending at ``eta`` only those it needs are released (newuser38 n23's kind on
    a line: p0 and p2 of one team both ending when p1 held the room, the walk released p0 alone and kept p3 out,
    the replay had both released and started p3 beside p1). Without ``charges``, all of them. A job's charges are
    released together, as the walk's one eviction releases them: a share's own charge and the rest of its GPU that
    its team's line counts whole (:func:`..scheduling.eta._held_rests`) are two holds of one holder (s42-eta: sorted
    as ``(holder, hold)`` pairs, the tie compared two holds and the cycle's ETAs failed: "'<' not supported")."""
    at_eta = sorted((h for h in charges if h.expected > t and max(h.expected, h.latest) == eta
                     and any(line in short for line in h.lines)), key=_by_holder) if charges else []
    free = {line: latest.lines[line].at(eta) - sum(h.milli for h in at_eta if line in h.lines) for line in short}
    for _, holds in groupby(at_eta, key=_by_holder):
        if all(free[line] >= demand.milli for line in short):
            break
        for hold in holds:
            for line in hold.lines:
                if line in free:
                    free[line] += hold.milli
    return {line: max(0, free[line] - demand.milli) for line in short}


_by_holder = attrgetter("holder")


def _keep_shadow(latest: Projection, demand: Demand, option: Option, found: tuple[float, int, list[tuple[int, int]]],
                 t: float, *, now_first: bool = True, gpus: GpuPicks | None = None) -> None:
    """Reserve the first blocked job of a GPU model on ``latest`` where it starts (``found``), as the cycle's EASY
    reservation keeps its GPUs. ``now_first``: a job blocked by capacity (pending._reserve places it once running
    work has freed enough, and that work's GPUs come on top of those free now) keeps from ``t`` the GPUs free now
    that the placer gives it at its start — ``gpus``'s pick (newuser38 n23: kept by count, GPU 3 free now was held
    for a job the cycle placed on GPUs 0-1, and a 1-GPU job the cycle admitted on GPU 3 was projected after the
    reservation); where the pick is unknown (no ``gpus``, a pool), all it can of those free now (new user 17, N14:
    the replay backfilled a job the cycle then refused). A later job may use them only if it ends before the
    reservation. It is reserved on the node the cycle's walk takes (``gpus.node``). Else (a job its quota line holds
    back: pending._hold_headroom) it takes the GPUs freed by its start first, and where they do not hold it the
    placer's pick among all (``gpus``; by count: of those free now only what they leave short): a later job may
    use the rest meanwhile."""
    start, _, chosen = found
    units = latest.units
    if gpus is not None and now_first and not demand.share and len(demand.workers) == 1 and len(chosen) == 1:
        # on the node the cycle's walk stops on, where it differs from the fullest at ``start`` (ends tied on two nodes)
        (unit, n), = chosen
        node = gpus.node(option.units, n, t, start)
        if node is not None and node != unit and units[node].earliest(n, demand.duration, start) == start:
            chosen = [(node, n)]
    keep = [(unit, min(units[unit].at(t), k if (k := _picked(gpus, unit, n, t, start)) is not None else n) if now_first
             else min(units[unit].at(t), k if (k := _picked(gpus, unit, n, t, start, freed_first=True)) is not None
                      else max(0, n - max(0, units[unit].at(start) - units[unit].at(t)))))
            for unit, n in chosen] if not demand.share else []
    latest.reserve(demand, start, option, chosen)
    for unit, now in keep:
        if now > 0:
            units[unit].reserve(t, start, now)


def _placed(proj: Projection, gpus: GpuPicks, demand: Demand, option: Option, chosen: list[tuple[int, int]],
            t: float, duration: float, around: bool) -> list[tuple[int, int]]:
    """The unit a one-worker job starting at ``t`` takes: of ``option``'s units where it fits then on ``proj`` (for
    ``duration``), the placer's (``gpus.place``; the count's choice ``chosen`` where that is unknown). Of two nodes
    with one GPU free each, the cycle gave a 1-GPU job the one that had it free before the cycle's own admission
    left the other with one (s40-eta: the replay took the first by index and gave the other's GPU to a job the
    cycle kept waiting)."""
    (unit, n), = chosen
    units = [u for u in option.units if proj.units[u].earliest(n, duration, t) == t]
    placed = gpus.place(units, n, t, around=around)
    return chosen if placed is None or placed == unit else [(placed, n)]


def _picked(gpus: GpuPicks | None, unit: int, count: int, t: float, start: float, *,
            freed_first: bool = False) -> int | None:
    """``gpus.keep``'s answer, None without ``gpus``."""
    return None if gpus is None else gpus.keep(unit, count, t, start, freed_first=freed_first)


def _quota_blocked(proj: Projection, demand: Demand, option: Option, t: float) -> bool:
    """Does a quota line of ``option`` lack room for ``demand`` at ``t``? Such a job waits for its
    own team's (or user's) work to end, not for capacity; unless it is the first its line keeps
    waiting (then it holds the line's room and its GPUs: :func:`_hold_room`), the cycle gives it no EASY
    reservation: in the replay it holds no GPUs
    either, and the next job blocked by capacity on the model is the one protected (new user 19,
    N14: a quota-blocked head's reservation on the GPU another team's job freed put that team's
    next job behind the head's own blocker, 3 minutes after the cycle started it)."""
    return any(proj.lines[line].at(t) < demand.milli for line in option.lines)


def _latest_view(proj: Projection, running: Sequence[Hold]) -> Projection:
    """``proj`` with every job in ``running`` holding its GPUs on to its latest end: the capacity
    EASY's reservation is computed on (:func:`..backfill.easy.find_reservation`)."""
    view = proj.copy()
    for hold in running:
        for unit, gpus in hold.units:
            view.units[unit].reserve(hold.expected, hold.latest, gpus)
        for line in hold.lines:
            view.lines[line].reserve(hold.expected, hold.latest, hold.milli)
    return view


def _may_fit_at(proj: Projection, demand: Demand, t: float) -> bool:
    """A cheap necessary condition for ``demand`` to start at ``t``: one of its options has a unit
    with room for its largest worker and room for all its GPUs in total."""
    largest, total = max(demand.workers, default=0), sum(demand.workers)
    if demand.share and any(g.group == demand.group and g.start <= t < g.end and g.free.at(t) >= demand.share
                            for option in demand.options for u in option.units for g in proj.shared.get(u, ())):
        return True
    for option in demand.options:
        free = [proj.units[u].at(t) for u in option.units]
        if free and max(free) >= largest and sum(free) >= total:
            return True
    return False


def _backfills(latest: Projection | None, demand: Demand, limits: Mapping[str, float], t: float,
               shadow: float | None, here: tuple[int, list[tuple[int, int]]]) -> tuple[int, list[tuple[int, int]]] | None:
    """Where ``demand``, run for its time limit from ``t``, starts then delaying no reservation on ``latest``:
    ``here`` (its option index and units where it fits at ``t``) when it ends by the reservation's start
    ``shadow``, as :mod:`..scheduling.admit` allows, or there is no reservation; else where it fits at ``t`` on
    ``latest`` — beside the GPUs kept for the reservation, as admission places it (:func:`.admit._place` keeps
    them off; newuser38 n23: started on the unit whose GPU free now was kept, a 1-GPU job left the other unit's
    GPU to a later job the cycle then kept waiting). None: it would delay one."""
    if latest is None:
        return here
    limit = max(limits.get(demand.job_id, demand.duration), demand.duration)
    if shadow is not None and t + limit <= shadow:
        return here
    found = latest.earliest(replace(demand, duration=limit, after=t, strict=False))
    return None if found is None or found[0] > t else (found[1], found[2])


def _next_event(proj: Projection, demands: Mapping[str, Demand], remaining: Sequence[str], t: float) -> float | None:
    """The next time capacity changes or a gate opens, after ``t``."""
    gates = [d.after for j in remaining if (d := demands[j]).after > t]
    change = proj.next_change(t)
    times = gates + ([change] if change is not None else [])
    return min(times, default=None)
