"""Simulated collector: real signals for simulated GPUs, from the CPU activity of their processes.

On a machine without GPUs the scheduler still runs real jobs on simulated GPUs; this collector
makes idle and busy real: a simulated GPU's utilization is the CPU use of the processes holding it
(capped at 100 %), its memory use their resident memory (capped at the GPU's memory).

Which processes hold a GPU:

1. the pid registry the engine passes (``{gpu uuid: pids}`` of jobs and lease kernels), with their
   descendants, and
2. any process whose environment has ``CUDA_VISIBLE_DEVICES`` containing the GPU's UUID (the local
   executor sets it, case 016) — found by a scan of ``/proc`` every ``scan_interval_s`` seconds
   (default 10), so the per-second cost stays small (see ``benchmarks/telemetry_bench.py``) —
   except a job process of any jupyter_sched server (``JUPYTER_SCHED_JOB_ID`` in its environment).
   This server's jobs are already in the registry (their root pids, descendants included); a job of
   another server on the same host names the same simulated uuids (``GPU-sim-<host>-<i>``) but is
   not use of these GPUs: counting it restarted this server's idle clocks (new-user 5 finding 20).

Utilization is measured from process CPU times between two collections (``Δ(user+system) /
Δwall x 100``), so it is a real average over the interval, not an instantaneous guess.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime

import psutil

from ..model import GPU
from ..model.samples import GpuSample, ProcessUsage
from .base import normalize_timestamp

__all__ = ["SimulatedCollector"]

_MIB = 1024 * 1024
# Set by every jupyter_sched executor in a job's environment (executors/local.py).
_JOB_ENV = "JUPYTER_SCHED_JOB_ID"


class _Tracked:
    __slots__ = ("cpu", "process", "wall")

    def __init__(self, process: psutil.Process, cpu: float, wall: float) -> None:
        self.process = process
        self.cpu = cpu
        self.wall = wall


class SimulatedCollector:
    """Collector for the GPUs of a :class:`~jupyter_sched.inventory.SimulatedInventory`.

    Args:
        gpus: returns the simulated GPUs to sample (e.g. ``lambda: list(source.current().gpus())``);
            non-simulated GPUs are ignored.
        pids: returns ``{gpu uuid: pids}`` the engine started on each GPU (default: none).
        scan_env: also find processes by ``CUDA_VISIBLE_DEVICES`` (default True).
        scan_interval_s: seconds between environment scans (default 10).
        clock: monotonic clock in seconds (injectable for tests; default ``time.monotonic``).
    """

    def __init__(self, gpus: Callable[[], Iterable[GPU]], *,
                 pids: Callable[[], Mapping[str, Iterable[int]]] = dict, scan_env: bool = True,
                 scan_interval_s: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._gpus = gpus
        self._pids = pids
        self._scan_env = scan_env
        self._scan_interval = scan_interval_s
        self._clock = clock
        self._last_scan = -float("inf")
        self._env_pids: dict[str, set[int]] = {}
        self._tracked: dict[int, _Tracked] = {}
        self._roots: dict[str, set[int]] = {}
        self._descendants: dict[str, set[int]] = {}
        self._me = os.getpid()

    def _scan(self, uuids: list[str]) -> None:
        """Map GPU uuid → pids whose CUDA_VISIBLE_DEVICES names it (one /proc pass)."""
        found: dict[str, set[int]] = {u: set() for u in uuids}
        for proc in psutil.process_iter():
            if proc.pid == self._me:
                continue
            try:
                environ = proc.environ()
                visible = environ.get("CUDA_VISIBLE_DEVICES", "")
            except (psutil.Error, OSError):
                continue
            if not visible:
                continue
            if _JOB_ENV in environ:
                continue  # a jupyter_sched job: ours are in the registry, another server's are not ours
            names = {v.strip() for v in visible.split(",")}
            for uuid in uuids:
                if uuid in names:
                    found[uuid].add(proc.pid)
        self._env_pids = found

    def _holders(self, uuid: str, registry: Mapping[str, Iterable[int]], rescanned: bool) -> set[int]:
        """Pids holding ``uuid``: registry and environment roots plus their descendants. Descendants
        are looked up again at each environment scan and whenever the roots change."""
        roots = set(registry.get(uuid, ())) | self._env_pids.get(uuid, set())
        if rescanned or roots != self._roots.get(uuid):
            descendants: set[int] = set()
            for pid in roots:
                try:
                    descendants.update(c.pid for c in psutil.Process(pid).children(recursive=True))
                except psutil.Error:
                    continue
            self._roots[uuid] = roots
            self._descendants[uuid] = descendants
        return roots | self._descendants.get(uuid, set())

    def _usage(self, pid: int, wall: float) -> tuple[float, float] | None:
        """``(cpu %, rss MiB)`` of ``pid`` since the last collection; None when it is gone."""
        tracked = self._tracked.get(pid)
        try:
            if tracked is None:
                process = psutil.Process(pid)
                with process.oneshot():
                    times = process.cpu_times()
                    cpu = times.user + times.system
                    rss = process.memory_info().rss
                    # First sight: average over the process's life so far.
                    age = max(time.time() - process.create_time(), 1e-3)
                self._tracked[pid] = _Tracked(process, cpu, wall)
                return min(100.0 * cpu / age, 100.0 * (os.cpu_count() or 1)), rss / _MIB
            process = tracked.process
            with process.oneshot():
                times = process.cpu_times()
                rss = process.memory_info().rss
            cpu = times.user + times.system
            elapsed = max(wall - tracked.wall, 1e-3)
            pct = 100.0 * max(cpu - tracked.cpu, 0.0) / elapsed
            tracked.cpu, tracked.wall = cpu, wall
            return pct, rss / _MIB
        except (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied):
            self._tracked.pop(pid, None)
            return None

    def collect(self, now: datetime) -> list[GpuSample]:
        """One sample per simulated GPU (``simulated=True``; power and temperature unknown)."""
        gpus = [g for g in self._gpus() if g.simulated]
        wall = self._clock()
        rescanned = False
        if self._scan_env and wall - self._last_scan >= self._scan_interval:
            self._scan([g.uuid for g in gpus])
            self._last_scan = wall
            rescanned = True
        registry = self._pids()
        when, _ = normalize_timestamp(None, now)
        samples = []
        alive: set[int] = set()
        for gpu in gpus:
            processes = []
            for pid in sorted(self._holders(gpu.uuid, registry, rescanned)):
                usage = self._usage(pid, wall)
                if usage is None:
                    continue
                alive.add(pid)
                processes.append(ProcessUsage(pid=pid, used_memory_mib=int(usage[1]), sm_util_pct=round(usage[0], 1)))
            util = min(100.0, sum(p.sm_util_pct or 0.0 for p in processes))
            used = min(float(gpu.memory_mib), float(sum(p.used_memory_mib or 0 for p in processes)))
            samples.append(GpuSample(gpu_uuid=gpu.uuid, mig_instance=None, timestamp=when, utilization_pct=round(util, 1),
                                     memory_used_mib=used, memory_total_mib=float(gpu.memory_mib),
                                     processes=tuple(processes), process_count=len(processes), node=gpu.node,
                                     simulated=True,
                                     note="simulated GPU: utilization = CPU use of its processes"))
        for pid in set(self._tracked) - alive:
            del self._tracked[pid]
        return samples
