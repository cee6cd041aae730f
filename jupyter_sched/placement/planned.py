"""FGD-Planned: FGD-Balanced whose GPU choice for shared pods follows a fill plan.

Our best placement policy for GPU-sharing clusters. FGD (Weng et al., ATC'23) measures
fragmentation one step ahead: a 320-milli pod in a 530-milli gap leaves 210 that no *typical*
pod uses, but so does almost any other choice, and FGD cannot see that the 530 gap was the
natural home of the next 470-milli pod, nor that 650 + 320 is the pairing that wastes least.
At saturation those one-step choices leave 210-, 120- and 90-milli remnants all over the cluster.

This policy solves, once per target workload, the cutting-stock LP of its share sizes
(:func:`~.fill_plan.solve_fill_plan`: which fills — 470 + 470, 650 + 320, 810 + 160, … — cover the
demand with the fewest GPUs) and charges each candidate GPU the plan's waste for it
(:meth:`~.fill_plan.FillPlan.waste`: the LP reduced cost of the fill the share would start or
join, in milli-GPUs). The charge is taken before each node keeps its best GPU, so it decides
both the GPU and, through the node's best score, the node. FGD's fragmentation and
FGD-Balanced's CPU-balance and class-scarcity costs (:class:`~.balanced.FgdBalancedScore`) order
the candidates the plan finds equal. Whole-GPU and CPU-only pods leave no share gaps and are
scored by FGD-Balanced alone.

Measured with ``benchmarks/placement_openb.py --workloads all --seeds 42-51``: above the
published FGD at 100 % arrived demand on all 17 workloads of the paper, by +0.42 (multigpu40) to
+4.25 points (gpuspec33), and above FGD-Balanced on each; 96.16 % on ``default`` (every seed
96.11-96.25 %) against FGD's 95.23 % and FGD-Balanced's 95.78 %.

Pure: numpy and scipy (through :mod:`.fill_plan`), no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..model import ResourceRequest
from .balanced import MILLI_PER_POINT, FgdBalancedScore
from .fgd import FloatArray, IntArray, PodShape, TypicalPod
from .fill_plan import FillPlan, solve_fill_plan
from .state import ClusterState

__all__ = ["PLAN_WEIGHT", "FgdPlannedScore", "share_demand"]

PLAN_WEIGHT = 16.0
"""Weight of the plan's waste against FGD's fragmentation, per milli-GPU. The plan's waste comes
in steps of 1000/12 ≈ 83 milli on openb (prices are 1/12ths of a GPU), so at 16 it outweighs any
FGD-Balanced difference and in effect decides first, FGD-Balanced breaking its ties. Chosen on
seeds 42-43 of ``default`` from 1, 2, 4, 8, 16 and 100 (95.97, 96.01, 96.12, 96.14, 96.15, 96.15 %)."""


def share_demand(typical: Sequence[TypicalPod]) -> dict[int, float]:
    """Share sizes of a target workload and their popularity: the demand of its fill plan.

    Args:
        typical: the target workload (:func:`~.fgd.typical_pods`).

    Returns:
        ``{gpu_milli: summed popularity}`` over the shapes that take part of one GPU.
    """
    demand: dict[int, float] = {}
    for t in typical:
        if t.shape.shared and t.popularity > 0:
            demand[t.shape.gpu_milli] = demand.get(t.shape.gpu_milli, 0.0) + t.popularity
    return demand


class FgdPlannedScore(FgdBalancedScore):
    """Placement score plugin: FGD-Balanced minus the fill plan's waste (module docstring).

    ``score = FGD-Balanced score - plan_weight x waste / 40`` for shared pods, where ``waste`` is
    :meth:`FillPlan.waste` of the chosen GPU in milli-GPUs; whole-GPU and CPU-only pods score as
    in FGD-Balanced. Higher is better.

    Args:
        typical: the target workload (:func:`~.fgd.typical_pods`); its share sizes make the plan.
        plan_weight: weight of the plan's waste (:data:`PLAN_WEIGHT`; 0 gives FGD-Balanced).
        balance_weight, scarcity_weight, cpu_only_share: as in :class:`~.balanced.FgdBalancedScore`.

    Raises:
        ValueError: a weight that is negative or not finite, or ``cpu_only_share`` outside 0..1.
    """

    name = "FGD-Planned"

    def __init__(self, typical: Sequence[TypicalPod], *, plan_weight: float = PLAN_WEIGHT,
                 balance_weight: float = 1.0, scarcity_weight: float = 1.0,
                 cpu_only_share: float = 0.5) -> None:
        if not (math.isfinite(plan_weight) and plan_weight >= 0):
            raise ValueError(f"plan_weight must be finite and >= 0, got {plan_weight}")
        super().__init__(typical, balance_weight=balance_weight, scarcity_weight=scarcity_weight,
                         cpu_only_share=cpu_only_share)
        self.plan_weight = plan_weight
        self.plan: FillPlan = solve_fill_plan(share_demand(self.typical))

    def _share_cost(self, shape: PodShape, free: IntArray) -> FloatArray | None:
        """The plan's waste of each candidate GPU, in FGD score points."""
        if not self.plan_weight:
            return None
        return self.plan_weight * self.plan.waste(shape.gpu_milli, free) / MILLI_PER_POINT

    def _value(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> float:
        """FGD-Balanced's value of one candidate minus the plan's waste of its GPU (shared pods)."""
        value = super()._value(request, state, node, gpus)
        shape = PodShape.from_request(request)
        if shape.shared and gpus:
            cost = self._share_cost(shape, np.array([state.free_milli[gpus[0]]], dtype=np.int64))
            value -= 0.0 if cost is None else float(cost[0])
        return value
