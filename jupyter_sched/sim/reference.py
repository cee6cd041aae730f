"""A yardstick for an FGD-protocol run: the arrived pods repacked offline with best-fit decreasing.

The FGD protocol (:mod:`.fgd_protocol`) places every arriving pod that fits somewhere. Such a
policy is *work-conserving*: it cannot keep a GPU free for a better pod later, so its
allocation at a given arrived demand depends on how tightly the pods that arrived so far can be
packed (on openb ``default`` every 810-milli pod leaves 190 milli that only the few pods of
160 milli or less can use: about 3 % of the cluster).

:func:`repacking_reference` gives a level to compare with: it repacks the GPU parts of the
longest prefix of the arrivals that fits, offline, with best-fit decreasing (BFD uses at most
11/9 OPT + 6/9 bins; Johnson 1973, Dósa 2007), then lets the rest of the window fill the gaps
best-fit, as the online run would. It ignores CPU, memory, GPU models and node boundaries (a pod
of k GPUs is k items of its per-GPU share, on k different GPUs), which favours it; BFD is not
optimal, which costs it: best-fit decreasing pairs a 470 with a 480 where a plan would pair
470 + 470 and 480 + 460. A reference figure, not a bound: FGD-Planned
(:mod:`jupyter_sched.placement.planned`) passes it on the ``gpushare`` workloads.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model import GPU_MILLI
from ..placement.fgd import PodShape

__all__ = ["repacking_reference"]


def _take(gaps: np.ndarray, pod: PodShape, *, open_bins: bool) -> int:
    """Put ``pod``'s k per-GPU shares best-fit into k different bins of ``gaps``; returns bins opened.

    With ``open_bins`` a share no bin holds opens a new bin (BFD); without, untouched GPUs are the
    bins in ``gaps[1000]`` and the caller has checked that k bins have room.
    """
    milli = pod.gpu_milli
    top = GPU_MILLI if open_bins else GPU_MILLI + 1
    opened = 0
    held: list[int] = []  # gaps of the bins this pod already uses, kept out until its last share is placed
    for _ in range(pod.gpus):
        room = np.flatnonzero(gaps[milli:top])  # best fit: the smallest gap that holds the share
        if len(room):
            g = milli + int(room[0])
            gaps[g] -= 1
            held.append(g - milli)
        else:
            opened += 1
            held.append(GPU_MILLI - milli)
    for g in held:
        gaps[g] += 1
    return opened


def _bfd_bins(pods: Sequence[PodShape]) -> tuple[int, np.ndarray]:
    """Best-fit decreasing by per-GPU share: ``(bins opened, gaps)``, ``gaps[g]`` = opened bins with ``g`` left."""
    gaps = np.zeros(GPU_MILLI + 1, dtype=np.int64)
    opened = 0
    for pod in sorted((p for p in pods if p.gpus), key=lambda p: (p.gpu_milli, p.gpus), reverse=True):
        opened += _take(gaps, pod, open_bins=True)
    return opened, gaps


def repacking_reference(arrivals: Sequence[PodShape], gpus: int, *, pct: int = 100) -> float:
    """Allocation ratio (%) of the arrivals repacked offline (best-fit decreasing) at ``pct`` % arrived demand.

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
        if _bfd_bins(window[:mid])[0] <= gpus:
            lo = mid
        else:
            hi = mid - 1
    opened, gaps = _bfd_bins(window[:lo])
    gaps[GPU_MILLI] += gpus - opened  # the GPUs the packing left untouched
    allocated = sum(p.total_milli for p in window[:lo])
    for pod in window[lo:]:  # the rest arrive into the packed cluster and fill gaps best-fit
        if pod.gpus and gaps[pod.gpu_milli:].sum() >= pod.gpus:  # k different GPUs with room for the share
            _take(gaps, pod, open_bins=False)
            allocated += pod.total_milli
    return 100.0 * allocated / capacity
