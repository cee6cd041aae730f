"""When each idle lease is reclaimed if it stays idle: ``Snapshot.idle_ends`` (session 21).

A lease has no time limit, so a job waiting for GPUs that leases hold had no ETA — although an
idle lease under a policy that releases it has a known reclaim deadline (idle for the window,
warned, released after the grace). Only the engine knows the idle policy
(:class:`~jupyter_sched.reclaim.IdlePolicies`); the core stays pure: this module reads the
deadlines when the cycle's snapshot is built and puts them in it as data. The core's ETA plan
ends each such lease there (:func:`~jupyter_sched.scheduling.runtimes.time_left`, ``progress``:
the ETAs shown only — admission and backfill never read it), and :mod:`.lease_horizon` words the
ETA as "if they stay idle". A lease in use (not idle) or one whose policy only notifies is absent:
its end stays unknown. Pure.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from ..reclaim import IdleArbiter, IdlePolicies, idle_candidates
from ..reclaim.policy import ReclaimMode
from ..scheduling.snapshot import Snapshot

__all__ = ["lease_idle_ends", "with_idle_ends"]


def lease_idle_ends(snapshot: Snapshot, policies: IdlePolicies | None,
                    arbiter: IdleArbiter | None = None) -> dict[str, datetime]:
    """``{lease id: reclaim deadline (aware datetime)}`` of the running leases idle at
    ``snapshot.now`` whose policy releases them (:func:`~jupyter_sched.reclaim.idle_candidates`'
    deadlines, from ``snapshot.telemetry``); ``{}`` without a policy or a running lease."""
    return _lease_idle(snapshot, policies, arbiter)[0]


def _lease_idle(snapshot: Snapshot, policies: IdlePolicies | None,
                arbiter: IdleArbiter | None) -> tuple[dict[str, datetime], dict[str, datetime]]:
    """:func:`lease_idle_ends`, and ``{lease id: start of its idle period}`` of every idle running lease
    (a notifying policy's too): the one idle-since clock (newuser40 n6)."""
    if policies is None or not any(j.is_lease and j.state.holds_gpus for j in snapshot.jobs):
        return {}, {}
    leases = {j.id: j for j in snapshot.jobs if j.is_lease}
    out: dict[str, datetime] = {}
    since: dict[str, datetime] = {}
    for c in idle_candidates(snapshot, policies, arbiter):
        lease = leases.get(c.job_id)
        if lease is None:
            continue
        since[c.job_id] = c.idle_since
        if c.action == ReclaimMode.NOTIFY.value:
            continue
        policy = policies.for_job(lease)
        if policy.enabled and policy.lease_mode != ReclaimMode.NOTIFY:
            out[c.job_id] = c.deadline
    return out, since


def with_idle_ends(snapshot: Snapshot, policies: IdlePolicies | None,
                   arbiter: IdleArbiter | None = None) -> Snapshot:
    """``snapshot`` with ``idle_ends`` (:func:`lease_idle_ends`) and ``idle_since``; unchanged when there is none."""
    ends, since = _lease_idle(snapshot, policies, arbiter)
    return replace(snapshot, idle_ends=ends, idle_since=since) if ends or since else snapshot
