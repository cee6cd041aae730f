"""Vectorised score plugins (FGD, Weng et al. ATC'23, and the paper's baselines) in the production placer.

A profile names the plugin instance (its target workload built at the edge by
``typical_from_requests``); ``run_cycle`` then scores every feasible node in one call, fractional
requests included, and the ledger's array view stays in step with every take, release and undo.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import Inventory, ResourceRequest
from jupyter_sched.placement.fgd import FgdScore, typical_from_requests
from jupyter_sched.placement.paper_policies import BestFitScore
from jupyter_sched.placement.placer import PlacementConfig, Placer
from jupyter_sched.placement.state import ClusterState, Holding
from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def fgd_profile(*history: ResourceRequest) -> SchedulingProfile:
    """The edge's job: FGD against the target workload of past requests."""
    fgd = FgdScore(typical_from_requests(history))
    return SchedulingProfile(name="fgd", placement=PlacementConfig(scores={fgd.name: 1.0}, plugins=(fgd,)))


@dataclass(frozen=True)
class ShareCase:
    id: str
    profile: SchedulingProfile | None
    want_gpu: str


SHARE_CASES = [
    ShareCase("the default profile puts a share on the tightest shared GPU (best fit)", None, "GPU-n1-0"),
    ShareCase("FGD keeps a 0.2-GPU slot usable instead, as its target workload asks",
              fgd_profile(ResourceRequest(gpus=1, gpu_milli=200)), "GPU-n1-1"),
]


@pytest.mark.parametrize("case", SHARE_CASES, ids=[c.id for c in SHARE_CASES])
def test_a_shared_gpu_request_is_placed_by_the_profile_s_scores(case: ShareCase) -> None:
    jobs = [running(make_job("r1", milli=700), "n1", [0], milli=700),   # 300 milli-GPUs left on GPU 0
            running(make_job("r2", milli=500), "n1", [1], milli=500),   # 500 left on GPU 1
            make_job("j", milli=250)]
    result = run_cycle(snapshot([make_node("n1", gpus=2)], jobs), case.profile)
    assert [(a.job_id, a.allocation.gpu_uuids) for a in result.admits] == [("j", (case.want_gpu,))]
    if case.profile is not None:
        assert set(result.admits[0].scores) == {"FGD"}


def test_fgd_keeps_whole_nodes_free_for_the_eight_gpu_jobs_it_expects() -> None:
    profile = fgd_profile(*[ResourceRequest(gpus=1)] * 9, ResourceRequest(gpus=8))
    jobs = [running(make_job("r", gpus=2), "n2", [0, 1]), make_job("j1"), make_job("j2", gpus=8, submitted=1)]
    result = run_cycle(snapshot([make_node("n1"), make_node("n2")], jobs), profile)
    placed = {a.job_id: a.allocation.node for a in result.admits}
    assert placed == {"j1": "n2", "j2": "n1"}


def test_vectorised_and_per_candidate_scores_cannot_share_a_profile() -> None:
    state = ClusterState(Inventory(nodes=(make_node(),)))
    config = PlacementConfig(scores={"BestFit": 1.0, "binpack": 1.0}, plugins=(BestFitScore(),))
    with pytest.raises(ValidationError) as err:
        Placer(state, config)
    assert err.value.field == "placement.scores"


def test_the_array_view_follows_takes_releases_and_undone_trials() -> None:
    inv = Inventory(nodes=(make_node("n1", gpus=4, cpu_millis=32_000), make_node("n2", gpus=4, cpu_millis=32_000)))
    state = ClusterState(inv)
    arrays = state.node_arrays()
    state.take("a", Holding(((0, 500),), 0, cpu_millis=4000))
    state.take("b", Holding(((4, 1000), (5, 1000)), 1, cpu_millis=8000))
    with state.what_if():
        state.release("a")
        state.take("c", Holding(((1, 1000),), 0, cpu_millis=2000))
    state.release("b")
    state.take("d", Holding(((6, 250),), 1))
    fresh = ClusterState(inv)
    fresh.take("a", Holding(((0, 500),), 0, cpu_millis=4000))
    fresh.take("d", Holding(((6, 250),), 1))
    want = fresh.node_arrays()
    for name in ("gpu_left", "cpu_left", "mem_left", "tag_count"):
        assert np.array_equal(getattr(arrays, name), getattr(want, name)), name
    assert arrays.gpu_left[0, 0] == 500 and arrays.gpu_left[1, 2] == 750 and arrays.cpu_left[0] == 28_000
