"""The evaluation protocol of "Beware of Fragmentation" (Weng et al., USENIX ATC'23), replayed.

Protocol (paper §6.1 and the authors' published simulator):

1. The cluster is the GPU nodes of ``openb_node_list_gpu_node.csv`` (1213 nodes, 6212 GPUs).
2. The pods of a workload are shuffled with the run's seed (42-51), then the workload is
   *inflated*: pods drawn uniformly with repetition from the original list are appended until
   the requested GPUs would exceed ``ratio`` (1.3) x the cluster's GPUs.
3. Pods arrive one at a time and are never deleted; each is placed by the policy or fails.
4. After each arrival, when the arrived GPU demand crosses an integer percent of capacity, the
   allocation ratio (allocated GPU-milli / total GPU-milli, %), the fragmentation ratio
   (fragmented / unallocated GPU-milli, %) and the fragmentation amount (fragmented GPUs as a
   % of all GPUs) are recorded, fragmentation measured against the workload's typical pods.

Placement of each pod goes through the production :class:`~jupyter_sched.placement.placer.Placer`
of a :class:`~jupyter_sched.scheduling.SchedulingProfile` that names the policy's vectorised score
plugin (:func:`policy_profile`): feasibility over all nodes, one call of the plugin, highest
score (first node, or kube-scheduler's random ``selectHost``), then the decision is taken in the
:class:`~jupyter_sched.placement.state.ClusterState` ledger — the same code path as an engine cycle.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..model import GPU_MILLI, Inventory, ResourceRequest
from ..placement.balanced import FgdBalancedScore
from ..placement.fgd import FgdScore, NodeArrays, PodShape, TypicalPod, typical_pods
from ..placement.paper_policies import (
    BestFitScore,
    DotProductScore,
    GpuClusteringScore,
    GpuPackingScore,
    RandomScore,
)
from ..placement.placer import PlacementConfig, Placer
from ..placement.planned import FgdPlannedScore
from ..placement.scores import VectorScore
from ..placement.state import ClusterState
from ..scheduling.profile import SchedulingProfile

__all__ = [
    "OUR_POLICIES",
    "OUR_POLICY",
    "PAPER_POLICIES",
    "ReplayResult",
    "arrival_order",
    "make_policy",
    "policy_profile",
    "replay",
    "request_of",
]

PAPER_POLICIES = ("Random", "DotProduct", "GpuClustering", "GpuPacking", "BestFit", "FGD")
"""The six policies of the paper's evaluation, in its order."""
OUR_POLICY = "FGD-Planned"
"""Our best policy (:class:`~jupyter_sched.placement.planned.FgdPlannedScore`)."""
OUR_POLICIES = ("FGD-Balanced", OUR_POLICY)
"""Our policies, each FGD plus more: FGD-Balanced (CPU balance, class scarcity), FGD-Planned
(FGD-Balanced plus a fill plan for shared GPUs); replayed side by side they show what each adds."""


def make_policy(name: str, pods: Sequence[PodShape], rng: np.random.Generator,
                typical: Sequence[TypicalPod] | None = None) -> VectorScore:
    """The score plugin called ``name`` (one of :data:`PAPER_POLICIES` or :data:`OUR_POLICIES`).

    Args:
        name: policy name.
        pods: the workload (FGD's target workload is built from it).
        rng: randomness of the Random policy.
        typical: FGD's target workload (default: every shape of ``pods`` by pod count).

    Raises:
        ValueError: unknown name.
    """
    makers: dict[str, Callable[[], VectorScore]] = {
        "Random": lambda: RandomScore(rng),
        "DotProduct": DotProductScore,
        "GpuClustering": GpuClusteringScore,
        "GpuPacking": GpuPackingScore,
        "BestFit": BestFitScore,
        "FGD": lambda: FgdScore(typical if typical is not None else typical_pods(pods)),
        "FGD-Balanced": lambda: FgdBalancedScore(typical if typical is not None else typical_pods(pods)),
        OUR_POLICY: lambda: FgdPlannedScore(typical if typical is not None else typical_pods(pods)),
    }
    if name not in makers:
        raise ValueError(f"unknown policy {name!r}; choose one of {sorted(makers)}")
    return makers[name]()


def policy_profile(plugin: VectorScore, rng: np.random.Generator | None = None) -> SchedulingProfile:
    """The scheduling profile that places with ``plugin`` alone, every GPU model in one pass.

    Args:
        plugin: the policy's score plugin (:func:`make_policy`).
        rng: random tie-break among equal best scores (None: first node in inventory order).

    The paper's cluster puts CPU-only and CPU-heavy pods on GPU nodes, so the replay leaves
    :attr:`~jupyter_sched.placement.placer.PlacementConfig.host_share` off.
    """
    return SchedulingProfile(name=plugin.name, placement=PlacementConfig(
        scores={plugin.name: 1.0}, plugins=(plugin,), merge_flavors=True, ties=rng, host_share=False))


def request_of(shape: PodShape) -> ResourceRequest:
    """The :class:`ResourceRequest` of one pod of the trace (one worker)."""
    return ResourceRequest(gpus=shape.gpus, gpu_milli=shape.gpu_milli if shape.gpus else GPU_MILLI,
                           gpu_models=shape.models, cpu_millis=shape.cpu_milli, memory_mib=shape.memory_mib)


def arrival_order(pods: Sequence[PodShape], capacity_milli: int, *, seed: int,
                  ratio: float = 1.3) -> list[PodShape]:
    """Shuffle ``pods`` with ``seed`` and append draws with repetition up to ``ratio`` x capacity.

    Args:
        pods: the workload's pods (original list).
        capacity_milli: the cluster's milli-GPUs.
        seed: the run's seed (the paper uses 42-51).
        ratio: target arrived GPU demand over capacity (1.3 = 130 %).

    Returns:
        The arrival sequence; its total GPU request is the largest not above ``ratio`` x capacity
        reachable by appending draws (a draw that would exceed it ends the inflation).
    """
    rng = np.random.default_rng(seed)
    order = [pods[i] for i in rng.permutation(len(pods))]
    total = sum(p.total_milli for p in order)
    target = ratio * capacity_milli
    while True:
        pod = pods[int(rng.integers(len(pods)))]
        if total + pod.total_milli > target:
            break
        order.append(pod)
        total += pod.total_milli
    return order


@dataclass
class ReplayResult:
    """One replay: curves per integer percent of arrived demand and per-pod records.

    Attributes:
        policy, seed: what ran.
        alloc: allocation ratio (%) at arrived demand 0..max_pct percent.
        frag_ratio: fragmented / unallocated GPU-milli (%) at the same points.
        frag_amount: fragmented GPUs as % of all GPUs.
        pods: arrivals; placed: arrivals placed; decisions: placement decisions made.
        wall_s: wall time of the arrival loop (s: placement decisions and bookkeeping), excluding
            the curve measurements.
        cpu_s: CPU time of this process over the same loop (s): what the run costs when the
            machine is shared (wall time then includes waiting for a core).
        records: per-pod ``(index, node or -1, gpus, arrived %, allocated %)`` when kept.
        arrays: the cluster's free resources at the end (the ledger's array view).
    """

    policy: str
    seed: int
    alloc: np.ndarray
    frag_ratio: np.ndarray
    frag_amount: np.ndarray
    pods: int
    placed: int
    wall_s: float
    cpu_s: float = 0.0
    records: list[tuple[int, int, tuple[int, ...], float, float]] = field(default_factory=list)
    arrays: NodeArrays | None = None

    @property
    def decisions_per_s(self) -> float:
        """Placement decisions (one per arriving pod) per second of placement wall time."""
        return self.pods / self.wall_s if self.wall_s > 0 else float("inf")

    def curve(self) -> pd.DataFrame:
        """The three curves as a DataFrame indexed by arrived demand (%)."""
        return pd.DataFrame({"alloc": self.alloc, "frag_ratio": self.frag_ratio,
                             "frag_amount": self.frag_amount},
                            index=pd.Index(np.arange(len(self.alloc)), name="arrived_pct"))

    def records_frame(self) -> pd.DataFrame:
        """Per-pod records as a DataFrame (empty unless the replay kept them)."""
        return pd.DataFrame(self.records, columns=["pod", "node", "gpus", "arrived_pct", "alloc_pct"])


def replay(inventory: Inventory, pods: Sequence[PodShape], policy: str, *, seed: int,
           ratio: float = 1.3, typical: Sequence[TypicalPod] | None = None,
           measure_frag: bool = True, keep_records: bool = False,
           arrivals: Sequence[PodShape] | None = None, random_ties: bool = False) -> ReplayResult:
    """Run the FGD protocol for one workload, policy and seed.

    Args:
        inventory: the cluster.
        pods: the workload's original pods (typical pods and inflation draw from it).
        policy: a name from :data:`PAPER_POLICIES` or :data:`OUR_POLICIES`.
        seed: shuffle/inflation seed; also seeds random tie-breaks and the Random policy.
        ratio: arrived demand to reach (1.3 = 130 %).
        typical: target workload for FGD and for measuring fragmentation (default: every
            shape of ``pods`` by pod count).
        measure_frag: record fragmentation curves (costs one cluster-wide evaluation per percent).
        keep_records: keep per-pod records.
        arrivals: use this arrival sequence instead of :func:`arrival_order`.
        random_ties: break equal best scores uniformly at random (kube-scheduler's
            ``selectHost``) instead of taking the first node in inventory order (the production
            placer's rule). First-node ties reproduce the published numbers better: e.g. FGD on
            ``gpushare100`` gives 86.4 % at 100 % arrived demand with first-node ties, 81.2 % with
            random ties, 86.6 % published; on ``default`` both give ~95.1 %.

    Returns:
        The :class:`ReplayResult`.
    """
    state = ClusterState(inventory)
    arrays = state.node_arrays()
    typ = tuple(typical) if typical is not None else typical_pods(pods)
    cap = arrays.capacity_milli()
    seq = list(arrivals) if arrivals is not None else arrival_order(pods, cap, seed=seed, ratio=ratio)
    rng = np.random.default_rng(seed + 1_000_003)
    plugin = make_policy(policy, pods, rng, typical)
    placer = Placer(state, policy_profile(plugin, rng if random_ties else None).placement)
    requests: dict[PodShape, ResourceRequest] = {}
    node_gpus = state.node_gpus
    meter = FgdScore(typ) if measure_frag else None
    max_pct = round(ratio * 100)
    alloc = np.zeros(max_pct + 1)
    frag_ratio = np.zeros(max_pct + 1)
    frag_amount = np.zeros(max_pct + 1)
    arrived = 0
    allocated = 0
    next_pct = 1
    placed = 0
    spent_wall = 0.0  # measuring the curves, excluded from the placement timings
    spent_cpu = 0.0
    records: list[tuple[int, int, tuple[int, ...], float, float]] = []

    def measure(pct: int) -> None:
        nonlocal spent_wall, spent_cpu
        t0, c0 = time.perf_counter(), time.process_time()
        alloc[pct] = 100.0 * allocated / cap
        if meter is not None:
            fr, idle = meter.cluster_frag(arrays)
            frag_ratio[pct] = 100.0 * fr / idle if idle else 0.0
            frag_amount[pct] = 100.0 * fr / cap
        spent_wall += time.perf_counter() - t0
        spent_cpu += time.process_time() - c0

    measure(0)
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    for i, shape in enumerate(seq):
        req = requests.get(shape)
        if req is None:
            req = requests[shape] = request_of(shape)
        flavors = placer.flavors(req)
        choice = placer.place(f"pod-{i}", req, flavors[0]) if flavors else None
        arrived += shape.total_milli
        if choice is not None:
            state.take(f"pod-{i}", choice.holding)
            placed += 1
            allocated += shape.total_milli
        if keep_records:
            node = choice.holding.node if choice is not None else -1
            gpus = tuple(g - node_gpus[node][0] for g, _ in choice.holding.gpus) if choice is not None else ()
            records.append((i, node, gpus, 100.0 * arrived / cap, 100.0 * allocated / cap))
        while next_pct <= max_pct and arrived * 100 >= next_pct * cap:
            measure(next_pct)
            next_pct += 1
    wall = time.perf_counter() - start_wall - spent_wall
    cpu = time.process_time() - start_cpu - spent_cpu
    while next_pct <= max_pct:  # demand stopped just short of the last percent
        measure(next_pct)
        next_pct += 1
    return ReplayResult(policy=policy, seed=seed, alloc=alloc, frag_ratio=frag_ratio,
                        frag_amount=frag_amount, pods=len(seq), placed=placed, wall_s=wall, cpu_s=cpu,
                        records=records, arrays=arrays)
