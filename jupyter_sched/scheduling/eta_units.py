"""The capacity units of the ETA projection: a node (or a pool of like nodes) per GPU model.

The projection (:class:`~jupyter_sched.backfill.projection.Projection`) counts whole free GPUs per
unit over time and fits each worker on one unit. A request takes one GPU model (the placer's
flavors), so a node that mixes models — 2 A100-80GB and 4 H100-80GB — is one unit *per model*:
counted as one unit of 6 GPUs, a 2-GPU H100 job got an ETA when the node's A100 lease ended, "if
l-a100 stays idle", though no end of an A100 lease can start it (session 21, s21-fix9 "Left";
session 22). A node of one model is one unit whose id is its node id (its pool id on large
clusters, :data:`~.eta.NODE_DETAIL`), as before: the common case is unchanged.

Unit ids: ``0 .. homes-1`` are the nodes (or pools) — for a node mixing models, the unit of its
first model (models sorted by name) —, then one unit per further model of each such node, in node
order. The layout depends on the inventory alone and is built once per inventory object
(``ClusterState.inventory_memo``); what is free now is read from the cycle's ledger.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..model import GPU_MILLI
from ..placement.state import ClusterState

__all__ = ["Units", "units_of_inventory"]


@dataclass(frozen=True, slots=True)
class Units:
    """Where each GPU counts in the projection (module doc).

    Attributes:
        count: number of units (``homes`` plus one per further model of each node mixing models).
        gpu_unit: per GPU id (``ClusterState`` numbering), its unit.
        unit_max: per unit, the most placeable GPUs one worker can get there: a node's placeable
            GPUs of the unit's model (for a pool, of its largest node). Read only.
        per_model: per node (pool) that mixes models, ``{model: unit}``; absent for one-model homes.
        mixed_units: the units of those nodes (pools): their free GPUs are counted GPU by GPU.
        mixed_gpus: the placeable GPUs of those nodes (pools).
    """

    count: int
    gpu_unit: Sequence[int]
    unit_max: Sequence[int]
    per_model: Mapping[int, Mapping[str, int]]
    mixed_units: tuple[int, ...]
    mixed_gpus: tuple[int, ...]

    def on(self, home: int, model: str) -> tuple[int, ...]:
        """The units of node (pool) ``home`` that a job of ``model`` may use: the home itself when
        it has one model; else the unit of ``model`` there (``"*"``: any model's — a merged flavor
        places each worker on GPUs of one model here too), none if it has no GPU of ``model``."""
        per = self.per_model.get(home)
        if per is None:
            return (home,)
        if model == "*":
            return tuple(per.values())
        unit = per.get(model)
        return () if unit is None else (unit,)

    def free_now(self, state: ClusterState, by_node: bool) -> list[int]:
        """Wholly free placeable GPUs per unit now (``state.node_free`` or each pool's
        ``free_whole``, counted per model on the nodes that mix models)."""
        free = list(state.node_free) if by_node else [p.free_whole for p in state.pools]
        if not self.mixed_units:
            return free
        free.extend(0 for _ in range(self.count - len(free)))
        for unit in self.mixed_units:
            free[unit] = 0
        free_milli, gpu_unit = state.free_milli, self.gpu_unit
        for g in self.mixed_gpus:
            if free_milli[g] >= GPU_MILLI:
                free[gpu_unit[g]] += 1
        return free

    def one_unit(self, gpus: Sequence[tuple[int, int]]) -> bool:
        """Whether a holding's ``(gpu id, milli)`` pairs all count on one unit (not so only for GPUs of
        two models on one node: a merged flavor's placement,
        :attr:`~jupyter_sched.placement.placer.PlacementConfig.merge_flavors`)."""
        gpu_unit = self.gpu_unit
        first = gpu_unit[gpus[0][0]]
        return all(gpu_unit[g] == first for g, _ in gpus)


def units_of_inventory(state: ClusterState, by_node: bool) -> Units:
    """The projection's units for ``state``'s inventory: per node (``by_node``) or per pool, split
    by GPU model where a node mixes models (module doc); memoised per inventory object."""
    key = ("eta_units", by_node)
    found = state.inventory_memo.get(key)
    if isinstance(found, Units):
        return found
    found = state.inventory_memo[key] = _build(state, by_node)
    return found


def _build(state: ClusterState, by_node: bool) -> Units:
    node_of, node_pool, placeable, model_of = state.gpu_node, state.node_pool, state.placeable, state.gpu_model
    gpu_unit = list(node_of) if by_node else [node_pool[n] for n in node_of]
    unit_max = list(state.node_capacity) if by_node else [p.max_per_node for p in state.pools]
    per_model: dict[int, dict[str, int]] = {}
    mixed_units: list[int] = []
    mixed_gpus: list[int] = []
    homes = len(state.nodes) if by_node else len(state.pools)
    for home in range(homes):
        pool = state.pools[node_pool[home]] if by_node else state.pools[home]
        if len(pool.models) < 2:
            continue
        units = per_model[home] = {}
        for i, model in enumerate(pool.models):
            if i:
                units[model] = len(unit_max)
                unit_max.append(0)
            else:
                units[model] = home
                unit_max[home] = 0
            mixed_units.append(units[model])
        for node in ([home] if by_node else pool.nodes):
            sizes: dict[int, int] = {}
            for g in state.node_gpus[node]:
                unit = gpu_unit[g] = units[model_of[g]]
                if placeable[g]:
                    sizes[unit] = sizes.get(unit, 0) + 1
                    mixed_gpus.append(g)
            for unit, size in sizes.items():
                unit_max[unit] = max(unit_max[unit], size)
    return Units(count=len(unit_max), gpu_unit=gpu_unit, unit_max=unit_max, per_model=per_model,
                 mixed_units=tuple(mixed_units), mixed_gpus=tuple(mixed_gpus))
