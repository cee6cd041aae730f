"""Session 21 (s21-eta's "left", closing note 20): a CAPACITY wait on idle leases said "ETA unknown".

The GPUs are simply all held — no quota line involved — by leases that sit idle. A lease has no time
limit, but an idle one has a known reclaim deadline (idle window, warning, grace). The engine puts
each idle lease's deadline in the snapshot (``Snapshot.idle_ends``, :mod:`jupyter_sched.engine.idle_ends`),
the ETA plan ends it there — for the ETAs shown only, never a decision — and the reason names the
leases and says "if they stay idle". A lease in use stays unknown, with the words of d40489f.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.engine.lease_horizon import with_lease_horizons
from jupyter_sched.model import Job, JobKind
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.reclaim import IdleCandidate, IdlePolicies, IdlePolicy
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import Snapshot
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import ReasonText

POLICIES = IdlePolicies(default=IdlePolicy(window_s=120.0, warning_s=60.0))
MIN = 60.0


def _lease(job_id: str, index: int) -> Job:
    job = make_job(job_id, user="ann")
    return running(replace(job, spec=replace(job.spec, name=f"nb-{job_id}", kind=JobKind.LEASE,
                                             kernel_id=f"k-{job_id}")), indices=[index])


def _idle(job_id: str, deadline_min: float) -> IdleCandidate:
    deadline = T0 + timedelta(minutes=deadline_min)
    return IdleCandidate(job_id=job_id, user="ann", team="default", kind="lease", gpu_uuids=(), idle_since=T0,
                         warn_at=deadline - timedelta(minutes=1), deadline=deadline,
                         time_left_s=deadline_min * MIN, stage="idle", action="release", reason="", state="")


def _snap(gpus: int, idle: dict[str, float]) -> Snapshot:
    """ann's two 1-GPU kernel leases hold both GPUs of n1 (no quota: a capacity wait); her ``gpus``-GPU job waits."""
    jobs = [_lease("l-a", 0), _lease("l-b", 1), make_job("behind", gpus=gpus, user="ann", time_limit_s=300)]
    snap = snapshot([make_node("n1", gpus=2)], jobs)
    return replace(snap, idle_ends={k: T0 + timedelta(minutes=m) for k, m in idle.items()})


def _text(gpus: int, idle: dict[str, float]) -> tuple[ReasonText, dict[str, object]]:
    snap = _snap(gpus, idle)
    result = with_lease_horizons(run_cycle(snap, None), snap.jobs, POLICIES,
                                 tuple(_idle(k, m) for k, m in idle.items()))
    reason = next(p.reason for p in result.pending if p.job_id == "behind")
    wire = reason_to_dict(reason) or {}
    return render_reason(wire, now=T0, relative=True, mine=True), wire


def test_s21_capacity_wait_on_idle_leases_has_eta() -> None:
    text, wire = _text(2, {"l-a": 2, "l-b": 5})  # both must go: the later reclaim is the ETA
    assert wire["eta"] == "2025-03-30T12:05:00Z", wire  # the machine-readable ETA too, not only the words
    assert text.eta.startswith("ETA 12:05 UTC (in 5m) if your own kernel leases l-a and l-b stay idle (they are "
                               "then reclaimed)"), text.eta
    assert "unknown" not in text.line, text.line
    one, _ = _text(1, {"l-a": 5, "l-b": 2})  # one GPU: the first reclaimed will do, and only it is named
    assert one.eta.startswith("ETA 12:02 UTC (in 2m) if your own kernel lease l-b (nb-l-b) stays idle (it is then "
                              "reclaimed)"), one.eta


def test_s21_capacity_wait_on_a_lease_in_use_stays_unknown_and_says_so() -> None:
    text, wire = _text(2, {"l-a": 2})  # l-b is in use: no reclaim time, and both must go
    assert wire.get("eta") is None, wire
    assert text.eta.startswith("ETA unknown: it can start only after your own kernel lease"), text.eta
    assert "l-b" in text.eta and "stay idle" not in text.eta, text.eta


def test_s21_without_idle_ends_the_capacity_wait_on_several_leases_is_unknown_as_before() -> None:
    text, wire = _text(2, {})
    assert wire.get("eta") is None and text.eta.startswith("ETA unknown"), text.eta


@pytest.mark.parametrize("mode", ["easy", "conservative"])
def test_s21_idle_lease_ends_change_no_admission_decision(mode: str) -> None:
    """The reclaim deadline is the ETAs' only: ``head`` (4 GPUs) waits for the leases; ``small`` (2 GPUs,
    90 min) fits beside them. Were the deadline read by the admission plan, ``head`` would be reserved
    in 2 minutes and ``small`` held back — a lease has no time limit, reservations keep enforced ones."""
    jobs = [_lease("l-a", 0), _lease("l-b", 1), make_job("head", gpus=4, time_limit_s=60 * MIN),
            make_job("small", gpus=2, time_limit_s=90 * MIN, submitted=1)]
    snap = snapshot([make_node("n1", gpus=4)], jobs)
    profile = SchedulingProfile(backfill_mode=mode)
    plain = run_cycle(snap, profile)
    ended = run_cycle(replace(snap, idle_ends={"l-a": T0 + timedelta(minutes=2), "l-b": T0 + timedelta(minutes=2)}),
                      profile)
    assert [(a.job_id, a.allocation, a.backfill) for a in ended.admits] == \
        [(a.job_id, a.allocation, a.backfill) for a in plain.admits]
    assert ended.preemptions == plain.preemptions and ended.rejects == plain.rejects
    assert [p.reason.code for p in ended.pending] == [p.reason.code for p in plain.pending]
    assert {p.job_id: p.reason.eta for p in ended.pending}["head"] is not None  # the ETA shown did move
    assert {p.job_id: p.reason.eta for p in plain.pending}["head"] is None
