"""New user 18, N10: a lease request that waits says what it waits for and when that can end.

A kernel's lease has no time limit, so a lease request waiting behind one has no ETA. What can end
the wait is the holder's release or idle reclamation — and the reason said "released by its owner
or reclaimed when idle" whether or not this server reclaims idle leases, never after how long, and
named a lease queued ahead (holding nothing yet) as if it held the GPUs now.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.engine.idle import IdleLadders
from jupyter_sched.model import Job, JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.reclaim import IdleCandidate, IdlePolicies, IdlePolicy
from jupyter_sched.reclaim.policy import ReclaimMode
from jupyter_sched.scheduling import CycleResult, run_cycle
from jupyter_sched.wording import render_reason


def lease(job_id: str, *, gpus: int = 1, user: str = "alice", submitted: float = 0.0) -> Job:
    job = make_job(job_id, gpus=gpus, user=user, submitted=submitted)
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE, kernel_id=f"k-{job_id}"))


def bobs_lease_holds_both_gpus() -> list[Job]:
    return [running(lease("l-bob", gpus=2, user="bob")), lease("l-ann", user="ann", submitted=1)]


def idle_now(job_id: str, deadline_min: float) -> IdleCandidate:
    """``job_id`` idle since T0, its GPUs released at T0 + ``deadline_min`` if it stays idle."""
    deadline = T0 + timedelta(minutes=deadline_min)
    return IdleCandidate(job_id=job_id, user="bob", team="default", kind="lease", gpu_uuids=(), idle_since=T0,
                         warn_at=deadline - timedelta(minutes=10), deadline=deadline,
                         time_left_s=deadline_min * 60, stage="idle", action="release", reason="", state="")


def eta_of(result: CycleResult, job_id: str, *, mine: bool = False) -> str:
    reason = next(p.reason for p in result.pending if p.job_id == job_id)
    return render_reason(reason_to_dict(reason), now=T0, kind="lease", mine=mine).eta


def evaluated(jobs: list[Job], policies: IdlePolicies | None,
              candidates: tuple[IdleCandidate, ...] = ()) -> CycleResult:
    """The cycle's result as the engine hands it on: the core's decisions, then the idle step."""
    snap = snapshot([make_node("n1", gpus=2)], jobs)
    ladders = IdleLadders(None, None, policies, None, stop_grace_s=30.0)  # type: ignore[arg-type]
    result = run_cycle(snap, None)
    if policies is None:
        return ladders.evaluate(snap, result)
    from jupyter_sched.engine.lease_horizon import with_lease_horizons
    return with_lease_horizons(result, snap.jobs, policies, candidates)  # telemetry-free: idle work given


@pytest.mark.parametrize(("policies", "candidates", "want", "not_want"), [
    pytest.param(None, (), "bob's lease l-bob is released (a lease has no time limit, and "
                 "this server does not reclaim idle leases)", "reclaimed", id="idle reclamation off: not promised"),
    pytest.param(IdlePolicies(default=IdlePolicy(window_s=7200.0)), (),
                 "bob's lease l-bob is released or reclaimed after 2h00m idle (", "is idle",
                 id="reclaimed after the policy's window"),

    pytest.param(IdlePolicies(default=IdlePolicy(window_s=7200.0, lease_mode=ReclaimMode.NOTIFY)), (),
                 "this server does not reclaim idle leases", "reclaimed after", id="a notify-only policy frees nothing"),
])
def test_newuser18_n10_a_waiting_lease_says_whether_and_when_idle_reclaim_frees_the_gpus(
        policies: IdlePolicies | None, candidates: tuple[IdleCandidate, ...], want: str, not_want: str) -> None:
    eta = eta_of(evaluated(bobs_lease_holds_both_gpus(), policies, candidates), "l-ann", mine=True)
    assert eta.startswith("ETA unknown: it can start only after ") and want in eta, eta
    assert not_want not in eta, eta


def test_newuser18_n10_idle_now_its_release_time_is_the_eta_if_it_stays_idle() -> None:
    # new user 20, N29: no longer "ETA unknown" beside that time
    policies = IdlePolicies(default=IdlePolicy(window_s=3600.0, grace_s=900.0))
    eta = eta_of(evaluated(bobs_lease_holds_both_gpus(), policies, (idle_now("l-bob", 50),)), "l-ann", mine=True)
    assert eta == "ETA 12:50 UTC if bob's lease l-bob stays idle (it is then reclaimed; sooner if it is released)", eta


def test_newuser18_n10_a_lease_queued_ahead_is_not_said_to_hold_the_gpus() -> None:
    """The 2 GPUs free when j-run ends (its limit); l-first, queued ahead, then takes them for good."""
    jobs = [running(make_job("j-run", gpus=2, time_limit_s=600, user="cy")), lease("l-first", gpus=2, user="bob"),
            lease("l-ann", user="ann", submitted=1)]
    eta = eta_of(evaluated(jobs, IdlePolicies(default=IdlePolicy(window_s=1800.0))), "l-ann")
    assert "bob's lease l-first (queued ahead of it, holding no GPU yet) is released by its owner or reclaimed " \
           "after 30m idle (" in eta, eta


def test_newuser18_n10_the_owners_own_lease_gets_the_same_horizon() -> None:
    jobs = [running(lease("l-mine", gpus=2, user="ann")), lease("l-ann", user="ann", submitted=1)]
    eta = eta_of(evaluated(jobs, IdlePolicies(default=IdlePolicy(window_s=7200.0))), "l-ann", mine=True)
    assert "is released with %gpu release in that notebook or reclaimed after 2h00m idle" in eta, eta
