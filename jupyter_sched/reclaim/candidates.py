"""Idle candidates: work that is idle now, listed *before* its warning, with the time left (pure).

The ladder (:mod:`.idle`) only speaks at the warning and at the reclaim; users and admins also
need to see what is heading there. :func:`idle_candidates` answers "which running work is idle
now, since when, and when will it be warned and reclaimed" from the same verdicts the ladder
uses, so the list and the ladder never disagree (case 025: a job whose launcher crashed shows
from its first sample as ``allocated, no process on GPU (0 %, 0 MiB)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ..model import to_iso
from ..model.samples import GpuSample
from ..model.units import clock_pair, clock_text
from ..scheduling.snapshot import IdleAction, Snapshot
from .idle import IdleArbiter, IdleInput, advance_ladder, judge_running, ladder_times
from .policy import IdlePolicies

__all__ = ["IdleCandidate", "idle_candidates", "idle_state_text", "standing_text"]


@dataclass(frozen=True, slots=True)
class IdleCandidate:
    """One idle job or lease, before or after its warning.

    Attributes:
        job_id / user / team / kind: whose work.
        gpu_uuids: the GPUs it holds.
        idle_since: start of the idle period (aware UTC).
        warn_at / deadline: when the warning is (was) due and when reclaim is due.
        time_left_s: seconds until ``deadline`` (0 when due).
        stage: ``idle`` (not warned yet), ``warned`` or ``reclaimed`` (notify-only work stays listed).
        action: what reclaim does (``release``, ``requeue``, ``stop``, ``notify``).
        reason: where the period stands, said with the real idle time and the deadline:
            ``idle for 6 min (limit: kernel idle and GPU < 5 % for 30 min): warning at 13:53 UTC,
            its GPUs are released at 14:03 UTC`` (new user 5 #20: the rule alone, ``… for 30 min``,
            read as if 30 min had passed while the lease had been idle 6).
        rule: the policy's sentence the verdict applies (``no process and < 5 % for 60 min``).
        state: what the GPUs show now (``allocated, no process on GPU (0 %, 0 MiB)``).
        grace_s: the grace its policy adds after the idle window, seconds (0: none set — then the
            owner is told no grace).
        kernel_busy: a lease idle on its GPUs whose kernel is busy (rule ``gpu_busy_kernel``): still
            active work for hub activity (red team 15, R6 addendum); not part of the JSON shape.
        keepalive_used: the allocation's one keep-alive was used (a second is refused): its owner is told
            that using its GPUs keeps them, not ``%gpu keepalive`` (newuser23 N5).
    """

    job_id: str
    user: str
    team: str
    kind: str
    gpu_uuids: tuple[str, ...]
    idle_since: datetime
    warn_at: datetime
    deadline: datetime
    time_left_s: float
    stage: str
    action: str
    reason: str
    state: str
    grace_s: float = 0.0
    rule: str = ""
    kernel_busy: bool = False
    keepalive_used: bool = False

    def to_dict(self) -> dict[str, object]:
        """JSON shape (times as ISO 8601 UTC)."""
        return {"job_id": self.job_id, "user": self.user, "team": self.team, "kind": self.kind,
                "gpu_uuids": list(self.gpu_uuids), "idle_since": to_iso(self.idle_since),
                "warn_at": to_iso(self.warn_at), "deadline": to_iso(self.deadline), "time_left_s": self.time_left_s,
                "stage": self.stage, "action": self.action, "reason": self.reason, "state": self.state,
                "grace_s": self.grace_s, "rule": self.rule, "keepalive_used": self.keepalive_used}


def idle_state_text(latest: Sequence[GpuSample]) -> str:
    """What a job's GPUs show now, one phrase: ``allocated, no process on GPU (0 %, 0 MiB)`` when
    every device reports no process (case 025), ``allocated, no process on GPU (100 % suspect:
    latch, 0 MiB)`` for a confirmed latch (case 026), else ``allocated, 3 % (20480 MiB held)``.
    Utilization is the highest valid reading over the devices, memory the sum."""
    if not latest:
        return "allocated, no telemetry yet"
    memory = sum(s.memory_used_mib or 0.0 for s in latest)
    valid = [s.activity_pct for s in latest if s.counts_as_activity and s.activity_pct is not None]
    util = f"{max(valid):.0f} %" if valid else "unknown %"
    if any(s.validity_rule == "util_latch" for s in latest) and not valid:
        util = "100 % suspect: latch"
    if all(s.known_process_count == 0 for s in latest):
        return f"allocated, no process on GPU ({util}, {memory:.0f} MiB)"
    return f"allocated, {util} ({memory:.0f} MiB held)"


_OUTCOME = {"release": "its GPUs are released", "requeue": "it is requeued (its GPUs freed)",
            "stop": "it is stopped", "notify": "its owner is told"}


_clock = clock_text
"""``13:53 UTC`` on ``now``'s day, else ``Dec 3 13:53 UTC`` (the year when far off): the one formatter."""


def standing_text(*, idle_s: float, rule: str, grace_s: float, stage: str, action: str, warn_at: datetime,
                  deadline: datetime, now: datetime) -> str:
    """Where an idle period stands, one sentence: how long it has been idle (the clock as the
    ladder counts it: paused while readings were blank), the rule it is measured against, and
    when the warning and the reclaim are (were) due::

        idle for 6 min (limit: kernel idle and GPU < 5 % for 30 min): warning at 13:53 UTC, its GPUs are released at 14:03 UTC
        idle for 1 min (limit: GPU < 5 % for 60 min, then a 15 min grace): warned at 13:53 UTC, it is stopped at 14:18 UTC

    New user 5 #20: the rule alone ("kernel idle and GPU < 5 % for 30 min") read as if the window
    had elapsed while the lease had been idle 6 min. Pure."""
    limit = rule + (f", then a {_minutes(grace_s)} grace" if grace_s > 0 else "")
    head = f"idle for {_minutes_said(idle_s)} (limit: {limit})" if limit else f"idle for {_minutes_said(idle_s)}"
    outcome = _OUTCOME.get(action, "its GPUs are reclaimed")
    if stage == "reclaimed":
        return f"{head}: warned, then {'reported' if action == 'notify' else 'reclaimed'} at {_clock(deadline, now)}"
    warned, reclaimed = clock_pair(warn_at, deadline, now)  # seconds when in one minute (new user 17, N6)
    warning = f"warned at {warned}" if stage == "warned" else f"warning at {warned}"
    return f"{head}: {warning}, {outcome} at {reclaimed}"


def _minutes(seconds: float) -> str:
    minutes = seconds / 60.0
    return f"{minutes:.0f} min" if abs(minutes - round(minutes)) < 1e-9 else f"{minutes:.1f} min"


def _minutes_said(seconds: float) -> str:
    """Whole minutes, floored (a clock never says a minute that has not passed): ``less than a
    minute``, ``1 min``, ``6 min``; ``2 h 5 min`` from two hours on."""
    whole = int(seconds // 60)
    if whole < 1:
        return "less than a minute"
    if whole < 120:
        return f"{whole} min"
    return f"{whole // 60} h {whole % 60} min" if whole % 60 else f"{whole // 60} h"


def idle_candidates(snapshot: Snapshot, policies: IdlePolicies | None = None,
                    arbiter: IdleArbiter | None = None, *,
                    taken: Sequence[IdleAction] = ()) -> tuple[IdleCandidate, ...]:
    """Every running job or lease that is idle at ``snapshot.now``, least time left first.

    Uses the verdicts and ladder times of :func:`~.idle.evaluate_idle` (same inputs:
    ``snapshot.telemetry`` and ``snapshot.kernels``), so a job is listed from the first sample
    of its idle period, with when its warning and its reclaim are due.

    Args:
        taken: the ladder steps this cycle takes (:func:`~.idle.evaluate_idle`'s actions, delivered
            with the cycle): their work is listed at the stage they lead to (``warned``,
            ``reclaimed``), as the next cycle will list it. New user 20, N16: the list was built
            from the ladder before the cycle's own warning, so ``GET idle`` (the panel's My work
            card) said "if it stays idle, it is warned at …" until the next full cycle, after the
            warning's toast.
    """
    if taken:
        steps = {a.job_id: a for a in taken}
        snapshot = replace(snapshot, telemetry={
            job_id: replace(entry, ladder=advance_ladder(entry.ladder, steps[job_id], now=snapshot.now))
            if job_id in steps and isinstance(entry, IdleInput) else entry
            for job_id, entry in snapshot.telemetry.items()})
    out: list[IdleCandidate] = []
    now = snapshot.now
    for job, entry, policy, verdict in judge_running(snapshot, policies, arbiter):
        if not verdict.idle or verdict.idle_since is None:
            continue
        since, warn_at, deadline = ladder_times(verdict, entry.ladder, policy)
        ladder = entry.ladder
        stage = ("reclaimed" if ladder.reclaimed_at is not None and ladder.warned_idle_since == since
                 else "warned" if ladder.warned_at is not None and ladder.warned_idle_since == since else "idle")
        latest: dict[tuple[str, int | None], GpuSample] = {}
        for s in sorted(entry.samples, key=lambda s: s.timestamp):
            if s.timestamp <= now:
                latest[s.key] = s
        out.append(IdleCandidate(
            job_id=job.id, user=job.spec.user, team=job.spec.team, kind=job.spec.kind.value,
            gpu_uuids=job.allocation.all_gpu_uuids() if job.allocation else (), idle_since=since, warn_at=warn_at,
            deadline=deadline, time_left_s=max(0.0, (deadline - now).total_seconds()), stage=stage,
            action=verdict.mode.value, state=idle_state_text(list(latest.values())), grace_s=policy.grace_s,
            reason=standing_text(idle_s=max(0.0, (now - since).total_seconds() - verdict.paused_s),
                                 rule=verdict.reason, grace_s=policy.grace_s, stage=stage, action=verdict.mode.value,
                                 warn_at=warn_at, deadline=deadline, now=now),
            rule=verdict.reason, kernel_busy=verdict.rule == "gpu_busy_kernel" and verdict.kernel_state == "busy",
            keepalive_used=ladder.keepalive_used))
    return tuple(sorted(out, key=lambda c: (c.time_left_s, c.job_id)))
