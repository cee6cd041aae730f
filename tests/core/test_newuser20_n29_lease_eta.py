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
