"""The engine's telemetry: a sampling thread, the sample store, the pid registry and idle inputs.

:class:`TelemetryMonitor` owns one collector (simulated, NVML, dcgm-exporter or Prometheus; see
:mod:`jupyter_sched.telemetry`) and a :class:`~jupyter_sched.telemetry.SampleStore`:

- a daemon thread calls :meth:`TelemetryMonitor.sample` every ``interval_s`` seconds (a collector
  may block on NVML or HTTP, so never on the server's event loop); a failed collection
  (:class:`~jupyter_sched.errors.TelemetryError`) is counted and logged, the last good samples stay;
- every collection goes through the :class:`~jupyter_sched.telemetry.validity.SampleValidator`
  (the utilization latch needs history; a confirmed latch relabels the stored samples of its run)
  and the :class:`~jupyter_sched.telemetry.health.HealthTracker` (Xid and other health evidence);
- exporter ``pod`` labels are checked against the allocations the engine reports
  (:meth:`set_allocations`): a label that names another pod is logged as ``label_mismatch``, once
  per GPU, job and label per hour (case 021: the allocation wins);
- the engine tells it which processes hold which GPU (:meth:`set_holders`: job process groups and
  lease kernels' pids), which the simulated collector measures and the NVML inventory subtracts
  from foreign memory (case 014);
- each decision cycle the engine asks for :meth:`idle_inputs` (``Snapshot.telemetry``) — the
  trailing window of each running allocation's samples plus its persisted ladder state;
- completed minutes are drained as 1-minute rollups into ``rollup_sink`` (history), each whole-GPU
  minute with who used it (:mod:`jupyter_sched.telemetry.minutes`): a shared GPU's split per job
  from per-process data (pids mapped to jobs through the job roots the engine reports with
  :meth:`set_jobs`, and their descendants), and the pid, user and age of processes on a GPU
  nobody was allocated; and each job's own minute on every GPU it held (``job_minutes``: the
  minute over the samples taken while it held the GPU, :meth:`TelemetryMonitor.job_samples`
  gives the same samples live), so a job's utilization means the same before and after roll-up.

Thread safety: the sample store is guarded by one lock; every public method may be called from
any thread.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..accounting.attribution import label_mismatch
from ..errors import TelemetryError
from ..model import Inventory, Job, parse_utc, to_iso
from ..model.samples import GpuSample
from ..reclaim import IdleInput, LadderState
from ..telemetry import RollupRow, SampleStore, idle_input, rollup_to_dict
from ..telemetry.health import HealthEvent, HealthTracker, apply_health
from ..telemetry.minutes import MinuteAttribution
from ..telemetry.validity import SampleValidator
from ..telemetry.wire import job_minute_to_dict
from .clock import Clock, SystemClock
from .pid_owners import owner_job, process_about

__all__ = ["HealthAwareInventory", "TelemetryMonitor", "ladder_from_dict", "ladder_to_dict"]

log = logging.getLogger(__name__)

DeviceKey = tuple[str, int | None]
LABEL_WARNING_EVERY_S = 3600.0
"""Seconds between two ``label_mismatch`` log lines for the same GPU, job and label (case 021)."""


def ladder_to_dict(ladder: LadderState) -> dict[str, Any]:
    """LadderState → JSON (stored in the details of every ``idle_*`` audit record)."""
    return {"warned_at": to_iso(ladder.warned_at), "warned_idle_since": to_iso(ladder.warned_idle_since),
            "keepalive_until": to_iso(ladder.keepalive_until), "keepalive_used": ladder.keepalive_used,
            "reclaimed_at": to_iso(ladder.reclaimed_at)}


def ladder_from_dict(data: Mapping[str, Any]) -> LadderState:
    """JSON → LadderState (inverse of :func:`ladder_to_dict`; unknown keys ignored).

    Raises:
        TimestampError: a stored time without UTC offset (never written by :func:`ladder_to_dict`).
    """
    def when(key: str) -> datetime | None:
        value = data.get(key)
        return None if value in (None, "") else parse_utc(str(value), field=f"ladder.{key}")

    return LadderState(warned_at=when("warned_at"), warned_idle_since=when("warned_idle_since"),
                       keepalive_until=when("keepalive_until"), keepalive_used=bool(data.get("keepalive_used")),
                       reclaimed_at=when("reclaimed_at"))


class TelemetryMonitor:
    """Samples GPUs in the background and serves the samples (see module docstring).

    Args:
        collector: a :class:`~jupyter_sched.telemetry.Collector` (``collect(now) -> [GpuSample]``).
        source: what the collector reads, for the API (``"simulated"``, ``"nvml"``, ``"dcgm"``, ``"prometheus"``).
        retention_s: seconds of full-resolution samples kept per device (must cover the longest
            idle lookback; memory is 32 B per sample, see :mod:`jupyter_sched.telemetry.ring`).
        interval_s: seconds between samples (default 1).
        clock: time source (aware UTC; injected).
        rollup_sink: called with the JSON rows (:func:`~jupyter_sched.telemetry.rollup_to_dict`) of
            every completed minute, about once a minute (None = rollups are not kept).
    """

    def __init__(self, collector: Any, *, source: str = "simulated", retention_s: float = 4 * 3600 + 180,
                 interval_s: float = 1.0, clock: Clock | None = None,
                 rollup_sink: Callable[[list[dict[str, Any]]], object] | None = None) -> None:
        if interval_s <= 0:
            raise TelemetryError(f"telemetry interval must be > 0 s (got {interval_s})",
                                 hint="e.g. 1 for one sample per second")
        self.collector = collector
        self.source = source
        self.interval_s = float(interval_s)
        self.clock: Clock = clock or SystemClock()
        self.store = SampleStore(retention_s=retention_s, rate_hz=1.0 / self.interval_s)
        self.retention_s = float(retention_s)
        self.rollup_sink = rollup_sink
        self.errors = 0
        self.last_error = ""
        self.last_sample_at: datetime | None = None
        self._lock = threading.Lock()
        self.validator = SampleValidator()
        self.health = HealthTracker()
        self._allocations: dict[str, str] = {}
        self._label_warned: dict[tuple[str, str, str], datetime] = {}
        self._label_messages: dict[tuple[str, str, str], str] = {}
        self.label_mismatches = 0
        self._holders: dict[str, frozenset[int]] = {}
        self._job_roots: dict[int, str] = {}
        self._pid_jobs: dict[int, str | None] = {}
        self._pid_about: dict[int, tuple[str, datetime | None] | None] = {}
        self.minutes = MinuteAttribution(self._job_of, self._describe)
        self._last_rollup: datetime | None = None
        self._stored_until: datetime | None = None  # minutes before it are in the sink (or lost)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the pid registry -----------------------------------------------------------------------

    def set_holders(self, holders: Mapping[str, Iterable[int]]) -> None:
        """Replace the registry ``{gpu uuid: pids}`` of processes the scheduler runs on each GPU."""
        fresh = {uuid: frozenset(pids) for uuid, pids in holders.items() if pids}
        with self._lock:
            self._holders = fresh

    def holders(self) -> dict[str, list[int]]:
        """``{gpu uuid: pids}`` (the simulated collector's ``pids`` callable)."""
        with self._lock:
            return {uuid: sorted(pids) for uuid, pids in self._holders.items()}

    def set_allocations(self, allocations: Mapping[str, str]) -> None:
        """Replace ``{gpu uuid: job id}`` of current allocations (for the exporter label cross-check)."""
        with self._lock:
            self._allocations = dict(allocations)

    def set_jobs(self, roots: Mapping[str, Iterable[int]], shares: Mapping[str, Mapping[str, float]]) -> None:
        """Replace the jobs' root pids (``{job id: pids}``; their descendants are theirs too) and the
        allocations per GPU (``{gpu uuid: {job id: share in GPUs}}``), for splitting a shared GPU per
        job and naming processes on unallocated GPUs."""
        fresh = {pid: job for job, pids in roots.items() for pid in pids}
        with self._lock:
            if fresh != self._job_roots:
                self._job_roots = fresh
                self._pid_jobs.clear()
            self.minutes.set_holders(shares)

    def add_holders(self, shares: Mapping[str, Mapping[str, float]]) -> None:
        """Add ``{gpu uuid: {job id: share in GPUs}}`` to the current allocations (jobs admitted
        since the last :meth:`set_jobs`)."""
        with self._lock:
            self.minutes.add_holders(shares)

    def _job_of(self, pid: int) -> str | None:
        """The job whose root pid is ``pid`` or one of its ancestors (cached; lock held)."""
        if pid not in self._pid_jobs:
            if len(self._pid_jobs) > _PID_CACHE:
                self._pid_jobs.clear()
            self._pid_jobs[pid] = owner_job(pid, self._job_roots)
        return self._pid_jobs[pid]

    def _describe(self, pid: int) -> tuple[str, datetime | None] | None:
        """``(user, start time)`` of ``pid`` (cached; lock held)."""
        if pid not in self._pid_about:
            if len(self._pid_about) > _PID_CACHE:
                self._pid_about.clear()
            self._pid_about[pid] = process_about(pid)
        return self._pid_about[pid]

    def health_events(self) -> list[HealthEvent]:
        """Health evidence seen in the samples so far (oldest first)."""
        with self._lock:
            return self.health.events()

    def our_pids(self) -> frozenset[int]:
        """Every registered pid (lease kernels and job roots), for foreign-memory detection."""
        with self._lock:
            return frozenset(p for pids in self._holders.values() for p in pids)

    # -- sampling ---------------------------------------------------------------------------------

    def sample(self) -> list[GpuSample]:
        """Collect once now and store the samples; drain completed minutes to the rollup sink.

        Never raises for a collector failure (counted in :attr:`errors`, the last good samples stay).
        """
        now = self.clock.now()
        try:
            samples = list(self.collector.collect(now))
        except TelemetryError as exc:
            self.errors += 1
            self.last_error = exc.message
            log.warning("telemetry collection failed (%s); keeping the last samples", exc.message)
            return []
        except Exception as exc:  # a collector bug must not kill the sampling thread
            self.errors += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.exception("telemetry collector failed")
            return []
        rows: list[dict[str, Any]] = []
        drained = False
        with self._lock:
            samples, relabels = self.validator.check(samples)
            self.store.add(samples)
            for relabel in relabels:
                self.store.relabel(relabel.key, relabel.count, "util_latch")
            for event in self.health.observe(samples):
                log.warning("telemetry: GPU %s on %s is unhealthy: %s (%s)", event.gpu_uuid, event.node or "?",
                            event.problem, event.evidence)
            self._check_labels(samples, now)
            self.minutes.observe(samples)
            self.last_sample_at = now
            if self.rollup_sink is not None and (self._last_rollup is None
                                                 or (now - self._last_rollup).total_seconds() >= 60):
                self._last_rollup, drained = now, True
                rows = self._drained(now)
            if self._last_rollup is None or self._last_rollup == now:
                self.minutes.forget_before(now - timedelta(seconds=self.retention_s))
        self._persist(rows)
        if drained:  # after the write: a report never calls a minute stored before it is
            self._stored_until = now.replace(second=0, microsecond=0)
        return samples

    def _attribution(self, row: RollupRow) -> dict[str, Any]:
        """What a drained whole-GPU minute stores beside its numbers (lock held): who used a shared
        GPU, the processes on an unallocated one, and ``job_minutes`` — each holder's own minute,
        over the samples taken while it held the GPU (``{}``: nobody held it; left out while the
        engine has never said who holds what, e.g. on a server that does not lead)."""
        if not self.minutes.attributing:
            return self.minutes.take(row.gpu_uuid, row.minute)
        lo = row.minute.timestamp()
        until = row.minute + timedelta(seconds=60) - timedelta(microseconds=1)
        jobs: dict[str, Any] = {}
        for job in self.minutes.holders_between(row.gpu_uuid, lo, lo + 60) or ():
            spans = self.minutes.held_spans(row.gpu_uuid, job, lo, lo + 60) or []
            for own in self.store.held_rollups((row.gpu_uuid, None), spans, row.minute, until):
                jobs[job] = job_minute_to_dict(own)
        return {**self.minutes.take(row.gpu_uuid, row.minute), "job_minutes": json.dumps(jobs, sort_keys=True)}

    def job_samples(self, job_id: str, key: DeviceKey, since: datetime,
                    until: datetime | None = None) -> list[GpuSample] | None:
        """The samples of device ``key`` within ``[since, until]`` taken while ``job_id`` held it
        (what its ``job_minutes`` entries are computed from); None for a MIG instance or a device
        never sampled (who held it is not known: use :meth:`window`)."""
        if key[1] is not None:
            return None
        with self._lock:
            spans = self.minutes.held_spans(key[0], job_id, since.timestamp(),
                                            None if until is None else until.timestamp())
            if spans is None:
                return None
            return self.store.held_samples(key, spans, since, until)

    def rolled_until(self) -> datetime | None:
        """The end of the last minute written to the rollup sink (telemetry after it is still
        pending: not in the store yet); None before the first drain or without a sink."""
        return self._stored_until if self.rollup_sink is not None else None

    def _check_labels(self, samples: list[GpuSample], now: datetime) -> None:
        """Log exporter labels that disagree with the allocation, rate-limited (lock held)."""
        for s in samples:
            job_id = self._allocations.get(s.gpu_uuid)
            if job_id is None or not s.pod:
                continue
            mismatch = label_mismatch(s, job_id)
            if mismatch is None:
                continue
            key = (s.gpu_uuid, job_id, mismatch.label)
            last = self._label_warned.get(key)
            if last is not None and (now - last).total_seconds() < LABEL_WARNING_EVERY_S:
                continue
            self._label_warned[key] = now
            self._label_messages[key] = mismatch.message()
            self.label_mismatches += 1
            log.warning("telemetry: %s", mismatch.message())

    def label_warnings(self) -> list[str]:
        """The exporter-label mismatches warned about in the last :data:`LABEL_WARNING_EVERY_S`
        (case 021), oldest first, for admins' inventory view: ``label_mismatch: GPU-b at …: pod
        label ns/other-pod, allocated to j-102 (the allocation wins)``."""
        with self._lock:
            newest = self.last_sample_at
            if newest is None:
                return []
            return [self._label_messages[key] for key, at in sorted(self._label_warned.items(), key=lambda kv: kv[1])
                    if (newest - at).total_seconds() < LABEL_WARNING_EVERY_S and key in self._label_messages]

    def start(self) -> None:
        """Start the sampling thread (idempotent)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="jupyter-sched-telemetry", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the sampling thread and wait for it (at most one collection), then :meth:`flush`."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=max(5.0, 2 * self.interval_s))
            self._thread = None
        self.flush()

    def flush(self) -> int:
        """Write every sample not in the rollup sink yet, the minute under way included, as the service
        stops: the next start seeds its idle tracker from them (``services.idle.seed_monitor``), so a
        restart loses at most one ``interval_s`` of the evidence idle periods are timed from
        (hubadmin22 H11: up to two minutes after the last drain were lost, and an idle period begun
        in them read as begun after the restart). Returns the rows written (0: no sink or sample)."""
        with self._lock:
            rows = [] if self.rollup_sink is None or self.last_sample_at is None else \
                self._drained(self.last_sample_at, open_minute=True)
        return len(rows) if self._persist(rows) else 0

    def _drained(self, now: datetime, *, open_minute: bool = False) -> list[dict[str, Any]]:
        """The drained minutes as rollup sink rows (lock held; :meth:`SampleStore.drain_rollups`)."""
        return [{**rollup_to_dict(r), **(self._attribution(r) if r.mig_instance is None else {})}
                for r in self.store.drain_rollups(now, open_minute=open_minute)]

    def _persist(self, rows: list[dict[str, Any]]) -> bool:
        """Hand ``rows`` to the rollup sink; False (logged, never raised) when it fails."""
        if not rows or self.rollup_sink is None:
            return bool(rows)
        try:
            self.rollup_sink(rows)
        except Exception:
            log.exception("could not persist %d telemetry rollup rows", len(rows))
            return False
        return True

    @property
    def running(self) -> bool:
        """True while the sampling thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval_s)

    # -- reads -----------------------------------------------------------------------------------------

    def latest(self) -> dict[DeviceKey, GpuSample]:
        """The newest sample of every device (with its processes)."""
        with self._lock:
            return self.store.latest()

    def gpu_processes(self, uuids: Iterable[str], *, leaving: str, since: datetime) -> dict[str, list[tuple[int, str]]] | None:
        """Processes with a context on the GPUs ``uuids`` — the collector's compute processes by pid
        (NVML's ``nvmlDeviceGetComputeRunningProcesses``, as ``nvidia-smi`` lists them: every
        account's, whoever runs this server) in the newest sample of each — that belong to no job
        allocated that GPU now other than ``leaving`` (a shared GPU's other holders keep theirs):
        ``{uuid: [(pid, account name or "unknown account")]}``, only GPUs with such a process.
        A released lease's drain asks it (red team 18, R6; :mod:`.stops`).

        Returns None when a GPU of ``uuids`` has no sample taken after ``since`` that lists its
        processes (not known yet: the caller waits for one, boundedly)."""
        wanted = set(uuids)
        out: dict[str, list[tuple[int, str]]] = {}
        with self._lock:
            latest = {key[0]: sample for key, sample in self.store.latest().items()
                      if key[1] is None and key[0] in wanted}
            for uuid in wanted:
                sample = latest.get(uuid)
                if sample is None or sample.timestamp <= since or sample.process_count is None:
                    return None
                others = self.minutes.holders_of(uuid) - {leaving}
                found = []
                for process in sample.processes:
                    if self._job_of(process.pid) in others:
                        continue  # a shared GPU's other holder
                    about = self._describe(process.pid)
                    found.append((process.pid, about[0] if about else "unknown account"))
                if found:
                    out[uuid] = sorted(found)
        return out

    def window(self, key: DeviceKey, since: datetime, until: datetime | None = None) -> list[GpuSample]:
        """Samples of one device within ``[since, until]``."""
        with self._lock:
            return self.store.window(key, since, until)

    def devices(self) -> list[DeviceKey]:
        """Device keys seen so far."""
        with self._lock:
            return self.store.devices()

    def idle_inputs(self, jobs: Iterable[Job], inventory: Inventory, *, now: datetime, lookback_s: float,
                    ladders: Mapping[str, LadderState], max_gap_s: float = 600.0,
                    per_minute: bool = True) -> dict[str, IdleInput]:
        """``Snapshot.telemetry`` for the running allocations among ``jobs``: ``{job id: IdleInput}``.

        Args:
            lookback_s: seconds of history per job (the longest idle limit that applies + a minute).
            ladders: each job's persisted ladder state (missing = fresh).
            max_gap_s: the smallest sample gap idle detection tolerates. A job one of whose
                devices has no sample this fresh gets no entry (no decision either way).
            per_minute: pass one max-activity sample per device and minute (cheap over hours;
                right when every idle window is many minutes long) instead of every sample.
        """
        out: dict[str, IdleInput] = {}
        with self._lock:
            latest = self.store.latest()
            for job in jobs:
                if not job.state.holds_gpus or job.allocation is None or not job.allocation.all_gpu_uuids():
                    continue
                entry = idle_input(job, self.store, inventory, now=now, lookback_s=lookback_s,
                                   ladder=ladders.get(job.id), per_minute=per_minute)
                # Missing or stale data is evidence of nothing: no warning, and no "active again"
                # either (after a restart the ladder resumes once samples flow again).
                fresh = [latest.get(key) for key in entry.devices]
                if all(s is not None and (now - s.timestamp).total_seconds() <= max_gap_s for s in fresh):
                    out[job.id] = entry
        return out

    def recent(self, keys: Iterable[DeviceKey], *, since: datetime, limit: int) -> dict[DeviceKey, list[GpuSample]]:
        """Up to ``limit`` newest samples per device since ``since``."""
        with self._lock:
            return {key: self.store.window(key, since)[-limit:] for key in keys}

    def grow_retention(self, retention_s: float) -> float:
        """Keep at least ``retention_s`` seconds of samples from now on (an admin lengthened the
        idle window at run time); never shrinks. Memory grows as in :mod:`jupyter_sched.telemetry.ring`
        (32 B per sample per device). Returns the retention now in force, seconds."""
        with self._lock:
            if retention_s > self.retention_s:
                self.store.grow(retention_s, rate_hz=1.0 / self.interval_s)
                self.retention_s = float(retention_s)
            return self.retention_s

    def status(self) -> dict[str, Any]:
        """``{"enabled", "source", "interval_s", "retention_s", "devices", "errors", "last_error",
        "last_sample_at", "label_mismatches", "health_events"}``."""
        return {"enabled": self.running or self.last_sample_at is not None, "source": self.source,
                "interval_s": self.interval_s, "retention_s": self.retention_s, "devices": len(self.devices()),
                "errors": self.errors, "last_error": self.last_error, "last_sample_at": to_iso(self.last_sample_at),
                "label_mismatches": self.label_mismatches, "health_events": len(self.health_events())}


_PID_CACHE = 4096
"""Pids remembered per cache (job owner, user and start time) before the cache starts over."""


class HealthAwareInventory:
    """An inventory source whose GPUs carry the monitor's health evidence (case 018).

    Wraps any :class:`~jupyter_sched.inventory.base.InventorySource`: each ``current()`` applies
    :func:`~jupyter_sched.telemetry.health.apply_health` with the monitor's evidence, so placement,
    quotas, ``/metrics`` and the inventory view all see a GPU with an Xid as unhealthy, with its
    time and the admin's hint (on Kubernetes only the GPUs the device plugin withdrew: the node's
    allocatable stays the truth). Other attributes are the wrapped source's.

    Args:
        source: the inventory source.
        monitor: the telemetry monitor (its :meth:`TelemetryMonitor.health_events`).
        extra: more evidence (e.g. parsed device-plugin logs), called at each ``current()``.
    """

    def __init__(self, source: Any, monitor: TelemetryMonitor,
                 extra: Callable[[], Iterable[HealthEvent]] | None = None) -> None:
        self.source = source
        self.monitor = monitor
        self.extra = extra

    def current(self) -> Inventory:
        """The wrapped source's inventory with health evidence applied."""
        events = [*self.monitor.health_events(), *(self.extra() if self.extra is not None else ())]
        return apply_health(self.source.current(), events)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)
