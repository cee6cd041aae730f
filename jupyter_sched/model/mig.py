"""MIG profile arithmetic (pure): compute slices, a slice's share of its GPU, and how many GPUs a
set of MIG devices needs.

A MIG profile name ``<g>g.<m>gb`` gives the instance's compute slices ``g`` (of 7 on A100, H100,
H200 and B200; of 4 on A30) and a memory size. The memory in the name is rounded and sometimes
wrong (``3g.21gb`` labels for ``3g.20gb`` devices, case 022), so memory comes from node labels or
NVML; only the compute slices are read from the name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["compute_slices", "gpus_for_mig_devices", "max_compute_slices", "mig_share"]

_PROFILE = re.compile(r"^(?P<g>\d+)g\.(?P<mem>\d+)gb(?:\+.*)?$")


def compute_slices(profile: str) -> int | None:
    """Compute slices of a MIG profile (``"3g.40gb"`` → 3); None when the name is not ``<g>g.<m>gb``."""
    match = _PROFILE.match(profile.strip())
    return int(match.group("g")) if match else None


def max_compute_slices(model: str = "") -> int:
    """Compute slices of one GPU of ``model``: 4 on A30, else 7 (A100, H100, H200, B200)."""
    return 4 if "A30" in model.upper() else 7


def mig_share(profile: str, model: str = "") -> float:
    """The part of its GPU a MIG device is: compute slices / the GPU's slices (``3g`` on an H100 =
    3/7). Used for accounting (a slice is never charged as a whole GPU, case 022) and shares.
    An unreadable profile counts as one slice."""
    slices = compute_slices(profile) or 1
    return min(1.0, slices / max_compute_slices(model))


def gpus_for_mig_devices(devices: Iterable[tuple[str, int]], model: str = "") -> int:
    """Fewest GPUs that hold ``devices`` (``(profile, count)`` pairs): first-fit decreasing on
    compute slices (16 x ``3g`` → 8 A100s; 7 x ``1g`` + ``3g`` + ``4g`` → 2). An estimate for when
    the node does not say how many GPUs are partitioned."""
    capacity = max_compute_slices(model)
    sizes = sorted((compute_slices(p) or 1 for p, n in devices for _ in range(max(0, n))), reverse=True)
    bins: list[int] = []
    for size in sizes:
        for i, free in enumerate(bins):
            if free >= size:
                bins[i] -= size
                break
        else:
            bins.append(capacity - min(size, capacity))
    return len(bins)
