"""Phase 5: an ETA for every pending job, why it moved, and what was predicted at submit.

After the visits, the pending jobs are walked in queue order on a projection of future free
capacity (:class:`~jupyter_sched.backfill.projection.Projection`): running jobs end at their start
plus time limit (their queue's default or maximum when they gave none; with the profile's
``eta_source="history"``, the runtime learned from past runs where shorter), GPUs held for a
nominated job free when it ends, and every pending job is reserved at the earliest time it fits
— so each one gets a start estimate, or an honest "unknown" naming what prevents one (case 034;
Slurm ``squeue --start``). Jobs behind a gate start no earlier than the gate opens.

Where the queue is small enough to do so in a cycle (:data:`LOOKAHEAD_WORK`), the ETA of a job
that starts at all is instead its start in a forward replay of the scheduler's own rules
(:func:`~jupyter_sched.backfill.lookahead.lookahead`): at each future capacity change the queue is
re-ordered as the cycle will order it then (fair share with the usage running jobs accrue; the
ages of ``short-first``) and EASY protects only the first blocked job per GPU model, as admission
does — with its reservation made as :mod:`.pending` makes it, on running jobs ending at their
time limits (:attr:`Plan.holds` and :func:`_latest_end`), though they free their GPUs at their
expected ends. On the loaded replay (``benchmarks/jct_loaded.py``) the replay cut the default
profile's ETA error from 72 % to 46 % of the median wait; the reservation on limits made it
exact against the scheduler itself (with exact runtimes and no later arrivals, every ETA but
one of 29 equal to the start the scheduler then gave; before, 14 differed — the replay's
reservation on expected ends let fewer jobs backfill than admission does).

An ETA that moves by more than ``profile.eta_move_margin_s`` from the ETA last recorded (or first
given) is recorded, at most once per :data:`ETA_MOVE_MIN_INTERVAL_S` per job, with its cause in ``details["eta_moved"]`` and an ``eta_moved`` audit record: a higher-class job
arrived, a running job ran past its limit, capacity went away (a node or GPUs lost), a reclaim, another
user's overdue job elected ahead of it since the last cycle (named, with the rule), or the queue ahead changed. ``details["eta_basis"]`` keeps what the attribution needs next cycle.

``PendingReason.predicted_start`` carries the first ETA a job got in the queue unchanged until
it starts; :class:`~.snapshot.Admit` hands it to the engine, which compares it with the actual
start (the accuracy log of case 034).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from copy import copy
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from ..backfill.history import POPULATION_GPU_RUNS, POPULATION_RUNS, SAME_RUNS
from ..backfill.lookahead import Hold, lookahead
from ..backfill.projection import Demand, Estimate, Option, Projection, SharedGpu
from ..backfill.timeline import Timeline
from ..model import GPU_MILLI, Job, PendingReason, ResourceRequest
from ..model.horizon import BEYOND_HORIZON, capped, later
from ..model.job import public_name
from ..model.periods import PERIODS, next_period_start
from ..model.units import clock_text, moved_text, said_time
from ..placement.placer import Flavor, Placement
from ..queues.limits import effective_limit
from ..queues.order import (
    OVERDUE_FLOOR_S,
    PROMISE,
    QUEUE_SORTS,
    Holdings,
    QueueContext,
    elect_overdue,
    election_barred,
    holdings,
    one_per_user,
    passed_in,
    promise_due,
    topped_first,
)
from ..wording.estimates import FAIR_LISTED, done_text
from .context import CycleContext, own_entry
from .eta_budget import Spend
from .eta_gpus import NodeGpus
from .eta_units import Units, units_of_inventory
from .gates import HELD_CODES
from .ledger import NOMINATION_PREFIX
from .ports import PORT_IN_USE, PORT_LIMIT
from .runtimes import (
    GUESSED_FROM,
    Reestimate,
    charged_runtime_of,
    expected_runtime,
    guessed_end,
    overrunning_users,
    progress_reading,
    time_left,
)
from .share_charge import released_milli
from .snapshot import AuditRecord, Pend
from .spare import STOPPING_PREFIX

__all__ = ["MIN_RUNTIME", "NODE_DETAIL", "Plan", "estimate_all", "expected_runtime", "predicted_start_of", "provisional", "replays"]

NODE_DETAIL = 32
"""Clusters with at most this many nodes are always projected node by node; larger ones too when
nodes x pending jobs stays under :data:`NODE_WORK`, else pool by pool (identical nodes together:
per-node fragmentation inside a pool is then not modelled, and a cycle stays fast). A node (pool)
that mixes GPU models is a unit per model (:mod:`.eta_units`)."""
NODE_WORK = 20_000
LOOKAHEAD_WORK = 250_000
"""Queued jobs squared x capacity units above which ETAs are not replayed forward
(:func:`_replayed`: each capacity change re-walks the queue) but projected in one pass — about
0.02 s more per cycle at the bound (150 jobs on 10 nodes: 0.028 s against 0.010 s for one pass);
``benchmarks/cycle_bench.py``'s 1,000 jobs on 100 nodes stay above it."""

ETA_MOVE_MIN_INTERVAL_S = 600.0
"""The least time (seconds) between two ``eta_moved`` records of one waiting job. A move is measured
from the ETA last recorded (or first given), not from the last cycle's, so an ETA flipping back and
forth every cycle (a running job's progress reports saying 99 % then 1 %: red team 21, R2) writes at
most one record per job per interval in its owner's name, and a move still standing when the interval
has passed is recorded then."""

BUDGET_EXHAUSTED = "BudgetExhausted"
BUDGET_RESET = "BudgetReset"
"""``details["eta_code"]`` of a job a spent GPU-hour budget holds: its ETA is the budget period's reset
(:func:`_next_period`), with the gate's ``eta_reason`` as ``eta_note`` — never a job's end (hubadmin24 B8)."""
BUDGET_UNBOUNDED = "BudgetUnbounded"
"""A job with no time limit that ``budget_admission = "safe"`` holds (hubadmin25 B22): no ETA — no reset lets it in."""
_GATED = frozenset({"Backoff", "OutsideTimeWindow", BUDGET_EXHAUSTED, BUDGET_UNBOUNDED})
MIN_RUNTIME = "MinRuntime"
BEYOND = "BeyondHorizon"
"""``eta_code`` of a job whose projected start lies past :data:`~jupyter_sched.model.horizon.HORIZON_S`."""
"""``details["eta_code"]`` of an ETA that is when the jobs it waits on (``eta_waits_on``) pass the minimum
runtime and are preempted or reclaimed for it (``details["preemption_rule"]``), earlier than their ends
(new user 20, N18: "ETA 23:06, when lowml ends" for a job that preempted lowml at 23:01)."""


def predicted_start_of(job: Job, now: datetime) -> datetime | None:
    """The start predicted when ``job`` was queued (``now`` if this is its first cycle)."""
    prev = job.reason
    if prev is None or prev.code == "Preempted" or provisional(prev):
        return now
    return prev.predicted_start


def provisional(reason: PendingReason) -> bool:
    """A reason given between full cycles (:mod:`.live`): no ETA projected yet, so no first prediction."""
    return reason.details.get("eta_code") == "Provisional"


def estimate_all(ctx: CycleContext) -> None:
    """Give every pending decision of the cycle its ETA and its 1-based queue position (rewrites
    ``ctx.pends`` in place).

    With conservative backfill the jobs were reserved on the cycle's plan as they were visited;
    their estimates are those reservations. Otherwise a projection is built now and every pending
    job is reserved on it in queue order. A job above a quota ceiling (``details["never"] ==
    "quota"``, :func:`.cycle._above_ceiling`) holds no place (new user 18, N12: "#2, #3
    indefinitely"); the position is set with the ETA, in the one new reason per job (issue 16: a
    second pass copying every reason cost ~1.5 % of a 100-node cycle).
    """
    if not ctx.pends:
        return
    ctx.promised = promises(ctx)
    ctx.budget_moved, ctx.budget_checked = {}, set()  # this pass's (promises() made its own)
    ctx.waited = {}  # this pass's look-ups of jobs waited on (_waited_on): admissions change them
    ctx.needs = {}  # and of how many of them a job needs (_needs_of)
    out: list[Pend] = []
    # the jobs before each one in queue order, by id: a dict, so "is it ahead?" is one look-up (a set
    # built from a list per ETA cost ~7 % of a 100-node cycle, session 29: quadratic in the queue)
    ahead: dict[str, Job] = dict(ctx.admitted)
    # the jobs elected ahead of each (issue 16), one tuple shared until the next elected one: a move is
    # attributed to one elected since the last cycle (s28-elect "Left")
    elected = ctx.elected
    elected_ahead: tuple[str, ...] = tuple(j for j in ahead if j in elected) if elected else ()
    etas: dict[str, datetime | None] = {}
    # the shown ETAs are the promises (promises()), not those resting on a guess
    guesses = _Guesses(ctx) if ctx.promised is None and _Guesses.possible(ctx) else None
    # each team's pending jobs of one class so far in queue order: whose later jobs the fair order puts
    # first (newuser37 N3); only kept where the order is fair (fifo puts no later job of a class first)
    fair = ctx.profile.queue_sort in ("fair", "fair-usage")
    # (and the latest submit time among them: where none is later than a job's own, nothing is looked at)
    team_queued: dict[tuple[str, int], tuple[list[tuple[datetime, str, Job]], list[datetime]]] = {}
    reordered: list[bool] = []
    for pend, job, position, (eta, why, waits, code), progress, plan in _estimates(ctx, reordered):
        etas[job.id] = eta
        guessed = guesses is not None and eta is not None and guesses.on_guess(job, waits)
        mates: list[tuple[datetime, str, Job]] = []
        if fair:
            mates, latest = team_queued.setdefault((job.spec.team, job.spec.priority.rank), ([], []))
        later_mates = mates if mates and job.submitted_at is not None and latest[0] > job.submitted_at else ()
        out.append(Pend(job.id, _record(ctx, job, _agreed(pend.reason, etas), eta, why, waits, code, ahead,
                                          plan.reestimates, position, progress=progress, elected_ahead=elected_ahead,
                                          guessed=guessed, mates_ahead=later_mates)))
        ahead[job.id] = job
        if fair and job.submitted_at is not None and job.id not in elected:
            # elected jobs went first by their promise, not the fair order: never named (_fair_ahead)
            mates.append((job.submitted_at, job.spec.user, job))
            if not latest:
                latest.append(job.submitted_at)
            elif job.submitted_at > latest[0]:
                latest[0] = job.submitted_at
        if elected and job.id in elected:
            elected_ahead = (*elected_ahead, job.id)
    if reordered:  # walked in another order: the visit order back
        visited = {p.job_id: i for i, p in enumerate(ctx.pends)}
        out.sort(key=lambda p: visited[p.job_id])
    ctx.pends[:] = out


def _estimates(ctx: CycleContext, reordered: list[bool]) -> Iterator[tuple[Pend, Job, int | None, Estimated, bool, Plan]]:
    """Each pending decision of the cycle in queue order — the order when GPUs next free (:func:`_in_order`) —
    with its queue position, its estimate, whether that read progress reports, and the plan it was made on
    (:func:`estimate_all`); ``reordered`` gets an item where that order is not the cycle's visit order."""
    plan = ctx.plan if isinstance(ctx.plan, Plan) else Plan(ctx, at_end=True)
    first: list[str] = []
    replayed, after_replay, unstarted = _replayed(ctx, first)
    # walked in the order when GPUs next free: positions, "goes first" clauses and ETAs follow it (newuser38 N2);
    # the cycle's result keeps its visit order (the live ledger's, :mod:`.live`)
    walk = _in_order(ctx.pends, first) if first else ctx.pends
    if walk is not ctx.pends:
        reordered.append(True)
    pause = ctx.pause
    queued = 0
    for pend in walk:
        pause()
        job = ctx.by_id[pend.job_id]
        reason = pend.reason
        if reason.details.get("never") == "quota":
            position = reason.position
        elif reason.code in HELD_CODES:  # held: no place among the jobs waiting to start (Slurm; newuser38 n10)
            position = None
        else:
            queued += 1
            position = queued
        done = replayed.get(job.id)
        progress = True  # the replay's plans and an at-end plan read progress reports; the conservative plan not
        if done is None and (done := plan.estimates.get(job.id)) is not None:
            progress = plan.progress
        if after_replay is not None and job.id in unstarted:
            # replayed but never started in it: projected behind everything the replay reserved (the
            # jobs ahead that started in it included) — on the cycle's plan, which holds none of
            # them, it got a start before theirs (new user 6 F1: #7-#9 "15:23" behind #4-#6 "16:33")
            eta, why, waits, code = after_replay.estimate(job, reason, count=False)
        elif done is not None and reason.code != "WaitingForPreemption":
            eta, why, waits, code = done
        else:
            eta, why, waits, code = plan.estimate(job, reason)
            progress = plan.progress
        if reason.code == BUDGET_EXHAUSTED or job.id in ctx.budget_moved:
            eta, why, waits, code = _from_reset(ctx, job, reason, eta, why, waits, code)
        until = _protected_until(reason, eta)
        if until is not eta:  # it starts when its victims pass the minimum runtime, not when they end (N18)
            eta, why, code = until, "", MIN_RUNTIME
            waits = tuple(str(w) for w in reason.details["preemption_rule"].get("protected", ()))
        yield pend, job, position, (eta, why, waits, code), progress, plan


def _in_order(pends: list[Pend], first: Sequence[str]) -> list[Pend]:
    """``pends`` with those the replay ordered (``first``: the queue's order at its first start,
    :func:`..backfill.lookahead.lookahead`) in that order, in the places they held; the others (held, gated with
    no opening, waiting on a preemption, above a quota ceiling) keep theirs.

    The cycle visits the queue in its order *now*; where nothing starts now, who gets the GPUs is decided when
    they free, by the order then — an election falling due meanwhile, the usage running work accrues (newuser38
    N2: a lease "#1" whose ETA was after "#2"'s end, and #2's line saying the lease goes first)."""
    rank = {job_id: i for i, job_id in enumerate(first)}
    slots = [i for i, p in enumerate(pends) if p.job_id in rank]
    ordered = sorted((pends[i] for i in slots), key=lambda p: rank[p.job_id])
    if all(pends[i] is pend for i, pend in zip(slots, ordered, strict=True)):
        return pends  # the same order: nothing to undo after
    out = list(pends)
    for i, pend in zip(slots, ordered, strict=True):
        out[i] = pend
    return out


def _from_reset(ctx: CycleContext, job: Job, reason: PendingReason, eta: datetime | None, why: str,
                waits: tuple[str, ...], code: str) -> Estimated:
    """The ETA of a job a spent budget holds (newuser34 N3): its budget period's reset is a lower bound,
    the plan from then (the work queued ahead of it, running work's ends) the estimate. The reset itself
    (code :data:`BUDGET_RESET`, the gate's ``eta_reason`` as its note, no job named: hubadmin24 B8) when
    the plan starts it then, or projects no start (no time limit ahead, past the projected depth or the
    horizon: the reset is all that is known); else the plan's start (``Projected``: :func:`_record` adds
    ``details.eta_budget_reset``, the reset, for the sentence "not before … then behind N jobs").

    A job the projection moved past a later reset, because the work started before it spends the budget first
    (newuser35 N6, :mod:`.eta_budget`; held now or not): that reset is the bound — the ETA is the reset when it
    starts then."""
    moved = ctx.budget_moved.get(job.id)
    if moved is not None and reason.code != BUDGET_EXHAUSTED and (own := _own_leases_waited(ctx, job, waits)):
        # what holds it is its owner's own leases, and they (no time limit) are what the projection spends the
        # budget with until the reset (newuser36 N5: "ETA tomorrow 00:00, the jobs ahead are expected to spend …"
        # for a #1 job that started 4 minutes after %gpu release): it waits on their release, which no plan knows
        ctx.budget_moved.pop(job.id, None)
        return None, "", own, "NoTimeLimit"
    if moved is not None:
        if eta is None or code != "Projected" or eta <= moved[0] + _SAME_TIME:
            return moved[0], f"when the {moved[2]}'s budget resets", (), BUDGET_RESET
        return eta, why, waits, code
    reset = _next_period(ctx.now, str(reason.details.get("period", "month")))
    if eta is None or code != "Projected" or eta <= reset + _SAME_TIME:
        return reset, reason.eta_reason, (), BUDGET_RESET
    return eta, why, waits, code


def _own_leases_waited(ctx: CycleContext, job: Job, waits: tuple[str, ...]) -> tuple[str, ...]:
    """``waits`` when every one is a running lease of ``job``'s owner (no time limit: only its owner's release or
    an idle reclaim ends it), else ``()``."""
    user = job.spec.user
    held = [w for w in waits if (other := ctx.by_id.get(w)) is not None and other.is_lease
            and other.spec.user == user and other.state.holds_gpus]
    return waits if waits and len(held) == len(waits) else ()


_SAME_TIME = timedelta(seconds=1)
"""A projected start this close to the budget's reset is the reset (the projection's steps are seconds)."""


def promises(ctx: CycleContext) -> dict[str, datetime | None] | None:
    """The promised start of each pending job that has none yet (issue 16, :func:`~jupyter_sched.
    queues.order.promise_due`; by job id, None: unknown now — asked again next cycle); ``{}`` with
    ``elect_overdue`` 0; None when each such job's shown ETA is its promise (below).

    The promise decides an election, so it reads only what admission reads: the ETA projected as
    :func:`estimate_all` projects it, but without progress reports or idle leases' reclaim deadlines
    — a report is its job's own claim, never read for a decision (:mod:`.runtimes`): a user cannot
    make their job overdue sooner by reporting that their running work is nearly done. Learnt
    runtimes are read, as the fair order reads them; a user whose running job outran its history
    is not elected (:func:`.runtimes.elected_in`). Where the snapshot holds no report and no idle deadline, the
    shown ETA is the promise and no second projection is made (the 5,000-node cycle)."""
    if ctx.profile.elect_overdue <= 0:
        return {}
    need = {p.job_id for p in ctx.pends if _needs_promise(ctx.by_id[p.job_id].reason)}
    if not need:
        return {}
    snap = ctx.snap
    if not (snap.progress or snap.idle_ends):
        return None  # the shown ETA is the promise (_record)
    plain = copy(ctx)
    plain.snap = replace(snap, progress={}, idle_ends={})
    plain.plan, plain.waited, plain.needs, plain.promised = None, {}, {}, {}
    plain.budget_moved, plain.budget_checked = {}, set()
    guesses = _Guesses(plain) if _Guesses.possible(plain) else None
    made: dict[str, datetime | None] = {}
    for _, job, _, (eta, _, waits, _), _, _ in _estimates(plain, []):
        # (every job: one behind it may wait on it)
        guessed = guesses is not None and eta is not None and guesses.on_guess(job, waits)
        if job.id in need:
            made[job.id] = None if guessed else eta
    return made


class _Guesses:
    """Which ETAs of one pass rest on a guess (verify 30, V6), so that no promise is made from them: one
    that waits on a running job whose end is a guess (:func:`.runtimes.guessed_end`), or on a job queued
    ahead whose own start was such an ETA — a flood's later jobs wait on its first ones, which start when
    the guessed end comes. Asked in queue order (the jobs ahead first), each running job looked up once."""

    __slots__ = ("_ctx", "_ended", "_started")

    def __init__(self, ctx: CycleContext) -> None:
        self._ctx = ctx
        self._ended: dict[str, bool] = {}  # running job id -> its end is a guess
        self._started: set[str] = set()  # pending jobs whose ETA this pass rests on a guess

    @staticmethod
    def possible(ctx: CycleContext) -> bool:
        """Can any running job's end be a guess this cycle? (None is, mostly: then no ETA is looked at)"""
        snap = ctx.snap
        return ctx.profile.eta_source == "history" and bool(snap.runtime_estimates) and (
            bool(snap.runtime_typical) or any(source in GUESSED_FROM for source in snap.runtime_sources.values()))

    def on_guess(self, job: Job, waits: Iterable[str]) -> bool:
        """Does ``job``'s ETA, waiting on ``waits``, rest on a guess? (remembered for the jobs behind it)"""
        ctx, ended, started = self._ctx, self._ended, self._started
        for w in waits:
            if w in started:
                break
            guess = ended.get(w)
            if guess is None:
                other = ctx.by_id.get(w)
                guess = ended[w] = other is not None and w not in ctx.admitted and other.state.holds_gpus \
                    and guessed_end(ctx, other, other.started_at or other.admitted_at or ctx.now)
            if guess:
                break
        else:
            return False
        started.add(job.id)
        return True


def _needs_promise(reason: PendingReason | None) -> bool:
    """A job with no promise yet: first queued (or requeued), between full cycles, or promised nothing known."""
    return reason is None or reason.code == "Preempted" or provisional(reason) or PROMISE not in reason.details


def _protected_until(reason: PendingReason, eta: datetime | None) -> datetime | None:
    """A job that waits only because its victims are younger than the minimum runtime starts when
    they pass it (red team 15 R13): that time, unless the projection says sooner."""
    rule = reason.details.get("preemption_rule")
    # a reclaim cool-down (red31 R5) ends the same way: at its time
    if rule is None or not isinstance(rule, Mapping) or rule.get("rule") not in ("min_runtime", "reclaim_cooldown"):
        return eta
    until = _parse(rule.get("until"))
    return until if until is not None and (eta is None or until < eta) else eta


Estimated = tuple[datetime | None, str, tuple[str, ...], str]
"""``(eta, why it is unknown — or, with an ETA, the note on re-estimated jobs it waits on —,
jobs it waits on, eta_code)``."""


class Plan:
    """The cycle's projection of future free capacity and the reservations made on it.

    Built from the ledger (running jobs, this cycle's admissions, nominations). ``at_end``: built
    after the visits (this cycle's victims are gone, nominated jobs start when their pending
    reason's ETA says); else at cycle start, for conservative backfill.

    Attributes:
        estimates: per job id, the estimate already made (conservative backfill reserves jobs as
            they are visited).
        reestimates: running jobs whose end was re-estimated because they ran past what was
            expected (:func:`.runtimes.time_left`), by job id.
        holds: with ``with_holds``, ``(holder, unit, GPUs, expected end)`` of the running jobs
            holding whole GPUs (what the lookahead's EASY reservation keeps held to their limits).
        gpu_ends: with ``with_holds``, per GPU id held now, ``(holder, expected end)``: the replay's
            GPU-level view (:mod:`.eta_gpus`).
        progress: running jobs end where their progress reports take them
            (:func:`.runtimes.progress_end`) — only in a plan built ``at_end`` (for the ETAs
            shown), never in the conservative plan admission follows (issue 16 item 4).
    """

    def __init__(self, ctx: CycleContext, *, at_end: bool, with_holds: bool = False) -> None:
        self.ctx = ctx
        nodes = len(ctx.state.nodes)
        self.by_node = nodes <= NODE_DETAIL or nodes * max(len(ctx.pends), 1) <= NODE_WORK
        self.reestimates: dict[str, Reestimate] = {}
        self.holds: list[tuple[str, int, int, float]] = []
        self.progress = at_end
        self.layout = units_of_inventory(ctx.state, self.by_node)
        self.gpu_ends: dict[int, tuple[str, float]] = {}  # with_holds: per GPU held now, (holder, expected end)
        self.proj = _projection(ctx, self.layout, self.by_node, at_end, self.reestimates,
                                self.holds if with_holds else None, self.gpu_ends if with_holds else None)
        self.line_index = {key: i for i, key in enumerate(k for k, ln in ctx.quota.lines.items()
                                                          if ln.ceiling is not None)}
        self._units: dict[tuple[str, tuple[int, ...]], tuple[int, ...]] = {}
        self._lines: dict[tuple[str, str, str], tuple[int, ...]] = {}
        self.seen: dict[str, int] = {}
        self.estimates: dict[str, Estimated] = {}
        self._at: dict[float, datetime] = {}  # seconds after now -> that moment (:meth:`estimate`)
        self._shapes: dict[tuple[int, str, str], tuple[ResourceRequest, tuple[int, ...], tuple[Option, ...]]] = {}
        self._options: dict[tuple[int, str, str], tuple[tuple[Flavor, ...], tuple[Option, ...]]] = {}
        self.spend: Spend | None = None  # the budgets its projected starts spend (newuser35 N6): :meth:`_spend_of`
        self._spend_made = False

    # ------------------------------------------------------------------ demands
    def units_of(self, flavor: Flavor) -> tuple[int, ...]:
        """Capacity units of ``flavor`` (its nodes, or its pools on large clusters; on a node mixing
        GPU models, the unit of ``flavor``'s model there: :mod:`.eta_units`). Per model *and* pools: a
        job's filters (node selector, taints, GPU memory) take some pools of a model (keyed by the model
        alone, a zone-b job's units were given to a later zone-a job of that model, session 22)."""
        key = (flavor.model, flavor.pools)
        units = self._units.get(key)
        if units is None:
            st, on = self.ctx.state, self.layout.on
            homes = (n for pid in flavor.pools for n in st.pools[pid].nodes) if self.by_node else flavor.pools
            units = tuple(u for home in homes for u in on(home, flavor.model)) if self.layout.per_model \
                else tuple(homes)
            self._units[key] = units
        return units

    def lines_of(self, team: str, user: str, model: str) -> tuple[int, ...]:
        """Quota lines with a ceiling that a job of ``team``/``user`` on ``model`` counts on."""
        key = (team, user, model)
        lines = self._lines.get(key)
        if lines is None:
            index = self.line_index
            lines = tuple(index[ln.key] for ln in self.ctx.quota.applicable(*key) if ln.key in index) \
                if index else ()
            self._lines[key] = lines
        return lines

    def demand(self, job: Job, *, after: float = 0.0, strict: bool = True, count: bool = True) -> Demand | Estimated:
        """``job`` as a :class:`Demand`, or the estimate that says why it has none."""
        ctx = self.ctx
        spec = job.spec
        req = spec.resources
        if req.total_milli == 0:
            return None, "it waits for CPU or memory, which ETAs do not project", (), "NotGpuBound"
        shape = self._shapes.get((id(req), spec.team, spec.user))
        if shape is None or shape[0] is not req:  # one entry per request object (jobs share them)
            if req.groups:
                workers = tuple(w.gpus for w in req.worker_requests())
            else:
                workers = (1,) if req.fractional or req.mig_profile else (req.gpus,) * max(1, req.workers)
            # options depend only on the flavors (memoised per request shape by the placer) and on
            # team/user: shared by every job of the shape (jobs rarely share request objects)
            all_flavors = ctx.placer.flavors(req)
            # without quota lines that have a ceiling, every team and user gets the same options
            key = (id(all_flavors), spec.team, spec.user) if self.line_index else (id(all_flavors), "", "")
            known = self._options.get(key)
            if known is not None and known[0] is all_flavors:
                options = known[1]
            else:
                options = tuple(Option(flavor=f.model, units=self.units_of(f),
                                       lines=self.lines_of(spec.team, spec.user, f.model))
                                for f in all_flavors if f.pools)
                self._options[key] = (all_flavors, options)
            shape = self._shapes[(id(req), spec.team, spec.user)] = (req, workers, options)
        _, workers, options = shape
        if not options:
            return None, "no usable GPU model", (), "NoUsableFlavor"
        first = options[0].flavor
        seen = self.seen.get(first, 0) + count
        self.seen[first] = seen
        if seen > ctx.profile.eta_depth:
            return None, (f"{seen - 1} jobs are ahead of it on {first}; starts are projected for the first "
                          f"{ctx.profile.eta_depth}"), (), "BeyondDepth"
        share = req.gpu_milli if req.fractional and not req.mig_profile and req.gpu_milli < 1000 else 0
        if share and req.min_memory_mib and options:  # what it takes of a GPU of its first model (:func:`footprint`)
            pools, st = next(f.pools for f in ctx.placer.flavors(req) if f.pools), ctx.state
            share = min(999, footprint(share, req.min_memory_mib, max((st.pools[p].memory_mib for p in pools), default=0)))
        return Demand(job_id=job.id, workers=workers, milli=req.total_milli, duration=expected_runtime(ctx, job),
                      after=after, options=options, strict=strict, share=share,
                      group=sharing_group(ctx, job) if share else "*")

    # ------------------------------------------------------------------ estimates
    def estimate(self, job: Job, reason: PendingReason, *, count: bool = True) -> Estimated:
        """Reserve a pending ``job`` at its earliest start and say when that is (module doc).

        ``count``: count it against ``profile.eta_depth`` (False: it was counted already)."""
        ctx = self.ctx
        code = reason.code
        if code == "WaitingForPreemption":
            return reason.eta, reason.eta_reason, tuple(reason.details.get("victims", ())), "WaitingForPreemption"
        if code == "MigPartitioned":  # no running job's end frees whole GPUs enough: an admin must re-partition
            return None, "waits until an admin re-partitions MIG GPUs into whole GPUs", (), "NeedsRepartition"
        if code == "Priority" and "allowed" in reason.details:
            return None, "waits until an admin allows its class for the team", (), "ClassNotAllowed"
        if code == "NodeCordoned" and _only_cordoned(ctx, job):  # no running job's end lets it in (hubadmin24)
            cordons = reason.details.get("cordons") or [{}]
            node = str(cordons[0].get("node") or "the node")
            return None, f"only a cordoned node can hold it: it waits until an admin uncordons {node}", (), "NodeCordoned"
        if code in ("CpuJobLimit", PORT_LIMIT) or code in HELD_CODES or (
                code == PORT_IN_USE and not reason.details.get("holder")):
            # waits for its owner's own jobs, a port bound outside the scheduler, or an admin (held): not for GPUs
            # (.gates, .ports)
            return None, reason.eta_reason, (), code
        if code == PORT_IN_USE:  # waits for the job holding its port (.ports): when that one ends
            holder = str(reason.details.get("holder") or "")
            end = _holder_end(ctx, holder, self.reestimates, progress=self.progress) if holder else math.inf
            if math.isinf(end):
                return None, f"it fits only after jobs without a time limit end ({holder})", (holder,), "NoTimeLimit"
            at = later(ctx.now, end)  # past the horizon: unknown, never an overflow (red team 21, R5)
            return (at, "", (holder,), "Projected") if at is not None else (None, BEYOND_HORIZON, (holder,), BEYOND)
        after = 0.0
        if code in _GATED:  # a spent budget: from its reset, behind the work queued ahead (newuser34 N3: :func:`_from_reset`)
            opens = _gate_opens(ctx, job, reason)
            if opens is None:
                return None, reason.eta_reason or "its gate has no known opening", (), "GateClosed"
            after = max(0.0, (opens - ctx.now).total_seconds())
        demand = self.demand(job, after=after, strict=code not in _GATED, count=count)
        if not isinstance(demand, Demand):
            return demand
        spend = self._spend_of(job, code)
        if spend is not None:
            demand = _within_budget(self.proj, spend, job, demand)
        est = self.proj.place(demand)
        if spend is not None and est.start is not None:
            spend.charge(job, est.start, est.start + demand.duration)
        reestimates = self.reestimates  # mostly none: nothing ran past what was expected
        notes = [note for w in est.waits_on if (note := reestimates.get(w)) is not None] if reestimates else []
        if est.start is None:
            stuck = [n for n in notes if n.cause == "stop_overdue"]
            if stuck:  # a stop that did not take: no honest start (case 032 without force-kill)
                return None, "; ".join(n.message for n in stuck), est.waits_on, "HeldByTerminating"
            why = est.why + (f" ({', '.join(est.waits_on)})" if est.waits_on else "")
            # and why a job with a learnt end has none now: it ran past it, with no limit to bound it (V6)
            why = "; ".join([why, *(n.message for n in notes if n.cause == "no_limit")])
            return None, why, est.waits_on, "NoTimeLimit" if est.waits_on else "NotGpuBound"
        at = self._at.get(est.start)  # starts are a few sums of run times: each said once per cycle
        if at is None:
            at = later(ctx.now, est.start)
            if at is None:  # past the horizon: unknown, never an overflow (red team 21, R5)
                return None, BEYOND_HORIZON, est.waits_on, BEYOND
            self._at[est.start] = at
        return at, "; ".join(n.message for n in notes), est.waits_on, "Projected"

    def _spend_of(self, job: Job, code: str) -> Spend | None:
        """The budgets ``job``'s projected start spends (newuser35 N6), None when none applies: in a plan for the
        ETAs shown (``at_end``) every budget's work, in the admission plan of conservative backfill only the work
        a spent budget holds (never reserved while admission reads it: :meth:`reserve_pending`)."""
        if not self.ctx.snap.quotas.budgets or not (self.progress or code == BUDGET_EXHAUSTED):
            return None
        if not self._spend_made:
            self.spend, self._spend_made = _spend(self.ctx), True
        spend = self.spend
        return spend if spend is not None and spend.of(job) else None

    # ------------------------------------------------------------------ conservative backfill
    def starts_now(self, job: Job) -> bool:
        """Would ``job`` start now without delaying any job reserved before it? (a peek: nothing reserved)"""
        demand = self.demand(job, strict=False, count=False)
        if not isinstance(demand, Demand):
            return demand[3] in ("NotGpuBound", "BeyondDepth")  # nothing the plan could protect
        found = self.proj.earliest(demand)
        return found is not None and found[0] <= 0.0

    def reserve_placed(self, job: Job, placement: Placement) -> None:
        """Reserve an admitted job where it was placed, from now for its expected runtime."""
        demand = self.demand(job, strict=False, count=False)
        if not isinstance(demand, Demand):
            return
        gpu_unit = self.layout.gpu_unit
        per_unit: dict[int, int] = {}
        for g, _ in placement.holding.gpus:
            unit = gpu_unit[g]
            per_unit[unit] = per_unit.get(unit, 0) + 1
        option = next((o for o in demand.options if o.flavor in (placement.model, "*")), demand.options[0])
        self.proj.reserve(demand, 0.0, option, list(per_unit.items()))

    def reserve_pending(self, job: Job, reason: PendingReason) -> None:
        """Reserve a job just left pending at its earliest start (conservative backfill). A job a spent
        budget holds is not reserved while admission reads the plan (no job behind it is kept off GPUs for
        it, as before newuser34 N3): it is projected from the reset after the visits (:func:`_estimates`)."""
        if reason.code != BUDGET_EXHAUSTED:
            self.estimates[job.id] = self.estimate(job, reason)


# ---------------------------------------------------------------------------------- lookahead
def replays(ctx: CycleContext, queued: int) -> bool:
    """Whether a cycle leaving ``queued`` jobs pending replays their ETAs forward (:func:`_replayed`;
    a later job may then move an earlier one's ETA, by starting before it in the replay) rather
    than projecting them in one pass in queue order (``LOOKAHEAD_WORK``)."""
    nodes = len(ctx.state.nodes)
    by_node = nodes <= NODE_DETAIL or nodes * max(queued, 1) <= NODE_WORK  # as :class:`Plan` decides
    return queued ** 2 * (nodes if by_node else len(ctx.state.pools)) <= LOOKAHEAD_WORK


def _replayed(ctx: CycleContext, first: list[str] | None = None
              ) -> tuple[dict[str, Estimated], Plan | None, frozenset[str]]:
    """ETAs from replaying the scheduler's rules forward (:func:`..backfill.lookahead.lookahead`),
    for the jobs that start in the replay; the replay's plan afterwards (every job started in it
    reserved, for as long as it runs) and the replayed jobs that never started in it (they are
    projected on that plan, behind all of them); ``({}, None, {})`` when the queue is too large to
    replay in a cycle (``LOOKAHEAD_WORK``: then every job keeps its one-pass projection). ``first``: filled with
    the queue's order at the replay's first start (:func:`_in_order`)."""
    if not replays(ctx, len(ctx.pends)):
        return {}, None, frozenset()
    factor = ctx.profile.elect_overdue
    unpromised = [p.job_id for p in ctx.pends if _needs_promise(ctx.by_id[p.job_id].reason)
                  and (ctx.promised is None or p.job_id not in ctx.promised)] if factor > 0 else []
    promised: dict[str, datetime] = {}
    for _ in range(_PROMISE_ROUNDS):
        order: list[str] | None = [] if first is not None else None
        steps: list[tuple[float, list[Job], list[Job]]] | None = [] if unpromised and not promised else None
        estimates, plan, unstarted, starts = _replay(ctx, order, promised, steps)
        # a job first queued now is promised the start this replay gives it, and is elected once it has waited
        # past elect_overdue x that wait (the cycles then: _due_times); replayed again with those promises where
        # such an election reorders a step of the replay (s40-eta: bob's p1, promised +630 s, was elected at
        # +590 s and took the GPUs the replay had given alice's p2, which went first by usage)
        made = {j: ctx.now + timedelta(seconds=starts[j]) for j in unpromised if j in starts}
        if made == promised or steps is None or not _reorders(steps, {
                j: factor * max(starts[j], OVERDUE_FLOOR_S) for j in made}):
            break
        promised = made
    if first is not None and order is not None:
        first.extend(order)
    return estimates, plan, unstarted


_PROMISE_ROUNDS = 2
"""Replays at most per cycle to settle the promises of jobs first queued in it (:func:`_replayed`; on the random
worlds of test_s40_eta_replay_order a third changed no ETA)."""


def _reorders(steps: Sequence[tuple[float, list[Job], list[Job]]], due: Mapping[str, float]) -> bool:
    """Whether electing the jobs ``due`` (seconds after now) at the replay's steps — ``(t, the queue's order then,
    the jobs elected then)`` — puts any step's queue in another order (:func:`~..queues.order.elect_overdue`; the
    bars and passes of an election left out: at worst a replay more). Else a replay with their promises is the
    same replay."""
    for t, ordered, elected in steps:
        new = [job for job in ordered if (at := due.get(job.id)) is not None and at < t]
        if new and list(elect_overdue(iter(ordered), one_per_user([*elected, *new]))) != ordered:
            return True
    return False


def _replay(ctx: CycleContext, first: list[str] | None, promised: Mapping[str, datetime],
            steps: list[tuple[float, list[Job], list[Job]]] | None = None
            ) -> tuple[dict[str, Estimated], Plan | None, frozenset[str], dict[str, float]]:
    """:func:`_replayed`'s replay, once, with the jobs queued first now promised ``promised``; also each started
    job's start (seconds after now). ``steps``: filled as :func:`_order_at` fills it."""
    profile = ctx.profile
    protect = "none" if not profile.backfill else "first" if profile.backfill_mode == "easy" else "all"
    plan = Plan(ctx, at_end=True, with_holds=protect == "first")
    # EASY: a gang's reservation and starts take the nodes the placer takes (free the longest first)
    plan.proj.free_longest_first = protect == "first"
    demands: dict[str, Demand] = {}
    limits: dict[str, float] = {}
    for pend in ctx.pends:
        reason = pend.reason
        if reason.code in ("WaitingForPreemption", "CpuJobLimit", PORT_IN_USE, PORT_LIMIT, BUDGET_UNBOUNDED) or \
                reason.code in HELD_CODES or (
                reason.code == "Priority" and "allowed" in reason.details):
            continue
        job = ctx.by_id[pend.job_id]
        after = 0.0
        if reason.code in _GATED:
            opens = _gate_opens(ctx, job, reason)
            if opens is None:
                continue
            after = max(0.0, (opens - ctx.now).total_seconds())
        demand = plan.demand(job, after=after)
        if isinstance(demand, Demand):
            demands[job.id] = demand
            limits[job.id] = effective_limit(job.spec, ctx.profile.time_limits)[0] or math.inf
    if not demands:
        return {}, None, frozenset(), {}
    holds = [Hold(((unit, gpus),), end, _latest_end(ctx, holder, end)) for holder, unit, gpus, end in plan.holds]
    ceilings: list[int] = []
    if protect == "first" and plan.line_index:  # quota lines with a ceiling: their room is held as the cycle holds it
        ceilings = [ln.ceiling or 0 for ln in ctx.quota.lines.values() if ln.ceiling is not None]
        holds += _line_holds(ctx, plan)
    spend = _spend(ctx)
    plan.spend, plan._spend_made = spend, True  # the jobs left unstarted are projected on what the replay spent
    gate = None if spend is None else _gate(ctx, spend)
    around: dict[str, tuple[str, float | None]] | None = {} if protect == "first" else None
    ctx.replay_around = around
    # EASY on nodes: a reservation keeps the GPUs free now that the placer gives it (newuser38 n23)
    gpus = NodeGpus(ctx.state, plan.layout.gpu_unit, {
        g: (holder, end, _latest_end(ctx, holder, end)) for g, (holder, end) in plan.gpu_ends.items()},
        rank={job.id: i for i, job in enumerate(ctx.snap.jobs)}, weights=_walk_weights(ctx)) \
        if protect == "first" and plan.by_node else None
    started = lookahead(plan.proj, demands, limits, _order_at(ctx, promised, steps), protect=protect, holds=holds,
                        budget=gate, around=around, ceilings=ceilings, first_order=first, gpus=gpus)
    estimates = {job_id: _estimated(ctx, plan, est) for job_id, est in started.items()}
    starts = {job_id: est.start for job_id, est in started.items() if est.start is not None}
    return estimates, plan, frozenset(demands.keys() - started.keys()), starts


def _walk_weights(ctx: CycleContext) -> tuple[float, float] | None:
    """The placer's ``(binpack, topology)`` weights where they are its only scores and it walks fullest first
    (:meth:`.eta_gpus.NodeGpus.place`), else None."""
    placer = ctx.placer
    weights = {score.name: weight for score, weight in placer.scores}
    if placer.descending or not weights or set(weights) - {"binpack", "topology"}:
        return None
    return weights.get("binpack", 0.0), weights.get("topology", 0.0)


def _line_holds(ctx: CycleContext, plan: Plan) -> list[Hold]:
    """The work charged to quota lines with a ceiling, as the room a line holds for a job sees it
    (:func:`.pending._hold_headroom` walks it by time limits): each charge held on its lines to its latest end
    (:func:`_latest_end`), though it is expected to end as :func:`_lines` has it."""
    index = plan.line_index
    holds: list[Hold] = []
    for job_id, keys, milli, end in (*((j, k, m, _holder_end(ctx, j, {}, progress=plan.progress))
                                       for j, (k, m) in ctx.quota.charges.items()),
                                     *_held_rests(ctx, {}, plan.progress)):  # a shared GPU's rest, counted whole
        lines = tuple(index[k] for k in keys if k in index)
        if lines:
            holds.append(Hold((), end, _latest_end(ctx, job_id, end), lines, milli, job_id))
    return holds


def _spend(ctx: CycleContext) -> Spend | None:
    """The cycle's budgets as a projection spends them (:mod:`.eta_budget`), from what each has used this period
    and its running work to its expected end; None without a budget above 0."""
    budgets = ctx.snap.quotas.budgets
    if not budgets:
        return None
    running: list[tuple[Job, float]] = []
    for holder, holding in ctx.state.holdings.items():
        job = ctx.by_id.get(holder) or ctx.admitted.get(holder)
        if job is not None and holding.gpus:
            running.append((job, _holder_end(ctx, holder, {}, progress=True)))
    spend = Spend(ctx.now, budgets, ctx.snap.usage.gpu_hours_this_period, running,
                  moved=ctx.budget_moved, checked=ctx.budget_checked)
    return spend if spend else None


def _gate(ctx: CycleContext, spend: Spend) -> Callable[[str, float, float], float | None]:
    """The replay's budget gate (:data:`..backfill.lookahead.BudgetGate`): a start the budgets allow is charged."""
    def gate(job_id: str, t: float, end: float) -> float | None:
        job = ctx.by_id[job_id]
        if not spend.of(job):
            return None
        until = spend.defer(job, t)
        if until is None:
            spend.charge(job, t, end)
        return until
    return gate


_BUDGET_TRIES = 64
"""Resets a one-pass projection moves a job past at most (each one period on): then it is placed where it fits."""


def _within_budget(proj: Projection, spend: Spend, job: Job, demand: Demand) -> Demand:
    """``demand`` with its earliest start moved past each reset whose budget the work charged before spends by
    then (one-pass projection, :meth:`Plan.estimate`; the replay asks :func:`_gate` at each start)."""
    for _ in range(_BUDGET_TRIES):
        found = proj.earliest(demand)
        if found is None:
            break
        until = spend.defer(job, found[0])
        if until is None:
            break
        demand = replace(demand, after=until)
    return demand


def _latest_end(ctx: CycleContext, holder: str, expected: float) -> float:
    """When running ``holder`` ends at the latest, in seconds after now, as EASY's reservation
    counts it (:func:`.pending._ending`: start + its effective time limit; ``math.inf`` without
    one), never before its ``expected`` end."""
    job = ctx.admitted.get(holder) or ctx.by_id.get(holder)
    if job is None:
        return expected
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    if limit is None:
        return math.inf
    start = ctx.now if holder in ctx.admitted else (job.started_at or job.admitted_at or ctx.now)
    return max(expected, (start - ctx.now).total_seconds() + limit)


def _estimated(ctx: CycleContext, plan: Plan, est: Estimate) -> Estimated:
    notes = [note.message for w in est.waits_on if (note := plan.reestimates.get(w)) is not None]
    assert est.start is not None
    at = later(ctx.now, est.start)
    if at is None:  # past the horizon: unknown, never an overflow (red team 21, R5)
        return None, BEYOND_HORIZON, est.waits_on, BEYOND
    return at, "; ".join(notes), est.waits_on, "Projected"


def _order_at(ctx: CycleContext, promised: Mapping[str, datetime] | None = None,
              steps: list[tuple[float, list[Job], list[Job]]] | None = None
              ) -> Callable[[float, Sequence[str], Mapping[str, tuple[float, float]]], list[str]]:
    """The profile's queue order at ``t`` seconds from now: fair share reads the GPU-seconds each
    user's running and replayed jobs will have accrued by then (decay over the horizon ignored), and the
    equal shares among the users with work then (:func:`_equal_shares`); ``promised``: the starts promised to
    jobs first queued now (:func:`_replayed`), when each is elected; ``steps``: gets ``(t, the order, the jobs
    elected)`` of each call."""
    sort = QUEUE_SORTS[ctx.profile.queue_sort]
    base = ctx.snap.usage.decayed_gpu_seconds_by_user
    running: list[tuple[Job, float, float]] = []  # (job, GPUs, end)
    for holder, holding in ctx.state.holdings.items():
        job = ctx.by_id.get(holder) or ctx.admitted.get(holder)
        if job is not None and holding.gpus:
            running.append((job, job.spec.resources.total_milli / 1000, _holder_end(ctx, holder, {}, progress=True)))
    # no quota: what is held at t orders first (queues.order), above the cycle's equal shares
    shares = None if ctx.quota.enabled else holdings(ctx.snap.jobs, ctx.snap.inventory.gpu_count())
    by_holdings = shares is not None
    if shares is not None and shares.charged:  # a job alone on a blocked shared GPU holds it whole
        running = [(job, shares.charged.get(job.id, gpus), end) for job, gpus, end in running]
    equal_at = _equal_shares(ctx, running) if by_holdings else None

    due = _due_times(ctx, promised)  # the cycle elects a job waited past its promised wait (issue 16): so does the replay
    # the users whose elected job passed each elected one (queues.order.elected_order): this cycle's record, then
    # the replay's own — an elected job started at the last step ahead of another elected one that did not start
    passed: dict[str, set[str]] = {p.job_id: set(users) for p in ctx.pends
                                   if (users := passed_in(p.reason))} if due else {}
    last: list[Job] = []  # the elected at the last step, in their order
    guarantee = _within_first(ctx, running) if ctx.quota.enabled else None

    def passes(job: Job) -> set[str]:
        return passed.get(job.id) or set()

    def order(t: float, remaining: Sequence[str], spans: Mapping[str, tuple[float, float]]) -> list[str]:
        usage = dict(base)
        held: Holdings | None = None
        fair = ctx.profile.queue_sort in ("fair", "fair-usage")
        if fair:
            for job, gpus, end in running:
                usage[job.spec.user] = usage.get(job.spec.user, 0.0) + gpus * min(t, end)
            for job_id, (start, end) in spans.items():
                job = ctx.by_id[job_id]
                ran = min(t, end) - start
                if ran > 0:
                    usage[job.spec.user] = usage.get(job.spec.user, 0.0) + job.spec.resources.total_milli / 1000 * ran
        if by_holdings and (fair or due):  # the jobs that hold GPUs at t: running ones not ended, replayed ones started
            by_user: dict[str, float] = {}
            by_team: dict[str, float] = {}
            for job, gpus in [*((job, gpus) for job, gpus, end in running if end > t),
                              *((ctx.by_id[j], ctx.by_id[j].spec.resources.total_milli / 1000)
                                for j, (start, end) in spans.items() if start <= t < end)]:
                by_user[job.spec.user] = by_user.get(job.spec.user, 0.0) + gpus
                by_team[job.spec.team] = by_team.get(job.spec.team, 0.0) + gpus
            assert equal_at is not None
            held = Holdings(by_user, by_team, *equal_at(t, remaining, spans))
        context = QueueContext(now=capped(ctx.now, t), team_share=ctx.quota.team_share, user_usage=usage,
                               expected_runtime=lambda job: expected_runtime(ctx, job), held=held if fair else None,
                               charged_runtime=charged_runtime_of(ctx))
        jobs = [ctx.by_id[j] for j in remaining]
        if last:  # t only grows along a replay, and a job starts only at a step: a started one started at the last
            waiting = set(remaining)
            for i, job in enumerate(last):
                if job.id in spans:
                    rank = job.spec.priority.rank
                    for other in last[i + 1:]:
                        if other.id in waiting and other.spec.user != job.spec.user and other.spec.priority.rank == rank:
                            passed.setdefault(other.id, set()).add(job.spec.user)
        # as the cycle (runtimes.elected_in): no election for a user above their equal share held at t while
        # another user's job waits that their share has room for (queues.order.election_barred; new user 30, N2)
        barred = election_barred(jobs, held) if due else None
        elected = one_per_user([job for job in jobs if (at := due.get(job.id)) is not None and context.now > at
                                and not (barred and barred(job))]) if due else []
        ordered = list(topped_first(jobs, elect_overdue(sort(jobs, context), elected, passes)))
        if guarantee is not None:
            ordered = guarantee(t, ordered, spans)
        if elected:
            chosen = {job.id for job in elected}
            last[:] = [job for job in ordered if job.id in chosen]
        else:
            last.clear()
        if steps is not None:
            steps.append((t, ordered, elected))
        return [job.id for job in ordered]

    return order


def _equal_shares(ctx: CycleContext, running: Sequence[tuple[Job, float, float]]
                  ) -> Callable[[float, Sequence[str], Mapping[str, tuple[float, float]]], tuple[float, float]]:
    """The equal shares of the GPUs per user and per team at ``t`` seconds from now, as the cycle then works them
    out (:func:`~jupyter_sched.queues.order.holdings`: among the users and teams with work pending or holding):
    a user whose last running job has ended by ``t`` and who has nothing queued no longer divides the GPUs (s40-eta:
    carol's job ended at +10 s, the cycle's share rose from 4/3 to 2 GPUs and alice, holding 2, went first again;
    the replay kept 4/3 and put bob's job ahead of hers). ``running``: ``(job, GPUs, end)`` of the work holding
    GPUs now; the queued jobs stay queued until they start in the replay (``spans``)."""
    total = ctx.snap.inventory.gpu_count()
    until: dict[tuple[str, str], float] = {}  # (user, team) -> when their last running work ends
    for job, _, end in running:
        key = (job.spec.user, job.spec.team)
        if end > until.get(key, -math.inf):
            until[key] = end
    for job in ctx.snap.jobs:  # holding, with no GPUs (a CPU job): work too
        if job.state.holds_gpus and not job.spec.resources.total_milli:
            key = (job.spec.user, job.spec.team)
            until[key] = max(until.get(key, -math.inf), _holder_end(ctx, job.id, {}, progress=True))
    queued = [(p.job_id, (j.spec.user, j.spec.team)) for p in ctx.pends if (j := ctx.by_id.get(p.job_id)) is not None]

    def shares(t: float, remaining: Sequence[str], spans: Mapping[str, tuple[float, float]]) -> tuple[float, float]:
        keys = {key for key, end in until.items() if end > t}
        keys.update(key for job_id, key in queued if (span := spans.get(job_id)) is None or span[1] > t)
        if not total or not keys:
            return math.inf, math.inf
        return total / len({u for u, _ in keys}), total / len({m for _, m in keys})

    return shares


def _within_first(ctx: CycleContext, running: Sequence[tuple[Job, float, float]]
                  ) -> Callable[[float, list[Job], Mapping[str, tuple[float, float]]], list[Job]]:
    """The cycle's entry order at ``t`` seconds from now (:func:`.cycle._would_borrow`, Kueue's: borrowing
    last, whatever the class): the jobs that would take their team above its guarantee on their first GPU
    model, with the team's work used at ``t`` (running work not ended by then, replayed work started), go
    after those within it, and a team's later jobs after its first deferred one (newuser34 N4: a lease of
    vision, within its guarantee once vision's own job ended at 22:14, was projected behind ml's borrowing
    flood, "ETA 22:21", and granted at 22:14). ``running``: ``(job, GPUs, end)`` of the running work."""
    quota, placer = ctx.quota, ctx.placer
    models: dict[str, str] = {}  # job id -> its first usable GPU model ("": none)
    held: list[tuple[str, str, str, int, float, float]] = []  # (team, user, model, milli, start, end)

    def model_of(job: Job) -> str:
        model = models.get(job.id)
        if model is None:
            if job.allocation is not None:
                model = next((m for _, m in sorted(_spots(ctx, job)) if m), "")
            else:
                model = next((f.model for f in placer.flavors(job.spec.resources) if f.pools), "")
            models[job.id] = model
        return model

    for job, _, end in running:
        held.append((job.spec.team, job.spec.user, model_of(job), job.spec.resources.total_milli, 0.0, end))

    def order(t: float, ordered: list[Job], spans: Mapping[str, tuple[float, float]]) -> list[Job]:
        used: dict[Any, int] = {}  # team line key -> milli-GPUs used at t
        started = ((j.spec.team, j.spec.user, model_of(j), j.spec.resources.total_milli, start, end)
                   for job_id, (start, end) in spans.items() if (j := ctx.by_id[job_id]) is not None)
        for team, user, model, milli, start, end in (*held, *started):
            if start <= t < end and milli:
                for line in quota.applicable(team, user, model):
                    if line.key[1] is None:
                        used[line.key] = used.get(line.key, 0) + milli
        first: list[Job] = []
        later: list[Job] = []
        waiting: set[str] = set()
        for job in ordered:
            spec = job.spec
            milli = spec.resources.total_milli
            model = model_of(job) if milli else ""
            if spec.team in waiting or (model and any(
                    line.key[1] is None and used.get(line.key, 0) + milli > line.guaranteed
                    for line in quota.applicable(spec.team, spec.user, model))):
                later.append(job)
                waiting.add(spec.team)
            else:
                first.append(job)
        return first + later if later and first else ordered

    return order


def _due_times(ctx: CycleContext, promised: Mapping[str, datetime] | None = None) -> dict[str, datetime]:
    """When each pending job of the cycle is elected (:func:`~jupyter_sched.queues.order.promise_due`),
    by job id: from the promise its reason carries, or the one :func:`promises` made this cycle (else the start
    ``promised`` by the replay before, :func:`_replayed`)."""
    factor = ctx.profile.elect_overdue
    if factor <= 0:
        return {}
    due: dict[str, datetime] = {}
    overrunning = overrunning_users(ctx)
    for pend in ctx.pends:
        job = ctx.by_id[pend.job_id]
        if job.spec.user in overrunning:  # never elected while its user outruns their history (elected_in)
            continue
        at = promise_due(job.reason, factor)
        if at is None and (ctx.promised or promised):
            start = ctx.promised.get(job.id) if ctx.promised else None
            if start is None and promised:
                start = promised.get(job.id)
            if start is not None:
                at = promise_due(PendingReason(code="", message="", details={
                    PROMISE: {"at": ctx.now_iso, "start": start.isoformat()}}), factor)
        if at is not None:
            due[job.id] = at
    return due


# ---------------------------------------------------------------------------------- projection
def _projection(ctx: CycleContext, layout: Units, by_node: bool, at_end: bool, notes: dict[str, Reestimate],
                holds: list[tuple[str, int, int, float]] | None = None,
                gpu_ends: dict[int, tuple[str, float]] | None = None) -> Projection:
    """Capacity units (``layout``: nodes or pools, per GPU model where a node mixes models) and quota
    lines as timelines (module doc); running jobs re-estimated because they ran past what was
    expected are noted in ``notes``; ``holds``, when given, gets ``(holder, unit, GPUs, expected
    end)`` of each running job holding whole GPUs, per unit; ``gpu_ends`` ``(holder, expected end)``
    per GPU held (a GPU several hold: the last to end)."""
    st, book, now = ctx.state, ctx.book, ctx.now
    owner_end: dict[str, float] = {}
    if at_end:
        for p in ctx.pends:
            if p.reason.code == "WaitingForPreemption" and p.job_id in book:
                start = max(0.0, (p.reason.eta - now).total_seconds()) if p.reason.eta else 0.0
                owner_end[p.job_id] = start + expected_runtime(ctx, ctx.by_id[p.job_id])
    else:
        for owner in book.gpus:
            stops = [_holder_end(ctx, h, notes) for h in book.holders_on(book.pool([owner])) if h in ctx.in_flight]
            owner_end[owner] = max(stops, default=0.0) + expected_runtime(ctx, book.jobs[owner])
    n_units = layout.count
    free_now = layout.free_now(st, by_node)
    unit_max = list(layout.unit_max)
    releases: list[dict[float, int]] = [{} for _ in range(n_units)]  # end -> GPUs freed then
    forever: list[dict[str, None]] = [{} for _ in range(n_units)]
    enders: list[list[tuple[float, str]]] = [[] for _ in range(n_units)]
    placeable, free_milli = st.placeable, st.free_milli
    gpu_unit, split = layout.gpu_unit, layout.per_model  # split: nodes (pools) with a unit per model
    all_placeable = all(placeable)  # the common case: no GPU to skip when counting what a holder frees
    release: dict[int, float] = {}  # GPUs shared or nominated: released when the last holder ends
    shared: dict[int, list[SharedGpu]] = {}  # per unit, GPUs shared by running fractions (N7)
    holder_of: dict[int, str] = {}
    endless: dict[int, list[str]] = {}  # per shared GPU, every holder without a known end (all are named)
    shares: dict[int, list[tuple[float, int, str]]] = {}  # per shared GPU, (end, milli-GPUs, holder) of each share
    nominated = book.owner
    fresh, admitted, fresh_end = ctx.fresh, ctx.admitted, ctx.fresh_end
    for holder, holding in st.holdings.items():
        gpus = holding.gpus
        if not gpus:
            continue
        if holder in fresh:  # admitted now: runs its whole expected runtime from now (_holder_end, inlined)
            end = fresh_end.get(holder)
            if end is None:
                end = expected_runtime(ctx, admitted[holder])
            name = holder
        elif holder.startswith(NOMINATION_PREFIX):
            owner = holder[len(NOMINATION_PREFIX):]
            end, name = owner_end.get(owner, math.inf), owner
        elif holder.startswith(STOPPING_PREFIX):  # spare GPUs of a victim evicted now: free after its grace
            end, name = float(ctx.profile.grace_s), holder[len(STOPPING_PREFIX):]
        elif holder.startswith("\0"):
            continue
        else:
            end, name = _holder_end(ctx, holder, notes, progress=at_end), holder
        if gpus[0][1] == 1000 and not holding.extra and not (nominated and any(g in nominated for g, _ in gpus)) \
                and (not split or layout.one_unit(gpus)):  # GPUs of two models on a node: GPU by GPU, below
            unit = gpu_unit[gpus[0][0]]  # the common case: whole GPUs, one node (one model there)
            if math.isinf(end):
                forever[unit][name] = None
            else:
                rel = releases[unit]
                rel[end] = rel.get(end, 0) + (count := len(gpus) if all_placeable else sum(1 for g, _ in gpus if placeable[g]))
                enders[unit].append((end, name))
                if holds is not None:
                    holds.append((name, unit, count, end))
            if gpu_ends is not None:
                gpu_ends.update((g, (name, end)) for g, _ in gpus)
            continue
        if holds is not None and all(m == 1000 for _, m in gpus) and not any(g in nominated for g, _ in gpus):
            per_unit: dict[int, int] = {}  # a gang's workers, whole GPUs on several nodes
            for g, _ in gpus:
                if placeable[g]:
                    unit = gpu_unit[g]
                    per_unit[unit] = per_unit.get(unit, 0) + 1
            holds.extend((name, unit, count, end) for unit, count in per_unit.items())
        for g, milli in gpus:
            if math.isinf(end):
                endless.setdefault(g, []).append(name)
            if end >= release.get(g, -1.0):
                release[g], holder_of[g] = end, name
            if milli < 1000:
                shares.setdefault(g, []).append((end, milli, name))
    for g, owner in nominated.items():  # after its victim stops, the GPU is the nominated job's
        release[g], holder_of[g] = owner_end.get(owner, math.inf), owner
    for g, end in release.items():
        if not placeable[g] or free_milli[g] >= 1000:
            continue
        if gpu_ends is not None:
            gpu_ends[g] = (holder_of[g], end)
        unit = gpu_unit[g]
        if math.isinf(end):
            # a shared GPU frees only when all its holders end: name each one that has no end
            # (new-user 4 finding 22: of two 0.3-GPU jobs on one GPU only the last was named)
            for name in ([holder_of[g]] if g in nominated else endless.get(g, [holder_of[g]])):
                forever[unit][name] = None
        else:
            rel = releases[unit]
            rel[end] = rel.get(end, 0) + 1
            enders[unit].append((end, holder_of[g]))
        held = shares.get(g)
        if held and g not in nominated and (slot := _shared_gpu(ctx, held, free_milli[g], st.gpu_memory[g], end)) is not None:
            shared.setdefault(unit, []).append(slot)
            enders[unit].extend((at, name) for at, _, name in held if math.isfinite(at) and at < end)
    units = [Timeline(f, r.items()) for f, r in zip(free_now, releases, strict=True)]
    for ends in enders:
        ends.sort()
    lines, line_forever, line_enders = _lines(ctx, notes, progress=at_end)
    whole = frozenset(i for i, key in enumerate(k for k, ln in ctx.quota.lines.items() if ln.ceiling is not None)
                      if key[1] is None) if lines and ctx.shares_held else frozenset()
    return Projection(units=units, unit_max=unit_max, lines=lines, forever=[list(f) for f in forever],
                      line_forever=line_forever, enders=enders, shared=shared, line_enders=line_enders,
                      whole_lines=whole)


def sharing_group(ctx: CycleContext, job: Job) -> str:
    """Who ``job``'s share of a GPU may be packed with (the profile's ``gpu_sharing``, as the
    placer's owners read it: anyone ``"*"``, its team, or nobody — its own id)."""
    sharing = ctx.profile.gpu_sharing
    return "*" if sharing == "any" else f"team:{job.spec.team}" if sharing == "team" else f"job:{job.id}"


def _shared_gpu(ctx: CycleContext, held: list[tuple[float, int, str]], free: int, memory: int, end: float
                ) -> SharedGpu | None:
    """A GPU shared by running fractions as the projection packs later shares onto it (None: its
    holders are of different sharing groups, or not all known jobs): each share takes what it asks of it, or
    the part of its ``memory`` (MiB) it reserves where that is more (:func:`footprint`)."""
    groups = {sharing_group(ctx, job) if (job := ctx.by_id.get(name)) is not None else None for _, _, name in held}
    if len(groups) != 1 or None in groups:
        return None
    taken = [(at, footprint(milli, ctx.by_id[name].spec.resources.min_memory_mib, memory)) for at, milli, name in held]
    more = sum(m for _, m in taken) - sum(milli for _, milli, _ in held)  # memory beyond the milli-GPUs asked
    return SharedGpu(groups.pop() or "*", 0.0, end, Timeline(max(free - more, 0), taken))


def footprint(milli: int, memory_mib: int, gpu_memory_mib: int) -> int:
    """Milli-GPUs of one GPU a share of ``milli`` asking ``memory_mib`` of it takes as the projection packs shares:
    the placer packs a share only where the GPU's memory not reserved by the shares on it holds its ask
    (:meth:`..placement.placer.Placer._memory_short`, red team 15 R7) — its part of ``gpu_memory_mib`` where that is
    more than ``milli`` (red team 38 R3: 0.1 GPU x 70 of 80 GiB each took a GPU of its own; the projection packed
    them, and a share its quota held back waited on other teams' work)."""
    if memory_mib <= 0 or gpu_memory_mib <= 0:
        return milli
    return max(milli, min(GPU_MILLI, -(-GPU_MILLI * memory_mib // gpu_memory_mib)))


def _lines(ctx: CycleContext, notes: dict[str, Reestimate], *,
           progress: bool = False) -> tuple[list[Timeline], list[list[str]], list[list[tuple[float, str]]]]:
    """Timelines of the quota lines that have a ceiling (in ``quota.lines`` order), their holders
    without a known end, and ``(end, job id)`` of those with one, sorted (the jobs a quota-held
    job waits for: hubadmin24 B5)."""
    quota = ctx.quota
    capped = {key: line for key, line in quota.lines.items() if line.ceiling is not None}
    if not capped:
        return [], [], []
    index = {key: i for i, key in enumerate(capped)}
    releases: list[list[tuple[float, int]]] = [[] for _ in capped]
    forever: list[list[str]] = [[] for _ in capped]
    enders: list[list[tuple[float, str]]] = [[] for _ in capped]
    for job_id, keys, milli, end in (*((j, k, m, _holder_end(ctx, j, notes, progress=progress))
                                       for j, (k, m) in quota.charges.items()), *_held_rests(ctx, notes, progress)):
        hit = [index[k] for k in keys if k in index]
        if not hit:
            continue
        for i in hit:
            if math.isinf(end):
                forever[i].append(job_id)
            else:
                releases[i].append((end, milli))
                enders[i].append((end, job_id))
    away = quota.held.now() if quota.held is not None else {}
    timelines = [Timeline((line.ceiling or 0) - quota.usage.get(key, 0) - away.get(key, 0), releases[i])
                 for i, (key, line) in enumerate(capped.items())]
    for ends in enders:
        ends.sort()
    return timelines, forever, enders


def _held_rests(ctx: CycleContext, notes: dict[str, Reestimate], progress: bool
                ) -> list[tuple[str, tuple[Any, ...], int, float]]:
    """The rest of each GPU only one team's shares occupy, which its team lines count as used (red team 38 R3,
    :class:`..quota.held_whole.HeldAway`): ``(share, team line keys, milli-GPUs, end)``, freed when the last
    share on it ends (that share named; ``math.inf``: one has no known end). A share of a team at its line waits
    for these, its own team's shares, not for the work on other GPUs (s40-eta)."""
    held = ctx.quota.held
    if held is None:
        return []
    rests = held.rests()
    out: list[tuple[str, tuple[Any, ...], int, float]] = []
    shares, fresh = ctx.share_holder_set, ctx.fresh_shares
    for g in sorted(rests):  # in GPU order, not the memo's sync history: a line's holders are named in this order
        keys, rest = rests[g]
        last, end = "", -math.inf
        for holder in ctx.state.gpu_shares.get(g, ()):
            if holder in shares or holder in fresh:
                at = _holder_end(ctx, holder, notes, progress=progress)
                if at > end or (at == end and holder < last):
                    last, end = holder, at
        if last:
            out.append((last, tuple(keys), rest, end))
    return out


def _holder_end(ctx: CycleContext, holder: str, notes: dict[str, Reestimate], *, progress: bool = False) -> float:
    """Seconds after now when ``holder`` (running, or admitted this cycle) releases its GPUs
    (always after now: :func:`.runtimes.time_left`; ``math.inf``: no known end). ``progress``: a
    running job's progress report may set it (ETAs shown only, :attr:`Plan.progress`)."""
    if holder in ctx.fresh:  # admitted now: runs its whole expected runtime from now
        return expected_runtime(ctx, ctx.admitted[holder])
    job = ctx.by_id.get(holder)
    if job is None or holder in ctx.admitted:
        job = ctx.admitted.get(holder, job)
        start = ctx.now
    else:
        start = job.started_at or job.admitted_at or ctx.now
    if job is None:
        return math.inf
    left, note = time_left(ctx, job, start, progress=progress and holder not in ctx.admitted)
    if note is not None:
        notes[holder] = note
    return left


def _gate_opens(ctx: CycleContext, job: Job, reason: PendingReason) -> datetime | None:
    if reason.code == "Backoff":
        return job.not_before
    if reason.code == "OutsideTimeWindow":
        nxt = reason.details.get("next_open")
        return datetime.fromisoformat(nxt) if isinstance(nxt, str) else None
    if reason.code == BUDGET_UNBOUNDED:  # no reset lets a job with no time limit in (hubadmin25 B22)
        return None
    return _next_period(ctx.now, str(reason.details.get("period", "month")))


def _next_period(now: datetime, period: str) -> datetime:
    """Start of the next budget period (:func:`~jupyter_sched.model.periods.next_period_start`; an
    unknown period, from a record older than this version, counts as a month)."""
    return next_period_start(now, period if period in PERIODS else "month")


# ---------------------------------------------------------------------------------- history
def _with_idle_peers(ctx: CycleContext, job: Job, reason: PendingReason, waits: tuple[str, ...],
                     eta: datetime) -> tuple[str, ...]:
    """The leases a projected ETA on idle leases (``Snapshot.idle_ends``) waits for: the plan names the
    one whose end lets ``job`` start, but where two idle leases must both go both are what it waits on
    ("if l-a and l-b stay idle", session 21). On a quota wait (``used``, ``requested``, ``quota`` in
    ``reason.details``): the idle leases of the job's team reclaimed by ``eta``, soonest first, until
    the GPUs they free cover what the line is short of; else every idle lease reclaimed by then on
    GPUs of the nodes and models of those named — on a node mixing models, an A100 lease's end frees
    nothing an H100 job can use (session 22). Other waits are kept, first; ``waits`` unchanged when
    the quota leases do not cover it."""
    ends, by_id = ctx.snap.idle_ends, ctx.by_id
    kept = tuple(w for w in waits if w not in ends)
    due = sorted((end, lease_id) for lease_id, end in ends.items() if end <= eta and lease_id in by_id)
    numbers = [reason.details.get(k) for k in ("used", "requested", "quota")]
    if reason.code in _QUOTA_WAITS and all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        used, requested, quota = (float(n) for n in numbers)  # type: ignore[arg-type]
        short, freed, taken = round((used + requested - quota) * 1000), 0, []
        for _, lease_id in due:
            if by_id[lease_id].spec.team == job.spec.team:
                freed += by_id[lease_id].spec.resources.total_milli
                taken.append(lease_id)
                if freed >= short:
                    return (*kept, *taken)
        return waits
    spots = {spot for w in waits if w in ends and (held := by_id.get(w)) is not None for spot in _spots(ctx, held)}
    peers = [lease_id for _, lease_id in due if spots & _spots(ctx, by_id[lease_id])]
    return (*kept, *peers, *(w for w in waits if w in ends and w not in peers))


def _spots(ctx: CycleContext, job: Job) -> set[tuple[str, str]]:
    """``{(node name, GPU model)}`` of the GPUs ``job``'s allocation holds (a GPU no longer in the
    inventory: model ``""``)."""
    if job.allocation is None:
        return set()
    st = ctx.state
    index, model_of = st.uuid_to_gpu, st.gpu_model
    return {(node, model_of[g] if (g := index.get(uuid)) is not None else "")
            for node, uuids in job.allocation.per_worker() for uuid in uuids}


def _record(ctx: CycleContext, job: Job, reason: PendingReason, eta: datetime | None, why: str,
            waits: tuple[str, ...], eta_code: str, ahead: Mapping[str, Job],
            reestimates: Mapping[str, Reestimate], position: int | None, *, progress: bool = False,
            elected_ahead: tuple[str, ...] = (), guessed: bool = False,
            mates_ahead: Sequence[tuple[datetime, str, Job]] = ()) -> PendingReason:
    """The reason with its ETA, the ETA's basis, a move record when it moved, predicted_start and
    its queue ``position``. ``progress``: the ETA was projected reading progress reports (the jobs it
    waits on whose end one set are listed in ``details["eta_progress"]``). ``elected_ahead``: the jobs
    elected this cycle ahead of it (one elected since the last cycle is a move's cause: :func:`_moved`).
    ``guessed``: the ETA rests on a guess (:class:`_Guesses`): it is shown, but no promise is made from it.
    ``mates_ahead``: its team's pending jobs of its class queued ahead of it, not elected, as ``(submitted_at,
    user, job)`` (fair order only): those
    submitted after it by other members go first by the fair order (``details["eta_fair_ahead"]``)."""
    prev = job.reason if job.reason is not None and job.reason.code != "Preempted" and not provisional(job.reason) \
        else None
    capacity = _capacity(ctx, job)
    on_idle = eta is not None and progress and bool(ctx.snap.idle_ends) and any(w in ctx.snap.idle_ends for w in waits)
    if on_idle and eta is not None:
        waits = _with_idle_peers(ctx, job, reason, waits, eta)
    details: dict[str, Any] = {**reason.details, "eta_code": eta_code, "eta_waits_on": list(waits)}
    names, owners, own, queued = _waited_on(ctx, job, waits)
    if names:  # the names their owners gave (public, as in the queue): "when long-a (j-…) ends" (new user 5)
        details["eta_waits_on_names"] = names
    if owners:  # another user's work by its owner: "red15b's job \"…\" (j-…)" (red team 15, R8)
        details["eta_waits_on_owners"] = owners
    if own:  # its owner can free these (issue 20: "your own kernel lease … %gpu release there")
        details["eta_waits_on_own"] = own
    if queued:  # queued ahead of it, holding nothing yet: not "released" now (new user 18, N10)
        details["eta_waits_on_queued"] = queued
        if eta is not None and (behind := _backfilled(queued, ahead)):
            details["eta_waits_on_backfilled"] = behind
            if (basis_of := _backfill_basis(ctx, job, behind, eta)) is not None:  # why they go first (newuser31 N6)
                details["eta_backfill_basis"] = basis_of
    if eta is not None and eta_code == "Projected" and len(waits) > 1 and not queued:
        needs = _needs_of(ctx, job, waits, progress=progress)
        if needs is not None:  # same-second ends, fewer of them needed (newuser26 n5)
            details["eta_needs_of"] = needs
    fair_ahead = _fair_ahead(ctx, job, mates_ahead) if mates_ahead else None
    if fair_ahead is not None:  # later teammates go first: say so and why (newuser37 N3)
        details["eta_fair_ahead"] = fair_ahead
    must = _must_release(ctx, reason, waits, job, capacity) if (eta is None or on_idle) and len(waits) > 1 else None
    if must is not None:  # "one or more of" read as if one would do (new user 13, N9): how many, whoever's they are
        details["eta_must_release"] = must
    past = ctx.budget_moved.get(job.id) if eta is not None else None
    if past is not None and eta_code in ("Projected", BUDGET_RESET):  # N6: the jobs ahead spend the budget first
        details["eta_budget_reset"] = {"at": _iso(ctx, past[0]), "period": past[2],
                                       "spent_from": None if past[1] is None else _iso(ctx, past[1])}
        if not any(other.spec.team == job.spec.team and other.id not in ctx.admitted for other in ahead.values()):
            # no job of its team queued ahead: the work running now spends it, not "the jobs ahead" (newuser36 N5)
            details["eta_budget_reset"]["by_running"] = True
    elif eta is not None and eta_code == "Projected" and reason.code == BUDGET_EXHAUSTED:  # N3: not before the reset
        details["eta_budget_reset"] = {"at": _iso(ctx, _next_period(ctx.now, str(reason.details.get("period", "month")))),
                                       "period": str(reason.details.get("period", "month"))}
    elif eta is not None and eta_code == "Projected" and ctx.snap.quotas.budgets and \
            (period := _budget_period(ctx, job)) is not None:  # N6: the ETA assumes the budget lasts until then
        details["eta_budget_assumed"] = {"period": period, "checked": job.id in ctx.budget_checked}
    if eta is not None and why:  # a job it waits on ran past what was expected: say so beside the ETA
        details["eta_note"] = why
        bounds = {w: note.bound for w in waits if (note := reestimates.get(w)) is not None and note.bound}
        if bounds:  # what now bounds each re-estimated end, for the ETA's "when j-1 ends (...)"
            details["eta_bounds"] = bounds
    reported, capped, lapsed = _progress_of(ctx, waits) if eta is not None and progress and ctx.snap.progress \
        else ({}, {}, {})
    if reported:  # their ends are where their own progress reports take them (issue 16 item 4)
        details["eta_progress"] = reported
        # which report: the blocker's own line reads its latest, maybe newer than this cycle's (new user 22, N10)
        details["eta_progress_at"] = _report_times(ctx, reported)
    if capped:  # their limits stop them before their progress says they end (new user 21, N7)
        details["eta_progress_capped"] = capped
    if lapsed:  # their progress said an end that passed, or went stale: limit or learnt end again (N4)
        details["eta_progress_lapsed"] = lapsed
    if eta is not None and ctx.history and ctx.snap.runtime_estimates:  # else nothing ends by learning
        learned = [w for w in waits if w not in reestimates and w not in reported and w not in capped
                   and _ends_by_learning(ctx, w)]
        if learned:  # its end is what similar past runs took, not a limit anyone stated (finding 28)
            details["eta_learned"] = learned
            other = {w: share for w in learned if (share := _other_runs_share(ctx, w)) is not None}
            if other:  # learnt from its owner's runs of other programs, not similar ones (new user 11, N15)
                details["eta_learned_other"] = other
                population = [w for w in other if ctx.snap.runtime_sources.get(w) == POPULATION_RUNS]
                if population:  # from everybody's runs of its size: a newcomer's running job (session 14)
                    details["eta_learned_population"] = population
                gpu_runs = [w for w in other if ctx.snap.runtime_sources.get(w) == POPULATION_GPU_RUNS]
                if gpu_runs:  # from everybody's GPU runs under limits like its own, none of its size (hubadmin25 B11)
                    details["eta_learned_gpu_runs"] = gpu_runs
    if job.spec.time_limit_s is None:
        limit, source = effective_limit(job.spec, ctx.profile.time_limits)
        details["time_limit_s"], details["time_limit_source"] = limit, source
    basis: dict[str, Any] = {"since": ctx.now_iso, "capacity": capacity, "waits_on": list(waits)}
    old_basis = prev.details.get("eta_basis") if prev is not None else None
    old_basis = old_basis if old_basis is not None and isinstance(old_basis, Mapping) else None  # None: no ABC check
    moved = None
    if prev is not None:  # against the ETA last recorded (or first given), not last cycle's (red team 21, R2);
        # the ETA alone, not a copy of the reason with it (a dataclass copy per pending job per cycle: ~5 us
        # each, ~8 % of the status benchmark's full cycle, session 22)
        anchor = _parse(old_basis["recorded_eta"]) if old_basis and "recorded_eta" in old_basis else prev.eta
        moved = _moved(ctx, anchor, eta, capacity, old_basis, ahead, job, reestimates, reported,
                       was_reported=prev.details.get("eta_progress"), codes=(prev.code, reason.code),
                       elected_ahead=elected_ahead)
        recorded_at = _parse(old_basis.get("recorded_at")) if old_basis else None
        if moved is not None and recorded_at is not None and \
                (ctx.now - recorded_at).total_seconds() < ETA_MOVE_MIN_INTERVAL_S:
            moved = None  # recorded once per interval: a move still standing then is recorded then
    if moved is not None:
        details["eta_moved"] = moved
        ctx.audit.append(AuditRecord(action="eta_moved", job_id=job.id, user=job.spec.user,
                                     message=moved["message"], details=moved))
        basis["recorded_at"], basis["recorded_eta"] = ctx.now_iso, eta.isoformat() if eta is not None else ""
    elif old_basis is not None:
        basis["since"] = old_basis.get("since", basis["since"])
        for key in ("recorded_at", "recorded_eta"):
            if key in old_basis:
                basis[key] = old_basis[key]
    # the ETA it had before teammates' later jobs first moved it (the move recorded then), kept while it waits:
    # its line says it beside the later jobs that go first (newuser37 N3 addendum: only the audit said it)
    was = old_basis.get("fair_from") if old_basis is not None else None
    if not isinstance(was, str) and moved is not None and moved["cause"] == "arrival" and moved["from"] != "unknown" \
            and any((o := ctx.by_id.get(m)) is not None and o.spec.team == job.spec.team
                    and o.spec.user != job.spec.user for m in moved["jobs"]):
        was = moved["from"]
    if isinstance(was, str) and was:
        basis["fair_from"] = was
        if fair_ahead is not None:
            fair_ahead["eta_before"] = was
    if "recorded_eta" not in basis:  # the first ETA given is what a move is measured from
        first = prev.eta if prev is not None else eta
        basis["recorded_eta"] = _iso(ctx, first) if first is not None else ""
    details["eta_basis"] = basis
    promise = prev.details.get(PROMISE) if prev is not None else None
    if promise is None and ctx.profile.elect_overdue > 0:  # made once, at its first known ETA (promises())
        # not from a guess: asked again next cycle, until the ETA rests on something (verify 30, V6)
        start = (None if guessed else eta) if ctx.promised is None else ctx.promised.get(job.id)
        if start is not None:  # (the first ETA's text, said once: 20,000 new jobs in a 5,000-node cycle)
            said = basis["recorded_eta"] if prev is None and start is eta else start.isoformat()
            promise = {"at": ctx.now_iso, "start": said}
    if promise is not None:
        details[PROMISE] = promise
        basis_of = details.get("eta_backfill_basis")
        if isinstance(basis_of, dict) and "ahead" in basis_of and "elected_from" not in basis_of:
            # its first cycle (no promise read yet): the promise made now bounds it as the next ones' will (newuser38 n11: the CLI read in
            # that cycle ended at "so the ETA may move", the panel a cycle later went on "; … goes first from …")
            due = promise_due(replace(reason, details={PROMISE: promise}), ctx.profile.elect_overdue)
            if due is not None and due > ctx.now:
                basis_of["elected_from"] = _iso(ctx, due)
    if reestimates:  # a note with its owner's learnt figure, and the same without it (red team 22, R2 caveat)
        noted = (*waits, *(moved["jobs"] if moved is not None and moved["cause"] == "overran" else ()))
        learnt = {w: {"said": note.message, "public": note.public} for w in dict.fromkeys(noted)
                  if (note := reestimates.get(w)) is not None and note.public}
        if learnt:
            details["eta_note_learnt"] = learnt
    return PendingReason(code=reason.code, message=reason.message, details=details, unblock=reason.unblock,
                         position=position, eta=eta, eta_reason=why if eta is None else "",
                         per_flavor=reason.per_flavor, predicted_start=eta if prev is None else prev.predicted_start)


def _waited_on(ctx: CycleContext, job: Job, waits: tuple[str, ...]
               ) -> tuple[dict[str, str], dict[str, str], list[dict[str, Any]], list[str]]:
    """What the ETA of ``job`` says of the jobs it waits on, each looked up once (issue 16: four
    passes over them cost ~2 % of a 100-node cycle): ``(names, owners, own, queued)``.

    * ``names``: ``{job id: name}`` of those whose name says more than their id (names are public:
      every queue line shows them); at most 80 characters each (new user 10, N11).
    * ``owners``: ``{job id: owner}`` of the jobs and leases another user owns (owners are public:
      every queue line shows them); the renderer names them with their owner (red team 15, R8).
    * ``own``: those of ``job``'s own owner, one :func:`.context.own_entry` each (``{"id", "name",
      "kind", "gpus"}``, a lease's notebook and how it is released). Only the owner's own work is
      described — what another user runs stays theirs; the renderer names these to the owner alone.
    * ``queued``: the ids of those queued ahead of it, holding nothing yet — not admitted in this
      cycle and not holding GPUs: not "released" now (new user 18, N10).

    What a waited-on job contributes besides ``own`` is looked up once per ETA pass
    (``ctx.waited``, emptied by :func:`estimate_all`; issue 16: ~1,500 look-ups of the same few jobs
    ahead in a 100-node cycle).
    """
    names: dict[str, str] = {}
    owners: dict[str, str] = {}
    own: list[dict[str, Any]] = []
    queued: list[str] = []
    user = job.spec.user
    known = ctx.waited
    for job_id in waits:
        seen = known.get(job_id)
        if seen is None:
            seen = known[job_id] = _waited(ctx, job_id)
        other, name, waiting = seen
        if other is None:
            continue
        if waiting:
            queued.append(job_id)
        if name:
            names[job_id] = name
        spec = other.spec
        if spec.user != user:
            owners[job_id] = spec.user
            continue
        own.append(own_entry(other))  # private: the API leaves eta_waits_on_own out of others' views
    return names, owners, own, queued


_FAIR_SCAN = 200
"""How many of a job's teammates' jobs just ahead of it :func:`_fair_ahead` looks at (a bound on its cost)."""


def _fair_ahead(ctx: CycleContext, job: Job, mates: Sequence[tuple[datetime, str, Job]]) -> dict[str, Any] | None:
    """``{"team", "jobs": [ids], "more": int, "names": {id: name}, "owners": {id: user}}`` (``"eta_before"``: ISO,
    its ETA before they came, from the move recorded when they did — added by :func:`_record`): the jobs of
    ``job``'s team and class queued ahead of it (``mates``: ``(submitted_at, user, job)``, still pending, not
    elected — elected jobs went first by their promise, not by the fair order) that other members submitted after
    it — the fair order put them first (within a team the member with less recent GPU use goes first). ``jobs``:
    the first :data:`FAIR_LISTED` of them in queue order, named on its line; ``more``: how many others (absent
    when none). Names and owners are public (every queue line shows them). None: none (newuser37 N3: an older
    job waited behind three later jobs of its team, its line said nothing).

    Cost: one pass over at most :data:`_FAIR_SCAN` tuples; names are looked up for the listed ones only (a
    reason held every id and name — 32 on average, 173 at most at 20,000 jobs — and the scan cost ~6 % of a
    cycle, session 37)."""
    since = job.submitted_at
    if since is None:
        return None
    user = job.spec.user
    # the nearest _FAIR_SCAN ahead only: a flood of one team would make the scan quadratic; mates come in queue
    # order, which is submit order unless the fair order moved them (then they are near)
    later = [m for t, u, m in mates[-_FAIR_SCAN:] if t > since and u != user]
    if not later:
        return None
    listed = later[:FAIR_LISTED]
    names: dict[str, str] = {}
    for m in listed:
        name = public_name(m.spec).strip()
        if name and name != m.id:
            names[m.id] = name[:79] + "…" if len(name) > 80 else name
    found: dict[str, Any] = {"team": job.spec.team, "jobs": [m.id for m in listed], "names": names,
                             "owners": {m.id: m.spec.user for m in listed}}
    if len(later) > len(listed):
        found["more"] = len(later) - len(listed)
    return found


def _backfilled(queued: list[str], ahead: Mapping[str, Job]) -> list[str]:
    """Of ``queued`` (jobs an ETA waits on that hold nothing yet), those queued *behind* the job (not in
    ``ahead``, the jobs before it in queue order, by id): the plan starts them first because they fit GPUs
    that free before the job has all it needs (backfill) — its ETA says so (newuser27 n12: a #1 job's ETA
    named the #2 job as what it waited for, with no word why)."""
    return [w for w in queued if w not in ahead]


def _backfill_basis(ctx: CycleContext, job: Job, behind: Sequence[str], eta: datetime
                    ) -> dict[str, Any] | None:
    """Why ``behind`` — jobs queued behind ``job`` that its ETA ``eta`` waits on — start before it
    (``details.eta_backfill_basis``), from the replay the ETA comes from (``ctx.replay_around``, filled by
    :func:`..backfill.lookahead.lookahead`) where it replayed them, else the EASY reservation of ``job``'s first
    usable GPU model this cycle (:func:`.pending._reserve`):

    * ``{"ahead": [ids], "beside": [ids] | absent, "elected_from": ISO | absent}`` — the queue's order put these
      ahead of ``job`` when they start (fair share: their user holds or has used less), not backfill: no
      reservation keeps them off, so the ETA may move (``beside``: the others, backfilled beside them); ``elected_from``: when ``job`` goes first (elected) by its promise (newuser35 N7: the
      fair order's jobs were called backfill that "cannot delay this job past 01:28", the ETA 01:54).
    * ``{"latest": ISO}`` — ``job`` holds it: a later job starts first only where, run to its time limit, it
      cannot delay ``job`` past that time (every running job run to its limit), said only where that time is
      not before ``eta`` (the ETA the same line states). The ETA is earlier (expected ends), so the later
      job's end may be the ETA: it is not "before this job's planned start" (newuser31 N6).
    * ``{"unbounded": [ids]}`` — ``job`` holds it, but these holders have no time limit: no start is kept for
      it, and whatever fits the free GPUs starts first (N6: an idle kernel lease held a GPU it needed).
    * ``{"kept_for": id}`` — another job, first in the queue for these GPUs, holds it (EASY keeps one).

    None: none of these (no backfill rules, or a wait on quota rather than GPUs)."""
    flavor = next((f for f in ctx.placer.flavors(job.spec.resources) if f.pools), None)
    res = ctx.reservations.get(flavor.model) if flavor is not None else None
    if res is not None and res.job_id == job.id and res.eta is None and res.unbounded:
        return {"unbounded": list(res.unbounded)}  # no start is kept for it, in whatever order they come
    if ctx.replay_around is not None:
        basis = _replay_basis(ctx, ctx.replay_around, job, behind, eta)
        if basis is not None:
            return basis
    if res is None:
        return None
    if res.job_id != job.id:
        return {"kept_for": res.job_id}
    if res.eta is not None and res.eta >= eta:
        return {"latest": _iso(ctx, res.eta)}
    return {"unbounded": list(res.unbounded)} if res.unbounded else None


def _replay_basis(ctx: CycleContext, around: Mapping[str, tuple[str, float | None]], job: Job,
                  behind: Sequence[str], eta: datetime) -> dict[str, Any] | None:
    """:func:`_backfill_basis` from the replay's record (``around``) of how each of ``behind`` started."""
    ahead = [b for b in behind if b not in around]
    if ahead:
        basis: dict[str, Any] = {"ahead": ahead}
        if len(ahead) < len(behind):  # the others fit beside them, ending by when this job starts then (backfill)
            basis["beside"] = [b for b in behind if b in around]
        due = promise_due(job.reason, ctx.profile.elect_overdue)
        if due is not None and due > ctx.now:
            basis["elected_from"] = _iso(ctx, due)
        return basis
    holders = {around[b][0] for b in behind}
    if holders != {job.id}:
        other = next((h for h in sorted(holders) if h != job.id), None)
        return {"kept_for": other} if other is not None else None
    shadows = [around[b][1] for b in behind]
    if all(s is not None for s in shadows):
        latest = later(ctx.now, max(s for s in shadows if s is not None))
        if latest is not None and latest >= eta:
            return {"latest": _iso(ctx, latest)}
    return None


def _needs_of(ctx: CycleContext, job: Job, waits: tuple[str, ...], *, progress: bool) -> int | None:
    """How many of the running holders ``waits`` must end for ``job`` to fit, when they all end at the same
    projected second and fewer than all of them free its GPUs — the fewest, the largest first (newuser26
    n5: a pending #2 of a uniform batch read "when hist-114, hist-113 and hist-112 end" while one GPU, the
    first of them, is all it needs). None: they end at different times, or it needs them all.

    Worked out once per pass for each (holders, milli-GPUs, progress) (``ctx.needs``, emptied by
    :func:`estimate_all`): the jobs of a queue wait on the same few holders (a 100-node cycle asked
    ~290 times for 44 answers, each reading every holder's end: ~1.5 % of it, session 29)."""
    milli = job.spec.resources.total_milli
    key = (waits, milli, progress)
    if key in ctx.needs:
        return ctx.needs[key]
    ends = [_holder_end(ctx, w, {}, progress=progress) for w in waits]
    count: int | None = None
    if all(math.isfinite(e) for e in ends) and len({round(e) for e in ends}) == 1:
        count = _fewest_freeing(ctx, waits, milli)
        count = count if count is not None and count < len(waits) else None
    ctx.needs[key] = count
    return count


def _fewest_freeing(ctx: CycleContext, waits: tuple[str, ...], milli: int) -> int | None:
    """The fewest of the holders ``waits``, the largest first, whose GPUs together make ``milli``
    milli-GPUs; None when one is unknown or all of them make less."""
    held = []
    for job_id in waits:
        holder = ctx.admitted.get(job_id) or ctx.by_id.get(job_id)
        if holder is None:
            return None
        held.append(released_milli(ctx, job_id, holder.spec.resources.total_milli))  # a lone share: its GPU
    freed = 0
    for count, size in enumerate(sorted(held, reverse=True), start=1):
        freed += size
        if freed >= milli:
            return count
    return None


def _waited(ctx: CycleContext, job_id: str) -> tuple[Job | None, str, bool]:
    """``(job, its public name when that says more than its id — at most 80 characters, a longer one
    cut to 79 and "…" — else "",
    queued: neither admitted this cycle nor holding GPUs)`` for a job an ETA waits on (None: unknown)."""
    other = ctx.admitted.get(job_id)
    waiting = False
    if other is None:
        other = ctx.by_id.get(job_id)
        if other is None:
            return None, "", False
        waiting = not other.state.holds_gpus
    name = public_name(other.spec).strip()
    if len(name) > 80:  # cut with an ellipsis, as the CLI cuts names: not mid-word and silent (new user 25, N9)
        name = name[:79] + "…"
    return other, name if name and name != job_id else "", waiting


_QUOTA_WAITS = frozenset({"ExceedsQuota", "BorrowingLimitReached", "InsufficientQuota", "NoQuota"})
"""Reason codes whose ``details`` carry the quota line's ``used``, ``requested`` and ``quota`` GPUs."""


def _must_release(ctx: CycleContext, reason: PendingReason, waits: tuple[str, ...], job: Job | None = None,
                  capacity: int = 0) -> int | None:
    """The fewest of the holders ``waits`` (no known end) whose release gives a quota-held job room:
    the team is short by ``used + requested - quota`` GPUs and the largest holders go first — a count
    of GPUs, not of whose they are, so it may be said about another user's leases (new user 13, N9: a
    team 1 GPU over its lowered quota, two 1-GPU leases, a 1-GPU job: both, not "one or more of").
    None when the reason is not a quota wait or the named holders cannot free that much together
    (more hold the team's GPUs than are named)."""
    if reason.code not in _QUOTA_WAITS:
        return _must_free(ctx, reason, waits, job, capacity)
    numbers = [reason.details.get(k) for k in ("used", "requested", "quota")]
    if not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        return None
    used, requested, quota = (float(n) for n in numbers)  # type: ignore[arg-type]
    return _fewest_freeing(ctx, waits, round((used + requested - quota) * 1000))


_CAPACITY_WAITS = frozenset({"WaitingForCapacity", "Priority", "Fragmented"})


def _must_free(ctx: CycleContext, reason: PendingReason, waits: tuple[str, ...], job: Job | None,
               capacity: int) -> int | None:
    """On a capacity wait, a lower bound of how many of the running holders ``waits`` (no known end) must go:
    were every other GPU of the job's models (``capacity``) free, the job is still short of what they hold
    beyond that, and the largest go first (s34-n6's note: "one or more of notebook lease l-… and red15a's job
    a-h end" where the job needs both GPUs of two). None (said "one or more of") when one may do, a holder is
    not running, or holds GPUs of another model (what it frees is not the job's)."""
    if job is None or reason.code not in _CAPACITY_WAITS or capacity <= 0:
        return None
    models = {f.model for f in ctx.placer.flavors(job.spec.resources) if f.pools}
    held = 0
    for job_id in waits:
        holder = ctx.admitted.get(job_id) or ctx.by_id.get(job_id)
        if holder is None or (job_id not in ctx.admitted and not holder.state.holds_gpus):
            return None
        if job_id not in ctx.admitted and any(model not in models for _, model in _spots(ctx, holder)):
            return None
        held += released_milli(ctx, job_id, holder.spec.resources.total_milli)  # a lone share: its GPU
    short = job.spec.resources.total_milli - (capacity * 1000 - held)
    return _fewest_freeing(ctx, waits, short) if short > 0 else None


def _agreed(reason: PendingReason, etas: Mapping[str, datetime | None]) -> PendingReason:
    """``reason`` with its backfill clause's reservation time set to the reserved job's own ETA.

    The EASY reservation (:mod:`.pending`) is when the reserved job fits at the latest — running
    jobs ending at their time limits; the ETA projects expected ends. Both said "when X starts",
    in two times on one line (new-user report, session 3). The reason now shows the ETA (the
    latest time stays in ``details.backfill.reservation_latest``); the clause stays true, since a
    job that could not finish before the later time cannot finish before the earlier one either.
    """
    info = reason.details.get("backfill")
    top = info is None or not isinstance(info, Mapping)  # None first: an ABC check per job is slow
    if top:  # "fits now but would delay j-9, which holds the reservation … from T" (code Priority): the
        info = reason.details  # same two times on one line (new user 6 F1: "from 15:25" beside "ETA 15:17")
        if "reserved_for" not in info:
            return reason
    assert isinstance(info, Mapping)
    latest, eta = _parse(info.get("reservation")), etas.get(str(info.get("reserved_for")))
    if latest is None or eta is None or eta >= latest:
        return reason
    message = reason.message.replace(f"from {said_time(latest)}", f"from {said_time(eta)}")  # as said (N6)
    agreed = {**info, "reservation": eta.isoformat(), "reservation_latest": latest.isoformat()}
    details = agreed if top else {**reason.details, "backfill": agreed}
    return replace(reason, message=message, details=details)


def _only_cordoned(ctx: CycleContext, job: Job) -> bool:
    """True when the placeable GPUs of the job's models (cordoned nodes have none) can never hold it:
    too few in all, or too few on any one node for one worker."""
    req = job.spec.resources
    flavors = [f for f in ctx.placer.flavors(req) if f.pools]
    if sum(f.capacity for f in flavors) < req.total_gpus:
        return True
    return not req.fractional and max((f.max_per_node for f in flavors), default=0) < req.gpus


def _capacity(ctx: CycleContext, job: Job) -> int:
    """GPUs of the job's GPU models that pass its filters (a node going away lowers it)."""
    memo = ctx.capacity_memo
    req = job.spec.resources
    found = memo.get(id(req))
    if found is None or found[0] is not req:
        # jobs rarely share request objects, but their shapes share the placer's flavors (one tuple each)
        flavors = ctx.placer.flavors(req)
        summed = ctx.flavors_capacity.get(id(flavors))
        if summed is None or summed[0] is not flavors:
            summed = ctx.flavors_capacity[id(flavors)] = (flavors, sum(f.capacity for f in flavors if f.pools))
        found = memo[id(req)] = (req, summed[1])
    return found[1]


def _moved(ctx: CycleContext, old: datetime | None, eta: datetime | None, capacity: int, basis: Any,
           ahead: Mapping[str, Job], job: Job, reestimates: Mapping[str, Reestimate],
           reported: Mapping[str, float] | None = None, *, was_reported: Any = None,
           codes: tuple[str, str] = ("", ""), elected_ahead: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The move record when the ETA moved by more than the margin from ``old``, the ETA a move is
    measured from (the one last recorded, or first given; None: it had none) (module doc).
    ``reported``: the jobs it waits on whose ends came from their progress reports (``eta_progress``),
    ``was_reported``: those of the last cycle: a move nothing else explains is theirs (cause
    ``progress``, naming each job with its owner: red team 21, R2). ``codes``: the reason's code when the ETA
    was recorded and now: an earlier ETA of a job its spent budget held no longer held by it is the budget's
    (cause ``budget``; newuser26 n8: a raised budget read "running jobs ended … or jobs ahead left the queue").
    ``elected_ahead``: the jobs elected ahead of it now; one of another user's elected since the last cycle
    (its last reason has no ``details["elected"]``) that moved it later is the cause ``elected``, named with
    the rule (s28-elect "Left": it read "the queue ahead changed")."""
    margin = ctx.profile.eta_move_margin_s
    if old is None and eta is None:
        return None
    if old is not None and eta is not None and abs((eta - old).total_seconds()) <= margin:
        return None
    basis = basis if isinstance(basis, Mapping) else {}
    since = _parse(basis.get("since")) or old or ctx.now
    later = old is not None and (eta is None or eta > old)
    cause, jobs = "queue_changed", []
    if later:
        newer = [j for j in ahead.values() if j.submitted_at is not None and j.submitted_at > since
                 and j.spec.priority.rank >= job.spec.priority.rank and j.id != job.id]
        overran = [h for h in basis.get("waits_on", ()) if h in reestimates or _overran(ctx, h)]
        if capacity < int(basis.get("capacity", capacity)):
            cause = "capacity_lost"
        elif overran:
            cause, jobs = "overran", overran
        elif elected := _newly_elected(ctx, job, elected_ahead):
            cause, jobs = "elected", elected
        elif newer:
            higher = [j for j in newer if j.spec.priority.rank > job.spec.priority.rank] or newer
            cause, jobs = "arrival", [j.id for j in sorted(higher, key=lambda j: j.submitted_at or ctx.now)]
        elif ctx.preempts or any(o in ctx.book for o in ahead):
            cause, jobs = "reclaim", sorted({p.for_job for p in ctx.preempts}) or [
                o for o in ahead if o in ctx.book]
    elif old is not None:
        cause = "budget" if codes[0] in _BUDGET_HELD and codes[1] not in _BUDGET_HELD else "earlier"
    before = {str(k): float(v) for k, v in was_reported.items() if isinstance(v, (int, float))} \
        if isinstance(was_reported, Mapping) else {}
    ahead_moved: dict[str, float] = {}
    if (reported or before) and cause in ("earlier", "queue_changed"):  # a report moved the end (issue 16 item 4)
        cause, jobs = "progress", sorted(reported or before)
    elif cause in ("earlier", "queue_changed") and ctx.snap.progress:  # reports moved the work ahead of it
        gone = [h for h in basis.get("waits_on", ()) if (o := ctx.by_id.get(h)) is None or o.state.terminal]
        ahead_moved = {w: r.fraction for w, r in ctx.snap.progress.items() if r.at > since
                       and (o := ctx.by_id.get(w)) is not None and o.state.holds_gpus}
        if ahead_moved and not gone:  # nothing it waited on ended: the reports are what moved it (red team 21, R2)
            cause, jobs = "progress", sorted(ahead_moved)
    texts = {
        "capacity_lost": f"capacity of its GPU models fell from {basis.get('capacity')} to {capacity} GPUs",
        "overran": "; ".join(reestimates[h].message if h in reestimates else f"{h} ran past its time limit"
                             for h in jobs),
        "arrival": "higher-priority " if jobs and ctx.by_id.get(jobs[0]) is not None
        and ctx.by_id[jobs[0]].spec.priority.rank > job.spec.priority.rank else "",
        "reclaim": f"a reclaim for {', '.join(jobs)} took GPUs first",
        "elected": _elected_text(ctx, job, jobs) if cause == "elected" else "",
        "earlier": "running jobs ended before their limits or jobs ahead left the queue",
        "budget": "the spent budget that held it no longer does (the budget was raised)",
        "queue_changed": "the queue ahead changed",
        "progress": "; ".join(f"{_whose(ctx, job, w)}{w} is projected to end from its progress "
                              f"({done_text(reported[w])})" if reported and w in reported else
                              f"{_whose(ctx, job, w)}{w}'s progress ({done_text(before[w])}) no longer projects its end"
                              if w in before else
                              f"{_whose(ctx, job, w)}{w}'s progress report ({done_text(ahead_moved[w])}) moved the "
                              f"work ahead" for w in jobs[:3]) if cause == "progress" else "",
    }
    if cause == "arrival":
        first = ctx.by_id.get(jobs[0])
        at = clock_text(first.submitted_at, None, seconds=True) if first is not None and first.submitted_at else "?"
        texts["arrival"] += f"{jobs[0]} submitted at {at}" + (f" (and {len(jobs) - 1} more)" if len(jobs) > 1 else "")
    frm = old.isoformat() if old else "unknown"
    to = eta.isoformat() if eta else "unknown"
    said_from, said_to = moved_text(old, eta)  # the clock as every surface says it (hubadmin23 A15)
    return {"from": frm, "to": to, "cause": cause, "jobs": jobs[:5],
            "message": f"ETA moved {said_from} → {said_to}: {texts[cause]}"}


def _newly_elected(ctx: CycleContext, job: Job, elected_ahead: tuple[str, ...]) -> list[str]:
    """Of the jobs elected ahead of ``job`` now, those of other users elected since the last cycle — their
    reason of then has no ``details["elected"]`` (:func:`.pending._elected`) — in queue order."""
    return [e for e in elected_ahead if (o := ctx.by_id.get(e)) is not None and o.spec.user != job.spec.user
            and (o.reason is None or "elected" not in o.reason.details)]


def _elected_text(ctx: CycleContext, job: Job, elected: Sequence[str]) -> str:
    """``ana's job a-big (j-…) waited past 0.75 x the wait promised when it was queued, so it was elected to
    go first in its class (c.SchedApp.elect_overdue)``; ``… a-big (j-…) and 2 more waited past … so they were
    elected …`` for several (the first in queue order named)."""
    first = ctx.by_id.get(elected[0]) if elected else None
    if first is None:
        return "a job that waited past its promised wait was elected ahead of it (c.SchedApp.elect_overdue)"
    name = first.spec.name.strip()[:80]
    named = f"{name} ({first.id})" if name and name != first.id else first.id
    factor = f"{ctx.profile.elect_overdue:g}"
    if len(elected) > 1:
        return (f"{_whose(ctx, job, first.id)}{named} and {len(elected) - 1} more waited past {factor} x the waits "
                "promised when they were queued, so they were elected to go first in their class "
                "(c.SchedApp.elect_overdue)")
    return (f"{_whose(ctx, job, first.id)}{named} waited past {factor} x the wait promised when it was queued, so it "
            "was elected to go first in its class (c.SchedApp.elect_overdue)")


_BUDGET_HELD = frozenset({BUDGET_EXHAUSTED, BUDGET_UNBOUNDED})
"""Reason codes of a job its team's spent budget holds (until the period resets, or for good)."""


def _whose(ctx: CycleContext, job: Job, holder: str) -> str:
    """``"bob's job "`` for another user's job ``holder`` (whose reports moved ``job``'s ETA: an admin
    reading the audit log sees whose they are: red team 21, R2), ``""`` for the owner's own."""
    other = ctx.by_id.get(holder)
    return f"{other.spec.user}'s job " if other is not None and other.spec.user != job.spec.user else ""


def _progress_of(ctx: CycleContext, waits: Sequence[str]) -> tuple[dict[str, float], dict[str, dict[str, Any]],
                                                                    dict[str, dict[str, Any]]]:
    """What the progress reports of the running jobs of ``waits`` say of their ends
    (:func:`.runtimes.progress_reading`, as :func:`_holder_end` reads it): ``({job id: fraction done}``
    of those whose end came from their report, ``{job id: {fraction, needs_s, limit_s}}`` of those whose
    time limit stops them before their rate ends them (new user 21, N7: the ETA is the limit's, not the
    progress's), ``{job id: {fraction, lapse, said, at}}`` of those whose report projects no end now —
    ``lapse`` ``"late"`` (the end it said, ``said``, passed) or ``"stale"`` (no report since ``at``): their
    limit or learnt end is read again (new user 21, N4))."""
    reported: dict[str, float] = {}
    capped: dict[str, dict[str, Any]] = {}
    lapsed: dict[str, dict[str, Any]] = {}
    for holder in waits:
        job = ctx.by_id.get(holder)
        if job is None or holder in ctx.admitted or not job.state.holds_gpus:
            continue
        found = progress_reading(ctx, job, job.started_at or job.admitted_at or ctx.now)
        if found is None:
            continue
        reading, fraction = found
        if reading.lapse:
            at = ctx.snap.progress[holder].at if ctx.snap.progress and holder in ctx.snap.progress else None
            lapsed[holder] = {"fraction": round(fraction, 4), "lapse": reading.lapse,
                              "said": reading.said.isoformat(), "at": at.isoformat() if at else None}
        elif reading.from_progress:
            reported[holder] = round(fraction, 4)
        elif reading.limit_s is not None:
            capped[holder] = {"fraction": round(fraction, 4), "needs_s": round(reading.total_s, 1),
                              "limit_s": reading.limit_s, "at": _report_times(ctx, (holder,)).get(holder)}
    return reported, capped, lapsed


def _report_times(ctx: CycleContext, jobs: Iterable[str]) -> dict[str, Any]:
    """``{job id: ISO time of the progress report this cycle read}`` (``details.eta_progress_at``; a
    capped row's ``at``): the waiter's words name the report they came from, since the blocker's own
    line shows its latest, which may be newer than the cycle's (new user 22, N10: "30 % done" beside
    "40 % done" in one queue). Reports are not a reason to run a cycle (red team 21, R5)."""
    reports = ctx.snap.progress or {}
    return {w: reports[w].at.isoformat() for w in jobs if w in reports}


def _ends_by_learning(ctx: CycleContext, holder: str) -> bool:
    """Is ``holder`` (running, or queued ahead and reserved in the projection) expected to end
    before its time limit because of a learned runtime? A queued job's projected end is learned
    too: "when small1 ends" at the minute small1 starts reads as a contradiction unless the ETA
    says the end is what small1's own past runs took (new user 5 finding 4)."""
    if holder not in ctx.snap.runtime_estimates or ctx.profile.eta_source != "history":
        return False  # nothing learned for it: it ends at its limit (:func:`.runtimes.expected_runtime`)
    job = ctx.admitted.get(holder) or ctx.by_id.get(holder)
    if job is None or job.state.terminal:
        return False
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    return expected_runtime(ctx, job) < (math.inf if limit is None else limit)


def _other_runs_share(ctx: CycleContext, holder: str) -> float | None:
    """The share of its time limit ``holder`` is expected to run, when that guess came from its
    owner's runs of other programs (``Snapshot.runtime_sources``); None: from similar past runs."""
    if ctx.snap.runtime_sources.get(holder, SAME_RUNS) == SAME_RUNS:
        return None
    job = ctx.admitted.get(holder) or ctx.by_id.get(holder)
    if job is None:
        return None
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    return round(expected_runtime(ctx, job) / limit, 4) if limit else None


def _overran(ctx: CycleContext, holder: str) -> bool:
    """Is ``holder`` still running past its (effective) time limit?"""
    job = ctx.by_id.get(holder)
    if job is None or not job.state.holds_gpus:
        return False
    limit, _ = effective_limit(job.spec, ctx.profile.time_limits)
    start = job.started_at or job.admitted_at
    return limit is not None and start is not None and (ctx.now - start).total_seconds() > limit


def _budget_period(ctx: CycleContext, job: Job) -> str | None:
    """The period of the shortest GPU-hour budget (above 0) a GPU ``job`` is charged to; None: none."""
    spec = job.spec
    if not spec.resources.total_milli:
        return None
    found = [b.period for b in ctx.snap.quotas.budgets
             if b.team == spec.team and b.user in (None, spec.user) and b.gpu_hours > 0]
    return min(found, key=lambda p: PERIODS.index(p) if p in PERIODS else len(PERIODS)) if found else None


def _iso(ctx: CycleContext, at: datetime) -> str:
    """``at.isoformat()``, said once per cycle per instant (``ctx.iso_times``): a pass's ETAs are a few
    instants (:meth:`Plan.estimate` shares each one's object), and each new job's first ETA is written
    out (``eta_basis.recorded_eta``) — ~2 % of a 100-node cycle said anew per job (session 29). Only
    instants in the cycle's own zone are kept: equal instants of two zones are one key but two texts."""
    if at.tzinfo is not ctx.now.tzinfo:
        return at.isoformat()
    said = ctx.iso_times.get(at)
    if said is None:
        said = ctx.iso_times[at] = at.isoformat()
    return said


def _parse(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(text) if isinstance(text, str) else None
    except ValueError:
        return None
