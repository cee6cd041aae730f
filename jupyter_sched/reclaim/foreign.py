"""GPUs held by work the scheduler did not start (case 014): report them, never "reclaim" them.

A GPU at 0 % utilization whose memory is held by a process the scheduler did not start (or by no
listed process at all — a zombie, or a process in another PID namespace) is not free. It is
excluded from placement (``GPU.foreign_memory_mib > 0``) and reported to admins. The idle
reclaimer has no allocation to release there, so it only reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ..model import Inventory, Job

__all__ = ["ForeignGpuReport", "Occupancy", "foreign_gpu_reports", "gpu_occupancy"]


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
    """

    gpu_uuid: str
    node: str
    index: int
    held_mib: int
    pids: tuple[int, ...]
    allocated_to: tuple[str, ...]
    message: str
    releasable: bool = False


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
                        foreign_pids: Mapping[str, Iterable[int]] | None = None) -> tuple[ForeignGpuReport, ...]:
    """One report per GPU with foreign memory (``GPU.foreign_memory_mib > 0``).

    Args:
        inventory: the current inventory.
        jobs: current jobs (to name allocations on the same GPU).
        foreign_pids: ``{gpu uuid: pids}`` of foreign processes (``NvmlInventory.foreign_pids``).
    """
    allocated = _allocated(jobs)
    pids_by_gpu = foreign_pids or {}
    out = []
    for gpu in inventory.gpus():
        if gpu.foreign_memory_mib <= 0:
            continue
        pids = tuple(sorted(pids_by_gpu.get(gpu.uuid, ())))
        gib = gpu.foreign_memory_mib / 1024
        owner = ("with no owning process" if not pids
                 else "in process(es) " + ", ".join(map(str, pids)) + " not started by the scheduler")
        out.append(ForeignGpuReport(gpu_uuid=gpu.uuid, node=gpu.node, index=gpu.index, held_mib=gpu.foreign_memory_mib,
                                    pids=pids, allocated_to=tuple(allocated.get(gpu.uuid, ())),
                                    message=f"GPU{gpu.index} holds {gib:.1f} GiB {owner}"))
    return tuple(out)
