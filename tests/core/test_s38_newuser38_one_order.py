"""newuser38 N2, n10, n11 (second half): one queue order — positions, the "goes first" clauses and the ETAs follow it.

N2 (hub, team vision = n38a, n38b, guaranteed 2 + 1; nlp holds 3 GPUs): n38b's vb1 runs (ends 12:07), n38b's vb2
waits (vision's reclaims in a cool-down), then n38a asks for a ``--no-preempt`` kernel lease. The cycle's order now
put the lease first (n38a has less recent GPU use): "#1", and vb2's line said "vision's jobs queued after it go first:
lease". But vb2's election (0.75 x its promised wait) falls due before vb1 ends, so when the GPU frees vb2 goes
first: the ETAs said so (vb2 12:07, the lease at vb2's end) and the lease's line read "it is queued behind this job
but starts first" — three answers to "who gets the GPU at 12:07?". Now positions follow the queue's order when GPUs
next free (the ETA replay's first start, :func:`jupyter_sched.scheduling.eta._in_order`), and so do the fair-order
clause and the words on jobs queued behind that start first; the words name that job, never "it".

n10: a held job kept ``#1`` while the next waiting job was the one to start: a held job has no position (Slurm).

n11: the elected bound ("this job goes first from …, once it has waited past its promised wait") was missing in
the cycle a job was queued (its promise is made then) and there a cycle later: the CLI, read first, ended at "so the
ETA may move", the panel, read later, went on. It is said from the first cycle.

Pure core (run_cycle, apply_result), cycles 30 s apart.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import JobKind, JobState, PendingReason, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.job import Hold
from jupyter_sched.scheduling import CycleResult, Snapshot, apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import ReclaimTaken, UsageHistory
from jupyter_sched.wording.reasons import render_reason


def _n2_world() -> Snapshot:
    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=1), Quota(team="nlp", guaranteed=2, borrowing_limit=1))
    nlp = [running(make_job(f"c{i}", team="nlp", user="n38c", time_limit_s=3600, submitted=-20), indices=[i],
                   started=-10) for i in range(3)]
    vb1 = running(make_job("vb1", team="vision", user="n38b", time_limit_s=600, submitted=-4), indices=[3], started=-3)
    # vision's last reclaim was given up at once: its reclaims wait 15 min (vb2 cannot take nlp's borrowed GPU)
    took = ReclaimTaken(job_id="vx", team="vision", user="n38b", took_at=T0 - timedelta(minutes=3),
                        victims=(("cx", "n38c"),), started_at=T0 - timedelta(minutes=3),
                        ended_at=T0 - timedelta(minutes=2), cause="cancel", actor="n38b")
    return replace(snapshot([make_node("n1", gpus=4)], [*nlp, vb1], quota=q,
                            usage=UsageHistory(decayed_gpu_seconds_by_user={"n38b": 300.0, "n38c": 1800.0})),
                   reclaims=(took,))


def _step(snap: Snapshot, seconds: int, *new: object) -> tuple[Snapshot, CycleResult]:
    now = T0 + timedelta(seconds=seconds)
    snap = replace(snap, now=now, jobs=(*snap.jobs, *(replace(j, submitted_at=now) for j in new)))  # type: ignore
    result = run_cycle(snap)
    snap = apply_result(snap, result, stop_at_once=True)
    snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                    if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
    return snap, result


def _n2(until: int) -> tuple[Snapshot, dict[str, PendingReason]]:
    """The N2 timeline to ``until`` s after T0: vb2 queued at -2 min, n38a's no-preempt lease at 0."""
    lease = make_job("lease", team="vision", user="n38a")
    lease = replace(lease, spec=replace(lease.spec, kind=JobKind.LEASE, kernel_id="k-1", no_preempt=True))
    snap, reasons = _n2_world(), {}
    for s in range(-150, until + 1, 30):
        new = [j for at, j in ((-120, make_job("vb2", team="vision", user="n38b", time_limit_s=600)), (0, lease))
               if s - 30 < at <= s]
        snap, result = _step(snap, s, *new)
        reasons = {p.job_id: p.reason for p in result.pending}
    return snap, reasons


def _line(reason: PendingReason, seconds: int, kind: str = "") -> str:
    said = reason_to_dict(reason)
    assert said is not None
    return render_reason(said, now=T0 + timedelta(seconds=seconds), relative=True, kind=kind).line


def test_newuser38_n2_positions_the_fair_clause_and_the_etas_say_one_order() -> None:
    _, reasons = _n2(0)
    vb2, lease = reasons["vb2"], reasons["lease"]
    assert vb2.eta == T0 + timedelta(minutes=7) and lease.eta == T0 + timedelta(minutes=17), (vb2.eta, lease.eta)
    # vb2 gets the GPU vb1 frees (its election is due by then): it is #1, and nothing says the lease goes first
    assert (vb2.position, lease.position) == (1, 2), (vb2.position, lease.position)
    assert "eta_fair_ahead" not in vb2.details, vb2.details
    vb2_line, lease_line = _line(vb2, 0), _line(lease, 0, "lease")
    assert vb2_line.startswith("queued #1 · ") and "go first" not in vb2_line, vb2_line
    assert lease_line.startswith("queued #2 · ") and "ETA 12:17 UTC (in 17m), when n38b's job vb2 ends" in lease_line
    assert "queued behind this job" not in lease_line and "starts first" not in lease_line, lease_line


def test_newuser38_n2_what_the_positions_said_is_what_happens_when_the_gpu_frees() -> None:
    snap, _ = _n2(0)
    snap = replace(snap, jobs=tuple(j for j in snap.jobs if j.id != "vb1"))  # vb1 ends at 12:07
    _, result = _step(snap, 420)
    assert [a.job_id for a in result.admits] == ["vb2"], result.admits  # #1 starts first
    lease = next(p.reason for p in result.pending if p.job_id == "lease")
    assert lease.position == 1, lease


def test_newuser38_n2_a_job_queued_behind_that_starts_first_is_named_not_it() -> None:
    reason = {"code": "WaitingForCapacity", "message": "needs 1 GPU, 0 free", "position": 1,
              "eta": (T0 + timedelta(minutes=17)).isoformat(),
              "details": {"eta_code": "Projected", "eta_waits_on": ["j-2"], "eta_waits_on_names": {"j-2": "vb2"},
                          "eta_waits_on_owners": {"j-2": "n38b"}, "eta_waits_on_queued": ["j-2"],
                          "eta_waits_on_backfilled": ["j-2"],
                          "eta_backfill_basis": {"ahead": ["j-2"], "elected_from": (T0 + timedelta(minutes=12)).isoformat()}}}
    eta = render_reason(reason, now=T0).eta
    assert eta == ("ETA 12:17 UTC, when n38b's job \"vb2\" (j-2) ends; vb2 is queued behind this job but starts first: "
                   "when the GPUs free, the queue's order puts it ahead of this job (fair share or class, not backfill), "
                   "so the ETA may move; this job goes first from 12:12 UTC, once it has waited past its promised wait "
                   "(elected)"), eta
    assert "it is queued" not in eta


def _held_world(hold: bool) -> CycleResult:
    jobs = [running(make_job("r", user="u0", time_limit_s=600), indices=[0]),
            replace(make_job("p1", user="u1", submitted=-5), held=Hold(by="u1", at=T0 - timedelta(minutes=4))
                    if hold else None),
            make_job("p2", user="u2", submitted=-3)]
    return run_cycle(snapshot([make_node("n1", gpus=1)], jobs))


def test_newuser38_n10_a_held_job_has_no_position_and_the_next_waiting_job_is_1() -> None:
    positions = {p.job_id: p.reason.position for p in _held_world(True).pending}
    assert positions == {"p1": None, "p2": 1}, positions
    held = next(p.reason for p in _held_world(True).pending if p.job_id == "p1")
    line = _line(held, 0)
    assert line.startswith("queued · held by u1 at 11:56 UTC") and "#" not in line, line
    # released, it takes its place again
    assert {p.job_id: p.reason.position for p in _held_world(False).pending} == {"p1": 1, "p2": 2}


def _n11(seconds: int) -> dict[str, PendingReason]:
    """ra (a's, 2 h) and rc (10 min) run on 2 GPUs; x, A (a's) and B (b's) wait. When rc ends x starts, A ahead of B
    (a has used less); when x ends a's running job has added to a's use and B goes first: A's ETA is B's end."""
    jobs = [running(make_job("ra", user="a", time_limit_s=7200), indices=[0], started=0),
            running(make_job("rc", user="c", time_limit_s=600), indices=[1], started=0),
            make_job("x", user="x", time_limit_s=600), make_job("A", user="a", time_limit_s=600),
            make_job("B", user="b", time_limit_s=600)]
    snap = snapshot([make_node(gpus=2)], jobs, quota=quotas(Quota(team="default", guaranteed=2)),
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"a": 1000.0, "b": 2000.0}))
    reasons: dict[str, PendingReason] = {}
    for s in range(0, seconds + 1, 2):
        snap, result = _step(snap, s)
        reasons = {p.job_id: p.reason for p in result.pending}
    return reasons


def test_newuser38_n11_the_elected_bound_is_said_from_the_cycle_the_job_is_queued() -> None:
    first, next_cycle = _n11(0)["A"], _n11(2)["A"]
    assert first.details["eta_backfill_basis"] == {"ahead": ["B"], "elected_from": "2025-03-30T12:22:30+00:00"}, \
        first.details
    said = _line(first, 0)
    assert said.endswith("so the ETA may move; this job goes first from 12:22 UTC, once it has waited past its "
                         "promised wait (elected)"), said
    # a cycle later (the panel's read in n11) the same words: one renderer, the same data on every surface
    assert _line(next_cycle, 0) == said
