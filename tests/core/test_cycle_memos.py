"""The cycle's per-context memos decide nothing themselves (issue 17, session 17): over random share
layouts (hypothesis), a cycle run with them gives the same decisions and reasons, word for word, as
one that works every memoised value out afresh each time it is read.

Memos checked:

* :func:`~jupyter_sched.scheduling.preempt.candidates.held_away` — kept by the quota ledger
  (:class:`~jupyter_sched.quota.held_whole.HeldAway`) per
  :attr:`~jupyter_sched.placement.state.ClusterState.share_version` (what shares hold) rather than
  per ledger version (which every admission moves), redone for the GPUs whose shares changed;
  Its per-GPU rests (:meth:`~jupyter_sched.quota.held_whole.HeldAway.rests`, which the ETA projection frees
  as the last share on each GPU ends) are part of it: the direct run works them out too
  (:func:`~jupyter_sched.scheduling.preempt.candidates.held_rests_now`; session 41, CI on 45262b24);
* :meth:`~jupyter_sched.scheduling.context.CycleContext.shares_now` — reads ``fresh_shares``, the
  cycle's admissions of GPU shares kept in step with ``fresh``, not every admission;
* :func:`~jupyter_sched.scheduling.admit.shares_note` — its clause per flavor and share version;
* :func:`~jupyter_sched.scheduling.pending._cannot_backfill` — the clause a job behind an EASY
  reservation gets, per reservation, time limit and owner (``backfill_clauses``; issue 16, session 19);
* :meth:`~jupyter_sched.backfill.projection.SharedGpu.earliest` — a share's start on a shared GPU
  of the ETA projection, ruled out by the most that GPU has free while held (``room``) and kept per
  size, duration and start (``starts``) until the next share is reserved on it.

The direct computation is a :class:`CycleContext` whose memo slot never keeps a value and whose
``shares_now`` walks every admission (the definition the memo must equal), run through the same
:func:`~jupyter_sched.scheduling.cycle.run_on`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sched.backfill.projection import Demand, Option, SharedGpu
from jupyter_sched.backfill.timeline import Timeline
from jupyter_sched.model import GPU_MILLI, Job, Quota, QuotaSet
from jupyter_sched.placement.state import Holding
from jupyter_sched.quota.held_whole import HeldAway, LineKey
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, Snapshot, run_cycle
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.cycle import run_on
from jupyter_sched.scheduling.preempt.candidates import held_away, held_away_now, held_rests_now

TEAMS = ("a", "b", "c")


class DirectHeldAway(HeldAway):
    """What the quota ledger's shares hold away, worked out from scratch at every read (:func:`held_away_now`)."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: CycleContext) -> None:
        super().__init__(ctx.state, ctx.share_holder_set, ctx.fresh_shares, ctx.quota.charges, ctx.quota.team_version)
        self.ctx = ctx

    def sync(self) -> dict[LineKey, int]:
        # what it keeps per GPU too (.rests, which the ETA projection frees share by share: session 41)
        self.on = held_rests_now(self.ctx)
        away = held_away_now(self.ctx)
        for team in {k[0] for k in away.keys() | self.away.keys() if away.get(k) != self.away.get(k)}:
            assert self.versions is not None  # a team's fair share is read again when what it holds away changes
            self.versions[team] = self.versions.get(team, 0) + 1
        self.away = away
        self.version = -1  # never in step: the next read (a quota check's too) works it out again
        return self.away


class DirectContext(CycleContext):
    """A cycle context that memoises nothing :func:`held_away` reads: every read works it out again."""

    def __init__(self, snapshot: Snapshot, profile: SchedulingProfile) -> None:
        super().__init__(snapshot, profile)
        if self.quota.held is not None:
            self.quota.held = DirectHeldAway(self)

    @property  # type: ignore[override]
    def shares_notes(self) -> dict[object, object]:
        return {}  # a new one on every read: .admit.shares_note works the note out each time

    @shares_notes.setter
    def shares_notes(self, value: object) -> None:
        pass

    @property  # type: ignore[override]
    def said_times(self) -> dict[object, object]:
        return {}

    @said_times.setter
    def said_times(self, value: object) -> None:
        pass

    @property  # type: ignore[override]
    def backfill_clauses(self) -> dict[object, object]:
        return {}  # .pending._cannot_backfill works each job's clause out afresh (issue 16, session 19)

    @backfill_clauses.setter
    def backfill_clauses(self, value: object) -> None:
        pass

    def shares_now(self) -> Iterator[tuple[str, Holding]]:
        return _all_shares(self)


def _all_shares(ctx: CycleContext) -> Iterator[tuple[str, Holding]]:
    """:meth:`CycleContext.shares_now` by its definition: the shares held at cycle start, then every admission."""
    holdings = ctx.state.holdings
    for job_id in ctx.share_holders:
        if (held := holdings.get(job_id)) is not None:
            yield job_id, held
    for job_id, placement in ctx.fresh.items():  # every admission of this cycle, in order
        if placement.allocation.gpu_milli < GPU_MILLI and (held := holdings.get(job_id)) is not None:
            yield job_id, held


_STARTED = st.sampled_from([1.0, 30.0])  # minutes ago
_SHARE = st.tuples(st.sampled_from([100, 250, 500]), st.sampled_from(TEAMS), st.sampled_from(["u1", "u2"]),
                   st.sampled_from(["normal", "low"]), _STARTED)
_WHOLE = st.tuples(st.sampled_from(TEAMS), st.sampled_from(["normal", "low"]), _STARTED)
_PENDING = st.tuples(st.sampled_from([1000, 1000, 500, 250, 100]), st.integers(1, 3), st.sampled_from(TEAMS),
                     st.sampled_from(["u1", "u2", "u3"]), st.sampled_from(["high", "normal", "low"]),
                     st.sampled_from([None, 600.0]))


Whole = tuple[str, str, float]
"""A whole-GPU job running: team, priority class, minutes since it started."""
Share = tuple[int, str, str, str, float]
"""A share running: milli-GPUs, team, user, priority class, minutes since it started."""


_GPU: st.SearchStrategy[tuple[Whole | None, list[Share]]] = st.one_of(
    st.just((None, [])), st.just((None, [])), st.tuples(_WHOLE, st.just([])),
    *[st.tuples(st.none(), st.lists(_SHARE, min_size=1, max_size=3))] * 2)
"""What one GPU holds: nothing, one whole-GPU job, or one to three shares (a free GPU shrinks simplest)."""


@st.composite
def share_worlds(draw: st.DrawFn) -> Snapshot:
    """Nodes whose GPUs hold shares of one or several teams, some whole-GPU work, team quotas, and a
    queue mixing shares and whole GPUs (the layouts of red team 15 R5: shares spread one per GPU).

    Nodes, GPUs, shares and the queue are drawn as lists (not a count, then that many draws): a failing
    world shrinks by dropping any of them, not only the last — CI on 45262b24 spent 190 s shrinking one."""
    a_node = st.tuples(st.sampled_from(["A100-80GB", "H100-80GB"]), st.lists(_GPU, min_size=1, max_size=6))
    layout = draw(st.lists(a_node, min_size=1, max_size=3))
    nodes = [make_node(f"n{i}", gpus=len(gpus), model=model) for i, (model, gpus) in enumerate(layout)]
    jobs: list[Job] = []
    for node, (_, gpus) in zip(nodes, layout, strict=True):
        for g, (whole, shares) in enumerate(gpus):
            if whole is not None:
                team, priority, started = whole
                jobs.append(running(make_job(f"w-{node.name}-{g}", team=team, user="u1", priority=priority),
                                    node.name, [g], started=-started))
            left = GPU_MILLI
            for s, (milli, team, user, priority, started) in enumerate(shares):
                if milli > left:
                    break
                left -= milli
                job = make_job(f"s-{node.name}-{g}-{s}", milli=milli, team=team, user=user, priority=priority)
                jobs.append(running(job, node.name, [g], milli=milli, started=-started))
    total = sum(len(n.gpus) for n in nodes)
    lines, left = [], total
    for team in TEAMS:
        g = draw(st.integers(0, max(0, left)))
        left -= g
        lines.append(Quota(team=team, guaranteed=g, borrowing_limit=draw(st.one_of(st.none(), st.integers(0, 3)))))
    for k, (milli, gpus, team, user, priority, limit) in enumerate(draw(st.lists(_PENDING, min_size=1, max_size=12))):
        jobs.append(make_job(f"p{k}", gpus=1 if milli < 1000 else gpus, milli=milli, team=team, user=user,
                             priority=priority, submitted=k, time_limit_s=limit))
    return snapshot(nodes, jobs, quota=QuotaSet(quotas=tuple(lines)), now=T0 + timedelta(minutes=1))


PROFILES = [SchedulingProfile(min_runtime_s=0), SchedulingProfile(gpu_sharing="team", min_runtime_s=0),
            SchedulingProfile(), SchedulingProfile(gpu_sharing="none", borrow_within_cohort="normal", min_runtime_s=0)]


def _said(result: CycleResult) -> tuple[object, ...]:
    """Everything a cycle decided and said (reasons, ETAs, audit details included)."""
    return (result.admits, result.preemptions, result.pending, result.rejects, result.nominations, result.audit)


@settings(max_examples=int(os.environ.get("JS_PROPERTY_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(share_worlds(), st.sampled_from(PROFILES))
def test_memoised_cycle_decides_and_says_what_the_direct_one_does(snap: Snapshot, profile: SchedulingProfile) -> None:
    memoised = run_cycle(snap, profile)
    direct = run_on(DirectContext(snap, profile))
    assert _said(memoised) == _said(direct)


@settings(max_examples=int(os.environ.get("JS_PROPERTY_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(share_worlds(), st.sampled_from(PROFILES), st.data())
def test_held_away_memo_follows_admissions_evictions_and_undone_trials(snap: Snapshot, profile: SchedulingProfile,
                                                                     data: st.DataObject) -> None:
    # the cycle's own admissions and evictions, then trials undone, each followed by a read of both
    ctx = CycleContext(snap, profile)
    assert held_away(ctx) == held_away_now(ctx)
    run_on(ctx)
    assert held_away(ctx) == held_away_now(ctx)
    assert ctx.quota.held is None or dict(ctx.quota.held.rests()) == held_rests_now(ctx)  # per GPU too (session 41)
    assert list(ctx.shares_now()) == list(_all_shares(ctx))
    holders = sorted(ctx.state.holdings)
    for job_id in data.draw(st.lists(st.sampled_from(holders), max_size=4, unique=True) if holders else st.just([])):
        with ctx.ledger.what_if():
            ctx.ledger.evict(job_id)
            assert held_away(ctx) == held_away_now(ctx)
            assert ctx.quota.held is None or dict(ctx.quota.held.rests()) == held_rests_now(ctx)
        assert held_away(ctx) == held_away_now(ctx)
        assert ctx.quota.held is None or dict(ctx.quota.held.rests()) == held_rests_now(ctx)


def _team_c_at_its_line() -> Snapshot:
    """CI on 45262b24 (session 41): three one-GPU nodes; a 0.1 share of team a runs on n2; nine high jobs
    pending, p1 (600 s limit) and p8 (no limit) 0.5 shares of team c, guaranteed 0 and borrowing at most 1."""
    nodes = [make_node(f"n{i}", gpus=1) for i in range(3)]
    jobs = [running(make_job("s-n2-0-0", milli=100, team="a", user="u1"), "n2", [0], milli=100, started=-1.0)]
    for k, (team, milli, limit) in enumerate([("a", 1000, None), ("c", 500, 600.0), *[("a", 1000, None)] * 3,
                                              *[("a", 500, None)] * 3, ("c", 500, None)]):
        jobs.append(make_job(f"p{k}", milli=milli, team=team, user="u1", priority="high", submitted=k,
                             time_limit_s=limit))
    lines = (Quota(team="a", guaranteed=0), Quota(team="b", guaranteed=0),
             Quota(team="c", guaranteed=0, borrowing_limit=1))
    return snapshot(nodes, jobs, quota=QuotaSet(quotas=lines), now=T0 + timedelta(minutes=1))


def test_s41_memo_a_share_at_its_lines_limit_waits_for_its_own_teams_share_to_end() -> None:
    # p1 (c's 0.5) is admitted to n0 and holds it whole for c (its 0.5 rest, red team 38 R3): c is at its
    # limit of 1 and p8, another 0.5 of c that would take a GPU of its own, waits. When p1 ends at its limit
    # (12:11) c holds nothing and p8 takes n0: first in the queue (c holds less than a), ETA 12:11 waiting on
    # p1; p2 and the rest wait on p8. The direct run once said p8 waits on nothing a job's end changes
    # (NotGpuBound) and gave p2 that 12:11: its held-away kept no per-GPU rests (HeldAway.rests, which the
    # ETA projection frees as the last share on each GPU ends), so p1's rest was never freed.
    snap = _team_c_at_its_line()
    profile = SchedulingProfile(gpu_sharing="none", borrow_within_cohort="normal", min_runtime_s=0)
    memoised = run_cycle(snap, profile)
    direct = run_on(DirectContext(snap, profile))
    for result in (memoised, direct):
        assert [a.job_id for a in result.admits] == ["p1", "p0"]
        said = {p.job_id: p.reason for p in result.pending}
        p8 = said["p8"]
        assert (p8.code, p8.position, p8.eta) == ("BorrowingLimitReached", 1, T0 + timedelta(minutes=11)), p8
        assert (p8.details["eta_code"], p8.details["eta_waits_on"]) == ("Projected", ["p1"]), p8.details
        assert (said["p2"].position, said["p2"].eta, said["p2"].details["eta_waits_on"][0]) == (2, None, "p8")
    assert _said(memoised) == _said(direct)


def test_held_away_is_read_from_the_memo_while_only_whole_gpus_change() -> None:
    # teamb's tenths spread one per GPU over GPUs 0-2; teama's whole-GPU admissions on GPUs 3-5 leave
    # the shares alone: share_version stays, held_away is the one worked out first
    tenths = [running(make_job(f"b{g}", milli=100, team="b", user="bob"), "n1", [g], milli=100) for g in range(3)]
    whole = [make_job(f"a{i}", team="a", user="ann", submitted=i) for i in range(3)]
    snap = snapshot([make_node(gpus=6)], [*tenths, *whole],
                    quota=QuotaSet(quotas=(Quota(team="a", guaranteed=3), Quota(team="b", guaranteed=1))))
    ctx = CycleContext(snap, SchedulingProfile())
    first = held_away(ctx)
    assert [k[0] for k in first] == ["b"] and sum(first.values()) == 2700, first  # 3 x 0.9 free beside the tenths
    before = (ctx.state.version, ctx.state.share_version)
    result = run_on(ctx)
    assert len(result.admits) == 3
    assert ctx.state.version > before[0] and ctx.state.share_version == before[1]
    assert held_away(ctx) is first and held_away_now(ctx) == first
    # a new tenth of teamb moves share_version and the memo with it
    ctx.state.take("b-new", Holding(gpus=((0, 100),), node=0))
    assert ctx.state.share_version > before[1]
    assert held_away(ctx) == held_away_now(ctx) != first


def test_shares_now_reads_this_cycles_share_admissions_only() -> None:
    # every admission of a share is in fresh_shares, in admission order, and only those
    jobs = [make_job(f"f{i}", milli=250, team="a", user="ann", submitted=i) for i in range(3)]
    jobs += [make_job("w", team="a", user="ann", submitted=5)]
    ctx = CycleContext(snapshot([make_node(gpus=2)], jobs), SchedulingProfile())
    run_on(ctx)
    assert list(ctx.fresh_shares) == ["f0", "f1", "f2"]
    assert [j for j, _ in ctx.shares_now()] == [j for j, _ in _all_shares(ctx)] == ["f0", "f1", "f2"]
    ctx.ledger.evict("f1")
    assert [j for j, _ in ctx.shares_now()] == ["f0", "f2"]


def _direct_earliest(gpu: SharedGpu, demand: Demand, after: float, unit: Timeline) -> float | None:
    """:meth:`SharedGpu.earliest` by its definition, nothing remembered (as before issue 17)."""
    if demand.group != gpu.group or gpu.peak < demand.share:
        return None
    t = gpu.free.earliest(demand.share, demand.duration, max(after, gpu.start))
    if t is None or t >= gpu.end:
        return None
    end = t + demand.duration
    if end > gpu.end and unit.earliest(1, end - gpu.end, gpu.end) != gpu.end:
        return None
    return t


_TIMES = st.sampled_from([0.0, 60.0, 600.0, 1800.0, 3600.0])
_DURATIONS = st.sampled_from([60.0, 600.0, 3600.0, 7200.0, math.inf])


@settings(max_examples=int(os.environ.get("JS_PROPERTY_EXAMPLES", "120")), deadline=None)
@given(st.data())
def test_shared_gpu_start_memo_follows_reservations(data: st.DataObject) -> None:
    # one shared GPU (a running share or a reserved one) and its unit; shares of random sizes and
    # durations asked, some of them reserved, in any order: the memoised start is the direct one
    start = data.draw(_TIMES)
    end = start + data.draw(_DURATIONS)
    held = data.draw(st.lists(st.tuples(_TIMES, st.sampled_from([100, 250, 500])), max_size=3))
    free = Timeline(1000 - data.draw(st.sampled_from([0, 250, 500, 900])), [(t + 60.0, m) for t, m in held])
    gpu = SharedGpu("*", start, end, free)
    unit = Timeline(data.draw(st.integers(0, 3)), [(t, 1) for t in data.draw(st.lists(_TIMES, max_size=3))])
    twin = gpu.copy()
    for k in range(data.draw(st.integers(1, 12))):
        demand = Demand(job_id=f"s{k}", workers=(1,), milli=0, duration=data.draw(_DURATIONS),
                        after=0.0, options=(Option(flavor="A100-80GB", units=(0,)),),
                        share=data.draw(st.sampled_from([100, 250, 500, 750])), group="*")
        after = data.draw(_TIMES)
        want = _direct_earliest(gpu, demand, after, unit)
        assert gpu.earliest(demand, after, unit) == want
        assert twin.earliest(demand, after, unit) == want  # a copy remembers nothing wrong either
        if want is not None and data.draw(st.booleans()):
            twin_unit = Timeline(0)
            twin_unit.ts, twin_unit.free = list(unit.ts), list(unit.free)
            gpu.take(demand, want, unit)
            twin.take(demand, want, twin_unit)
            assert gpu.earliest(demand, after, unit) == _direct_earliest(gpu, demand, after, unit)


def test_a_share_reserved_past_a_shared_gpus_end_gives_it_room_later() -> None:
    # 0.9 GPU held until 10 min; a 0.1 share for an hour keeps the GPU held until then, with 0.9 free
    # from 10 min: a 0.5 share fits there at 10 min (what it had free before no longer bounds it)
    gpu = SharedGpu("*", 0.0, 600.0, Timeline(100, [(600.0, 900)]))
    unit = Timeline(1)
    option = (Option(flavor="A100-80GB", units=(0,)),)
    tenth = Demand(job_id="t", workers=(1,), milli=100, duration=3600.0, after=0.0, options=option, share=100)
    half = Demand(job_id="h", workers=(1,), milli=500, duration=600.0, after=0.0, options=option, share=500)
    assert gpu.earliest(half, 0.0, unit) is None  # 0.1 free until it is let go at 10 min
    assert gpu.earliest(tenth, 0.0, unit) == 0.0
    gpu.take(tenth, 0.0, unit)
    assert gpu.end == 3600.0
    assert gpu.earliest(half, 0.0, unit) == _direct_earliest(gpu, half, 0.0, unit) == 600.0
