"""Idle application: the engine's side of idle reclamation (the ladder's state and its actions).

With an idle policy the engine runs idle detection itself
(:func:`jupyter_sched.reclaim.evaluate_idle` on the cycle's snapshot, whose ``telemetry`` the
:class:`~.telemetry.TelemetryMonitor` fills) and applies each ladder step by its ``action``:
``warn`` → audit record with the window of samples + ``idle_warning`` event + the work's message;
``reclaim`` → ``notify`` frees nothing, ``release`` revokes a lease (its kernel keeps running and
is told through the event and the lease's message; where the GPU's process list (NVML) still shows
a process on its GPU, the lease ends through the drain instead — stop intent ``idle`` — and its
GPU is given to nobody until that process lets go: :mod:`.idle_kernels`), ``requeue`` / ``stop``
stop a batch job (requeued, or ended as cancelled); ``clear`` → the warning is withdrawn.

The ladder state is persisted in the details of those audit records (``details.ladder``) and
re-read from there after a restart or a keepalive written by another server. Why the audit trail
rather than a job column: every ladder step must write an audit record with its evidence anyway,
so that record *is* the state — one copy, no schema change, and whichever engine leads (or a hub
service taking a keepalive) reads the same history. Missing telemetry decides nothing (no
warning, no "active again"), so a restart with an empty sample store resumes the ladder instead
of resetting it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..model import Inventory, Job, JobState, to_iso
from ..reclaim import (
    IdleCandidate,
    IdleInput,
    IdlePolicies,
    IdlePolicy,
    LadderState,
    advance_ladder,
    evaluate_idle,
    idle_candidates,
    window_evidence,
)
from ..reclaim.idle import KERNEL_KEPT
from ..scheduling.snapshot import CycleResult, IdleAction, Snapshot, kernel_activity_of
from ..store import JobRecord, Store, StoreTx
from .lease_horizon import with_lease_horizons
from .stops import GpuProcesses, lease_held_message
from .telemetry import TelemetryMonitor, ladder_from_dict, ladder_to_dict

__all__ = ["IDLE_ACTIONS", "IdleLadders", "Stop"]

IDLE_ACTIONS = ("idle_warning", "idle_reclaim", "idle_clear", "idle_keepalive")
"""Audit actions of the idle ladder; each record's ``details.ladder`` is the ladder state after it."""

log = logging.getLogger(__name__)

Stop = tuple[str, float, bool]
"""A stop to send: ``(job id, grace seconds, checkpoint signal first)``."""


class IdleLadders:
    """The idle ladder of every piece of running work, cached from the audit trail.

    Args:
        store: the store (audit records hold the ladder state).
        monitor: the telemetry monitor (None = no telemetry, no idle detection).
        policies: idle-reclamation policy (None = no idle detection).
        arbiter: an admin's idle rule (:class:`jupyter_sched.reclaim.IdleArbiter`; None = default).
        stop_grace_s: grace of an idle reclaim's stop, seconds.

    Attributes:
        ladders: ladder state by job id (committed state only).
        idle_gpus: GPUs of work currently warned or reclaimed as idle, by job id.
        reclaims_total: reclaims applied by this engine (metrics).
        candidates: idle work of the last cycle, before and after its warning, least time left
            first (``GET idle``; case 025: listed from the first idle sample).
    """

    def __init__(self, store: Store, monitor: TelemetryMonitor | None, policies: IdlePolicies | None,
                 arbiter: Any, *, stop_grace_s: float) -> None:
        self.store = store
        self.monitor = monitor
        self.policies = policies
        self.arbiter = arbiter
        self.stop_grace_s = stop_grace_s
        self.ladders: dict[str, LadderState] = {}
        self.idle_gpus: dict[str, tuple[str, ...]] = {}
        self.reclaims_total = 0
        self.candidates: tuple[IdleCandidate, ...] = ()
        self._attempt: dict[str, int] = {}
        self._seen: dict[str, int] = {}
        self._event_id = 0
        self.gpu_processes: GpuProcesses | None = None
        """Each GPU's processes (NVML telemetry; as :attr:`.stops.StopReconciler.gpu_processes`):
        with it, a lease whose GPU still shows a process is released through the drain."""

    def clear(self) -> None:
        """Forget the cache (stepping down: the next leader re-reads the audit trail)."""
        self.ladders.clear()
        self._attempt.clear()
        self._seen.clear()

    # -- inputs --------------------------------------------------------------------------------

    def inputs(self, records: list[JobRecord], inventory: Inventory, kernels: Mapping[str, Mapping[str, Any]],
               *, now: datetime) -> dict[str, Any]:
        """Update the monitor's pid registry (and the ladder cache with a policy); return the idle
        inputs to add to ``Snapshot.telemetry`` (empty without a policy)."""
        if self.monitor is None:
            return {}
        self._update_holders(records, kernels)
        if self.policies is None:
            return {}
        self._refresh(records)
        policies = self._policy_list()
        return dict(self.monitor.idle_inputs(
            (r.job for r in records), inventory, now=now, lookback_s=self._lookback_s(),
            ladders=self.ladders, max_gap_s=min(p.max_gap_s for p in policies), per_minute=self._per_minute()))

    def evaluate(self, snapshot: Snapshot, result: CycleResult) -> CycleResult:
        """``result`` with this engine's idle actions (they replace the core's for the same job), and
        with when the leases a pending job waits for are released as idle (:mod:`.lease_horizon`).
        Also refreshes :attr:`candidates` (idle work, least time left first, at the stage this
        cycle's steps lead to)."""
        if self.policies is None:  # pending reasons waiting on leases still say none is reclaimed (N10)
            return with_lease_horizons(result, snapshot.jobs, None, ())
        ours = evaluate_idle(snapshot, self.policies, self.arbiter)
        mine = {a.job_id for a in ours}
        steps = (*ours, *(a for a in result.idle if a.job_id not in mine))
        # listed at the stage this cycle's own steps lead to (new user 20, N16)
        self.candidates = idle_candidates(snapshot, self.policies, self.arbiter, taken=steps)
        result = with_lease_horizons(result, snapshot.jobs, self.policies, self.candidates)
        return replace(result, idle=steps)

    def admitted(self, jobs: Iterable[Job]) -> None:
        """Tell the monitor at once which GPUs the jobs just admitted hold (their pids follow at the
        next cycle's :meth:`inputs`): their minutes count the samples from their first second, as
        their usage does (new user 14, N26)."""
        if self.monitor is None:
            return
        shares: dict[str, dict[str, float]] = {}
        for job in jobs:
            alloc = job.allocation
            if alloc is None:
                continue
            for uuid in alloc.all_gpu_uuids():
                shares.setdefault(uuid, {})[job.id] = alloc.gpu_milli / 1000
        if shares:
            self.monitor.add_holders(shares)

    def _update_holders(self, records: Iterable[JobRecord], kernels: Mapping[str, Mapping[str, Any]]) -> None:
        """Tell the monitor which pids hold which GPU: job roots (from their handles) and lease kernels."""
        assert self.monitor is not None
        holders: dict[str, set[int]] = {}
        allocations: dict[str, str] = {}
        roots: dict[str, set[int]] = {}
        shares: dict[str, dict[str, float]] = {}
        for record in records:
            job = record.job
            if not job.state.holds_gpus or job.allocation is None:
                continue
            allocations.update((uuid, job.id) for uuid in job.allocation.all_gpu_uuids())
            for uuid in job.allocation.all_gpu_uuids():
                shares.setdefault(uuid, {})[job.id] = job.allocation.gpu_milli / 1000
            pid: Any = None
            if job.is_lease:
                pid = dict(kernel_activity_of(kernels, job.spec.user, job.spec.kernel_id) or {}).get("pid")
            elif record.handle:
                pid = record.handle.get("pid")
            if isinstance(pid, int) and pid > 0:
                roots.setdefault(job.id, set()).add(pid)
                for uuid in job.allocation.all_gpu_uuids():
                    holders.setdefault(uuid, set()).add(pid)
        self.monitor.set_holders(holders)
        self.monitor.set_jobs(roots, shares)  # shared GPUs split per job; pids on unallocated GPUs named
        self.monitor.set_allocations(allocations)  # exporter pod labels are checked against these (case 021)

    def _lookback_s(self) -> float:
        """Seconds of samples idle detection needs: the longest limit of any policy (its grace
        included), plus a minute."""
        longest = max(max(p.window_s, p.busy_kernel_window_s or 0.0) + p.grace_s for p in self._policy_list())
        return longest + 60.0

    def _per_minute(self) -> bool:
        """Minute maxima suffice when every idle window is at least 10 minutes and gaps of two
        minutes are tolerated (production policies); test-sized windows need every sample."""
        policies = self._policy_list()
        return min(p.window_s for p in policies) >= 600.0 and min(p.max_gap_s for p in policies) >= 120.0

    def _policy_list(self) -> list[IdlePolicy]:
        assert self.policies is not None
        return self.policies.all()  # default, per class, per kind and per kind and class

    def _refresh(self, records: Iterable[JobRecord]) -> None:
        """Load the persisted ladder of running work not in the cache (after a restart) and pick up
        keepalives recorded since the last look (by any server)."""
        running = {r.job.id: r.job for r in records if r.job.state.holds_gpus}
        for job_id in [j for j in self.ladders if j not in running]:
            self.ladders.pop(job_id, None)
            self._attempt.pop(job_id, None)
            self._seen.pop(job_id, None)
            self.idle_gpus.pop(job_id, None)
        for job_id, job in running.items():
            if self._attempt.get(job_id) != job.attempts:
                self.ladders[job_id], self._seen[job_id] = self.stored_ladder(self.store, job)
                self._attempt[job_id] = job.attempts
        for event in self.store.list_events(action="idle_keepalive", after_id=self._event_id, limit=10_000):
            self._event_id = max(self._event_id, event.id)
            held = running.get(event.job_id or "")
            if (held is not None and event.details.get("attempt") == held.attempts and "ladder" in event.details
                    and event.id > self._seen.get(held.id, 0)):
                self.ladders[held.id] = ladder_from_dict(event.details["ladder"])
                self._seen[held.id] = event.id

    @staticmethod
    def stored_ladder(store: Store, job: Job) -> tuple[LadderState, int]:
        """``(ladder state, audit record id)`` of ``job``'s current allocation, from its newest
        ``idle_*`` audit record (a fresh state and 0 when there is none)."""
        for event in store.list_events(job_id=job.id, newest_first=True, limit=200):
            if event.action in IDLE_ACTIONS and "ladder" in event.details:
                if event.details.get("attempt") != job.attempts:
                    break  # an earlier allocation's ladder: this one starts fresh
                return ladder_from_dict(event.details["ladder"]), event.id
        return LadderState(), 0

    # -- application ---------------------------------------------------------------------------

    def commit(self, ladders: Mapping[str, LadderState], seen: Mapping[str, int]) -> None:
        """The decision transaction committed: the cache follows the store."""
        for job_id, ladder in ladders.items():
            self.ladders[job_id] = ladder
            self._seen[job_id] = seen[job_id]

    def apply(self, tx: StoreTx, idle: IdleAction, records: Mapping[str, JobRecord], stops: list[Stop],
              changed: list[Job], snapshot: Snapshot, ladders: dict[str, LadderState],
              seen: dict[str, int]) -> list[dict[str, Any]]:
        """Apply one ladder step by its ``action`` (module docstring) inside the decision
        transaction ``tx``; return the API events.

        Writes one audit record (``idle_warning`` / ``idle_reclaim`` / ``idle_clear``) with the
        evidence (the window of samples) and the ladder state after the step (``details.ladder``:
        what a restarted engine resumes from); puts the new ladder state in ``ladders`` (and the
        record's id in ``seen``), for :meth:`commit` once the transaction committed.
        """
        r = records.get(idle.job_id)
        if r is None or not r.job.state.holds_gpus or (r.job.is_lease and r.stop_intent):
            return []  # a lease being released (its GPU draining) has no ladder left
        job = r.job
        now = tx.now
        entry = snapshot.telemetry.get(job.id)
        samples = entry.samples if isinstance(entry, IdleInput) else ()
        before = self.ladders.get(job.id, LadderState())
        ladder = advance_ladder(before, idle, now=now)
        evidence = dict(idle.evidence)
        if not evidence and idle.stage != "clear":
            start = idle.idle_since or now
            evidence = window_evidence(samples, rule="", idle_since=idle.idle_since, now=now,
                                       limit_s=max(1.0, (now - start).total_seconds()))
        action = idle.action if idle.stage == "reclaim" else ("notify" if idle.stage == "clear" else idle.action)
        if idle.stage == "reclaim" and job.is_lease and action in ("requeue", "stop"):
            action = "release"  # a lease has nothing to requeue or stop: its GPUs are released
        if idle.stage == "reclaim" and not job.is_lease and action == "release":
            action = "requeue"  # "free the GPUs" of a batch job = stop it and put it back in the queue
        data: dict[str, Any] = {
            "job_id": job.id, "user": job.spec.user, "kind": job.spec.kind.value, "stage": idle.stage,
            "action": action, "reason": idle.reason, "deadline": to_iso(idle.deadline),
            "idle_since": to_iso(idle.idle_since), "gpu_uuids": list(idle.gpu_uuids), "kernel_id": job.spec.kernel_id}
        context = (self._context(job, idle, now) if idle.stage == "reclaim" and job.is_lease and action == "release"
                   else None)
        if context is not None:  # revoked, freed once the kernel lets go (the panel says so: data.draining)
            evidence, data["draining"] = {**evidence, "gpu_processes": context}, True
        audit = {"warn": "idle_warning", "reclaim": "idle_reclaim"}.get(idle.stage, "idle_clear")
        event_id = tx.add_event(actor="scheduler", action=audit, job_id=job.id, user=job.spec.user,
                                message=self.message(job, idle, action, draining=context is not None),
                                details={**data, "evidence": evidence, "ladder": ladder_to_dict(ladder),
                                         "attempt": job.attempts})
        ladders[job.id] = ladder
        seen[job.id] = event_id
        uuids = tuple(job.allocation.all_gpu_uuids()) if job.allocation else ()
        if idle.stage == "clear":
            self.idle_gpus.pop(job.id, None)
            message = lease_held_message(job) if job.is_lease else "running"
            if tx.try_update_job(replace(r, job=replace(job, message=message))) is not None:
                changed.append(replace(job, message=message))
            return [{"type": "idle_warning", "data": data}]
        self.idle_gpus[job.id] = uuids
        if idle.stage == "warn" or action == "notify" or r.stop_intent:
            message = self.message(job, idle, action)
            if tx.try_update_job(replace(r, job=replace(job, message=message))) is not None:
                changed.append(replace(job, message=message))
            return [{"type": "idle_warning", "data": data}]
        self.reclaims_total += 1
        self.idle_gpus.pop(job.id, None)
        if job.is_lease and context is not None:  # its GPU still shows a process: ended by the drain (.stops)
            said = replace(job, message=self.message(job, idle, action, draining=True))
            if tx.try_update_job(replace(r, job=said, stop_intent="idle", stop_requested_at=now,
                                         stop_actor="scheduler")) is not None:
                changed.append(said)
        elif job.is_lease:
            done = job.transition(JobState.CANCELLED, finished_at=now, message=self.message(job, idle, action))
            if tx.try_update_job(replace(r, job=done)) is not None:
                tx.close_usage(job.id, now)
                changed.append(done)
        else:
            intent = "idle_stop" if action == "stop" else "idle"
            if tx.try_update_job(replace(r, job=replace(job, message=idle.reason), stop_intent=intent,
                                         stop_requested_at=now, stop_actor="scheduler")) is not None:
                stops.append((job.id, self.stop_grace_s, job.spec.checkpointable))
        return [{"type": "idle_warning", "data": data}, {"type": "reclaimed", "data": data}]  # panel: refresh

    def _context(self, job: Job, idle: IdleAction, now: datetime) -> dict[str, list[list[Any]]] | None:
        """What keeps an idle-reclaimed lease's GPU from being free: ``{uuid: [[pid, account]]}``
        of the processes on its GPUs in the newest samples (NVML's process list), ``{}`` when not
        known yet (the drain waits for a sample); None when nothing is on them — or no process list
        is read — and the lease is released at once."""
        if self.gpu_processes is None or job.allocation is None:
            return None
        try:
            seen = self.gpu_processes(job.allocation.all_gpu_uuids(), leaving=job.id, since=idle.idle_since or now)
        except Exception:  # the drain reads it again, and ends the lease on its own failure
            log.exception("lease %s: reading the processes on its GPUs failed", job.id)
            return {}
        if seen is None:
            return {}
        return {uuid: [[pid, account] for pid, account in found] for uuid, found in seen.items()} or None

    @staticmethod
    def message(job: Job, idle: IdleAction, action: str, *, draining: bool = False) -> str:
        """The one sentence the user sees (job/lease message, kernel, audit); ``draining``: a
        revoked lease whose GPU a process may still hold (it ends once it is free)."""
        if draining:
            return (f"reclaimed while idle: {idle.reason}; GPUs revoked — given to other work once no process "
                    "of the kernel still uses them")
        if idle.stage == "warn":
            return f"idle warning: {idle.reason}"
        if idle.stage == "clear":
            return f"idle warning withdrawn: {idle.reason}"
        if action == "notify":
            return f"idle (reported, nothing freed): {idle.reason}"
        if job.is_lease:
            kept = f", {KERNEL_KEPT}" if job.spec.kernel_id and KERNEL_KEPT not in idle.reason else ""
            return f"reclaimed while idle: {idle.reason}; GPUs released{kept}"
        return f"reclaimed while idle: {idle.reason}; " + ("stopping" if action == "stop" else "requeueing")
