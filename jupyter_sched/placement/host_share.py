"""A GPU node's tracked CPUs and host memory belong to its GPUs (red team 38, R4).

On a node with GPUs whose ``cpus``/``memory`` the inventory tracks, one worker may reserve at
most its GPUs' part of them: ``floor(node CPUs x worker GPUs / node GPUs)`` millicores (a share
of ``0.25`` GPU counts a quarter GPU; a worker without GPUs, none), and likewise MiB of host
memory. The parts of all holders add up to at most the node, so every free GPU keeps its own part
free: CPU or memory reservations never leave a GPU unusable (a 0-GPU job asking for the node's 16
CPUs kept every other team's GPU work, guaranteed work included, off the node — uncharged by
quota and out of reach of reclaim, which count GPUs). Work that needs more CPU or memory than its
GPUs' part runs on nodes without GPUs, or asks for more GPUs (Slurm's ``MaxCPUsPerGPU``, and a
GPU partition that CPU-only jobs do not use). Why a bound and not a quota charge of the GPUs held
away: with the bound nothing is ever held away, so quota, reclaim, the pending reason and the ETA
stay GPU-only and right, with no second charge to keep in step with the ledger's.

Jobs that reserve nothing (``cpu``/``memory`` not asked, the default) and nodes that track
neither are untouched. An admin whose CPU-only work must run on GPU nodes turns the split off
(:data:`HOST_SHARE_SETTING` ``= False``; a Kubernetes cluster's nodes carry allocatable cpu, so
there a 0-GPU job asking for ``cpu`` needs a node without GPUs or that setting).
"""

from __future__ import annotations

from ..model import GPU_MILLI, ResourceRequest
from .state import ClusterState

__all__ = ["HOST_SHARE_SETTING", "cpu_said", "host_share", "memory_said", "within_host_share"]

HOST_SHARE_SETTING = "c.SchedApp.gpu_node_host_share"
"""The admin setting that turns the split off (its refusals name it; the profile's
:attr:`~.placer.PlacementConfig.host_share`)."""


def host_share(state: ClusterState, node: int, request: ResourceRequest) -> tuple[int | None, int | None]:
    """``(most millicores CPU, most MiB host memory)`` one worker of ``request`` may reserve on
    ``node``: its GPUs' part of what the node tracks (module doc). None where nothing bounds it
    (a node without GPUs, a capacity not tracked)."""
    count = len(state.node_gpus[node])
    if not count:
        return None, None
    spec = state.nodes[node]
    milli = (request.gpu_milli if request.fractional else request.gpus * GPU_MILLI) if request.gpus else 0
    whole = count * GPU_MILLI
    return (spec.cpu_millis * milli // whole if spec.cpu_millis else None,
            spec.memory_mib * milli // whole if spec.memory_mib else None)


def within_host_share(state: ClusterState, node: int, request: ResourceRequest) -> bool:
    """Does one worker of ``request`` reserve no more of ``node``'s CPU and memory than its part?"""
    if not request.cpu_millis and not request.memory_mib:
        return True
    cpu, mem = host_share(state, node, request)
    return (cpu is None or request.cpu_millis <= cpu) and (mem is None or request.memory_mib <= mem)


def cpu_said(milli: int) -> str:
    """Millicores in the unit ``cpu`` is typed in: ``5 CPU cores``, ``0.5 CPU core`` (newuser39 n8:
    "5000 millicores CPU" to a user who typed ``--cpu 5``, who then copied ``--cpu 4000``)."""
    cores = milli / 1000
    return f"{cores:g} CPU core{'' if cores <= 1 else 's'}"


def memory_said(mib: int, *, typed: bool = False) -> str:
    """MiB as a user types host memory: ``16 GiB`` where whole GiB, else ``17000 MiB``; ``typed``:
    as the value of ``memory`` (``16GiB``), for a hint naming what to type (newuser39 n8)."""
    said = f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"
    return said.replace(" ", "") if typed else said
