"""The work-conserving repacking reference of the FGD benchmark, on arrivals small enough to check by hand."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from jupyter_sched.placement.fgd import PodShape
from jupyter_sched.sim.reference import repacking_reference


def shared(milli: int) -> PodShape:
    return PodShape(cpu_milli=1000, gpus=1, gpu_milli=milli)


def whole(gpus: int) -> PodShape:
    return PodShape(cpu_milli=1000, gpus=gpus, gpu_milli=1000)


@dataclass(frozen=True)
class Case:
    id: str
    arrivals: tuple[PodShape, ...]
    gpus: int
    want_pct: float


CASES = [
    Case("pairs that an online first fit would split are repacked into full GPUs",
         (shared(600), shared(600), shared(400), shared(400)), 2, 100.0),
    Case("an 810-milli pod leaves 190 that only a small pod can use",
         (shared(810), shared(810), shared(160)), 2, 89.0),
    Case("a pod that no longer fits is refused, and the window ends at the crossing pod",
         (shared(500), shared(810), shared(500)), 1, 50.0),
    Case("CPU-only pods count for nothing; a 4-GPU pod takes whole GPUs",
         (PodShape(cpu_milli=8000), whole(4)), 4, 100.0),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_repacking_reference(case: Case) -> None:
    assert repacking_reference(case.arrivals, case.gpus) == pytest.approx(case.want_pct)


def test_repacking_reference_checks_its_arguments() -> None:
    with pytest.raises(ValueError, match="gpus"):
        repacking_reference([shared(500)], 0)


def test_a_multi_gpu_share_takes_one_item_on_each_of_its_gpus() -> None:
    # 2 GPUs: 600 then a 2 x 500 pod that no longer fits the prefix packing; it still needs 2 GPUs with 500
    pods = (shared(600), PodShape(cpu_milli=1000, gpus=2, gpu_milli=500), shared(300))
    assert repacking_reference(pods, 2) == pytest.approx(100.0 * (600 + 300) / 2000)
    assert repacking_reference((PodShape(cpu_milli=1000, gpus=2, gpu_milli=500),), 2) == pytest.approx(50.0)
