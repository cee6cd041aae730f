"""A pend decided on the live ledger equals what a full cycle would decide (issue 17).

:class:`~jupyter_sched.scheduling.live.LiveCycle` keeps its context after pending a new job only
when a full cycle would visit that job last (:mod:`jupyter_sched.scheduling.tail`). These tests
check the claim against the core itself, on random worlds (hypothesis) and on named cases: for
every kept pend, a full cycle run at the same time on the same state (the first cycle's decisions
applied, the new jobs added) pends the new job last, with the same reason — code, message,
unblock, details and position; only its ETA is left to that cycle (provisional) — and decides
every other job exactly as the same cycle without the new job does — ETAs included where the
cycle projects them in one pass in queue order; where it replays them forward (short queues), a
job behind may start first in the replay and move an ETA ahead of it, which the live cycle says
(``etas_moved``: the engine then runs a full cycle for the ETAs). A pend anywhere else spends
the context (a full cycle decides it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from jupyter_sched.model import (
    GPU,
    Allocation,
    Inventory,
    Job,
    JobSpec,
    JobState,
    Node,
    PendingReason,
    PriorityClass,
    Quota,
    QuotaSet,
    ResourceRequest,
)
from jupyter_sched.queues.order import PROMISE
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, Snapshot, apply_result, eta, run_cycle
from jupyter_sched.scheduling.live import PROVISIONAL_ETA, LiveCycle
from jupyter_sched.scheduling.snapshot import UsageHistory

T0 = datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
USERS = ("u1", "u2", "u3")
TEAMS = ("a", "b")


def node(name: str, gpus: int) -> Node:
    return Node(name=name, gpus=tuple(GPU(uuid=f"GPU-{name}-{i}", index=i, node=name, model="A100-80GB",
                                          memory_mib=81920) for i in range(gpus)))


def job(job_id: str, *, gpus: int = 1, team: str = "a", user: str = "u1", priority: str = "normal",
        minute: float = 0.0, limit: float | None = None) -> Job:
    spec = JobSpec(name=job_id, user=user, team=team, priority=PriorityClass(priority),
                   resources=ResourceRequest(gpus=gpus), time_limit_s=limit, command=("python", "x.py"))
    return Job(id=job_id, spec=spec, submitted_at=T0 + timedelta(minutes=minute))


def holding(j: Job, node_name: str, first: int) -> Job:
    at = T0 - timedelta(minutes=30)
    return replace(j, state=JobState.RUNNING, admitted_at=at, started_at=at, attempts=1,
                   allocation=Allocation(node=node_name, gpu_uuids=tuple(
                       f"GPU-{node_name}-{first + i}" for i in range(j.spec.resources.gpus))))


@contextmanager
def etas_replayed(replay: bool) -> Iterator[None]:
    """Cycles replay ETAs forward (the core's bound keeps tiny queues there) or project them in one pass."""
    bound = eta.LOOKAHEAD_WORK
    eta.LOOKAHEAD_WORK = bound if replay else -1
    try:
        yield
    finally:
        eta.LOOKAHEAD_WORK = bound


def without_eta(reason: PendingReason, *, position: bool = True) -> dict[str, Any]:
    """Everything of a reason a live pend gives exactly (its ETA — and the promise, its first ETA
    (queues.order.PROMISE) — are the next full cycle's; so is its position where ETAs are replayed, ``position``
    False: positions follow the replay's order when GPUs next free, newuser38 N2)."""
    return {"code": reason.code, "message": reason.message, "unblock": reason.unblock,
            "position": reason.position if position else None,
            "per_flavor": reason.per_flavor,
            "details": {k: v for k, v in reason.details.items() if not k.startswith("eta") and k != PROMISE}}


def decisions(result: CycleResult, skip: frozenset[str] = frozenset(), *, etas: bool = True) -> dict[str, Any]:
    """A cycle's decisions for every job but ``skip``, reasons whole (positions included; ETAs
    unless ``etas`` is False)."""
    return {"admits": sorted(a.job_id for a in result.admits if a.job_id not in skip),
            "preempts": sorted((p.job_id, p.for_job) for p in result.preemptions),
            "rejects": sorted(r.job_id for r in result.rejects if r.job_id not in skip),
            "pending": {p.job_id: p.reason if etas else without_eta(p.reason, position=False)
                        for p in result.pending if p.job_id not in skip}}


def differences(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """``{job: {field: (mine, theirs)}}`` for the reasons that differ (the assertion's message)."""
    def fields(reason: Any) -> dict[str, Any]:
        data = reason if isinstance(reason, dict) else {f: getattr(reason, f) for f in PendingReason.__slots__}
        return {**{k: v for k, v in data.items() if k != "details"}, **dict(data.get("details", {}))}
    out = {}
    for job_id in mine.keys() | theirs.keys():
        a, b = fields(mine.get(job_id, {})), fields(theirs.get(job_id, {}))
        out[job_id] = {k: (a.get(k), b.get(k)) for k in a.keys() | b.keys() if a.get(k) != b.get(k)}
    return {k: v for k, v in out.items() if v}


@st.composite
def worlds(draw: st.DrawFn) -> tuple[Snapshot, SchedulingProfile, list[Job]]:
    nodes = [node(f"n{i}", draw(st.integers(1, 4))) for i in range(draw(st.integers(1, 2)))]
    jobs: list[Job] = []
    for n in nodes:  # some GPUs held by running jobs
        held = draw(st.sampled_from([len(n.gpus)] * 3 + list(range(len(n.gpus)))))  # mostly full: new jobs pend
        if held:
            jobs.append(holding(job(f"r-{n.name}", gpus=held, team=draw(st.sampled_from(TEAMS)),
                                    user=draw(st.sampled_from(USERS)), limit=draw(st.sampled_from([None, 3600.0]))),
                                n.name, 0))
    for k in range(draw(st.integers(0, 8))):
        jobs.append(job(f"p{k}", gpus=draw(st.integers(1, 3)), team=draw(st.sampled_from(TEAMS)),
                        user=draw(st.sampled_from(USERS)), priority=draw(st.sampled_from(["high", "normal", "low"])),
                        minute=k - 20, limit=draw(st.sampled_from([None, 600.0, 7200.0]))))
    quota = QuotaSet()
    if draw(st.booleans()):
        quota = QuotaSet(quotas=tuple(Quota(team=t, guaranteed=draw(st.integers(0, 3)),
                                            borrowing_limit=draw(st.sampled_from([None, 0, 2]))) for t in TEAMS))
    usage = UsageHistory(decayed_gpu_seconds_by_user={u: float(draw(st.sampled_from([0, 3600, 7200])))
                                                      for u in USERS})
    snap = Snapshot(now=T0, inventory=Inventory(nodes=tuple(nodes)), jobs=tuple(jobs), quotas=quota, usage=usage)
    profile = SchedulingProfile(queue_sort=draw(st.sampled_from(["fair", "fair-usage", "fifo"])),
                                eta_source=draw(st.sampled_from(["limits", "history"])))
    arrivals = [job(f"new{k}", gpus=draw(st.integers(1, 3)), team=draw(st.sampled_from(TEAMS)),
                    user=draw(st.sampled_from(USERS)), priority=draw(st.sampled_from(["high", "normal", "low"])),
                    minute=k - 5, limit=draw(st.sampled_from([None, 600.0, 7200.0])))
                for k in range(draw(st.integers(1, 3)))]
    return snap, profile, arrivals


def check_kept_pends(snap: Snapshot, profile: SchedulingProfile, arrivals: list[Job], *, replay: bool = False) -> int:
    """:func:`_check_kept_pends` with ETAs replayed forward or projected in one pass."""
    with etas_replayed(replay):
        return _check_kept_pends(snap, profile, arrivals, replay)


def _check_kept_pends(snap: Snapshot, profile: SchedulingProfile, arrivals: list[Job], replay: bool) -> int:
    """Decide ``arrivals`` on a live cycle of ``snap``; check each kept pend against full cycles.
    Returns how many pends were kept (-1: a full cycle on the first one's decisions decides
    something new by itself, so the live ledger's premise does not hold for this world)."""
    live = LiveCycle(snap, profile)
    after = apply_result(snap, live.result)  # the first cycle's decisions, as the store then holds them
    # at the cycle's own time: what moves with time (a running job's end passing, a gate opening) is
    # re-read by the next full cycle, at most cycle_interval_s later; this checks the order and the ledger
    now = T0
    base = run_cycle(replace(after, now=now), profile)
    # the hypothesis of the live ledger: a full cycle now, with nothing new, decides nothing new
    if base.admits or base.preemptions or base.rejects or \
            [p.job_id for p in base.pending] != [p.job_id for p in live.result.pending]:
        return -1
    kept: list[Job] = []
    for new in arrivals:
        result = live.decide(new, now)
        assert result is not None
        if not live.usable:
            return len(kept)  # spent: the next full cycle decides (always right)
        if result.admits:
            return len(kept)  # an admission changes the state the full cycles below compare with
        (pend,) = result.pending
        assert pend.job_id == new.id
        assert pend.reason.eta is None and pend.reason.eta_reason == PROVISIONAL_ETA
        assert pend.reason.details["eta_code"] == "Provisional"
        before = run_cycle(replace(after, now=now, jobs=(*after.jobs, *kept)), profile)
        full = run_cycle(replace(after, now=now, jobs=(*after.jobs, *kept, new)), profile)
        # the full cycle visits it last, gives it the same reason, and changes nothing for the others
        assert [p.job_id for p in full.pending][-1] == new.id
        assert not (full.admits or full.preemptions or full.rejects)
        theirs = {p.job_id: p.reason for p in full.pending}[new.id]
        mine, ref = without_eta(pend.reason, position=not replay), without_eta(theirs, position=not replay)
        reserved = pend.reason.details.get("backfill", {}).get("reserved_for")
        if reserved in {k.id for k in kept}:  # its backfill clause names a job whose ETA is provisional too
            mine.pop("message"), ref.pop("message")
            mine["details"].pop("backfill", None), ref["details"].pop("backfill", None)
        assert mine == ref
        others, alone = decisions(full, frozenset({new.id}), etas=not replay), decisions(before, etas=not replay)
        assert others == alone, differences(others["pending"], alone["pending"])
        assert live.etas_moved == replay
        kept.append(new)
    return len(kept)


@settings(max_examples=int(os.environ.get("LIVE_PEND_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.booleans())
def test_a_pend_kept_on_the_live_ledger_is_what_a_full_cycle_decides(
        world: tuple[Snapshot, SchedulingProfile, list[Job]], replay: bool) -> None:
    kept = check_kept_pends(*world, replay=replay)
    assume(kept >= 0)
    event(f"pends kept: {min(kept, 2)}")


def test_a_new_last_job_is_pended_on_the_live_ledger_for_each_queue_sort() -> None:
    """Named worlds where the new job is last: the pend is kept (and checked) for every sort."""
    nodes = (node("n0", 2),)
    running = holding(job("r0", gpus=2, user="u2"), "n0", 0)
    queued = [job("p0", gpus=1, user="u1", minute=-20), job("p1", gpus=2, user="u2", minute=-19)]
    for sort in ("fair", "fair-usage", "fifo"):
        snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, *queued))
        profile = SchedulingProfile(queue_sort=sort)
        arrivals = [job("new0", user="u2", minute=-2), job("new1", user="u2", minute=-1)]
        assert check_kept_pends(snap, profile, arrivals) == 2, sort
        assert check_kept_pends(snap, profile, arrivals, replay=True) == 2, sort


def test_a_new_job_that_a_full_cycle_puts_ahead_spends_the_live_ledger() -> None:
    """A high-class job, or a light user's job under fair share, goes ahead of queued work: the
    live cycle must not pend it last (a full cycle orders it and gives the reservation)."""
    nodes = (node("n0", 2),)
    running = holding(job("r0", gpus=2, user="u2"), "n0", 0)
    queued = [job("p0", gpus=1, user="u2", minute=-20), job("p1", gpus=2, user="u2", minute=-19)]
    usage = UsageHistory(decayed_gpu_seconds_by_user={"u2": 7200.0})
    snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, *queued), usage=usage)
    for new, sort in ((job("hi", priority="high", user="u2", minute=-1), "fifo"),
                      (job("light", user="u1", minute=-1), "fair"),
                      (job("light", user="u1", minute=-1), "fair-usage")):
        live = LiveCycle(snap, SchedulingProfile(queue_sort=sort))
        result = live.decide(new, T0)
        assert result is not None and [p.job_id for p in result.pending] == [new.id]
        assert not live.usable, (new.id, sort)
        after = apply_result(snap, live.result)
        full = run_cycle(replace(after, jobs=(*after.jobs, new)), SchedulingProfile(queue_sort=sort))
        assert [p.job_id for p in full.pending][-1] != new.id  # the full cycle indeed puts it ahead


def test_a_team_over_its_guarantee_behind_a_borrowing_backlog_is_pended_last() -> None:
    """status_bench's shape: another team's backlog borrows (deferred to the end of the queue);
    a new job that borrows too follows it — kept; one within its guarantee would go ahead — spent."""
    nodes = (node("n0", 4),)
    running = holding(job("r0", gpus=4, team="a", user="u1"), "n0", 0)
    backlog = [job(f"b{k}", team="b", user="u2", minute=k - 20) for k in range(5)]
    quota = QuotaSet(quotas=(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=0, borrowing_limit=0)))
    snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, *backlog), quotas=quota)
    over = [job("over0", team="a", user="u1", minute=-2), job("over1", team="a", user="u1", minute=-1)]
    assert check_kept_pends(snap, SchedulingProfile(), over) == 2
    roomy = QuotaSet(quotas=(Quota(team="a", guaranteed=8), Quota(team="b", guaranteed=0, borrowing_limit=0)))
    live = LiveCycle(replace(snap, quotas=roomy), SchedulingProfile())
    live.decide(job("within", team="a", user="u1", minute=-1), T0)
    assert not live.usable  # within its guarantee it is visited before the borrowers: not last


def test_a_provisional_reason_is_no_earlier_prediction_for_the_full_cycle() -> None:
    """Stored between cycles, a provisional reason must not stand for the job's first projected
    start (case 034's accuracy log) nor count as an earlier ETA that "moved"."""
    nodes = (node("n0", 2),)
    running = holding(job("r0", gpus=2, user="u2", limit=3600.0), "n0", 0)  # ends at a known time: ETAs project
    snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, job("p0", minute=-20)))
    live = LiveCycle(snap, SchedulingProfile())
    new = job("new0", user="u2", minute=-1)
    result = live.decide(new, T0)
    assert live.usable and result is not None
    (pend,) = result.pending
    after = apply_result(snap, live.result)
    stored = replace(new, reason=pend.reason)  # what the engine's batch writes
    full = run_cycle(replace(after, jobs=(*after.jobs, stored)), SchedulingProfile())
    reason = {p.job_id: p.reason for p in full.pending}[new.id]
    assert reason.eta is not None and reason.predicted_start == reason.eta
    assert "eta_moved" not in reason.details and not [a for a in full.audit if a.action == "eta_moved"]
    assert eta.predicted_start_of(stored, T0) == T0


def test_issue16_s26_a_job_elected_after_the_cycle_spends_the_live_ledger() -> None:
    """A queued job whose promised wait runs out after the full cycle is elected by the next one
    (first in its class, with the EASY reservation; issue 16): the live ledger, which keeps the
    last cycle's order and reservations, must not decide anything from that moment — a new job it
    would have pended last there, or admitted outside reservations that no longer hold."""
    nodes = (node("n0", 2),)
    # u3 runs r0: had p1's own user held both GPUs (above the equal share) while u1's job waited, p1 would
    # not be elected at all (queues.order.election_barred, new user 30 N2)
    running = holding(job("r0", gpus=2, user="u3", limit=3600.0), "n0", 0)
    promised = {PROMISE: {"at": (T0 - timedelta(minutes=10)).isoformat(), "start": T0.isoformat()}}  # due at T0
    gang = replace(job("p1", gpus=2, user="u2", minute=-20),
                   reason=PendingReason(code="WaitingForCapacity", message="2 GPUs requested", details=promised))
    light = job("p0", user="u1", minute=-15)
    usage = UsageHistory(decayed_gpu_seconds_by_user={"u2": 7200.0})
    snap = Snapshot(now=T0, inventory=Inventory(nodes=nodes), jobs=(running, gang, light), usage=usage)
    profile = SchedulingProfile(elect_overdue=1.0)
    live = LiveCycle(snap, profile)
    assert [p.job_id for p in live.result.pending] == ["p0", "p1"]  # not due yet: the fair order holds
    later = T0 + timedelta(minutes=1)
    new = job("new0", user="u2", minute=-1)
    assert live.decide(new, later) is None and not live.usable
    after = apply_result(snap, live.result)
    full = run_cycle(replace(after, now=later, jobs=(*after.jobs, new)), profile)
    assert [p.job_id for p in full.pending] == ["p1", "p0", "new0"]  # the full cycle elects p1
    # the same decision at the cycle's own time keeps the ledger (p1 is not due yet)
    live = LiveCycle(snap, profile)
    result = live.decide(new, T0)
    assert result is not None and live.usable and [p.job_id for p in result.pending] == ["new0"]
