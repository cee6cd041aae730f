"""What a placement policy that never refuses a pod can reach on an FGD-protocol run: a reference.

The FGD protocol (:mod:`.fgd_protocol`) places every arriving pod that fits somewhere. Such a
policy is *work-conserving*: it cannot keep a GPU free for a better pod later. Its allocation at
a given arrived demand is therefore bounded by how tightly the pods that arrived so far can be
packed, not by which pods one would pick — the LP bound of about 97 % on openb ``default`` picks
(it leaves out 810-milli pods, whose 190-milli remainders nothing else fits).

:func:`repacking_reference` estimates that work-conserving level: it repacks the GPU parts of the
longest prefix of the arrivals that fits, offline, with best-fit decreasing (BFD, within 11/9 of
the optimum bin count; Johnson 1973, Dósa 2007), then lets the rest of the window fill the gaps
best-fit, as the online run would. It ignores CPU, memory, GPU models and node boundaries (a k-GPU pod
is k whole-GPU items), which favours it; BFD is not optimal, which can cost it a little. It is a
reference figure, not a proof.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import GPU_MILLI
from ..placement.fgd import PodShape

__all__ = ["repacking_reference"]


def _gpu_items(pods: Sequence[PodShape]) -> list[int]:
    """Per-GPU items (milli-GPUs) of ``pods``; CPU-only pods have none."""
    return [p.gpu_milli for p in pods for _ in range(p.gpus)]


def _bfd_bins(items: list[int]) -> tuple[int, np.ndarray]:
    """Best-fit decreasing: ``(bins opened, gaps)`` with ``gaps[g]`` = opened bins with ``g`` milli left."""
    gaps = np.zeros(GPU_MILLI + 1, dtype=np.int64)
    opened = 0
    for item in sorted(items, reverse=True):
        room = np.flatnonzero(gaps[item:GPU_MILLI])  # best fit: the smallest gap that holds it
        if len(room):
            g = item + int(room[0])
            gaps[g] -= 1
            gaps[g - item] += 1
        else:
            opened += 1
            gaps[GPU_MILLI - item] += 1
    return opened, gaps


def repacking_reference(arrivals: Sequence[PodShape], gpus: int, *, pct: int = 100) -> float:
    """Allocation ratio (%) a work-conserving policy could reach at ``pct`` % arrived GPU demand.

    Args:
        arrivals: the run's arrival sequence (:func:`~.fgd_protocol.arrival_order`).
        gpus: GPUs in the cluster (the capacity is ``gpus x 1000`` milli-GPUs).
        pct: arrived GPU demand, % of capacity (the protocol's measuring point).

    Returns:
        Allocated milli-GPUs over capacity, %, under the module's relaxation.

    Raises:
        ValueError: ``gpus`` < 1 or ``pct`` < 0.
    """
    if gpus < 1 or pct < 0:
        raise ValueError(f"need gpus >= 1 and pct >= 0, got gpus={gpus}, pct={pct}")
    capacity = gpus * GPU_MILLI
    window: list[PodShape] = []
    arrived = 0
    for pod in arrivals:  # same window as the replay: up to the pod whose arrival crosses pct
        if arrived * 100 >= pct * capacity:
            break
        window.append(pod)
        arrived += pod.total_milli
    lo, hi = 0, len(window)
    while lo < hi:  # the longest prefix that BFD packs into the cluster's GPUs
        mid = (lo + hi + 1) // 2
        if _bfd_bins(_gpu_items(window[:mid]))[0] <= gpus:
            lo = mid
        else:
            hi = mid - 1
    opened, gaps = _bfd_bins(_gpu_items(window[:lo]))
    gaps[GPU_MILLI] += gpus - opened
    allocated = sum(p.total_milli for p in window[:lo])
    for pod in window[lo:]:  # the rest arrive into the packed cluster and fill gaps best-fit
        if not pod.gpus:
            continue
        if pod.gpus > 1 or pod.gpu_milli == GPU_MILLI:
            if gaps[GPU_MILLI] >= pod.gpus:
                gaps[GPU_MILLI] -= pod.gpus
                gaps[0] += pod.gpus
                allocated += pod.total_milli
            continue
        room = np.flatnonzero(gaps[pod.gpu_milli:])
        if len(room):
            g = pod.gpu_milli + int(room[0])
            gaps[g] -= 1
            gaps[g - pod.gpu_milli] += 1
            allocated += pod.total_milli
    return 100.0 * allocated / capacity
