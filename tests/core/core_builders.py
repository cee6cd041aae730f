"""Builders for core tests: ``make_node(gpus=8, model=...)``, ``make_job(gpus=2, priority=...)`` (STYLE §10).

Also a tiny scenario driver, :class:`Scenario`, that runs ``run_cycle`` and applies its result
with :func:`jupyter_sched.scheduling.apply_result`, so multi-step cases read as timelines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from jupyter_sched.backfill.progress import ProgressFit, ProgressReport
from jupyter_sched.model import (
    GPU,
    Allocation,
    Budget,
    Health,
    Inventory,
    Job,
    JobSpec,
    JobState,
    Node,
    PriorityClass,
    Quota,
    QuotaSet,
    ResourceRequest,
    Taint,
    TeamPolicy,
)
from jupyter_sched.scheduling import CycleResult, SchedulingProfile, Snapshot, apply_result, run_cycle
from jupyter_sched.scheduling.apply import stop_jobs
from jupyter_sched.scheduling.snapshot import UsageHistory

T0 = datetime(2025, 3, 30, 12, 0, tzinfo=timezone.utc)


def straight_report(started: datetime, now: datetime, total_s: float) -> ProgressReport:
    """A job's progress: four reports on a straight line to ``total_s`` seconds of run (its projected end,
    ``started`` + ``total_s``), the last one at ``now``."""
    ran = (now - started).total_seconds()
    fit = ProgressFit()
    for k in range(1, 5):
        fit = fit.add(ran * k / 4, ran * k / 4 / total_s)
    return ProgressReport(fraction=ran / total_s, at=now, ran_s=ran, fit=fit)


def pairs(n: int = 8) -> list[tuple[int, ...]]:
    """NVLink peers for adjacent pairs (0-1, 2-3, ...)."""
    return [((i ^ 1),) for i in range(n)]


def make_node(name: str = "n1", *, gpus: int = 8, model: str = "A100-80GB", memory_mib: int = 81920,
              nvlink: Sequence[tuple[int, ...]] | None = None, unhealthy: Iterable[int] = (),
              foreign: Mapping[int, int] | None = None, labels: Mapping[str, str] | None = None,
              taints: Sequence[Taint] = (), ready: bool = True, unschedulable: bool = False,
              cpu_millis: int = 0, host_memory_mib: int = 0) -> Node:
    bad = set(unhealthy)
    foreign = foreign or {}
    gpu_list = tuple(
        GPU(uuid=f"GPU-{name}-{i}", index=i, node=name, model=model, memory_mib=memory_mib,
            nvlink_peers=tuple(nvlink[i]) if nvlink else (),
            health=Health.UNHEALTHY if i in bad else Health.HEALTHY,
            health_reason="Xid 79" if i in bad else "", foreign_memory_mib=foreign.get(i, 0))
        for i in range(gpus))
    return Node(name=name, gpus=gpu_list, labels=dict(labels or {}), taints=tuple(taints), ready=ready,
                unschedulable=unschedulable, cpu_millis=cpu_millis, memory_mib=host_memory_mib)


def make_job(job_id: str = "j1", *, gpus: int = 1, milli: int = 1000, priority: str = "normal",
             team: str = "default", user: str = "alice", models: Sequence[str] = (), min_memory_mib: int = 0,
             workers: int = 1, nvlink: bool = False, submitted: float = 0.0, time_limit_s: float | None = None,
             tolerations: Sequence[str] = (), node_selector: Mapping[str, str] | None = None,
             checkpointable: bool = False, cpu_millis: int = 0, memory_mib: int = 0,
             mig_profile: str | None = None, unlimited: bool = False) -> Job:
    spec = JobSpec(name=job_id, user=user, team=team, priority=PriorityClass(priority),
                   resources=ResourceRequest(gpus=gpus, gpu_milli=milli, gpu_models=tuple(models),
                                             min_memory_mib=min_memory_mib, workers=workers, nvlink=nvlink,
                                             tolerations=tuple(tolerations), node_selector=dict(node_selector or {}),
                                             cpu_millis=cpu_millis, memory_mib=memory_mib, mig_profile=mig_profile),
                   time_limit_s=time_limit_s, command=("python", "x.py"), checkpointable=checkpointable,
                   unlimited=unlimited)
    return Job(id=job_id, spec=spec, submitted_at=T0 + timedelta(minutes=submitted))


def running(job: Job, node: str = "n1", indices: Sequence[int] | None = None, *, started: float = -60.0,
            milli: int = 1000) -> Job:
    """``job`` as already running on ``node``'s GPUs ``indices`` (default 0..gpus-1; started minutes from T0)."""
    at = T0 + timedelta(minutes=started)
    if indices is None:
        indices = range(job.spec.resources.gpus)
    return replace(job, state=JobState.RUNNING, admitted_at=at, started_at=at,
                   allocation=Allocation(node=node, gpu_uuids=tuple(f"GPU-{node}-{i}" for i in indices),
                                         gpu_milli=milli))


def quotas(*lines: Quota, budgets: Sequence[Budget] = (), teams: Sequence[TeamPolicy] = ()) -> QuotaSet:
    return QuotaSet(quotas=tuple(lines), budgets=tuple(budgets), teams=tuple(teams))


def snapshot(nodes: Sequence[Node], jobs: Sequence[Job] = (), *, quota: QuotaSet | None = None,
             now: datetime = T0, usage: UsageHistory | None = None) -> Snapshot:
    return Snapshot(now=now, inventory=Inventory(nodes=tuple(nodes)), jobs=tuple(jobs),
                    quotas=quota or QuotaSet(), usage=usage or UsageHistory())


class Scenario:
    """A timeline: submit jobs, run cycles, finish jobs; keeps every result for assertions."""

    def __init__(self, nodes: Sequence[Node], *, quota: QuotaSet | None = None,
                 profile: SchedulingProfile | None = None, now: datetime = T0, stop_at_once: bool = True) -> None:
        self.snap = snapshot(nodes, quota=quota, now=now)
        self.profile = profile
        self.stop_at_once = stop_at_once
        self.results: list[CycleResult] = []

    def at(self, minutes: float) -> Scenario:
        self.snap = replace(self.snap, now=T0 + timedelta(minutes=minutes))
        return self

    def submit(self, *jobs: Job) -> Scenario:
        self.snap = replace(self.snap, jobs=(*self.snap.jobs, *jobs))
        return self

    def finish(self, *job_ids: str) -> Scenario:
        self.snap = replace(self.snap, jobs=tuple(j for j in self.snap.jobs if j.id not in job_ids))
        return self

    def stopped(self, *job_ids: str) -> Scenario:
        """Victims still in their grace period (``stop_at_once=False``) have exited."""
        self.snap = stop_jobs(self.snap, frozenset(job_ids))
        return self

    def cycle(self) -> CycleResult:
        result = run_cycle(self.snap, self.profile)
        self.results.append(result)
        self.snap = apply_result(self.snap, result, stop_at_once=self.stop_at_once)
        return result

    def evictions(self) -> list[str]:
        """Every victim of every cycle so far, in order."""
        return [p.job_id for r in self.results for p in r.preemptions]

    def job(self, job_id: str) -> Job:
        return next(j for j in self.snap.jobs if j.id == job_id)

    def state(self, job_id: str) -> str:
        return self.job(job_id).state.value

    def used_gpus(self) -> float:
        return sum(j.spec.resources.total_milli for j in self.snap.jobs if j.state.holds_gpus) / 1000
