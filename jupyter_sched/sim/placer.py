"""One-pod placement over :class:`~jupyter_sched.placement.fgd.NodeArrays` (filter, score, tie-break, commit).

This is the vectorised form of kube-scheduler's per-pod cycle used by the FGD protocol replay:
feasible nodes (CPU, memory, GPU model, GPUs with room), one score per feasible node from a
vectorised score plugin, the highest score wins with ties drawn uniformly at random (as
kube-scheduler's ``selectHost``), then the plugin names the GPUs and the arrays are updated.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..placement.fgd import FloatArray, IntArray, NodeArrays, PodShape

__all__ = ["VectorScore", "place_one"]


class VectorScore(Protocol):
    """A score plugin evaluated over many nodes at once.

    ``score_nodes`` returns one score per entry of ``nodes`` (all feasible), higher is better;
    ``pick_gpus`` names the GPU columns on ``nodes[pick]`` right after ``score_nodes`` was called
    with the same ``nodes``.
    """

    name: str

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Scores of ``nodes`` for ``shape``."""
        ...

    def pick_gpus(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray, pick: int) -> tuple[int, ...]:
        """GPU columns for ``shape`` on ``nodes[pick]``."""
        ...


def place_one(arrays: NodeArrays, shape: PodShape, plugin: VectorScore,
              rng: np.random.Generator | None = None) -> tuple[int, tuple[int, ...]] | None:
    """Place one pod and commit it to ``arrays``.

    Args:
        arrays: free resources (updated in place on success).
        shape: the pod.
        plugin: the score plugin.
        rng: draws among equal best scores; ``None`` takes the first (node order).

    Returns:
        ``(node row, GPU columns)``, or ``None`` when no node is feasible.
    """
    nodes = np.flatnonzero(arrays.feasible(shape))
    if len(nodes) == 0:
        return None
    scores = plugin.score_nodes(arrays, shape, nodes)
    best = np.flatnonzero(scores == scores.max())
    pick = int(best[0] if rng is None or len(best) == 1 else best[rng.integers(len(best))])
    gpus = plugin.pick_gpus(arrays, shape, nodes, pick)
    node = int(nodes[pick])
    arrays.allocate(node, gpus, shape)
    return node, gpus
