"""GPUs held by work the scheduler did not start (case 014): report them, never "reclaim" them.

A GPU at 0 % utilization whose memory is held by a process the scheduler did not start (or by no
listed process at all — a zombie, or a process in another PID namespace) is not free. It is
excluded from placement (``GPU.foreign_memory_mib > 0``) and reported to admins. The idle
reclaimer has no allocation to release there, so it only reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..model import Inventory, Job

__all__ = ["ForeignGpuReport", "ForeignProcess", "Occupancy", "blocked_text", "foreign_gpu_reports", "format_age",
           "gpu_occupancy"]


@dataclass(frozen=True, slots=True)
class ForeignProcess:
    """A process on a GPU that the scheduler did not start (case 025: shown with pid and age).

    Attributes:
        pid: host pid. used_memory_mib: GPU memory it holds, MiB (None = the driver does not say).
        age_s: how long it has run, seconds (None = unknown). user: its OS user ("" = unknown).
    """

    pid: int
    used_memory_mib: float | None = None
    age_s: float | None = None
    user: str = ""


def format_age(seconds: float) -> str:
    """``35 min``, ``48 h``, ``4 d 2 h`` (whole units; for process ages)."""
    minutes = int(seconds // 60)
    if minutes < 120:
        return f"{minutes} min"
    hours = minutes // 60
    if hours <= 72:
        return f"{hours} h"
    return f"{hours // 24} d {hours % 24} h"


def blocked_text(processes: Sequence[ForeignProcess], *, utilization: str = "unknown %", held_mib: float = 0.0) -> str:
    """The inventory phrase for a GPU held outside the scheduler (case 025):
    ``blocked: unmanaged process pid 4242 (642 MiB, 0 %, running 48 h)``; without a listed
    process ``blocked: 642 MiB held with no owning process``."""
    if not processes:
        return f"blocked: {held_mib:.0f} MiB held with no owning process"
    parts = []
    for p in processes:
        bits = [f"{p.used_memory_mib:.0f} MiB" if p.used_memory_mib is not None else "memory unknown", utilization]
        if p.age_s is not None:
            bits.append(f"running {format_age(p.age_s)}")
        who = f" of {p.user}" if p.user else ""
        parts.append(f"pid {p.pid}{who} ({', '.join(bits)})")
    noun = "process" if len(processes) == 1 else "processes"
    return f"blocked: unmanaged {noun} " + "; ".join(parts)


class Occupancy:
    """GPU occupancy states (strings, as the API shows them)."""

    FREE = "free"
    ALLOCATED = "allocated"
    OCCUPIED_UNMANAGED = "occupied-unmanaged"
    UNHEALTHY = "unhealthy"


@dataclass(frozen=True, slots=True)
class ForeignGpuReport:
    """An admin alert: a GPU held outside the scheduler.

    Attributes:
        gpu_uuid / node / index: which GPU.
        held_mib: foreign memory in MiB.
        pids: the foreign processes, when the driver lists them (empty = no owning process).
        allocated_to: job ids the scheduler has on that GPU (the foreign hold is on top).
        message: one sentence, e.g. ``GPU0 holds 73.6 GiB with no owning process``.
        releasable: always False — there is no allocation of ours to release.
        processes: the foreign processes with memory, age and user where known.
        state: the inventory phrase (``blocked: unmanaged process pid 4242 (642 MiB, 0 %, running 48 h)``).
        action: what an admin can do about it, one sentence.
    """

    gpu_uuid: str
    node: str
    index: int
    held_mib: int
    pids: tuple[int, ...]
    allocated_to: tuple[str, ...]
    message: str
    releasable: bool = False
    processes: tuple[ForeignProcess, ...] = ()
    state: str = ""
    action: str = ""


def _allocated(jobs: Iterable[Job]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for job in jobs:
        if job.state.holds_gpus and job.allocation is not None:
            for uuid in job.allocation.all_gpu_uuids():
                out.setdefault(uuid, []).append(job.id)
    return out


def gpu_occupancy(inventory: Inventory, jobs: Iterable[Job]) -> dict[str, str]:
    """``{gpu uuid: occupancy}``: ``allocated`` (a job of ours holds it), ``occupied-unmanaged``
    (foreign memory, no allocation), ``unhealthy`` or ``free``. MIG UUIDs count for their GPU."""
    by_uuid = inventory.gpu_by_uuid()
    allocated = {by_uuid[u].uuid if u in by_uuid else u for u in _allocated(jobs)}
    out = {}
    for gpu in inventory.gpus():
        if gpu.uuid in allocated:
            out[gpu.uuid] = Occupancy.ALLOCATED
        elif gpu.foreign_memory_mib > 0:
            out[gpu.uuid] = Occupancy.OCCUPIED_UNMANAGED
        elif not gpu.healthy:
            out[gpu.uuid] = Occupancy.UNHEALTHY
        else:
            out[gpu.uuid] = Occupancy.FREE
    return out


def foreign_gpu_reports(inventory: Inventory, jobs: Iterable[Job] = (),
                        foreign_pids: Mapping[str, Iterable[int]] | None = None, *,
                        foreign_processes: Mapping[str, Sequence[ForeignProcess]] | None = None,
                        utilization: Mapping[str, str] | None = None) -> tuple[ForeignGpuReport, ...]:
    """One report per GPU with foreign memory (``GPU.foreign_memory_mib > 0``).

    Args:
        inventory: the current inventory.
        jobs: current jobs (to name allocations on the same GPU).
        foreign_pids: ``{gpu uuid: pids}`` of foreign processes (``NvmlInventory.foreign_pids``).
        foreign_processes: ``{gpu uuid: processes}`` with memory, age and user
            (``NvmlInventory.foreign_processes``); takes precedence over ``foreign_pids``.
        utilization: ``{gpu uuid: "0 %"}`` from telemetry, for the phrase (default ``unknown %``).
    """
    allocated = _allocated(jobs)
    pids_by_gpu = foreign_pids or {}
    procs_by_gpu = foreign_processes or {}
    out = []
    for gpu in inventory.gpus():
        if gpu.foreign_memory_mib <= 0:
            continue
        procs = tuple(procs_by_gpu.get(gpu.uuid, ())) or tuple(
            ForeignProcess(pid) for pid in sorted(pids_by_gpu.get(gpu.uuid, ())))
        pids = tuple(sorted(p.pid for p in procs))
        gib = gpu.foreign_memory_mib / 1024
        owner = ("with no owning process" if not pids
                 else "in process(es) " + ", ".join(map(str, pids)) + " not started by the scheduler")
        action = (f"stop process(es) {', '.join(map(str, pids))} on {gpu.node} (or ask their owner) to free GPU"
                  f"{gpu.index}, or raise the foreign-memory threshold to ignore them" if pids else
                  f"memory without a process usually means a zombie context: reset GPU{gpu.index} on {gpu.node} "
                  "when nothing runs on it")
        out.append(ForeignGpuReport(
            gpu_uuid=gpu.uuid, node=gpu.node, index=gpu.index, held_mib=gpu.foreign_memory_mib, pids=pids,
            allocated_to=tuple(allocated.get(gpu.uuid, ())), message=f"GPU{gpu.index} holds {gib:.1f} GiB {owner}",
            processes=procs, action=action,
            state=blocked_text(procs, utilization=(utilization or {}).get(gpu.uuid, "unknown %"),
                               held_mib=gpu.foreign_memory_mib)))
    return tuple(out)
