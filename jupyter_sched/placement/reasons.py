"""Why a job does not fit a flavor right now, or never can — reasons as data with numbers.

Codes (DESIGN.md list): ``Fragmented`` (enough GPUs free in total, too few on any one node —
case 006), ``UnhealthyGpu`` (it would fit if unhealthy GPUs recovered; the reason names them),
``WaitingForCapacity`` (not enough free), ``NodeCordoned`` (a node an admin cordoned for maintenance
would hold it; the reason names the cordon), ``NoMatchingGpuModel`` / ``Unschedulable`` (never fits:
the cycle rejects the job up front, with the numbers, and never preempts for it — case 004).
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..model import GPU_MILLI, Node, ResourceRequest
from ..model.frozen import fast_init
from ..model.units import gpus_phrase
from .host_share import (
    HOST_SHARE_SETTING,
    cpu_said,
    host_said,
    host_share,
    host_wait,
    memory_said,
    part_holds,
    per_gpu_said,
    within_host_share,
)
from .host_share import host_share as host_share_of
from .placer import Flavor
from .state import FOREIGN_WHY, ClusterState

__all__ = ["FitReason", "capacity_reason", "never_fits"]

_NODE_LIST = 8


@fast_init
@dataclass(frozen=True, slots=True)
class FitReason:
    """A placement reason: code, sentence and numbers."""

    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    unblock: str = ""
    """What the user can change so that the job fits (empty: the caller's default)."""
    waits: bool = False
    """From :func:`never_fits`: it never fits the inventory as it is, but an admin can change the
    inventory so that it does (re-partition MIG GPUs) — the job pends with this reason instead of
    being rejected."""


def _n(milli: int) -> int | float:
    value = milli / GPU_MILLI
    return int(value) if value == int(value) else round(value, 3)


def never_fits(request: ResourceRequest, flavors: tuple[Flavor, ...], state: ClusterState, *,
               host_share: bool = True) -> FitReason | None:
    """Return why ``request`` can never run on this inventory, or None when it might (``host_share``: the
    profile's :attr:`~.placer.PlacementConfig.host_share`).

    Counts every GPU of a flavor that passes static filters, healthy or not (an unhealthy GPU
    may recover), so only structural impossibilities reject.
    """
    if request.gpus == 0:
        if request.mig_profile:  # stored before submit refused it (new user 14, N21: it pended forever)
            return FitReason("Unschedulable",
                             f"mig_profile {request.mig_profile!r} asks for a MIG slice of a GPU, but the job asks "
                             "for no GPU (gpus 0)", {"field": "mig_profile", "mig_profile": request.mig_profile},
                             "resubmit with gpus 1 for one slice, or without mig_profile for work without a GPU")
        if not any(flavor.pools for flavor in flavors):
            return (_selector_matches_nothing(request, state)
                    or FitReason("Unschedulable", "no ready node passes the job's node selector and tolerations"))
        return _host_too_small(request, flavors, state, host_share)
    wanted = " or ".join(request.gpu_models) if request.gpu_models else "any model"
    if not flavors:
        have = sorted({m for m in state.gpu_model})
        return FitReason("NoMatchingGpuModel",
                         f"no GPU of model {wanted} exists (models here: {', '.join(have) or 'none'})",
                         {"wanted": list(request.gpu_models), "models": have, "field": "model"},
                         "ask for one of the models here" if have else "this cluster has no GPUs; submit with gpus=0")
    if request.mig_profile:
        # Inventory order (nodes by name, each node's profiles as advertised): case 022's wording.
        profiles = list(dict.fromkeys(p for _, p, _ in state.mig_uuid.values()))
        if not profiles:  # new user 14, N19: "this cluster has no GPUs; ask for 0 GPUs" on a 4-GPU server
            return FitReason("NoMatchingMigProfile",
                             f"no GPU here is MIG-partitioned, so mig_profile {request.mig_profile!r} cannot be met",
                             {"mig_profile": request.mig_profile, "profiles": [], "field": "mig_profile"},
                             "leave mig_profile out for a whole GPU (or a share: gpus 0.5)")
        if request.mig_profile not in profiles:  # case 022 r3's words
            return FitReason("NoMatchingMigProfile",
                             f"unknown MIG profile {request.mig_profile}; available: {', '.join(profiles)}",
                             {"mig_profile": request.mig_profile, "profiles": profiles, "field": "mig_profile"},
                             f"ask for one of the MIG profiles here ({', '.join(profiles)}), or leave mig_profile "
                             "out for a whole GPU")
        return None
    best_node = total = 0
    for flavor in flavors:
        per_node, all_gpus = _structural(state, flavor, request)
        best_node = max(best_node, per_node)
        total = max(total, all_gpus)
    if not any(flavor.pools for flavor in flavors):
        memory = _gpu_memory_too_small(request, flavors)
        if memory is not None:
            return memory
        selector = _selector_matches_nothing(request, state)
        if selector is not None:
            return selector
        first = next((s for f in flavors for s in f.rejected), None)
        why = first.message if first else "every node is filtered out"
        return FitReason("Unschedulable", f"no node can hold this job: {why}",
                         {"filters": [dict(s.details, code=s.code) for f in flavors for s in f.rejected]})
    need = request.gpus
    filtered = [s for f in flavors for s in f.rejected]
    why_not = (" (other nodes are filtered out: " + "; ".join(dict.fromkeys(s.message for s in filtered[:3])) + ")"
               if filtered else "")
    if need > best_node or request.total_gpus > total:
        waiting = _after_repartitioning(request, flavors, state, best_node)
        if waiting is not None:
            return waiting
    if need > best_node:
        per_model, one_model = _per_model(state, flavors, request, best_node)
        return FitReason(
            "Unschedulable",
            f"needs {gpus_phrase(need)} of {wanted} on one node but the largest node has {best_node}{per_model}"
            f"{_mig_note(state, best_node)}{why_not}",
            {"requested": need, "max_per_node": best_node, "model": wanted, "workers": request.workers,
             "filters": [dict(s.details, code=s.code) for s in filtered], **({"field": "groups"} if request.groups else {}),
             **({"one_model": True} if one_model else {})})
    if request.total_gpus > total:
        details: dict[str, Any] = {"requested": request.total_gpus, "capacity": total, "model": wanted,
                                   "filters": [dict(s.details, code=s.code) for s in filtered]}
        unblock = ""
        if request.groups:
            # the total across the groups is too big, not a worker's GPUs, and the request has no
            # ``gpus`` field (new user 18, N17: "field": "gpus", "fewer GPUs per worker")
            parts = " + ".join(f"{g.gpus}" if g.workers == 1 else f"{g.workers} x {g.gpus}" for g in request.groups)
            details["field"] = "groups"
            return FitReason(
                "Unschedulable",
                f"a gang of {len(request.groups)} groups needs {gpus_phrase(request.total_gpus)} of {wanted} in all "
                f"({parts}) but only {total} exist{why_not}", details,
                f"ask for at most {gpus_phrase(total)} across its groups")
        if request.workers > 1 and not request.groups and 0 < request.gpus <= total:
            # the worker count is what is too big, not the GPUs a worker asked for (new-user round 3)
            most = total // request.gpus
            details["field"] = "workers"
            unblock = (f"ask for at most {most} worker{'s' if most != 1 else ''} of {request.gpus} "
                       f"GPU{'s' if request.gpus != 1 else ''}")
        return FitReason(
            "Unschedulable",
            f"needs {gpus_phrase(request.total_gpus)} of {wanted} but only {total} exist{why_not}", details, unblock)
    linked_need = _nvlink_need(request)
    if linked_need > 1:
        linked = max((_nvlink_group(state, flavor) for flavor in flavors if flavor.pools), default=0)
        if linked_need > linked:  # new-user 4 finding 2: it pended forever, saying the GPUs were free
            where = ("no GPUs here are connected by NVLink" if linked <= 1 else
                     f"at most {linked} GPUs here are connected by NVLink on one node")
            return FitReason(
                "Unschedulable", f"needs {linked_need} NVLink-connected GPUs of {wanted} on one node, but {where}",
                {"field": "nvlink", "requested": linked_need, "max_nvlink_group": linked, "model": wanted},
                "resubmit without nvlink" + (f", or ask for at most {linked} GPUs per worker" if linked > 1 else ""))
    if request.groups and host_share and (grouped := _group_host_too_small(request, flavors, state)) is not None:
        return grouped  # red39 R9: each group's worker is held to its GPUs' part, as a flat request is
    if (request.workers > 1 and not (request.cpu_millis or request.memory_mib)) or request.groups:
        packed = max((_pack(request, state, flavor, free=False, host_share=host_share)[0]
                      for flavor in flavors if flavor.pools), default=0)
        if packed < request.workers:
            field = "groups" if request.groups else "workers"
            # the count is the split's (session 40): say so where without it more would fit
            split = host_share and packed < max((_pack(request, state, flavor, free=False, host_share=False)[0]
                                                 for flavor in flavors if flavor.pools), default=0)
            return FitReason(
                "Unschedulable",
                f"the gang's {gang_words(request)} GPUs never fit together: the nodes hold at most {packed} of its "
                f"{request.workers} workers at once, even empty" + (
                    " (a worker's CPU and host memory must fit its GPUs' part of a GPU node's host: "
                    "it is split among the node's GPUs)" if split else ""),
                {"field": field, "workers": request.workers, "max_workers": packed, "model": wanted,
                 **({"setting": HOST_SHARE_SETTING} if split else {})},
                "resubmit with fewer workers, or fewer GPUs per worker" + (
                    ", or less CPU or memory per worker" if split else ""))
        return None
    return _host_too_small(request, flavors, state, host_share)


_SELECTOR_SHOWN = 10
"""``node_selector`` pairs a reason quotes (and keeps in its details; ``node_selector_pairs`` counts all)."""


def _cut(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _selector_matches_nothing(request: ResourceRequest, state: ClusterState) -> FitReason | None:
    """``node_selector`` no node carries (new user 9, N7: it was blamed on ``gpus`` with the hint
    "fewer GPUs per worker"): the labels asked for and those the nodes have for the same keys."""
    selector = dict(request.node_selector)
    if not selector or any(all(node.labels.get(k) == v for k, v in selector.items()) for node in state.nodes):
        return None
    # a bounded excerpt: every refusal, its audit row and the service log quote it (red team 19, R1)
    pairs = [_cut(f"{k}={v}") for k, v in list(selector.items())[:_SELECTOR_SHOWN]]
    asked = ", ".join(pairs) + (f" and {len(selector) - len(pairs)} more" if len(selector) > len(pairs) else "")
    labelled = [node for node in state.nodes if node.labels]
    if labelled:
        shown = [f"{node.name} " + " ".join(f"{k}={v}" for k, v in sorted(node.labels.items()) if k in selector
                                                  or not any(key in node.labels for key in selector))
                 for node in labelled[:_NODE_LIST]]
        there = "the nodes' labels: " + "; ".join(shown) + (" …" if len(labelled) > _NODE_LIST else "")
    else:
        names = ", ".join(node.name for node in state.nodes[:_NODE_LIST])
        one = len(state.nodes) == 1  # "the node here (vm) carries", "the nodes here (a, b) carry" (new user 14, N20)
        there = f"the node{'' if one else 's'} here ({names}) carr{'ies' if one else 'y'} no labels"
    have = sorted({f"{k}={v}" for node in labelled for k, v in node.labels.items()})
    return FitReason("Unschedulable", f"no node carries node_selector {asked}: {there}",
                     {"field": "node_selector", "node_selector": dict(list(selector.items())[:_SELECTOR_SHOWN]),
                      "node_selector_pairs": len(selector), "labels": have[:4 * _NODE_LIST]},
                     "resubmit with a node_selector the nodes carry, or without one")


def _nvlink_need(request: ResourceRequest) -> int:
    """GPUs one worker of ``request`` needs inside one NVLink domain (0: no NVLink asked)."""
    if not request.nvlink or request.fractional:
        return 0
    return max(g.gpus for g in request.groups) if request.groups else request.gpus


def _nvlink_group(state: ClusterState, flavor: Flavor, *, free: bool = False) -> int:
    """Most GPUs of ``flavor`` inside one NVLink domain on one node: every GPU (healthy or not,
    MIG-mode ones excluded; an inventory fact, worked out once) or, with ``free``, those wholly
    free now. A GPU without NVLink peers is a domain of one."""
    key = ("nvlink", flavor.model, flavor.pools, flavor.mixed)
    if not free and (found := state.inventory_memo.get(key)) is not None:
        return int(found)
    best = 0
    for pid in flavor.pools:
        for node in state.pools[pid].nodes:
            gpus = _usable_free(state, node, flavor) if free else [
                g for g in state.node_gpus[node]
                if not state.gpu_mig[g] and (not flavor.mixed or state.gpu_model[g] == flavor.model)]
            sizes: dict[int, int] = {}
            for g in gpus:
                sizes[state.domain[g]] = sizes.get(state.domain[g], 0) + 1
            best = max(best, max(sizes.values(), default=0))
    if not free:
        state.inventory_memo[key] = best
    return best


def gang_words(request: ResourceRequest) -> str:
    """``6 x 4`` for a gang of six 4-GPU workers; ``1 x 1 + 4 x 8`` for groups."""
    if request.groups:
        return " + ".join(f"{g.workers} x {g.gpus}" for g in request.groups)
    return f"{request.workers} x {request.gpus}"


def _pack(request: ResourceRequest, state: ClusterState, flavor: Flavor, *, free: bool,
          host_share: bool = True) -> tuple[int, dict[int, int]]:
    """How many of the gang's workers the nodes of ``flavor`` hold at once — largest worker first,
    each on the node with the least room that holds it (best-fit decreasing, as the placer does) —
    counting GPUs free now (``free``) or every GPU of the flavor (the nodes empty). A worker goes only
    where its GPUs' part of a GPU node's host holds its CPU and memory (``host_share``: the placer's
    filter, :func:`.host_share.part_holds`; session 40: the count took a 1-GPU, 8-core worker onto a
    16-core 4-GPU node whose GPUs bring 4 cores each). Also returns the GPUs per node it counted
    (nodes with some room only)."""
    workers = sorted(((w.gpus, w.cpu_millis, w.memory_mib) for w in request.worker_requests()), reverse=True)
    if not free:  # an inventory fact: worked out once per inventory, flavor and gang shape
        key = ("pack", flavor.model, flavor.pools, flavor.mixed, tuple(workers), host_share)
        found: tuple[int, dict[int, int]] | None = state.inventory_memo.get(key)
        if found is None:
            nodes = [n for pid in flavor.pools for n in state.pools[pid].nodes]
            found = state.inventory_memo[key] = _best_fit(workers, state, flavor, nodes, free=False,
                                                          host_share=host_share)
        return found
    smallest = workers[-1][0]
    nodes = []
    for pid in flavor.pools:  # the ledger's free-GPU index: only nodes that could take a worker
        pool = state.pools[pid]
        for k in range(1, len(pool.by_free)):
            nodes.extend(pool.by_free[k])
        if smallest == 0:  # the first nodes in inventory order (not the index's order: see capacity_reason)
            nodes.extend(heapq.nsmallest(len(workers), pool.by_free[0]))
    return _best_fit(workers, state, flavor, nodes, free=True, host_share=host_share)


def _best_fit(workers: list[tuple[int, int, int]], state: ClusterState, flavor: Flavor, nodes: list[int], *,
              free: bool, host_share: bool = True) -> tuple[int, dict[int, int]]:
    room: dict[int, list[float]] = {}
    for node in nodes:
        gpus = len(_usable_free(state, node, flavor)) if free else _flavor_gpus_any(state, node, flavor)
        spec = state.nodes[node]
        cpu = state.node_cpu_free[node] if free else spec.cpu_millis
        mem = state.node_mem_free[node] if free else spec.memory_mib
        room[node] = [gpus, cpu if spec.cpu_millis and cpu is not None else math.inf,
                      mem if spec.memory_mib and mem is not None else math.inf]
    counted = {n: int(r[0]) for n, r in room.items() if r[0]}
    placed = 0
    for gpus, cpu, mem in workers:
        fits = [(r[0], n) for n, r in room.items() if r[0] >= gpus and r[1] >= cpu and r[2] >= mem
                and (not host_share or part_holds(state, n, gpus * GPU_MILLI, cpu, mem))]
        if not fits:
            continue
        _, node = min(fits)
        r = room[node]
        r[0] -= gpus
        r[1] -= cpu
        r[2] -= mem
        placed += 1
    return placed, counted


def _flavor_gpus_any(state: ClusterState, node: int, flavor: Flavor) -> int:
    """GPUs of ``flavor`` on ``node``, healthy or not (MIG-mode GPUs excluded)."""
    return sum(1 for g in state.node_gpus[node]
               if not state.gpu_mig[g] and (not flavor.mixed or state.gpu_model[g] == flavor.model))


def _per_model(state: ClusterState, flavors: tuple[Flavor, ...], request: ResourceRequest,
               best: int) -> tuple[str, bool]:
    """(`` H100-80GB (and 2 A100-80GB)``, True when the request could take more than one of the node's
    models) for the node with ``best`` GPUs of one model the job may use when that node mixes models,
    else ``("", False)`` (verify21 V11: a 6-GPU node of 2 A100-80GB + 4 H100-80GB was said to be
    "the largest node has 4", and "ask for at most 4 GPUs" read as wrong — a request takes one model).
    """
    mixed = [f for f in flavors if f.mixed]
    for flavor in mixed:
        for pid in flavor.pools:
            for node in state.pools[pid].nodes:
                if _flavor_gpus(state, node, flavor, request) != best:
                    continue
                counts = Counter(state.gpu_model[g] for g in state.node_gpus[node] if not state.gpu_mig[g])
                if len(counts) < 2:
                    return "", False
                others = ", ".join(f"{n} {m}" for m, n in sorted(counts.items(), key=lambda c: (-c[1], c[0]))
                                   if m != flavor.model)
                usable = {f.model for f in flavors} & set(counts)
                take_one = len(usable) > 1
                return f" {flavor.model} (and {others}){': a request takes one model' if take_one else ''}", take_one
    return "", False


def _usable_free(state: ClusterState, node: int, flavor: Flavor) -> list[int]:
    free = state.free_gpus_on(node)
    return free if not flavor.mixed else [g for g in free if state.gpu_model[g] == flavor.model]


def _after_repartitioning(request: ResourceRequest, flavors: tuple[Flavor, ...], state: ClusterState,
                          whole: int) -> FitReason | None:
    """Why ``request`` waits (case 022 r1) when whole GPUs never hold it but the physical GPUs would
    once an admin turns MIG mode off on some of them, or None.

    MIG-partitioned GPUs are physical capacity: re-partitioning (``nvidia.com/mig.config``) gives
    them back as whole GPUs, so such a request pends naming them instead of being refused. A
    request larger than any node's physical GPUs still never fits (None here: the caller rejects).
    """
    if request.workers > 1 or request.groups or request.fractional:
        return None   # gangs and shared GPUs keep the whole-GPU answer
    node_best = total = 0
    for flavor in flavors:
        for pid in flavor.pools:
            for node in state.pools[pid].nodes:
                count = _physical_gpus(state, node, flavor, request)
                node_best = max(node_best, count)
                total += count
    if not (request.gpus <= node_best and request.total_gpus <= total):
        return None
    note = _mig_note(state, whole)
    partitioned = [state.nodes[n].name for n in sorted({n for f in flavors for pid in f.pools
                                                         for n in state.pools[pid].nodes})
                   if any(state.gpu_mig[g] for g in state.node_gpus[n])
                   and any(_physical_gpus(state, n, f, request) >= request.gpus for f in flavors)]
    where = ", ".join(partitioned[:_NODE_LIST]) + (", ..." if len(partitioned) > _NODE_LIST else "")
    return FitReason(
        "MigPartitioned",
        f"largest node has {whole}{note or ' whole GPUs'}",
        {"requested": request.gpus, "max_per_node": whole, "max_physical_per_node": node_best,
         "partitioned_nodes": partitioned[:_NODE_LIST], "field": "gpus"},
        f"an admin can re-partition MIG GPUs into whole GPUs (turn MIG mode off with nvidia.com/mig.config on "
        f"{where}); until then, ask for at most {whole} GPU{'s' if whole != 1 else ''}",
        waits=True)


def _physical_gpus(state: ClusterState, node: int, flavor: Flavor, request: ResourceRequest) -> int:
    """GPUs on ``node`` that ``flavor`` may give ``request``, healthy or not, MIG-mode ones included."""
    return sum(1 for g in state.node_gpus[node]
               if not flavor.mixed or (state.gpu_model[g] == flavor.model
                                       and state.gpu_memory[g] >= request.min_memory_mib))


def _mig_note(state: ClusterState, whole: int) -> str:
    """`` whole GPUs (gpu-n1: 2 of 8 are MIG-partitioned)`` when the largest node's count leaves out
    MIG-partitioned GPUs (case 022), else ``""``."""
    for n_id, node in enumerate(state.nodes):
        ids = state.node_gpus[n_id]
        mig = sum(1 for g in ids if state.gpu_mig[g])
        if mig and len(ids) - mig == whole:
            return f" whole GPUs ({node.name}: {mig} of {len(ids)} are MIG-partitioned)"
    return ""


def _gpu_memory_too_small(request: ResourceRequest, flavors: tuple[Flavor, ...]) -> FitReason | None:
    """When GPU memory alone filters out every node: the reason names ``mem_per_gpu`` and the most
    memory any GPU here has (issue 20: a 200 GiB request was told to ask for fewer GPUs)."""
    rejected = [s for f in flavors for s in f.rejected]
    if not rejected or any(s.code != "InsufficientGpuMemory" for s in rejected):
        return None
    best = max(int(s.details.get("capacity_mib", 0)) for s in rejected)
    return FitReason(
        "Unschedulable",
        f"the job asks for {request.min_memory_mib} MiB per GPU; the most any GPU here has is {best} MiB",
        {"field": "mem_per_gpu", "requested_mib": request.min_memory_mib, "max_mib": best},
        f"ask for at most {best} MiB of memory per GPU")


def _host_too_small(request: ResourceRequest, flavors: tuple[Flavor, ...], state: ClusterState,
                    host_share: bool = True) -> FitReason | None:
    """Why the job's workers can never all be held for lack of CPU or host memory, or None.

    Counts, per node, how many workers it could hold at once when empty: by its GPUs (those of
    a flavor the request accepts, healthy or not), its CPU and its host memory (capacity 0 means
    "not tracked" and never limits). Rejects when the nodes together hold fewer than
    ``request.workers``; the reason names the field to change (``cpu``, ``memory`` or ``workers``).
    """
    if not request.cpu_millis and not request.memory_mib:
        return None
    slots: dict[int, float] = {}
    eligible: set[int] = set()   # nodes with the GPUs for one worker
    held = 0.0
    for flavor in flavors:
        for pid in flavor.pools:
            for node in state.pools[pid].nodes:
                n, by_gpus = _worker_slots(request, state, node, flavor, host_share)
                if by_gpus >= 1:
                    eligible.add(node)
                before = slots.setdefault(node, 0.0)
                if n > before:
                    held += n - before
                    slots[node] = n
                    if held >= request.workers:
                        return None   # the usual answer, found at the first node big enough
    if not eligible:
        return None   # no node has the GPUs: the GPU checks above say why
    nodes = [state.nodes[n] for n in eligible]
    cpu = max((n.cpu_millis for n in nodes if n.cpu_millis), default=0)
    memory = max((n.memory_mib for n in nodes if n.memory_mib), default=0)
    details: dict[str, Any] = {"cpu_millis": request.cpu_millis, "memory_mib": request.memory_mib,
                               "workers": request.workers, "max_node_cpu_millis": cpu,
                               "max_node_memory_mib": memory}
    if not held and host_share and (share := _over_host_share(request, state, eligible)) is not None:
        return share
    if held >= 1:   # one worker fits somewhere, the gang does not
        return FitReason(
            "Unschedulable",
            f"needs {request.workers} workers of {host_said(request.cpu_millis, request.memory_mib)} each, but the "
            f"nodes can hold only {int(held)} at once",
            dict(details, field="workers", max_workers=int(held)),
            "resubmit with fewer workers or less CPU or memory per worker")
    too_big, field = [], "cpu"
    if request.cpu_millis and cpu and request.cpu_millis > cpu:
        too_big.append(f"{cpu_said(request.cpu_millis)} (the largest node has {cpu_said(cpu)})")
    if request.memory_mib and memory and request.memory_mib > memory:
        too_big.append(f"{memory_said(request.memory_mib)} host memory (the largest node has {memory_said(memory)})")
        field = "cpu" if len(too_big) == 2 else "memory"
    if not too_big:   # each fits some node, but no node holds both (with the GPUs) at once
        too_big.append(f"{cpu_said(request.cpu_millis)} and {memory_said(request.memory_mib)} host memory "
                       f"on one node{' with ' + str(request.gpus) + ' GPUs' if request.gpus else ''} "
                       f"(no node has all of it)")
    most = [f"cpu {cpu / 1000:g}" if request.cpu_millis and cpu else "",
            f"memory {memory_said(memory, typed=True)}" if request.memory_mib and memory else ""]
    return FitReason("Unschedulable", "each worker needs " + " and ".join(too_big), dict(details, field=field),
                     "ask for at most " + " and ".join(m for m in most if m) + " per worker")


def _group_host_too_small(request: ResourceRequest, flavors: tuple[Flavor, ...],
                          state: ClusterState) -> FitReason | None:
    """Why one group's worker of a gang never fits any node by CPU or host memory, its GPUs' part
    of a GPU node's included (red team 39, R9: ``{"groups": [{"gpus": 1, "cpu": 16}]}`` was accepted
    and pended for ever, where the flat request of the same worker is refused), or None. The
    reason's field is ``groups[i].cpu`` or ``groups[i].memory``."""
    for i, group in enumerate(request.groups):
        if not (group.cpu_millis or group.memory_mib):
            continue
        one = replace(request, groups=(), workers=1, gpus=group.gpus, cpu_millis=group.cpu_millis,
                      memory_mib=group.memory_mib)
        why = _host_too_small(one, flavors, state, True)
        if why is None or why.details.get("field") not in ("cpu", "memory"):
            continue
        where = f"groups[{i}].{why.details['field']}"
        return replace(why, message=f"group {group.name!r}: {why.message}",
                       details=dict(why.details, field=where, group=group.name, group_index=i))
    return None


def _over_host_share(request: ResourceRequest, state: ClusterState, nodes: set[int]) -> FitReason | None:
    """Why no node holds one worker when GPU nodes big enough refuse it for asking more than its
    GPUs' part of their CPU or host memory (:mod:`.host_share`, red team 38 R4), or None."""
    cpu_most = mem_most = -1
    refused = False
    for node in nodes:
        spec = state.nodes[node]
        if ((request.cpu_millis and spec.cpu_millis and request.cpu_millis > spec.cpu_millis)
                or (request.memory_mib and spec.memory_mib and request.memory_mib > spec.memory_mib)
                or within_host_share(state, node, request)):
            continue
        refused = True
        cpu, mem = host_share(state, node, request)
        cpu_most, mem_most = max(cpu_most, -1 if cpu is None else cpu), max(mem_most, -1 if mem is None else mem)
    if not refused:
        return None
    over_cpu = bool(request.cpu_millis) and 0 <= cpu_most < request.cpu_millis
    field = "cpu" if over_cpu else "memory"
    over_mem = bool(request.memory_mib) and 0 <= mem_most < request.memory_mib
    # in the units typed, the hint naming the value to type (newuser39 n8: "5000 millicores CPU", "host --memory")
    asks = " and ".join(a for a in (cpu_said(request.cpu_millis) if over_cpu else "",
                                    f"{memory_said(request.memory_mib)} host memory" if over_mem else "") if a)
    most = " and ".join(m for m in (cpu_said(cpu_most) if over_cpu else "",
                                    f"{memory_said(mem_most)} host memory" if over_mem else "") if m)
    typed = " and ".join(m for m in (f"cpu {cpu_most / 1000:g}" if over_cpu else "",
                                     f"memory {memory_said(mem_most, typed=True)}" if over_mem else "") if m)
    why = ("a GPU node's CPUs and host memory are split among its GPUs, so that no reservation leaves a GPU "
           "unusable for other work")
    details = {"field": field, "cpu_millis": request.cpu_millis, "memory_mib": request.memory_mib,
               "gpus": request.requested_gpus, "max_cpu_millis": max(cpu_most, 0),
               "max_memory_mib": max(mem_most, 0)}
    share_milli = request.gpu_milli if request.fractional else request.gpus * GPU_MILLI
    owner = "GPU's" if share_milli <= GPU_MILLI else "GPUs'"
    admin = (f"an admin may add a node without GPUs to the inventory, or set {HOST_SHARE_SETTING} = False to turn "
             "the split off, letting CPU work keep a GPU node's GPUs idle")
    details["setting"] = HOST_SHARE_SETTING
    if not request.gpus:
        return _no_cpu_node_holds(request, state, nodes, why, asks, details, admin)
    return FitReason("Unschedulable",
                     f"each worker asks for {asks}, more than its {_n(share_milli)} {owner} part of any GPU node it fits on: "
                     f"at most {most} ({why})", details,
                     f"ask for at most {typed} per worker, or for more GPUs per worker; or {admin}")


def _no_cpu_node_holds(request: ResourceRequest, state: ClusterState, nodes: set[int], why: str, asks: str,
                       details: dict[str, Any], admin: str) -> FitReason:
    """A job without GPUs too big for every node without GPUs: the largest such node and its size, the
    value to ask for there, and "ask for GPUs" only where a GPU node's part for some GPUs holds it
    (newuser39 n9: "run it where the inventory has a node without GPUs" where it has one, too small)."""
    cpu_nodes = sorted((n for n in nodes if not state.node_gpus[n]),
                       key=lambda n: (state.nodes[n].cpu_millis, state.nodes[n].memory_mib), reverse=True)
    said = ["leave out cpu and memory"]
    where = f"no node without GPUs has {asks}"
    if cpu_nodes:
        spec = state.nodes[cpu_nodes[0]]
        size = " and ".join(x for x in (cpu_said(spec.cpu_millis) if request.cpu_millis and spec.cpu_millis else "",
                                        f"{memory_said(spec.memory_mib)} host memory"
                                        if request.memory_mib and spec.memory_mib else "") if x)
        if size:
            where = f"the largest node without GPUs ({spec.name}) has {size}"
            typed = " and ".join(x for x in (f"cpu {spec.cpu_millis / 1000:g}" if request.cpu_millis
                                             and spec.cpu_millis and request.cpu_millis > spec.cpu_millis else "",
                                             f"memory {memory_said(spec.memory_mib, typed=True)}" if request.memory_mib
                                             and spec.memory_mib and request.memory_mib > spec.memory_mib else "")
                             if x)
            said = [f"ask for at most {typed}"] if typed else said
    gpus = [math.ceil(max(request.cpu_millis * len(state.node_gpus[n]) / state.nodes[n].cpu_millis
                          if request.cpu_millis and state.nodes[n].cpu_millis else 1,
                          request.memory_mib * len(state.node_gpus[n]) / state.nodes[n].memory_mib
                          if request.memory_mib and state.nodes[n].memory_mib else 1))
            for n in nodes if state.node_gpus[n]]
    least = min((g for g, n in zip(gpus, [n for n in nodes if state.node_gpus[n]], strict=True)
                 if g <= len(state.node_gpus[n])), default=0)
    if least:
        said.append(f"ask for at least {least} GPU{'s' if least != 1 else ''}")
    return FitReason("Unschedulable",
                     f"a job without GPUs reserves no CPU or host memory on a GPU node ({why}), and {where}",
                     details, f"{', or '.join(said)}; or {admin}")


def _worker_slots(request: ResourceRequest, state: ClusterState, node: int, flavor: Flavor,
                  host_share: bool = True) -> tuple[float, float]:
    """Workers of ``request`` an empty ``node`` holds for ``flavor``: in all, and by its GPUs alone.

    ``inf`` where nothing limits (no GPUs asked for, or capacity not tracked).
    """
    spec = state.nodes[node]
    by_gpus = math.inf
    if request.gpus:
        gpus = _flavor_gpus(state, node, flavor, request)
        by_gpus = gpus * (GPU_MILLI // request.gpu_milli) if request.fractional else gpus // request.gpus
    if host_share and not within_host_share(state, node, request):
        return 0.0, by_gpus  # more than its GPUs' part of the node's host (.host_share)
    limits = [by_gpus]
    if request.cpu_millis and spec.cpu_millis:
        limits.append(spec.cpu_millis // request.cpu_millis)
    if request.memory_mib and spec.memory_mib:
        limits.append(spec.memory_mib // request.memory_mib)
    return min(limits), by_gpus


def _structural(state: ClusterState, flavor: Flavor, request: ResourceRequest) -> tuple[int, int]:
    """(most GPUs of the flavor on one node, all GPUs of the flavor) counting unhealthy ones."""
    best = total = 0
    if not flavor.mixed:
        for pid in flavor.pools:
            pool = state.pools[pid]
            best = max(best, pool.structural_max)
            total += pool.structural_total
        return best, total
    for pid in flavor.pools:
        for node in state.pools[pid].nodes:
            count = _flavor_gpus(state, node, flavor, request)
            best = max(best, count)
            total += count
    return best, total


def _flavor_gpus(state: ClusterState, node: int, flavor: Flavor, request: ResourceRequest) -> int:
    """GPUs on ``node`` that ``flavor`` may give ``request``, healthy or not (MIG-mode GPUs excluded).

    A pool of a plain flavor already passed the model and memory filters; a mixed node's GPUs are
    checked one by one.
    """
    return sum(1 for g in state.node_gpus[node]
               if not state.gpu_mig[g] and (not flavor.mixed or (state.gpu_model[g] == flavor.model
                                                                 and state.gpu_memory[g] >= request.min_memory_mib)))


def capacity_reason(request: ResourceRequest, flavor: Flavor, state: ClusterState, *,
                    sharing: str = "any", reserved: Mapping[int, int] | None = None,
                    host_share: bool = True) -> FitReason:
    """Why ``request`` does not fit ``flavor`` with the capacity free now (``sharing``: the profile's
    ``gpu_sharing`` — with ``team`` or ``none`` a fractional job may not fit where a shared GPU
    has room; ``reserved``: GPU -> MiB of its memory the shares on it reserve, for a fraction that
    asks ``mem_per_gpu`` — red team 15 R7; ``host_share``: the placer's
    :attr:`~.placer.PlacementConfig.host_share` — a GPU node's host is split among its GPUs, and the
    words of a CPU or memory wait say so, in cores and GiB: :func:`.host_share.host_wait`).

    Returns ``Fragmented`` with per-node numbers (case 006:
    ``4 GPUs free cluster-wide but at most 2 on one node (node1:1, node2:2, node3:1)``),
    ``UnhealthyGpu`` naming the GPUs, or ``WaitingForCapacity``.
    """
    need = request.gpus
    host = host_said(request.cpu_millis, request.memory_mib)  # as typed: cores, GiB (newuser39 n8, session 40)
    if need == 0:
        cordoned_all = _cordoned_nodes_only(flavor, state)
        if cordoned_all:  # every ready node is cordoned: say the cordon, its reason and admin (verify25)
            return _cordon_reason(request, flavor.model, 0, cordoned_all, others=len(state.nodes) > len(cordoned_all))
        # a 0-sized constraint never names the cause (new user 14, N21: "no ready node has 0 millicores CPU
        # and 0 MiB host memory free" for a job whose every node had room): with none, no node takes work now
        gpu_nodes = host_share and any(state.node_gpus[n] for pid in flavor.pools for n in state.pools[pid].nodes)
        return FitReason("WaitingForCapacity", (
            f"no node without GPUs has {host} free (a job without GPUs reserves none of a GPU node's host: it is "
            "split among the node's GPUs)" if gpu_nodes else f"no ready node has {host} free") if host else
                         "no node that passes the job's filters is ready for new work now (all are cordoned or "
                         "not ready)", {"cpu_millis": request.cpu_millis, "memory_mib": request.memory_mib,
                                        **({"host_share": True} if host and gpu_nodes else {})})
    roomy_nodes: list[tuple[int, int]] = []  # (-free GPUs, node id)
    free_total = 0
    max_free = 0
    for pid in flavor.pools:
        pool = state.pools[pid]
        for k in range(len(pool.by_free) - 1, 0, -1):
            for node in pool.by_free[k]:
                free = k if not flavor.mixed else len([
                    g for g in state.free_gpus_on(node) if state.gpu_model[g] == flavor.model])
                if free:
                    free_total += free
                    max_free = max(max_free, free)
                    roomy_nodes.append((-free, node))
    # the 64 nodes with the most free GPUs, ties in inventory order: what the ledger holds, not the
    # order its index happens to list nodes in (so a reason can be cached per free capacity)
    per_node = [(state.nodes[node].name, -neg) for neg, node in
                (heapq.nsmallest(64, roomy_nodes) if len(roomy_nodes) > 64 else roomy_nodes)]
    model = flavor.model
    cordoned = _cordoned(flavor, state)
    if cordoned:
        workers = max(1, request.workers)
        most = max(count for _, count in cordoned)
        if (most >= max(1, need) if workers == 1 else sum(c for _, c in cordoned) + free_total >= need * workers):
            return _cordon_reason(request, model, free_total, cordoned, others=len(state.nodes) > len(cordoned))
    if request.fractional:
        partial_free = sum(
            k * len(state.pools[pid].partial[k]) for pid in flavor.pools for k in state.pools[pid].partial_keys)
        details = {"requested_milli": request.gpu_milli, "free_whole": free_total,
                   "free_shared_milli": partial_free, "model": model}
        roomy = [g for pid in flavor.pools for k in state.pools[pid].partial_keys if k >= request.gpu_milli
                 for g in state.pools[pid].partial[k]]
        need_mib = request.min_memory_mib
        short = [g for g in roomy if reserved is not None and need_mib
                 and reserved.get(g, 0) + need_mib > state.gpu_memory[g]]
        if short and len(short) == len(roomy) and not free_total:  # red team 15 R7: memory is reserved too
            g = min(short)
            left = max(0, state.gpu_memory[g] - reserved.get(g, 0)) if reserved is not None else 0
            named = state.gpu_uuid[g] + (f" (and {len(short) - 1} more)" if len(short) > 1 else "")
            return FitReason(
                "WaitingForCapacity",
                f"needs {request.gpu_milli / GPU_MILLI:g} of {_a(model)} {model} GPU with {need_mib} MiB of its memory; "
                f"{named} has that share free but only {left} MiB of its memory unreserved (each share reserves its "
                "mem_per_gpu), and none is wholly free",
                {**details, "requested_mib": need_mib, "unreserved_mib": left,
                 "short_gpus": [state.gpu_uuid[x] for x in sorted(short)[:8]]})
        if sharing != "any" and roomy and not free_total:  # red-team 5 finding 2: say why that room is not its
            named = state.gpu_uuid[min(roomy)] + (f" (and {len(roomy) - 1} more)" if len(roomy) > 1 else "")
            whose = ("another team's work (GPUs are shared only within a team here)" if sharing == "team"
                     else "other work (a fraction does not share a GPU here)")
            return FitReason(
                "WaitingForCapacity",
                f"needs {request.gpu_milli / GPU_MILLI:g} of {_a(model)} {_gpu(model)}; {named} has that much free but is "
                f"shared by {whose}, and none is wholly free",
                {**details, "gpu_sharing": sharing, "shared_gpus": [state.gpu_uuid[g] for g in sorted(roomy)[:8]]})
        if (request.cpu_millis or request.memory_mib) and host_share and (free_total or roomy):
            # the share fits a GPU whose node's part does not hold its CPU or memory (session 40: "no GPU has
            # that much free" of a node with every GPU free)
            room = [n for n in sorted({state.gpu_node[g] for g in roomy} | {n for _, n in roomy_nodes})]
            if any(not within_host_share(state, n, request) for n in room):
                message, said, unblock = host_wait(request, state, room, free_total,
                                                   gpus_phrase(free_total, model), host_share)
                return FitReason("WaitingForCapacity", message, {**details, **said}, unblock)
        return FitReason(
            "WaitingForCapacity",
            f"needs {request.gpu_milli / GPU_MILLI:g} of {_a(model)} {_gpu(model)}; no {_gpu(model)} has that much free",
            details)
    # a GPU a job or lease holds is not "used by processes the scheduler did not start": they are its
    # holder's (a kernel's leftover child; red team 25, R2), and the holder is named where it blocks
    unhealthy = [why for g, why in state.unplaceable_why.items()
                 if state.gpu_model[g] == model and state.node_pool[state.gpu_node[g]] in flavor.pools
                 and "MIG" not in why and not (why.endswith(FOREIGN_WHY) and state.free_milli[g] < GPU_MILLI)
                 ][:_NODE_LIST]
    workers = max(1, request.workers)
    if workers > 1:
        return _gang_reason(request, flavor, state, host_share)
    elif free_total >= need and max_free < need:
        per_node.sort(key=lambda item: state.node_index[item[0]])
        shown = ", ".join(f"{name}:{free}" for name, free in per_node[:_NODE_LIST])
        more = len(per_node) - _NODE_LIST
        if more > 0:
            shown += f", +{more} more"
        return FitReason(
            "Fragmented",
            f"{free_total} GPUs free cluster-wide but at most {max_free} on one node ({shown})",
            {"requested": need, "free": free_total, "max_free_per_node": max_free,
             "per_node": dict(per_node[:_NODE_LIST]), "model": model})
    if workers == 1 and request.nvlink and need > 1 and max_free >= need:
        linked = _nvlink_group(state, flavor, free=True)
        if linked < need:  # GPUs are free, but not enough of them share an NVLink domain on one node
            return FitReason(
                "Fragmented",
                f"needs {gpus_phrase(need, 'NVLink-connected ' + model)} on one node; {free_total} free, but at most {linked} "
                f"of them connected by NVLink on one node",
                {"requested": need, "free": free_total, "max_free_per_node": max_free,
                 "max_free_nvlink_group": linked, "nvlink": True, "model": model})
    if workers == 1 and max_free >= need and (request.cpu_millis or request.memory_mib):
        message, said, unblock = host_wait(request, state, [n for k, n in sorted(roomy_nodes) if -k >= need],
                                           free_total, gpus_phrase(free_total, model), host_share)
        return FitReason("WaitingForCapacity", message, {**said, "model": model}, unblock)
    sick, blocked = _withheld(flavor, state)
    if unhealthy and flavor.capacity < need * workers and sick:
        # Case 018: "h100-node-3: only 7 of 8 GPUs allocatable (1 unhealthy: Xid 94)".
        return FitReason(
            "UnhealthyGpu", "; ".join(line for line, _ in sick),
            {"requested": need * workers, "unhealthy": unhealthy, "model": model, "free": free_total,
             "nodes": [numbers for _, numbers in sick]},
            "an admin can restart the NVIDIA device plugin on the node (or reset the GPU) once it is checked, "
            "or drain the node; the GPU counts again when it is allocatable")
    if unhealthy and flavor.capacity < need * workers:
        return FitReason(
            "UnhealthyGpu",
            f"needs {gpus_phrase(need * workers, model)}; unhealthy GPUs are excluded: " + "; ".join(unhealthy),
            {"requested": need * workers, "unhealthy": unhealthy, "model": model, "free": free_total})
    note = ""
    if blocked:
        # Case 025: a GPU held by a process the scheduler did not start is named in the queue.
        count = sum(len(gpus) for gpus in blocked.values())
        where = ", ".join(f"{node} GPU {', '.join(map(str, gpus))}" for node, gpus in blocked.items())
        note = f"; {count} GPU{'s' if count != 1 else ''} blocked by unmanaged process ({where})"
    return FitReason(
        "WaitingForCapacity",
        f"needs {gpus_phrase(need * workers, model)}, {free_total} free"
        + (f" (at most {max_free} on one node)" if free_total > max_free else "") + note,
        {"requested": need * workers, "free": free_total, "max_free_per_node": max_free,
         "capacity": flavor.capacity, "model": model,
         "blocked_by_unmanaged": {node: list(gpus) for node, gpus in blocked.items()}})


def _cordoned(flavor: Flavor, state: ClusterState) -> list[tuple[Node, int]]:
    """The ready but cordoned nodes of ``flavor`` and how many of its healthy GPUs each has (an
    inventory fact, worked out once per inventory and flavor)."""
    key = ("cordoned", flavor.model, flavor.pools, flavor.mixed)
    found: list[tuple[Node, int]] | None = state.inventory_memo.get(key)
    if found is None:
        found = []
        for n_id in sorted(n for pid in flavor.pools for n in state.pools[pid].nodes):
            node = state.nodes[n_id]
            if node.ready and node.unschedulable:
                count = sum(1 for g in node.gpus if g.healthy and not g.mig_enabled
                            and (not flavor.mixed or g.model == flavor.model))
                if count:
                    found.append((node, count))
        state.inventory_memo[key] = found
    return found


def _cordoned_nodes_only(flavor: Flavor, state: ClusterState) -> list[tuple[Node, int]]:
    """The cordoned nodes of ``flavor`` (with their healthy GPUs, 0 for a CPU-only node) when no ready
    node of it takes new work; ``[]`` when one does or none is cordoned (a job asking no GPU waits on
    nodes, not GPUs: verify25 saw "all are cordoned or not ready" where an admin's cordon kept it)."""
    key = ("cordoned-only", flavor.model, flavor.pools, flavor.mixed)
    found: list[tuple[Node, int]] | None = state.inventory_memo.get(key)
    if found is None:
        nodes = [state.nodes[n] for n in sorted(n for pid in flavor.pools for n in state.pools[pid].nodes)]
        ready = [node for node in nodes if node.ready]
        found = [] if any(not node.unschedulable for node in ready) else [
            (node, sum(1 for g in node.gpus if g.healthy and not g.mig_enabled)) for node in ready]
        state.inventory_memo[key] = found
    return found


def _cordon_reason(request: ResourceRequest, model: str, free: int, cordoned: list[tuple[Node, int]], *,
                   others: bool = True) -> FitReason:
    """``NodeCordoned``: a cordoned node would hold the job (hubadmin24, ``jupyter-sched nodes cordon``);
    the sentence names the cordon, its reason, admin and time (:func:`~jupyter_sched.wording.cordons.cordon_wait_sentence`).
    A job asking no GPU (``request.gpus`` 0) is told the node takes no new work, not a GPU count. ``others``
    False: no node but the cordoned ones (a one-node lab), so no "other nodes" are named (details
    ``no_other_nodes``; newuser27 n5)."""
    from ..model.codec import cordon_to_dict
    from ..wording.cordons import cordon_wait_sentence

    cpu_only = request.gpus == 0 and not request.fractional
    requested = request.total_gpus if request.workers > 1 else (
        request.gpu_milli / GPU_MILLI if request.fractional else request.gpus)
    details: dict[str, Any] = {
        **({} if cpu_only else {"requested": requested}), "free": free, "model": model,
        **({} if others else {"no_other_nodes": True}),
        "cordons": [{"node": node.name, "gpus": count, **(cordon_to_dict(node.cordon) or {})}
                    for node, count in cordoned[:_NODE_LIST]]}
    first = cordoned[0][0].name
    unblock = (f"it starts when an admin uncordons {first} (jupyter-sched nodes uncordon {first})" if cpu_only
               or not others else f"it starts when an admin uncordons {first} (jupyter-sched nodes uncordon {first}), "
               "or when GPUs free up on the other nodes")
    sentence = cordon_wait_sentence(details)
    return FitReason("NodeCordoned", f"no node takes new work now: {sentence}" if cpu_only else sentence, details,
                     unblock)


def _withheld(flavor: Flavor, state: ClusterState) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, list[int]]]:
    """Per node of ``flavor``: a sentence for its unhealthy GPUs (``h100-node-3: only 7 of 8 GPUs
    allocatable (1 unhealthy: Xid 94)``, with the numbers) and the GPU indices held by processes
    the scheduler did not start."""
    # Inventory facts: the same for every call of a cycle, and the cycle asks once per request shape
    # and ledger version — so they are worked out once per inventory and flavor (a scan of every
    # GPU per call made a saturated 5,000-node cycle a hundred times slower).
    key = ("withheld", flavor.model, flavor.pools, flavor.mixed)
    found: tuple[list[tuple[str, dict[str, Any]]], dict[str, list[int]]] | None = state.inventory_memo.get(key)
    if found is None:
        found = state.inventory_memo[key] = _scan_withheld(flavor, state)
    return found


def _scan_withheld(flavor: Flavor, state: ClusterState) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, list[int]]]:
    sick: list[tuple[str, dict[str, Any]]] = []
    blocked: dict[str, list[int]] = {}
    for n_id in sorted(n for pid in flavor.pools for n in state.pools[pid].nodes):
        node = state.nodes[n_id]
        gpus = [g for g in node.gpus if not g.mig_enabled and (not flavor.mixed or g.model == flavor.model)]
        bad = [g for g in gpus if not g.healthy]
        if bad:
            reasons = ", ".join(dict.fromkeys(g.health_reason or "unhealthy" for g in bad))
            sick.append((f"{node.name}: only {len(gpus) - len(bad)} of {len(gpus)} GPUs allocatable "
                         f"({len(bad)} unhealthy: {reasons})",
                         {"node": node.name, "gpus": len(gpus), "allocatable": len(gpus) - len(bad),
                          "unhealthy": len(bad), "reasons": reasons}))
        held = [g.index for g in gpus if g.healthy and g.foreign_memory_mib > 0]
        if held:
            blocked[node.name] = held
    return sick[:_NODE_LIST], blocked


def _gang_reason(request: ResourceRequest, flavor: Flavor, state: ClusterState, host_share: bool = True) -> FitReason:
    """Why a gang does not fit now: how many of its workers the free capacity holds at once, per
    node (case 024: ``gang needs 6 x 4 GPUs on separate placements; only 5 fit (n1:6, ..., n5:6)``).
    Nothing is held for it meanwhile: a gang is admitted whole or not at all."""
    fit, per_node = _pack(request, state, flavor, free=True, host_share=host_share)
    free_total = sum(per_node.values())
    shown = [(state.nodes[n].name, k) for n, k in sorted(per_node.items()) if k][:_NODE_LIST]
    listing = ", ".join(f"{name}:{k}" for name, k in shown) + (", ..." if len([k for k in per_node.values() if k])
                                                               > _NODE_LIST else "")
    need = request.total_gpus
    details: dict[str, Any] = {"requested": need, "workers": request.workers, "fit_workers": fit, "free": free_total,
                               "per_node": dict(shown), "model": flavor.model, "gang": gang_words(request)}
    code = "Fragmented" if free_total >= need else "WaitingForCapacity"
    split = unblock = ""
    if host_share and fit < request.workers:  # the GPUs a worker may take are those whose part holds it (session 40)
        over = next(((w, n) for w in request.worker_requests() if w.cpu_millis or w.memory_mib
                     for n in sorted(per_node) if not within_host_share(state, n, w)), None)
        if over is not None:
            w, n = over
            split = (f"; a worker asking for {host_said(w.cpu_millis, w.memory_mib)} with {gpus_phrase(w.gpus)} goes "
                     f"only where its GPUs' part of the node's host holds it: {per_gpu_said(state, n, w)}")
            cpu, mem = host_share_of(state, n, w)
            most = " and ".join(x for x in (
                f"cpu {(cpu or 0) / 1000:g}" if w.cpu_millis and cpu is not None and w.cpu_millis > cpu else "",
                f"memory {memory_said(mem or 0, typed=True)}" if w.memory_mib and mem is not None
                and w.memory_mib > mem else "") if x)
            ask = (f"ask for at most {most} per worker of {gpus_phrase(w.gpus)} (its part of "
                   f"{state.nodes[n].name}), or for more GPUs per worker") if most else ""
            details["host_share"] = {"node": state.nodes[n].name, "gpus": len(state.node_gpus[n]),
                                     "cpu_millis": state.nodes[n].cpu_millis, "memory_mib": state.nodes[n].memory_mib,
                                     "max_cpu_millis": cpu or 0, "max_memory_mib": mem or 0,
                                     "setting": HOST_SHARE_SETTING, **({"ask": ask} if ask else {})}
            unblock = f"{ask}; or it starts when GPUs free up on nodes whose part holds its workers (see ETA)" \
                if ask else ""
    return FitReason(code, f"gang needs {gang_words(request)} {flavor.model} GPUs on separate placements; only "
                           f"{fit} of its {request.workers} workers fit now ({listing or 'no GPU free'}){split}", details,
                     unblock)


def _gpu(model: str) -> str:
    """``A100 GPU``, but ``Simulated GPU 80GB`` as it is: a model named a GPU already (new user 15,
    N6: "needs 0.5 of a Simulated GPU 80GB GPU" in the REST reason the panel showed)."""
    return model if "GPU" in model.split() else f"{model} GPU"


def _a(word: str) -> str:
    """The indefinite article a reader says before ``word`` ("an A100", "a T4", "an H100")."""
    if not word:
        return "a"
    first = word[0].upper()
    initialism = len(word) > 1 and (word[1].isupper() or word[1].isdigit())  # said letter by letter
    return "an" if first in "AEIO" or (initialism and first in "FHLMNRSX") else "a"
