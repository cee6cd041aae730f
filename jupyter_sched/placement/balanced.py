"""FGD-Balanced: Fragmentation Gradient Descent plus CPU balance and node-class scarcity.

Our placement policy for GPU-sharing clusters, and the base of the best one
(:class:`~.planned.FgdPlannedScore` adds a fill plan for shared GPUs). It starts from FGD (Weng et al., "Beware of
Fragmentation", USENIX ATC'23; :class:`~.fgd.FgdScore`) and adds two terms FGD does not see,
both found by replaying the openb trace (Alibaba cluster-trace-gpu-v2023) with
``benchmarks/placement_openb.py``:

1. **CPU balance.** FGD checks CPU only pod by pod ("does one typical pod still fit?"), so it
   lets nodes drift to many free GPUs and little free CPU. At saturation those GPUs are stranded:
   on the default workload FGD ends with ~35 whole GPUs that no pod can use for lack of CPU, and
   with 470- and 320-milli slivers on nodes out of CPU. With ``r`` the workload's CPU per
   GPU-milli (:func:`cpu_per_gpu_milli`), a node with ``G`` free GPU-milli and ``C`` free
   millicores *strands* ``max(0, G - C / r)`` GPU-milli (the GPUs its CPU cannot feed at the
   workload's ratio). A placement pays for the change it makes to that amount: CPU-light pods are
   drawn to CPU-poor nodes, CPU-heavy and CPU-only pods to CPU-rich ones. The idea is the
   multi-resource balance of Tetris (Grandl et al., SIGCOMM'14) and DRF-style dominant shares,
   measured in FGD's unit (GPU-milli).
2. **Scarcity of node classes.** Some pods fit only a few kinds of node: a GPU model named in
   ``gpu_spec``, or an 8-GPU pod asking for 120 cores that only the 128-core nodes can hold.
   Each class of nodes (GPU model, GPUs per node, CPU capacity) gets a *pressure*: the demand
   of the target workload's shapes that fit only some classes, spread over the classes they fit
   in proportion to capacity, per milli-GPU of the class, relative to the workload's demand per
   milli-GPU of the cluster (:func:`class_pressure`). Placing ``m`` milli-GPUs on a class costs
   ``pressure x m``, so pods that could run anywhere leave scarce classes to the pods that need
   them. Without constrained shapes every pressure is 0 and the term vanishes.

Both terms are in milli-GPUs and enter FGD's 0..100 score at the slope of its sigmoid at 0:
:data:`MILLI_PER_POINT` milli-GPUs of fragmentation per point. GPU choice within a node and tie
rules are FGD's.

Measured with ``benchmarks/placement_openb.py --workloads all --seeds 42-51``: at or above the
published FGD at 100 % arrived demand on all 17 workloads of the paper, by +0.19 (multigpu40) to
+4.2 points (gpuspec33); 95.78 % against FGD's 95.23 % on ``default``.

Pure: numpy only, no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..model import GPU_MILLI, ResourceRequest
from .fgd import FgdScore, FloatArray, FragModel, IntArray, NodeArrays, PodShape, TypicalPod, model_allowed
from .state import ClusterState

__all__ = ["MILLI_PER_POINT", "FgdBalancedScore", "class_pressure", "cpu_per_gpu_milli"]

MILLI_PER_POINT = 40.0
"""Milli-GPUs of fragmentation per point of FGD's score near 0: ``100 * sigmoid(d / 1000)`` has
slope 0.025 points per milli at ``d = 0``."""


def cpu_per_gpu_milli(typical: Sequence[TypicalPod], cpu_only_share: float = 0.5) -> float:
    """The workload's CPU demand per milli-GPU (millicores per milli-GPU), for the balance term.

    ``(CPU of GPU pods + cpu_only_share x CPU of CPU-only pods) / GPU-milli of GPU pods``, each
    weighted by popularity. CPU-only pods count half by default: they have no GPU to follow, so
    the policy can steer them to CPU-rich nodes, but on CPU-bound workloads (openb ``cpu250``)
    they compete with GPU pods for the same cores. The share was chosen on the openb workloads
    (0 loses 1.3 points on ``cpu250``; 1 gives up whole 8-GPU nodes on ``multigpu30``).

    Returns:
        The ratio, or 0.0 when the workload has no GPU pods (the balance term then does nothing).

    Raises:
        ValueError: ``cpu_only_share`` outside 0..1.
    """
    if not 0.0 <= cpu_only_share <= 1.0:
        raise ValueError(f"cpu_only_share must be in 0..1, got {cpu_only_share}")
    gpu_cpu = sum(t.popularity * t.shape.cpu_milli for t in typical if t.shape.gpus)
    cpu_only = sum(t.popularity * t.shape.cpu_milli for t in typical if not t.shape.gpus)
    milli = sum(t.popularity * t.shape.total_milli for t in typical if t.shape.gpus)
    return (gpu_cpu + cpu_only_share * cpu_only) / milli if milli else 0.0


def class_pressure(typical: Sequence[TypicalPod], arrays: NodeArrays) -> FloatArray:
    """Per node: the scarcity pressure of its class (dimensionless, 0 = not scarce).

    A class is ``(GPU model, GPUs per node, CPU capacity)``. A typical GPU shape *fits* a class
    when the model is allowed and an empty node of the class holds it (GPUs and CPU; CPU
    capacity 0 means untracked and fits). Shapes that fit every class, or none, add nothing;
    the others spread their demand (popularity x milli-GPUs) over the classes they fit in
    proportion to class capacity. Pressure = that demand per milli-GPU of the class, divided by
    the whole workload's demand per milli-GPU of the cluster.

    Args:
        typical: the target workload (popularities summing to 1).
        arrays: the nodes (their models, GPU counts and CPU capacities; free capacity is not read).

    Returns:
        ``(nodes,)`` float array; nodes without GPUs get 0.
    """
    keys = list(zip(arrays.model_idx.tolist(), arrays.gpu_count.tolist(), arrays.cpu_cap.tolist(), strict=True))
    classes = sorted(set(keys))
    index = {k: i for i, k in enumerate(classes)}
    of_node = np.array([index[k] for k in keys], dtype=np.int64)
    capacity = np.bincount(of_node, weights=arrays.gpu_count * float(GPU_MILLI), minlength=len(classes))
    has_gpu = np.array([m >= 0 and g > 0 for m, g, _ in classes])
    load = np.zeros(len(classes))
    demand = 0.0
    for t in typical:
        s = t.shape
        if not s.gpus:
            continue
        demand += t.popularity * s.total_milli
        fits = has_gpu & np.array([m >= 0 and g >= s.gpus and (c == 0 or c >= s.cpu_milli)
                                   and model_allowed(s.models, arrays.models[m]) for m, g, c in classes])
        if not fits.any() or fits[has_gpu].all():
            continue
        share = np.where(fits, capacity, 0.0)
        load += t.popularity * s.total_milli * share / share.sum()
    total = capacity[has_gpu].sum()
    if demand == 0.0 or total == 0.0:
        return np.zeros(len(arrays))
    pressure = np.where(capacity > 0, load / np.maximum(capacity, 1.0), 0.0) / (demand / total)
    return np.asarray(pressure[of_node], dtype=np.float64)


class FgdBalancedScore(FgdScore):
    """Placement score plugin: FGD minus the CPU-balance and class-scarcity costs (module docstring).

    ``score = FGD score - (balance_weight x Δstranded + scarcity_weight x pressure x m) / 40``
    where ``Δstranded`` is the change in GPU-milli the node's CPU cannot feed and ``m`` the pod's
    milli-GPUs. Higher is better. The value may leave 0..100: the vectorised placer only compares
    totals, and the audit record of a placement carries the value as it is (e.g. -20.8).

    Args:
        typical: the target workload (:func:`~.fgd.typical_pods`).
        balance_weight: weight of the CPU-balance cost (0 turns it off).
        scarcity_weight: weight of the class-scarcity cost (0 turns it off).
        cpu_only_share: see :func:`cpu_per_gpu_milli`.

    Raises:
        ValueError: a weight that is negative or not finite, or ``cpu_only_share`` outside 0..1.
    """

    name = "FGD-Balanced"

    def __init__(self, typical: Sequence[TypicalPod], *, balance_weight: float = 1.0,
                 scarcity_weight: float = 1.0, cpu_only_share: float = 0.5) -> None:
        if not (math.isfinite(balance_weight) and math.isfinite(scarcity_weight)
                and balance_weight >= 0 and scarcity_weight >= 0):
            raise ValueError(f"balance_weight and scarcity_weight must be finite and >= 0, got "
                             f"{balance_weight} and {scarcity_weight}")
        super().__init__(typical)
        self.balance_weight = balance_weight
        self.scarcity_weight = scarcity_weight
        self.cpu_per_milli = cpu_per_gpu_milli(self.typical, cpu_only_share)
        self._pressure_of: NodeArrays | None = None  # the view itself: a new view may reuse a freed id
        self._pressure: FloatArray = np.zeros(0)

    def _node_pressure(self, arrays: NodeArrays) -> FloatArray:
        if self._pressure_of is not arrays or len(self._pressure) != len(arrays):
            self._pressure = class_pressure(self.typical, arrays)
            self._pressure_of = arrays
        return self._pressure

    def costs(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray,
              free_gpu: IntArray | None = None) -> FloatArray:
        """The two added costs of placing ``shape`` on each of ``nodes``, in FGD score points.

        Args:
            arrays: the ledger's array view.
            shape: one worker.
            nodes: row ids (feasible for ``shape``).
            free_gpu: free milli-GPUs of ``nodes`` when the caller has them current (default: summed
                from ``arrays``).

        Returns:
            ``(len(nodes),)`` float array; negative where the placement improves CPU balance.
        """
        milli = shape.total_milli
        cost = np.zeros(len(nodes))
        r = self.cpu_per_milli
        if self.balance_weight and r > 0:
            free = arrays.gpu_left[nodes].sum(axis=1) if free_gpu is None else free_gpu
            idle = free - arrays.cpu_left[nodes] / r              # GPU-milli the free CPU cannot feed
            cost += self.balance_weight * (np.maximum(0.0, idle - (milli - shape.cpu_milli / r))
                                           - np.maximum(0.0, idle))
        if self.scarcity_weight and milli:
            cost += self.scarcity_weight * milli * self._node_pressure(arrays)[nodes]
        return cost / MILLI_PER_POINT

    def _scores(self, model: FragModel, arrays: NodeArrays, shape: PodShape,
                nodes: IntArray) -> tuple[FloatArray, IntArray]:
        """FGD's score of each of ``nodes`` minus :meth:`costs`, and FGD's GPU column.

        Both parts depend only on the node's own state, so :meth:`FgdScore.score_nodes` caches the
        sum per request shape and recomputes only the rows that changed.
        """
        score, gpu = super()._scores(model, arrays, shape, nodes)
        # FgdScore._refresh has just brought the free milli-GPUs of these rows up to date
        return score - self.costs(arrays, shape, nodes, self._total[nodes]), gpu

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        """The production placer's Score protocol, 0..100, ordered like :meth:`score_nodes`.

        Args:
            request: the worker's request.
            state: the cycle's ledger.
            node: the candidate node (ledger index).
            gpus: the GPUs the worker would get (global ids on ``node``).

        Returns:
            ``round(100 * sigmoid((v - 50) / 25))`` of the vectorised value ``v`` (FGD's score minus
            :meth:`costs`): 50 stays 50, and values outside 0..100 keep their order instead of being
            clipped (up to integer rounding at the ends).
        """
        x = min(50.0, max(-50.0, (self._value(request, state, node, gpus) - 50.0) / 25.0))
        return round(100.0 / (1.0 + math.exp(-x)))   # exp() of a bounded argument cannot overflow

    def _value(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> float:
        """The unsquashed value :meth:`score_nodes` would give this one candidate."""
        return super().score(request, state, node, gpus) - float(
            self.costs(state.node_arrays(), PodShape.from_request(request), np.array([node], dtype=np.int64))[0])
