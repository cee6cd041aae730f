"""Who used which GPU: telemetry joined to the scheduler's allocations on GPU UUID and time (pure).

The attribution key is ``(GPU UUID, sample time ∈ [start, end))`` of the scheduler's own
allocation intervals (case 021). Exporter labels (``pod``/``namespace``/``container`` on
dcgm-exporter series) are often empty or missing (NVIDIA/dcgm-exporter#58, #188, #342), so they
are only a cross-check: a label that names another pod than the allocated job is a
``label_mismatch`` warning, and the allocation wins.

Rules:

1. Only *valid* samples are read (``jupyter_sched.model.samples``): blank and suspect ones are
   left out of means and of activity hours.
2. A sample stands for the time until the next sample of its GPU, at most ``max_gap_s``.
3. A sample inside one job's interval is that job's. On a shared (time-sliced) GPU, several
   intervals cover the instant: the utilization is split by per-process data where the sample has
   it (the pids of each job, weighted by SM share, else by memory), else by allocation share.
4. A sample of a GPU nobody was allocated is *unallocated*; when it shows use (activity at or
   above ``threshold_pct``, memory in use, or a process) it is *unattributed usage*, reported to
   admins with the pids (and their user and age where known) and never charged to anyone.
5. GPU-hours come from allocation intervals only (``accounting.usage``): telemetry presence never
   changes them (a run of scrapes with no series for a UUID reduces nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ..model import to_iso
from ..model.samples import GpuSample, ProcessUsage
from .usage import UsageInterval

__all__ = ["Attribution", "JobUsage", "LabelMismatch", "UnattributedUsage", "attribute_usage", "label_mismatch",
           "process_split"]


@dataclass(frozen=True, slots=True)
class LabelMismatch:
    """A sample whose exporter ``pod`` label names something other than the allocated job.

    Attributes:
        gpu_uuid / at: which sample. label: the ``namespace/pod`` it carried. job_id: the allocation.
    """

    gpu_uuid: str
    at: datetime
    label: str
    job_id: str

    def message(self) -> str:
        """``label_mismatch: GPU-bbbb at 10:15: pod label team-x/other-pod-zzz, allocated to j-102``."""
        return (f"label_mismatch: {self.gpu_uuid} at {to_iso(self.at)}: pod label {self.label}, allocated to "
                f"{self.job_id} (the allocation wins)")


@dataclass(frozen=True, slots=True)
class JobUsage:
    """Telemetry of one job: samples charged, mean utilization and utilized GPU-hours.

    Attributes:
        job_id / user / team: whose.
        samples: valid samples charged to it.
        mean_utilization_pct: mean of its (split) utilization over those samples (None = none).
        utilized_gpu_hours: utilization x held time, GPU-hours.
    """

    job_id: str
    user: str
    team: str
    samples: int
    mean_utilization_pct: float | None
    utilized_gpu_hours: float


@dataclass(frozen=True, slots=True)
class UnattributedUsage:
    """Use of a GPU that nobody was allocated (admins only).

    Attributes:
        gpu_uuid / node: which GPU. start / end: first sample with use, end of the last one's span.
        gpu_hours: hours with activity at or above the threshold (or memory/process held).
        max_utilization_pct: highest valid reading. processes: ``(pid, user, age_s)`` seen.
    """

    gpu_uuid: str
    node: str
    start: datetime
    end: datetime
    gpu_hours: float
    max_utilization_pct: float
    processes: tuple[tuple[int, str, float | None], ...] = ()

    def message(self) -> str:
        """``GPU-cccc: 1.0 GPU-hour of activity with no scheduler allocation (10:00-11:00)`` (an en dash
        between the times, as case 021 writes it)."""
        hours = f"{self.gpu_hours:.1f} GPU-hour{'s' if round(self.gpu_hours, 1) != 1.0 else ''}"
        span = f"{self.start.strftime('%H:%M')}\u2013{self.end.strftime('%H:%M')}"
        pids = ""
        if self.processes:
            pids = "; " + ", ".join(f"pid {pid}" + (f" of {user}" if user else "") for pid, user, _ in self.processes)
        return f"{self.gpu_uuid}: {hours} of activity with no scheduler allocation ({span}){pids}"


@dataclass(frozen=True, slots=True)
class Attribution:
    """The join's outcome (module docstring).

    Attributes:
        jobs: per job with at least one interval in the window, by job id.
        unattributed: GPUs used outside any allocation.
        unallocated: ``(gpu, time, utilization %)`` of samples on GPUs nobody held that show no use.
        mismatches: label mismatches, one per (GPU, job, label).
    """

    jobs: Mapping[str, JobUsage] = field(default_factory=dict)
    unattributed: tuple[UnattributedUsage, ...] = ()
    unallocated: tuple[tuple[str, datetime, float | None], ...] = ()
    mismatches: tuple[LabelMismatch, ...] = ()


def label_mismatch(sample: GpuSample, job_id: str, expected_pod_prefix: str | None = None) -> LabelMismatch | None:
    """A mismatch when ``sample`` carries a non-empty ``pod`` label that does not start with the
    job's pod name prefix (default: the job id); an empty or missing label is never one."""
    if not sample.pod:
        return None
    prefix = expected_pod_prefix or job_id
    if sample.pod == prefix or sample.pod.startswith(prefix + "-"):
        return None
    label = f"{sample.namespace}/{sample.pod}" if sample.namespace else sample.pod
    return LabelMismatch(gpu_uuid=sample.gpu_uuid, at=sample.timestamp, label=label, job_id=job_id)


def _covering(intervals: Sequence[UsageInterval], at: datetime, now: datetime) -> list[UsageInterval]:
    return [iv for iv in intervals if iv.started_at <= at < (iv.ended_at or now)]


def process_split(processes: Iterable[ProcessUsage], jobs: Sequence[str],
                  job_of: Callable[[int], str | None]) -> list[float] | None:
    """Each of ``jobs``' part of a shared GPU at one sample from per-process data (rule 3): by the
    SM share of its processes, else (SM not reported) by the GPU memory they hold; sums to 1.
    None when the processes say nothing about these jobs (then split by allocation share).

    Args:
        processes: the sample's processes. jobs: the jobs holding the GPU at that instant.
        job_of: the job a pid belongs to (None: none of ``jobs``' processes).
    """
    per_job = {job: [0.0, 0.0] for job in jobs}
    for p in processes:
        owner = job_of(p.pid)
        if owner in per_job:
            per_job[owner][0] += p.sm_util_pct or 0.0
            per_job[owner][1] += float(p.used_memory_mib or 0)
    for k in (0, 1):  # SM share first, memory share when SM is not reported
        total = sum(w[k] for w in per_job.values())
        if total > 0:
            return [per_job[job][k] / total for job in jobs]
    return None


def _weights(sample: GpuSample, holders: Sequence[UsageInterval], pids: Mapping[str, Iterable[int]]) -> list[float]:
    """Each holder's part of the GPU at this sample (rule 3); sums to 1."""
    if len(holders) == 1:
        return [1.0]
    if sample.processes:
        owner = {pid: job for job, mine in pids.items() for pid in mine}
        split = process_split(sample.processes, [iv.job_id for iv in holders], owner.get)
        if split is not None:
            return split
    shares = sum(iv.share for iv in holders)
    return [iv.share / shares for iv in holders]


def attribute_usage(intervals: Iterable[UsageInterval], samples: Iterable[GpuSample], *, now: datetime,
                    max_gap_s: float = 120.0, threshold_pct: float = 5.0,
                    pids: Mapping[str, Iterable[int]] | None = None,
                    expected_pods: Mapping[str, str] | None = None,
                    process_info: Mapping[int, tuple[str, float | None]] | None = None) -> Attribution:
    """Join samples to allocation intervals (module docstring).

    Args:
        intervals: allocation intervals (``accounting.usage``; open ones end at ``now``).
        samples: GPU samples (any order; MIG-instance samples are skipped: their allocations name
            ``MIG-...`` UUIDs).
        now: end of open intervals and of the last sample's span.
        max_gap_s: longest span one sample stands for, seconds (use the scrape interval).
        threshold_pct: activity at or above this is use on an unallocated GPU.
        pids: ``{job id: pids}`` for per-process splitting of shared GPUs.
        expected_pods: ``{job id: pod name prefix}`` for the label cross-check (default: the job id).
        process_info: ``{pid: (user, age_s)}`` for the unattributed report.
    """
    by_gpu_iv: dict[str, list[UsageInterval]] = {}
    for iv in intervals:
        by_gpu_iv.setdefault(iv.gpu_uuid, []).append(iv)
    by_gpu: dict[str, list[GpuSample]] = {}
    for s in samples:
        if s.mig_instance is None:
            by_gpu.setdefault(s.gpu_uuid, []).append(s)
    gap = timedelta(seconds=max_gap_s)
    sums: dict[str, list[float]] = {}  # job -> [samples, sum util, utilized GPU-s]
    unattributed: list[UnattributedUsage] = []
    unallocated: list[tuple[str, datetime, float | None]] = []
    mismatches: dict[tuple[str, str, str], LabelMismatch] = {}
    info = process_info or {}
    for gpu, rows in by_gpu.items():
        rows.sort(key=lambda s: s.timestamp)
        held = by_gpu_iv.get(gpu, [])
        used_s = 0.0
        first: datetime | None = None
        last_end: datetime | None = None
        peak = 0.0
        procs: dict[int, tuple[int, str, float | None]] = {}
        for i, s in enumerate(rows):
            end = s.timestamp + gap  # rule 2: a sample stands until the next one, at most max_gap_s, never past now
            if i + 1 < len(rows):
                end = min(end, rows[i + 1].timestamp)
            span = max(0.0, (min(end, now) - s.timestamp).total_seconds())
            holders = _covering(held, s.timestamp, now)
            util = s.activity_pct if s.counts_as_activity else None
            if holders:
                for iv, weight in zip(holders, _weights(s, holders, pids or {}), strict=True):
                    mismatch = label_mismatch(s, iv.job_id, (expected_pods or {}).get(iv.job_id))
                    if mismatch is not None:
                        mismatches.setdefault((gpu, iv.job_id, mismatch.label), mismatch)
                    if util is None:
                        continue
                    acc = sums.setdefault(iv.job_id, [0.0, 0.0, 0.0])
                    part = util * weight if len(holders) > 1 else util
                    acc[0] += 1
                    acc[1] += part
                    acc[2] += part / 100.0 * span
                continue
            in_use = (util is not None and util >= threshold_pct) or bool(s.memory_used_mib) or bool(s.processes)
            if not in_use:
                unallocated.append((gpu, s.timestamp, util))
                continue
            used_s += span
            first = first or s.timestamp
            last_end = s.timestamp + timedelta(seconds=span)
            peak = max(peak, util or 0.0)
            for p in s.processes:
                user, age = info.get(p.pid, ("", None))
                procs[p.pid] = (p.pid, user, age)
        if first is not None and last_end is not None:
            unattributed.append(UnattributedUsage(gpu_uuid=gpu, node=rows[0].node, start=first, end=last_end,
                                                  gpu_hours=used_s / 3600.0, max_utilization_pct=peak,
                                                  processes=tuple(procs.values())))
    owners = {iv.job_id: iv for ivs in by_gpu_iv.values() for iv in ivs}
    jobs = {}
    for job_id, iv in owners.items():
        n, total, utilized = sums.get(job_id, [0.0, 0.0, 0.0])
        jobs[job_id] = JobUsage(job_id=job_id, user=iv.user, team=iv.team, samples=int(n),
                                mean_utilization_pct=total / n if n else None, utilized_gpu_hours=utilized / 3600.0)
    return Attribution(jobs=jobs, unattributed=tuple(sorted(unattributed, key=lambda u: -u.gpu_hours)),
                       unallocated=tuple(unallocated), mismatches=tuple(mismatches.values()))
