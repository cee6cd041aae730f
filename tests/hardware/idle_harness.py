"""Drive the idle ladder the way the engine does: samples through the validator into the sample
store, the store's per-minute input into ``evaluate_idle``, each step fed back into the ladder.

Builders for the telemetry cases (009, 013, 025, 026): no double is involved; every part is the
production code (validator, ring buffer, idle detector, ladder).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from jupyter_sched.model import Inventory, Job, JobKind, JobSpec, JobState, PriorityClass
from jupyter_sched.model.job import Allocation
from jupyter_sched.model.samples import GpuSample, ProcessUsage
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy, LadderState, advance_ladder, evaluate_idle
from jupyter_sched.reclaim.candidates import IdleCandidate, idle_candidates
from jupyter_sched.scheduling.snapshot import IdleAction, Snapshot
from jupyter_sched.telemetry import SampleStore, idle_input
from jupyter_sched.telemetry.validity import SampleValidator

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def make_job(job_id: str, gpus: Sequence[str], *, kind: JobKind = JobKind.TRAINING, user: str = "dana",
             team: str = "vision", priority: PriorityClass = PriorityClass.NORMAL) -> Job:
    spec = JobSpec(name=job_id, user=user, team=team, kind=kind, priority=priority,
                   kernel_id="k-" + job_id if kind is JobKind.LEASE else None)
    return Job(id=job_id, spec=spec, state=JobState.RUNNING, started_at=T0,
               allocation=Allocation(node="n1", gpu_uuids=tuple(gpus)))


def gpu_sample(uuid: str, when: datetime, util: float | None, *, mem: float | None = 0.0, pids: Sequence[int] = (),
               process_count: int | None = None) -> GpuSample:
    """An NVML-shaped sample: processes listed, process count known."""
    processes = tuple(ProcessUsage(pid=p, used_memory_mib=int(mem or 0) // max(len(pids), 1)) for p in pids)
    return GpuSample(gpu_uuid=uuid, mig_instance=None, timestamp=when, utilization_pct=util, memory_used_mib=mem,
                     memory_total_mib=81559.0, processes=processes,
                     process_count=len(processes) if process_count is None else process_count)


@dataclass
class LadderRun:
    """What happened over a timeline: ladder steps per job and the idle list at each step."""

    steps: list[tuple[float, IdleAction]] = field(default_factory=list)
    candidates: dict[float, tuple[IdleCandidate, ...]] = field(default_factory=dict)
    store: SampleStore = field(default_factory=SampleStore)

    def stages(self, job_id: str) -> list[tuple[float, str]]:
        return [(m, a.stage) for m, a in self.steps if a.job_id == job_id]

    def of(self, job_id: str, stage: str) -> IdleAction:
        return next(a for _, a in self.steps if a.job_id == job_id and a.stage == stage)


def run_ladder(jobs: Iterable[Job], sampler: Callable[[float], list[GpuSample]], policies: IdlePolicies | IdlePolicy,
               *, until: float, every: float = 1.0, per_minute: bool = True,
               kernels: Callable[[float], Mapping[str, Mapping[str, object]]] | None = None,
               inventory: Inventory | None = None) -> LadderRun:
    """Sample every ``every`` minutes from 0 to ``until`` (``sampler(minute)``), validate and store
    the samples as the telemetry monitor does, and run the idle ladder on the store's input."""
    jobs = list(jobs)
    policies = policies if isinstance(policies, IdlePolicies) else IdlePolicies(default=policies)
    inventory = inventory or Inventory()
    run = LadderRun(store=SampleStore(retention_s=(until + 5) * 60, rate_hz=1 / (every * 60)))
    validator = SampleValidator()
    ladders = {job.id: LadderState() for job in jobs}
    lookback = max(p.window_s + p.grace_s for p in policies.all()) + 3600
    m = 0.0
    while m <= until + 1e-9:
        now = at(m)
        marked, relabels = validator.check(sampler(m))
        run.store.add(marked)
        for relabel in relabels:
            run.store.relabel(relabel.key, relabel.count, "util_latch")
        telemetry = {job.id: idle_input(job, run.store, inventory, now=now, lookback_s=lookback,
                                        ladder=ladders[job.id], per_minute=per_minute) for job in jobs}
        snapshot = Snapshot(now=now, inventory=inventory, jobs=tuple(jobs), telemetry=telemetry,
                            kernels=dict(kernels(m)) if kernels else {})
        run.candidates[m] = idle_candidates(snapshot, policies)
        for action in evaluate_idle(snapshot, policies):
            run.steps.append((m, action))
            ladders[action.job_id] = advance_ladder(ladders[action.job_id], action, now=now)
        m += every
    return run
