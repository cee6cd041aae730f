"""New user 20, N29: a job behind its owner's own idle kernel lease.

vision's limit is 1 GPU; the owner's idle kernel lease holds it; their 1-GPU job waits. The line
read "ETA unknown: it can start only after your own kernel lease l-…, which holds 1 GPU, is released
with %gpu release in that notebook or reclaimed after 2m idle (…); l-… is idle now: released 23:19
UTC if it stays idle · Your own kernel lease l-… holds 1 GPU of vision's quota: run %gpu release in
that notebook (…) and this one can start." — "unknown" beside a known time, the advice twice.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.engine.lease_horizon import with_lease_horizons
from jupyter_sched.model import Job, JobKind, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.reclaim import IdleCandidate, IdlePolicies, IdlePolicy
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import ReasonText

POLICIES = IdlePolicies(default=IdlePolicy(window_s=120.0, warning_s=60.0))


def _lease() -> Job:
    job = make_job("l-mine", team="vision", user="ann")
    return running(replace(job, spec=replace(job.spec, name="nb1", kind=JobKind.LEASE, kernel_id="k-1")))


def _idle(deadline_min: float) -> IdleCandidate:
    deadline = T0 + timedelta(minutes=deadline_min)
    return IdleCandidate(job_id="l-mine", user="ann", team="vision", kind="lease", gpu_uuids=(), idle_since=T0,
                         warn_at=deadline - timedelta(minutes=1), deadline=deadline, time_left_s=deadline_min * 60,
                         stage="idle", action="release", reason="", state="")


def _text(*, quota: bool, idle: tuple[IdleCandidate, ...]) -> ReasonText:
    q = quotas(Quota(team="vision", guaranteed=1, borrowing_limit=0)) if quota else None
    nodes = [make_node("n1", gpus=4 if quota else 1)]
    snap = snapshot(nodes, [_lease(), make_job("behind", team="vision", user="ann", time_limit_s=300)], quota=q)
    result = with_lease_horizons(run_cycle(snap, None), snap.jobs, POLICIES, idle)
    reason = next(p.reason for p in result.pending if p.job_id == "behind")
    return render_reason(reason_to_dict(reason) or {}, now=T0, relative=True, mine=True)


@pytest.mark.parametrize("quota", [True, False], ids=["quota wait", "capacity wait"])
def test_newuser20_n29_an_idle_own_lease_gives_its_release_time_as_the_eta(quota: bool) -> None:
    text = _text(quota=quota, idle=(_idle(2),))
    assert text.eta.startswith("ETA 12:02 UTC (in 2m) if your own kernel lease l-mine (nb1) stays idle (it is then "
                               "reclaimed)"), text.eta
    assert "unknown" not in text.line
    assert text.line.count("%gpu release in that notebook") == 1, text.line  # said once: the unblock or the ETA


def test_newuser20_n29_a_busy_own_lease_on_a_quota_wait_says_how_to_release_it_once() -> None:
    text = _text(quota=True, idle=())
    assert text.eta == ("ETA unknown: it can start only after your own kernel lease l-mine (nb1), which holds 1 GPU, "
                        "is released or reclaimed after 2m idle (a kernel's GPUs have no time limit)"), text.eta
    assert text.line.count("%gpu release in that notebook") == 1, text.line


# Several leases (session 20's closing note, "Noticed and left": a job waiting on several of its own team's idle
# kernel leases still said "ETA unknown"). Leases have no time limit, but an idle one has a known reclaim time: the
# ETA is when enough of them are reclaimed, if they stay idle.

def _lease_named(job_id: str, index: int, owner: str = "ann") -> Job:
    job = make_job(job_id, team="vision", user=owner)
    return running(replace(job, spec=replace(job.spec, name=f"nb-{job_id}", kind=JobKind.LEASE,
                                             kernel_id=f"k-{job_id}")), indices=[index])


def _idle_lease(job_id: str, deadline_min: float) -> IdleCandidate:
    return replace(_idle(deadline_min), job_id=job_id)


def _several(gpus: int, idle: tuple[IdleCandidate, ...], owner: str = "ann") -> ReasonText:
    """Two 1-GPU kernel leases of ``owner``'s fill vision's 2 GPUs; ann's ``gpus``-GPU job waits on them."""
    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=0))
    jobs = [_lease_named("l-a", 0, owner), _lease_named("l-b", 1, owner),
            make_job("behind", gpus=gpus, team="vision", user="ann", time_limit_s=300)]
    snap = snapshot([make_node("n1", gpus=4)], jobs, quota=q)
    result = with_lease_horizons(run_cycle(snap, None), snap.jobs, POLICIES, idle)
    reason = next(p.reason for p in result.pending if p.job_id == "behind")
    return render_reason(reason_to_dict(reason) or {}, now=T0, relative=True, mine=True)


def test_newuser20_n29_several_idle_own_leases_give_the_eta_when_all_that_must_go_are_reclaimed() -> None:
    text = _several(2, (_idle_lease("l-a", 2), _idle_lease("l-b", 5)))  # 2 GPUs short: both must go
    assert text.eta.startswith("ETA 12:05 UTC (in 5m) if your own kernel leases l-a and l-b stay idle (they are then "
                               "reclaimed)"), text.eta
    assert "unknown" not in text.line
    assert text.line.count("%gpu release in that notebook") == 1, text.line


def test_newuser20_n29_several_idle_own_leases_one_of_which_is_enough_give_the_first_reclaim() -> None:
    text = _several(1, (_idle_lease("l-a", 5), _idle_lease("l-b", 2)))  # 1 GPU short: the first reclaimed will do
    assert text.eta.startswith("ETA 12:02 UTC (in 2m) if your own kernel lease l-b (nb-l-b) stays idle (it is then "
                               "reclaimed)"), text.eta
    assert "unknown" not in text.line


def test_newuser20_n29_an_own_lease_in_use_that_must_go_leaves_the_eta_unknown_and_says_so() -> None:
    text = _several(2, (_idle_lease("l-a", 2),))  # l-b is in use: no reclaim time, and both must go
    assert text.eta.startswith("ETA unknown: it can start only after your own kernel leases"), text.eta
    assert "l-a is idle now: released 12:02 UTC if it stays idle" in text.eta, text.eta
    assert "l-b is in use" in text.eta, text.eta


def test_newuser20_n29_several_idle_leases_of_a_teammate_give_the_eta_when_enough_are_reclaimed() -> None:
    both = _several(2, (_idle_lease("l-a", 2), _idle_lease("l-b", 5)), owner="bob")
    assert both.eta.startswith("ETA 12:05 UTC (in 5m) if "), both.eta
    assert "l-a and l-b stay idle (they are then reclaimed; sooner if" in both.eta, both.eta
    one = _several(1, (_idle_lease("l-a", 5), _idle_lease("l-b", 2)), owner="bob")
    assert one.eta.startswith("ETA 12:02 UTC (in 2m) if "), one.eta
    assert "lease l-b stays idle (it is then reclaimed; sooner if" in one.eta, one.eta
    assert "unknown" not in both.line + one.line
