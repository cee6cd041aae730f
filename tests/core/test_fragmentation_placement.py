"""Fragmentation-aware placement in production cycles (``PlacementConfig.fragmentation``).

With ``fragmentation="fgd-balanced"`` (or ``"fgd-planned"``) each cycle scores with that policy
against the live jobs' requests; the default profile bin-packs. The cluster: a CPU-rich node first in inventory order,
a CPU-poor one second, and a third node fully used by an 8-GPU job asking 12 cores per GPU, so the
live demand needs CPU the poor node cannot give its GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Inventory
from jupyter_sched.placement.fragmentation import PLAN_MIN_SHARES, cycle_placement, vector_ready
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.scheduling import SchedulingProfile, run_cycle

NODES = (make_node("cpu-rich", cpu_millis=192_000), make_node("cpu-poor", cpu_millis=24_000),
         make_node("busy", cpu_millis=96_000))
BUSY = running(make_job("busy", gpus=8, cpu_millis=96_000), node="busy")


def profile(fragmentation: str = "") -> SchedulingProfile:
    return SchedulingProfile(placement=PlacementConfig(fragmentation=fragmentation))


@dataclass(frozen=True)
class Case:
    id: str
    fragmentation: str
    want_node: str


CASES = [
    Case("bin packing takes the first of two empty nodes", "", "cpu-rich"),
    Case("FGD-Balanced puts a CPU-light job where the CPU cannot feed the GPUs anyway", "fgd-balanced", "cpu-poor"),
    Case("plain FGD too: the CPU-rich node must stay whole for another 8-GPU 96-core job", "fgd", "cpu-poor"),
    Case("FGD-Planned keeps FGD-Balanced's choice for whole GPUs", "fgd-planned", "cpu-poor"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_profile_picks_the_placement_policy(case: Case) -> None:
    light = make_job("light", gpus=1, cpu_millis=2000)
    result = run_cycle(snapshot(NODES, [BUSY, light]), profile(case.fragmentation))
    assert [(a.job_id, a.allocation.node) for a in result.admits] == [("light", case.want_node)]


def test_a_fractional_job_follows_the_same_policy() -> None:
    share = make_job("share", gpus=1, milli=500, cpu_millis=1500)  # at most half a GPU's part of cpu-poor (red38 R4)
    for fragmentation, want in (("", "cpu-rich"), ("fgd-balanced", "cpu-poor"), ("fgd-planned", "cpu-poor")):
        result = run_cycle(snapshot(NODES, [BUSY, share]), profile(fragmentation))
        assert [(a.allocation.node, len(a.allocation.gpu_uuids)) for a in result.admits] == [(want, 1)]


@pytest.mark.parametrize("fragmentation", ["fgd-balanced", "fgd-planned"])
def test_a_share_joins_a_used_gpu_instead_of_breaking_a_whole_one_at_low_load(fragmentation: str) -> None:
    """Live jobs alone (a 0.5 and a 0.3 share) would let FGD open a fresh GPU for the 0.3; the
    whole-GPU prior keeps the three other GPUs whole for the 1-GPU jobs notebooks ask for."""
    node = make_node("n1", gpus=4)
    half = running(make_job("half", gpus=1, milli=500), node="n1", indices=[0], milli=500)
    share = make_job("share", gpus=1, milli=300)
    result = run_cycle(snapshot([node], [half, share]), profile(fragmentation))
    assert [a.allocation.gpu_uuids for a in result.admits] == [("GPU-n1-0",)]


def test_on_wide_or_mig_nodes_the_cycle_keeps_the_profiles_scores() -> None:
    config = PlacementConfig(fragmentation="fgd-balanced")
    wide = Inventory(nodes=(make_node("dgx-16", gpus=16),))
    assert not vector_ready(wide)
    assert cycle_placement(config, wide, [make_job("j")]) is config
    mixed = Inventory(nodes=(make_node("a"), make_node("b", model="H100")))
    assert vector_ready(mixed)
    chosen = cycle_placement(config, mixed, [make_job("j")])
    assert [p.name for p in chosen.plugins] == ["FGD-Balanced"] and dict(chosen.scores) == {"FGD-Balanced": 1.0}



def test_fgd_planned_trusts_a_fill_plan_only_with_enough_live_shares() -> None:
    config = PlacementConfig(fragmentation="fgd-planned")
    inventory = Inventory(nodes=(make_node("a"),))
    few = [make_job(f"s{i}", milli=300) for i in range(PLAN_MIN_SHARES - 1)]
    assert [p.name for p in cycle_placement(config, inventory, few).plugins] == ["FGD-Balanced"]
    many = [*few, make_job("last", milli=470)]
    assert [p.name for p in cycle_placement(config, inventory, many).plugins] == ["FGD-Planned"]
    # whole-GPU jobs are no shares, however many
    whole = [*few, *(make_job(f"w{i}") for i in range(50))]
    assert [p.name for p in cycle_placement(config, inventory, whole).plugins] == ["FGD-Balanced"]


def test_an_unknown_fragmentation_policy_is_refused_with_the_choices() -> None:
    with pytest.raises(ValidationError) as info:
        profile("tetris")
    assert info.value.field == "placement_policy" and "fgd-balanced" in (info.value.hint or "")

