"""Placement scores: among feasible nodes, which is best? (kube-scheduler's Score extension point).

Each plugin returns an integer in 0..100 for one candidate (node + the GPUs the worker would
get); a profile weights them and the placer takes the highest weighted sum, ties going to the
index order. Plugins:

* ``binpack`` (default): fraction of the node's GPUs in use after placement. Best fit keeps whole
  nodes and NVLink domains free for big jobs (case 006 sub-case B).
* ``spread``: the opposite (least loaded node), for services that prefer isolation.
* ``topology``: NVLink locality — 100 when a multi-GPU worker sits in one NVLink domain, less per
  extra domain; for a single GPU, 100 when it fills a pair whose partner is busy (case 007).

Fragmentation-aware scoring after FGD (Weng et al., ATC'23) lives in ``placement/fgd.py``
(owned by the simulator engineer) and registers under the same protocol.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..model import ResourceRequest
from .state import ClusterState

if TYPE_CHECKING:
    from .fgd import FloatArray, IntArray, NodeArrays, PodShape

__all__ = ["SCORES", "BinPackScore", "Score", "SpreadScore", "TopologyScore", "VectorScore"]


class Score(Protocol):
    """A node score: ``score(request, state, node, gpus) -> int`` in 0..100 (pure)."""

    name: str

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        """Score placing ``request``'s worker on ``node`` with ``gpus`` (global ids)."""
        ...


class VectorScore(Protocol):
    """A score plugin evaluated over every feasible node at once (FGD and the paper baselines).

    ``score_nodes`` returns one score per entry of ``nodes`` (row ids of the ledger's
    :meth:`ClusterState.node_arrays`, all feasible), higher is better; ``pick_gpus`` names the
    GPU columns on ``nodes[pick]`` right after ``score_nodes`` was called with the same ``nodes``.
    Such plugins are instances configured at the edge (e.g. FGD's target workload) and reach the
    placer through :attr:`PlacementConfig.plugins <jupyter_sched.placement.placer.PlacementConfig>`.
    """

    name: str

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Scores of ``nodes`` for ``shape``."""
        ...

    def pick_gpus(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray, pick: int) -> tuple[int, ...]:
        """GPU columns for ``shape`` on ``nodes[pick]``."""
        ...


def _used_after(state: ClusterState, node: int, gpus: list[int]) -> tuple[int, int]:
    capacity = state.node_capacity[node]
    used = capacity - state.node_free[node]
    fm = state.free_milli
    for g in gpus:
        if fm[g] == 1000:
            used += 1
    return used, max(capacity, 1)


class BinPackScore:
    """Most-allocated: 100 x GPUs used after placement / GPUs on the node."""

    name = "binpack"

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        # _used_after inlined: scored for every candidate node of every placement
        capacity = state.node_capacity[node]
        used = capacity - state.node_free[node]
        fm = state.free_milli
        for g in gpus:
            if fm[g] == 1000:
                used += 1
        return min(100, (100 * used) // max(capacity, 1))


class SpreadScore:
    """Least-allocated: 100 x GPUs still free after placement / GPUs on the node."""

    name = "spread"

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        used, capacity = _used_after(state, node, gpus)
        return max(0, 100 - (100 * used) // capacity)


class TopologyScore:
    """NVLink locality of the chosen GPUs (case 007).

    Multi-GPU: 100 when the GPUs span the fewest NVLink domains possible on this node (one when a
    domain is large enough), minus a share per extra domain. Single GPU: 100 when it fills a pair
    whose partner is busy (or the node has no NVLink), 50 when it breaks an intact pair.
    """

    name = "topology"

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        if not gpus:
            return 100
        if not state.node_has_nvlink[node]:
            return 100  # no NVLink on this node: topology cannot tell candidates apart
        if len(gpus) == 1:
            peers = state.peers[gpus[0]]
            if not peers:
                return 100
            fm, pl = state.free_milli, state.placeable  # free_peer_count(state, g) == 0, inlined
            for p in peers:
                if pl[p] and fm[p] == 1000:
                    return 50
            return 100
        domains = len({state.domain[g] for g in gpus})
        fewest = -(-len(gpus) // max(state.node_max_domain[node], 1))  # ceil: best possible on this node
        return max(0, 100 - (100 * (domains - fewest)) // (len(gpus) - 1))


SCORES: dict[str, Score] = {s.name: s for s in (BinPackScore(), SpreadScore(), TopologyScore())}
"""Score plugins by name; profiles weight them (third parties may add entries)."""
