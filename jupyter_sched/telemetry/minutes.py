"""Who used a GPU in each minute: what the one-minute rollups keep beside the numbers (pure).

The rollup ring keeps 32 bytes per sample and no processes, so the monitor feeds every
collection here too and takes, when it drains a minute, two facts per whole-GPU minute:

- **job_shares** — on a GPU several jobs hold at once (time-sliced / shared), each job's part of
  the minute's utilization from per-process data (SM share of its processes, else the memory they
  hold: :func:`jupyter_sched.accounting.attribution.process_split`); samples without per-process
  data count with the allocation shares. The part is utilization-weighted,
  ``sum(u_s * w_js) / sum(u_s)`` over the minute's valid samples, so the report's
  ``utilization_avg * part`` equals the per-sample integral exactly. Written only when at least one
  sample of the minute had per-process data (otherwise the report's allocation share is the same).
- **processes** — on a GPU nobody was allocated, the processes seen: ``[pid, user, age_s]``
  (user ``""`` and age None where unknown; age at the minute's last sighting), at most
  :data:`MAX_PROCESSES`, for admins' unattributed-usage report (case 021).

It also remembers **who held each GPU when** (:meth:`MinuteAttribution.held_spans`: runs of
consecutive samples with the same holders), so a job's minute is computed from the samples taken
while the job held the GPU — the same samples live and after roll-up (new user 14, N26: a job that
held a GPU for 11 s of a minute at 38 % showed 38 % live and 6.3 % once the minute was rolled up
over all 60 s, most of them before the job started).

MIG instances are left out (their allocations name ``MIG-...`` UUIDs and are never shared).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..accounting.attribution import process_split
from ..model.samples import GpuSample, Validity

__all__ = ["MAX_PROCESSES", "MinuteAttribution"]

MAX_PROCESSES = 16
"""Processes kept per unallocated GPU-minute (the largest memory holders first)."""


def _minute(at: datetime) -> datetime:
    return at.astimezone(timezone.utc).replace(second=0, microsecond=0)


@dataclass
class _Span:
    """Consecutive samples of one GPU taken while the same jobs held it: ``[first, last]`` sample
    timestamps (seconds since the epoch, as the ring stores them)."""

    first: float
    last: float
    jobs: frozenset[str]


@dataclass
class _Shares:
    weighted: dict[str, float] = field(default_factory=dict)   # job -> sum(u_s * w_js)
    plain: dict[str, float] = field(default_factory=dict)      # job -> sum(w_js) (for minutes at 0 %)
    utilization: float = 0.0                                    # sum(u_s)
    samples: int = 0
    from_processes: bool = False


class MinuteAttribution:
    """Accumulates :data:`job_shares <MinuteAttribution>` and unallocated processes per GPU-minute.

    Args:
        job_of: the job a pid belongs to (its own or an ancestor's pid is a job's root), or None.
        describe: ``(user, start time)`` of a pid, or None when it cannot be read.
    """

    def __init__(self, job_of: Callable[[int], str | None],
                 describe: Callable[[int], tuple[str, datetime | None] | None]) -> None:
        self.job_of = job_of
        self.describe = describe
        self._holders: dict[str, dict[str, float]] = {}
        self._shares: dict[tuple[str, datetime], _Shares] = {}
        self._processes: dict[tuple[str, datetime], dict[int, tuple[int, str, float | None, int]]] = {}
        self._spans: dict[str, list[_Span]] = {}
        self.attributing = False
        """True once told the allocations (a server whose engine does not lead is never told, and
        then knows nothing of who held a GPU: its minutes carry no ``job_minutes``)."""

    def set_holders(self, holders: Mapping[str, Mapping[str, float]]) -> None:
        """Replace ``{gpu uuid: {job id: allocation share in GPUs}}`` of current allocations."""
        self._holders = {gpu: dict(jobs) for gpu, jobs in holders.items() if jobs}
        self.attributing = True

    def holders_of(self, gpu: str) -> frozenset[str]:
        """The job ids allocated ``gpu`` now (as last told)."""
        return frozenset(self._holders.get(gpu, ()))

    def add_holders(self, holders: Mapping[str, Mapping[str, float]]) -> None:
        """Add ``{gpu uuid: {job id: allocation share in GPUs}}`` to the current allocations."""
        for gpu, jobs in holders.items():
            if jobs:
                self._holders[gpu] = {**self._holders.get(gpu, {}), **jobs}
        self.attributing = True

    def observe(self, samples: Iterable[GpuSample]) -> None:
        """Account one collection's samples (validity already judged)."""
        for s in samples:
            if s.mig_instance is not None:
                continue
            jobs = self._holders.get(s.gpu_uuid)
            self._note_holders(s.gpu_uuid, s.timestamp.timestamp(), frozenset(jobs or ()))
            key = (s.gpu_uuid, _minute(s.timestamp))
            if jobs is None:
                if s.processes:
                    self._note_processes(key, s)
                continue
            if len(jobs) < 2 or s.validity is not Validity.VALID or s.utilization_pct is None:
                continue
            order = sorted(jobs)
            by_process = process_split(s.processes, order, self.job_of) if s.processes else None
            total = sum(jobs.values())
            split = by_process if by_process is not None else [jobs[j] / total for j in order]
            acc = self._shares.setdefault(key, _Shares())
            acc.from_processes = acc.from_processes or by_process is not None
            acc.samples += 1
            acc.utilization += s.utilization_pct
            for job, weight in zip(order, split, strict=True):
                acc.weighted[job] = acc.weighted.get(job, 0.0) + s.utilization_pct * weight
                acc.plain[job] = acc.plain.get(job, 0.0) + weight

    def _note_holders(self, gpu: str, at: float, jobs: frozenset[str]) -> None:
        spans = self._spans.setdefault(gpu, [])
        if spans and spans[-1].jobs == jobs and spans[-1].last <= at:
            spans[-1].last = at
        else:
            spans.append(_Span(at, at, jobs))

    def held_spans(self, gpu_uuid: str, job_id: str, since: float | None = None,
                   until: float | None = None) -> list[tuple[float, float]] | None:
        """``[(first, last), ...]`` sample timestamps (s since the epoch, inclusive) of the runs of
        samples of ``gpu_uuid`` taken while ``job_id`` held it, overlapping ``[since, until]``;
        None when this GPU was never seen (nothing is known about who held it)."""
        spans = self._spans.get(gpu_uuid)
        if spans is None:
            return None
        return [(sp.first, sp.last) for sp in spans if job_id in sp.jobs
                and (since is None or sp.last >= since) and (until is None or sp.first <= until)]

    def holders_between(self, gpu_uuid: str, since: float, until: float) -> list[str] | None:
        """The jobs that held ``gpu_uuid`` at some sample in ``[since, until)``, sorted; None when
        this GPU was never seen."""
        spans = self._spans.get(gpu_uuid)
        if spans is None:
            return None
        return sorted({job for sp in spans if sp.last >= since and sp.first < until for job in sp.jobs})

    def _note_processes(self, key: tuple[str, datetime], s: GpuSample) -> None:
        seen = self._processes.setdefault(key, {})
        for p in s.processes:
            about = self.describe(p.pid)
            user, started = about if about is not None else ("", None)
            age = round((s.timestamp - started).total_seconds(), 1) if started is not None else None
            seen[p.pid] = (p.pid, user, age, int(p.used_memory_mib or 0))

    def take(self, gpu_uuid: str, minute: datetime) -> dict[str, str | None]:
        """``{"job_shares": JSON or None, "processes": JSON or None}`` of one drained GPU-minute
        (forgotten afterwards)."""
        key = (gpu_uuid, _minute(minute))
        shares = self._shares.pop(key, None)
        procs = self._processes.pop(key, None)
        out: dict[str, str | None] = {"job_shares": None, "processes": None}
        if shares is not None and shares.from_processes and shares.samples:
            if shares.utilization > 0:
                parts = {job: w / shares.utilization for job, w in shares.weighted.items()}
            else:
                parts = {job: w / shares.samples for job, w in shares.plain.items()}
            out["job_shares"] = json.dumps({job: round(v, 6) for job, v in sorted(parts.items())})
        if procs:
            kept = sorted(procs.values(), key=lambda p: (-p[3], p[0]))[:MAX_PROCESSES]
            out["processes"] = json.dumps([[pid, user, age] for pid, user, age, _ in kept])
        return out

    def forget_before(self, minute: datetime) -> None:
        """Drop minutes before ``minute`` that were never drained (bounded memory)."""
        cut = _minute(minute)
        for table in (self._shares, self._processes):
            for key in [k for k in table if k[1] < cut]:
                del table[key]
        edge = cut.timestamp()
        for gpu, spans in self._spans.items():
            self._spans[gpu] = [sp for sp in spans if sp.last >= edge]
