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

import math

from ..model import GPU_MILLI, ResourceRequest
from ..model.units import gpus_phrase
from .state import ClusterState

__all__ = ["HOST_SHARE_SETTING", "cpu_said", "host_said", "host_share", "host_wait", "memory_said", "part_holds",
           "per_gpu_said", "within_host_share"]

HOST_SHARE_SETTING = "c.SchedApp.gpu_node_host_share"
"""The admin setting that turns the split off (its refusals name it; the profile's
:attr:`~.placer.PlacementConfig.host_share`)."""


def host_share(state: ClusterState, node: int, request: ResourceRequest) -> tuple[int | None, int | None]:
    """``(most millicores CPU, most MiB host memory)`` one worker of ``request`` may reserve on
    ``node``: its GPUs' part of what the node tracks (module doc). None where nothing bounds it
    (a node without GPUs, a capacity not tracked)."""
    return _part(state, node, _milli(request))


def _milli(request: ResourceRequest) -> int:
    """GPU-milli one worker of ``request`` holds (a share's thousandths, or whole GPUs x 1000)."""
    return (request.gpu_milli if request.fractional else request.gpus * GPU_MILLI) if request.gpus else 0


def _part(state: ClusterState, node: int, milli: int) -> tuple[int | None, int | None]:
    count = len(state.node_gpus[node])
    if not count:
        return None, None
    spec = state.nodes[node]
    whole = count * GPU_MILLI
    return (spec.cpu_millis * milli // whole if spec.cpu_millis else None,
            spec.memory_mib * milli // whole if spec.memory_mib else None)


def part_holds(state: ClusterState, node: int, milli: int, cpu_millis: int, memory_mib: int) -> bool:
    """Does the part of ``node``'s host that ``milli`` GPU-milli bring hold ``cpu_millis`` and ``memory_mib``?
    The one test the placer's filter, the never-fits check and the gang counts share."""
    if not cpu_millis and not memory_mib:
        return True
    cpu, mem = _part(state, node, milli)
    return (cpu is None or cpu_millis <= cpu) and (mem is None or memory_mib <= mem)


def within_host_share(state: ClusterState, node: int, request: ResourceRequest) -> bool:
    """Does one worker of ``request`` reserve no more of ``node``'s CPU and memory than its part?"""
    return part_holds(state, node, _milli(request), request.cpu_millis, request.memory_mib)


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


def host_said(cpu_millis: int, memory_mib: int) -> str:
    """``12 CPU cores and 16 GiB host memory`` (either part left out where 0)."""
    return " and ".join(x for x in (cpu_said(cpu_millis) if cpu_millis else "",
                                    f"{memory_said(memory_mib)} host memory" if memory_mib else "") if x)


def per_gpu_said(state: ClusterState, node: int, request: ResourceRequest) -> str:
    """``g1 gives 4 CPU cores per GPU it hands out (16 CPU cores, 4 GPUs)`` — the node's parts of what
    the request asks for (CPU, memory or both)."""
    spec, count = state.nodes[node], len(state.node_gpus[node])
    cpu = spec.cpu_millis // count if request.cpu_millis and spec.cpu_millis else 0
    mem = spec.memory_mib // count if request.memory_mib and spec.memory_mib else 0
    size = host_said(spec.cpu_millis if cpu else 0, spec.memory_mib if mem else 0).replace(" host memory", "")
    return f"{spec.name} gives {host_said(cpu, mem)} per GPU it hands out ({size}, {count} GPUs)"


def host_wait(request: ResourceRequest, state: ClusterState, nodes: list[int], free_total: int, model_said: str,
              split: bool = True) -> tuple[str, dict[str, object], str]:
    """Why a one-worker ``request`` that asks for host CPU or memory waits although ``nodes`` (most free GPUs
    first) have its GPUs — or its share of one — free now: ``(sentence, numbers, unblock)`` in the units typed
    (cores, GiB). ``split``: the placer's :attr:`~.placer.PlacementConfig.host_share` (the split is on).

    Where some of those nodes give its GPUs less of their host than it asks (the split of the module doc:
    a mixed inventory whose other nodes' parts hold it, or work stored before the split), the sentence
    names the first such node's part per GPU and the unblock the most to ask there, or the GPUs whose part
    holds it (newuser39, session 40: "no node with 1 free GPU has 8000 millicores CPU free" of a node with
    all 16 of its cores free, whose GPUs each bring 4). Else: no node with its GPUs free has its host
    free now — running work holds it.
    """
    need, asks = request.requested_gpus, host_said(request.cpu_millis, request.memory_mib)
    one = gpus_phrase(need)
    details: dict[str, object] = {"requested": need, "free": free_total, "cpu_millis": request.cpu_millis,
                                  "memory_mib": request.memory_mib}
    over = [n for n in nodes if split and not within_host_share(state, n, request)]
    gpus = f"{need:g} free GPU{'s' if need > 1 else ''}"
    if not over:
        return f"{model_said} free, but no node with {gpus} has {asks} free", details, ""
    node = over[0]
    spec, count = state.nodes[node], len(state.node_gpus[node])
    cpu_part, mem_part = host_share(state, node, request)
    over_cpu = bool(request.cpu_millis) and cpu_part is not None and request.cpu_millis > cpu_part
    over_mem = bool(request.memory_mib) and mem_part is not None and request.memory_mib > mem_part
    others = [n for n in nodes if n not in over]
    held = f"; no node whose part holds it has {gpus} and {asks} free" if others else ""
    more = f" (and {len(over) - 1} more node{'s' if len(over) > 2 else ''})" if len(over) > 1 else ""
    message = (f"{model_said} free, but it asks for {asks} with {one}, and a GPU "
               f"node's host is split among its GPUs: {per_gpu_said(state, node, request)}{more}{held}")
    typed = " and ".join(x for x in (f"cpu {(cpu_part or 0) / 1000:g}" if over_cpu else "",
                                     f"memory {memory_said(mem_part or 0, typed=True)}" if over_mem else "") if x)
    fewest = max(math.ceil(request.cpu_millis * count / spec.cpu_millis) if over_cpu else 0,
                 math.ceil(request.memory_mib * count / spec.memory_mib) if over_mem else 0)
    free_there = len(state.free_gpus_on(node))
    if need < fewest <= free_there:
        unblock = f"ask for at most {typed} with {one}, or for {gpus_phrase(fewest)}, to start on {spec.name} now"
    else:
        unblock = f"ask for at most {typed} with {one} to start on {spec.name} now" + (
            f", or for {gpus_phrase(fewest)} (their part of {spec.name})" if need < fewest <= count else "")
    details["host_share"] = {"node": spec.name, "gpus": count, "cpu_millis": spec.cpu_millis,
                             "memory_mib": spec.memory_mib, "max_cpu_millis": cpu_part or 0,
                             "max_memory_mib": mem_part or 0, "setting": HOST_SHARE_SETTING,
                             "ask": unblock}  # what to ask to start there now (the REST words' unblock)
    unblock += "; or it starts when GPUs free up on a node whose part holds it (see ETA)"
    details["field"] = "cpu" if over_cpu else "memory"
    return message, details, unblock
