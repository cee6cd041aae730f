"""The baseline placement policies of the FGD paper, as vectorised score plugins.

Source: Weng et al., "Beware of Fragmentation", USENIX ATC'23, §6.1 baselines, with the
scoring rules of the authors' published simulator (hkust-adsl/kubernetes-scheduler-simulator,
read for semantics only):

* ``Random``: one feasible node uniformly at random.
* ``DotProduct`` (Tetris, SIGCOMM'14): the smallest dot product of the node's free
  ``(CPU, GPU)`` and the pod's request, both normalised by the largest node (128 cores, 8 GPUs).
* ``GpuClustering``: nodes already running pods of the same GPU class (shared, 1-GPU, 2-GPU…)
  first, then empty nodes, then mixed nodes; within a band, the fuller node.
* ``GpuPacking``: use a partly used GPU first, then free GPUs on a used node, then an empty node.
* ``BestFit``: the least weighted free ``(CPU, GPU)`` after placement.

Scores are integers in 0..100 as in kube-scheduler; the placer breaks ties. For a GPU-sharing
pod the GPU on the chosen node is the best-fitting one (least room left that still fits;
``Random`` picks a random fitting GPU). Pure: numpy only, randomness from an injected
``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from ..model import GPU_MILLI
from .fgd import FloatArray, IntArray, NodeArrays, PodShape

__all__ = [
    "MAX_SPEC_CPU_MILLI",
    "MAX_SPEC_GPU_MILLI",
    "BestFitScore",
    "DotProductScore",
    "GpuClusteringScore",
    "GpuPackingScore",
    "RandomScore",
    "best_fit_gpu",
]

MAX_SPEC_CPU_MILLI = 128_000
"""CPU of the largest openb node (millicores): the normaliser of DotProduct and BestFit."""
MAX_SPEC_GPU_MILLI = 8 * GPU_MILLI
"""GPUs of the largest node (milli-GPUs)."""


def best_fit_gpu(arrays: NodeArrays, shape: PodShape, node: int) -> tuple[int, ...]:
    """GPU columns for ``shape`` on ``node``: the tightest fitting GPU for a shared pod
    (lowest column on ties), else the first wholly free ones."""
    if not shape.shared:
        return arrays.first_free_gpus(node, shape)
    left = arrays.gpu_left[node]
    room = np.where(left >= shape.gpu_milli, left, np.iinfo(np.int64).max)
    return (int(np.argmin(room)),)


class _BestFitGpu:
    """Mixin: GPU choice by :func:`best_fit_gpu`."""

    def pick_gpus(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray, pick: int) -> tuple[int, ...]:
        """GPU columns on ``nodes[pick]``."""
        return best_fit_gpu(arrays, shape, int(nodes[pick]))


class RandomScore:
    """Random placement: 100 for one uniformly drawn feasible node, 0 for the others.

    Args:
        rng: the source of randomness (seeded by the caller for reproducible runs).
    """

    name = "Random"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """100 for one random entry of ``nodes``, 0 elsewhere."""
        out = np.zeros(len(nodes))
        out[self.rng.integers(len(nodes))] = 100.0
        return out

    def pick_gpus(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray, pick: int) -> tuple[int, ...]:
        """A random fitting GPU for a shared pod, else the first free GPUs."""
        node = int(nodes[pick])
        if not shape.shared:
            return arrays.first_free_gpus(node, shape)
        fits = np.flatnonzero(arrays.gpu_left[node] >= shape.gpu_milli)
        return (int(fits[self.rng.integers(len(fits))]),)


class DotProductScore(_BestFitGpu):
    """Tetris alignment: ``100 * (1 - (free · request) / 2)`` with both normalised by the largest node."""

    name = "DotProduct"

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Higher for nodes whose free resources align least with the request (tightest)."""
        cpu = arrays.cpu_left[nodes] / MAX_SPEC_CPU_MILLI * (shape.cpu_milli / MAX_SPEC_CPU_MILLI)
        gpu = arrays.gpu_left[nodes].sum(axis=1) / MAX_SPEC_GPU_MILLI * (shape.total_milli / MAX_SPEC_GPU_MILLI)
        return np.asarray(np.floor(100.0 * (1.0 - (cpu + gpu) / 2.0)), dtype=np.float64)


class GpuClusteringScore(_BestFitGpu):
    """Keep pods of one GPU class together (shared / 1-GPU / 2-GPU / … pods).

    Bands: 75-100 node running only this class; 50-75 node running this class among others;
    25-50 node without GPU pods; 0-25 node running only other classes. Inside a band the node
    with less free GPU scores higher. CPU-only pods score 0 everywhere.
    """

    name = "GpuClustering"

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Band + fullness, 0..100."""
        if shape.gpus == 0:
            return np.zeros(len(nodes))
        tags = arrays.tag_count[nodes, 1:] > 0                  # GPU classes present
        mine = tags[:, shape.tag - 1]
        kinds = tags.sum(axis=1)
        band = np.where(mine, np.where(kinds == 1, 75, 50), np.where(kinds == 0, 25, 0))
        fill = (25 * (MAX_SPEC_GPU_MILLI - arrays.gpu_left[nodes].sum(axis=1))) // MAX_SPEC_GPU_MILLI
        return np.asarray(band + fill, dtype=np.float64)


class GpuPackingScore(_BestFitGpu):
    """Prefer partly used GPUs, then free GPUs of used nodes, then empty nodes.

    Scores: sharing a used GPU 50-100 (100 minus a tenth of the free percent of the GPUs used);
    free GPUs on a used node 33-50 (50 minus the free GPUs taken); an empty node 0-33 (33 minus
    its GPU count). CPU-only pods score 0 everywhere.
    """

    name = "GpuPacking"

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Packing band score, 0..100."""
        if shape.gpus == 0:
            return np.zeros(len(nodes))
        left = arrays.gpu_left[nodes]
        count = arrays.gpu_count[nodes]
        full = (left == GPU_MILLI).sum(axis=1)
        empty = full == count
        s_empty = np.maximum(33 - full, full)
        if shape.shared:
            # tightest fitting GPU: shares a used GPU when one fits
            room = np.where(left >= shape.gpu_milli, left, np.iinfo(np.int64).max)
            tight = room.min(axis=1)
            used_gpu = tight < GPU_MILLI
            s_share = np.maximum(100 - ((tight * 100) // GPU_MILLI) // 10, 50)
            s_used = np.maximum(50 - 1, 33)
            out = np.where(used_gpu, s_share, s_used)
        else:
            out = np.full(len(nodes), max(50 - shape.gpus, 33))
        return np.asarray(np.where(empty, s_empty, out), dtype=np.float64)


class BestFitScore(_BestFitGpu):
    """Best fit: ``100 * (1 - (½ free CPU + ½ free GPU) after placement)``, normalised by the largest node."""

    name = "BestFit"

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Higher for nodes left with less free CPU and GPU."""
        cpu = (arrays.cpu_left[nodes] - shape.cpu_milli) / MAX_SPEC_CPU_MILLI
        gpu = (arrays.gpu_left[nodes].sum(axis=1) - shape.total_milli) / MAX_SPEC_GPU_MILLI
        return np.asarray(np.floor(100.0 * (1.0 - 0.5 * cpu - 0.5 * gpu)), dtype=np.float64)

