"""Work that holds GPUs the inventory no longer lists (hubadmin 22, H3).

A service restarted with fewer simulated GPUs, a node deleted from the inventory file, an NVML or
Kubernetes inventory that shrank at a refresh: the jobs and leases on the GPUs that went away kept
running (or kept their records), 4 GPUs stayed allocated on a 2-GPU inventory, and nobody was told.
:func:`off_inventory` finds that work from an inventory snapshot and the live jobs (pure: no I/O,
no clock); the edge (:mod:`jupyter_sched.services.inventory_watch`) logs :func:`off_inventory_warning`
at start and whenever a refresh changes what is found.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

from .job import Job, work_noun
from .resources import Inventory

__all__ = ["OffInventory", "allocated_gpus", "gone_gpus", "off_inventory", "off_inventory_warning",
           "unhealthy_under_work"]


@dataclass(frozen=True, slots=True)
class OffInventory:
    """One piece of work holding GPUs the inventory no longer lists: ``job_id``, owner ``user``,
    ``name``, ``noun`` (``job``, ``lease``, ``service``), ``gpus`` (the UUIDs gone, in allocation
    order) and ``nodes`` (its nodes the inventory no longer has; empty when only GPUs went)."""

    job_id: str
    user: str
    name: str
    noun: str
    gpus: tuple[str, ...]
    nodes: tuple[str, ...]


def gone_gpus(job: Job, devices: Container[str]) -> tuple[str, ...]:
    """The GPU (or MIG device) uuids ``job`` holds that ``devices`` (an inventory's
    :meth:`~.resources.Inventory.device_uuids`) does not list, in allocation order; ``()`` for work
    that holds no GPUs (pending, ended) or holds only listed ones. The job answers' ``gone_gpus``."""
    if not job.state.holds_gpus or job.allocation is None:
        return ()
    return tuple(uuid for uuid in job.allocation.all_gpu_uuids() if uuid not in devices)


def off_inventory(inventory: Inventory, jobs: Iterable[Job]) -> list[OffInventory]:
    """The work among ``jobs`` that holds GPUs (admitted or running) on a GPU (or MIG device) or a
    node ``inventory`` does not list, in the order given. Work on GPUs still listed is not returned."""
    known = inventory.device_uuids()
    nodes = {node.name for node in inventory.nodes}
    found: list[OffInventory] = []
    for job in jobs:
        if not job.state.holds_gpus or job.allocation is None:
            continue
        gone = gone_gpus(job, known)
        gone_nodes = tuple(dict.fromkeys(node for node, _ in job.allocation.per_worker() if node not in nodes))
        if gone or gone_nodes:
            found.append(OffInventory(job_id=job.id, user=job.spec.user, name=job.spec.name or "",
                                      noun=work_noun(job.spec), gpus=gone, nodes=gone_nodes))
    return found


def allocated_gpus(jobs: Iterable[Job]) -> int:
    """How many GPUs (or MIG devices) the work among ``jobs`` that holds GPUs is allocated, in all."""
    return sum(len(job.allocation.all_gpu_uuids()) for job in jobs
               if job.state.holds_gpus and job.allocation is not None)


def off_inventory_warning(found: Sequence[OffInventory], *, allocated: int, in_inventory: int) -> str:
    """The one WARNING for ``found`` (non-empty): how many GPUs are held off the inventory and by how
    much work (with the GPUs allocated in all and those the inventory lists), then each piece of work
    — its id, owner, name, the GPUs (and nodes) gone — what happens to it and the admin's fix, e.g.
    ``2 GPUs held off the inventory by 1 piece of work (4 GPUs allocated in all, 2 in the inventory) —
    job j-1 (ha22c, "c-ops") on GPU-sim-vm-2, GPU-sim-vm-3 (node vm is gone). …``. It led with "2 GPUs
    allocated, 2 in the inventory: 1 piece(s) of work …", which read as "all is well" (new user 24, N8)."""
    said = []
    for item in found:
        name = f', "{item.name}"' if item.name else ""
        where = ", ".join(item.gpus) if item.gpus else "its GPUs"
        nodes = f" (node {', '.join(item.nodes)} is gone)" if item.nodes else ""
        said.append(f"{item.noun} {item.job_id} ({item.user}{name}) on {where}{nodes}")
    held = len(dict.fromkeys(uuid for item in found for uuid in item.gpus))
    gpus = f"{held} GPU{'' if held == 1 else 's'}" if held else "GPUs"
    work = "1 piece of work" if len(found) == 1 else f"{len(found)} pieces of work"
    return (f"{gpus} held off the inventory by {work} ({allocated} GPU{'' if allocated == 1 else 's'} allocated in "
            f"all, {in_inventory} in the inventory) — {'; '.join(said)}. Each keeps its GPUs and runs on (its record stays "
            "running until it ends, is cancelled or its process is found gone), and the scheduler hands the GPUs "
            "that went away to nobody: bring the GPUs or node back (simulated_gpus, inventory_file, the node), "
            "or cancel the work (`jupyter-sched cancel ID`, as an admin)")


def unhealthy_under_work(inventory: Inventory, jobs: Iterable[Job]) -> list[str]:
    """One sentence per GPU the inventory marks unhealthy (an admin's ``healthy: false`` for an RMA,
    NVML's Xid) under work that holds it (admitted or running), in inventory order, e.g.
    ``GPU-n2-0 (node n2) is marked unhealthy (ECC errors, RMA) under job j-1 (ha24s, "w2-s1"): it runs on;
    nothing new is placed on that GPU; it is free for maintenance when that work ends (or an admin
    cancels it)`` (hubadmin24 B14: said only in GET inventory). ``[]`` when none."""
    holders: dict[str, list[Job]] = {}
    for job in jobs:
        if job.state.holds_gpus and job.allocation is not None:
            for uuid in job.allocation.all_gpu_uuids():
                holders.setdefault(uuid, []).append(job)
    lines = []
    for node in inventory.nodes:
        for gpu in node.gpus:
            if gpu.healthy:
                continue
            work = [job for uuid in (gpu.uuid, *(mig.uuid for mig in gpu.mig_devices)) for job in holders.get(uuid, ())]
            if not work:
                continue
            reason = f" ({gpu.health_reason})" if gpu.health_reason else ""
            who = ", ".join(f'{work_noun(job.spec)} {job.id} ({job.spec.user}'
                            f'{f", {chr(34)}{job.spec.name}{chr(34)}" if job.spec.name else ""})'
                            for job in {job.id: job for job in work}.values())
            lines.append(f"{gpu.uuid} (node {node.name}) is marked unhealthy{reason} under {who}: it runs on; "
                         "nothing new is placed on that GPU; it is free for maintenance when that work ends "
                         "(or an admin cancels it)")
    return lines
