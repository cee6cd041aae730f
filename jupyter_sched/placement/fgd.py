"""Fragmentation Gradient Descent (FGD) placement, vectorised over nodes with numpy.

Source: Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads with
Fragmentation Gradient Descent", USENIX ATC'23. Definitions used here (paper §3-4):

* A *target workload* is a distribution of pod shapes ``t = (cpu, gpu_milli, gpus, models)``
  with popularity ``p_t`` (:func:`typical_pods`).
* The *fragmentation of a node* ``n`` for shape ``t`` is the node's unallocated GPU-milli that
  ``t`` cannot use: if ``t`` fits on ``n`` (model allowed, enough CPU, ``gpus`` GPUs each with
  at least ``gpu_milli`` left) only the GPUs with less than ``gpu_milli`` left are fragments;
  otherwise (no GPU needed, model not allowed, too little CPU or GPU) all unallocated GPU-milli
  is a fragment. The node's expected fragmentation is ``F_n = sum_t p_t * frag_t(n)`` (milli).
* FGD places a pod on the node (and GPU) whose ``F_n`` grows least; the published simulator
  scores ``int(100 * sigmoid((F_before - F_after) / 1000))`` and breaks ties at random.

Everything here is pure (numpy only): no clock, no ids, no I/O. :class:`NodeArrays` is the
mutable array view of an :class:`~jupyter_sched.model.Inventory` that placement score plugins
read; the ledger keeps it in step (:meth:`~jupyter_sched.placement.state.ClusterState.node_arrays`),
and a profile that names :class:`FgdScore` (``PlacementConfig.plugins``) makes the production
placer score every feasible node through :meth:`FgdScore.score_nodes`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..model import GPU_MILLI, Inventory, ResourceRequest
from .state import ClusterState

__all__ = [
    "MAX_GPUS_PER_NODE",
    "UNTRACKED",
    "FgdScore",
    "FragModel",
    "NodeArrays",
    "PodShape",
    "TypicalPod",
    "model_allowed",
    "typical_from_requests",
    "typical_pods",
]

MAX_GPUS_PER_NODE = 8
"""Widest node the array view holds (openb, PAI and DGX nodes have at most 8 GPUs)."""
UNTRACKED = 1 << 60
"""Free CPU / memory recorded for nodes that do not track it (capacity 0): never binding."""

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def model_allowed(wanted: Sequence[str], model: str) -> bool:
    """True when a node of GPU ``model`` satisfies a request for ``wanted`` models.

    Same rule as request validation: empty means any model; otherwise one of ``wanted`` must be
    a case-insensitive substring of ``model`` (``"V100M16"`` matches ``"V100M16"``, ``"A100"``
    matches ``"NVIDIA A100-SXM4-80GB"``).
    """
    if not wanted:
        return True
    low = model.lower()
    return any(w and w.lower() in low for w in wanted)


@dataclass(frozen=True, slots=True)
class PodShape:
    """What one worker of a job needs, in the units placement arithmetic uses.

    Attributes:
        cpu_milli: CPU in millicores.
        memory_mib: host memory in MiB.
        gpus: GPUs (0 = CPU only).
        gpu_milli: milli-GPUs on each of those GPUs (1..1000; 1000 = whole GPU; 0 when ``gpus == 0``).
        models: acceptable GPU models (empty = any).
    """

    cpu_milli: int = 0
    memory_mib: int = 0
    gpus: int = 0
    gpu_milli: int = 0
    models: tuple[str, ...] = ()

    @classmethod
    def from_request(cls, req: ResourceRequest) -> PodShape:
        """The shape of one worker of ``req``."""
        gpus = req.gpus
        return cls(cpu_milli=req.cpu_millis, memory_mib=req.memory_mib, gpus=gpus,
                   gpu_milli=req.gpu_milli if gpus else 0, models=tuple(req.gpu_models))

    @property
    def total_milli(self) -> int:
        """Milli-GPUs over all GPUs of the worker."""
        return self.gpus * self.gpu_milli

    @property
    def shared(self) -> bool:
        """True when the worker takes part of one GPU."""
        return self.gpus == 1 and self.gpu_milli < GPU_MILLI

    @property
    def tag(self) -> int:
        """GPU-affinity class used by GPU clustering: 0 none, 1 shared, ``1 + gpus`` whole GPUs."""
        if self.gpus == 0:
            return 0
        if self.shared:
            return 1
        return 1 + min(self.gpus, MAX_GPUS_PER_NODE)


@dataclass(slots=True)
class NodeArrays:
    """Mutable array view of the nodes' free resources: what vectorised score plugins read.

    Row ``i`` is node ``names[i]``. ``gpu_left[i, j]`` is the milli-GPU left on the node's
    ``j``-th GPU (0 where the node has fewer than ``j + 1`` GPUs, or the GPU is not placeable).
    ``gen[i]`` grows each time row ``i`` changes so plugins can keep per-node caches.

    Attributes:
        names: node names.
        models: distinct GPU models; ``model_idx[i]`` indexes it (-1 = node without GPUs).
        gpu_uuids: per node, its GPU uuids in column order.
        gpu_count, cpu_cap, mem_cap, cpu_left, mem_left: per node (millicores, MiB); a node
            that does not track CPU or memory (capacity 0) has :data:`UNTRACKED` left.
        gpu_left: ``(nodes, MAX_GPUS_PER_NODE)`` milli-GPUs left.
        tag_count: ``(nodes, 2 + MAX_GPUS_PER_NODE)`` pods per :attr:`PodShape.tag` on the node.
        gen: per-node change counter.
    """

    names: tuple[str, ...]
    models: tuple[str, ...]
    model_idx: IntArray
    gpu_uuids: tuple[tuple[str, ...], ...]
    gpu_count: IntArray
    cpu_cap: IntArray
    mem_cap: IntArray
    cpu_left: IntArray
    mem_left: IntArray
    gpu_left: IntArray
    tag_count: IntArray
    gen: IntArray
    _model_ok: dict[tuple[str, ...], BoolArray] = field(default_factory=dict)
    _gpu_ok: dict[tuple[int, int, tuple[str, ...]], tuple[IntArray, BoolArray]] = field(default_factory=dict)

    @classmethod
    def from_inventory(cls, inventory: Inventory) -> NodeArrays:
        """Build the view of an inventory with nothing allocated.

        Unhealthy GPUs, GPUs held by foreign processes and GPUs of unschedulable nodes get 0
        milli left, so no plugin ever places on them. Nodes with more than
        :data:`MAX_GPUS_PER_NODE` GPUs keep only the first ones.
        """
        n = len(inventory.nodes)
        models: list[str] = []
        model_idx = np.full(n, -1, dtype=np.int64)
        gpu_left = np.zeros((n, MAX_GPUS_PER_NODE), dtype=np.int64)
        gpu_count = np.zeros(n, dtype=np.int64)
        uuids: list[tuple[str, ...]] = []
        for i, node in enumerate(inventory.nodes):
            gpus = node.gpus[:MAX_GPUS_PER_NODE]
            uuids.append(tuple(g.uuid for g in gpus))
            gpu_count[i] = len(gpus)
            if gpus:
                model = gpus[0].model
                if model not in models:
                    models.append(model)
                model_idx[i] = models.index(model)
            for j, gpu in enumerate(gpus):
                usable = node.schedulable and gpu.healthy and gpu.foreign_memory_mib == 0
                gpu_left[i, j] = GPU_MILLI if usable else 0
        cpu = np.array([node.cpu_millis for node in inventory.nodes], dtype=np.int64)
        mem = np.array([node.memory_mib for node in inventory.nodes], dtype=np.int64)
        return cls(
            names=tuple(node.name for node in inventory.nodes), models=tuple(models),
            model_idx=model_idx, gpu_uuids=tuple(uuids), gpu_count=gpu_count,
            cpu_cap=cpu, mem_cap=mem, cpu_left=np.where(cpu == 0, UNTRACKED, cpu),
            mem_left=np.where(mem == 0, UNTRACKED, mem), gpu_left=gpu_left,
            tag_count=np.zeros((n, 2 + MAX_GPUS_PER_NODE), dtype=np.int64),
            gen=np.zeros(n, dtype=np.int64))

    def __len__(self) -> int:
        return len(self.names)

    def model_mask(self, models: Sequence[str]) -> BoolArray:
        """Nodes whose GPU model satisfies ``models`` (all nodes with GPUs when empty)."""
        key = tuple(models)
        mask = self._model_ok.get(key)
        if mask is None:
            ok = np.array([model_allowed(key, m) for m in self.models] + [False], dtype=bool)
            mask = ok[self.model_idx]  # -1 (no GPU) picks the trailing False
            self._model_ok[key] = mask
        return mask

    def feasible(self, shape: PodShape) -> BoolArray:
        """Nodes where ``shape`` fits now: CPU, memory, model and enough GPUs with room.

        CPU or memory capacity 0 means "not tracked" and never blocks. The GPU part is cached
        per ``(gpus, gpu_milli, models)`` and refreshed only for rows whose :attr:`gen` changed.
        """
        ok = (self.cpu_left >= shape.cpu_milli) & (self.mem_left >= shape.memory_mib)
        if shape.gpus == 0:
            return ok
        key = (shape.gpus, shape.gpu_milli, shape.models)
        entry = self._gpu_ok.get(key)
        if entry is None:
            entry = (np.full(len(self), -1, dtype=np.int64), np.zeros(len(self), dtype=bool))
            self._gpu_ok[key] = entry
        seen, gpu_ok = entry
        rows = (seen != self.gen).nonzero()[0]
        if len(rows):
            gpu_ok[rows] = self.model_mask(shape.models)[rows] & \
                ((self.gpu_left[rows] >= shape.gpu_milli).sum(axis=1) >= shape.gpus)
            seen[rows] = self.gen[rows]
        return ok & gpu_ok

    def first_free_gpus(self, node: int, shape: PodShape) -> tuple[int, ...]:
        """Column indices of the first ``shape.gpus`` GPUs with room on ``node`` (index order)."""
        cols = np.flatnonzero(self.gpu_left[node] >= shape.gpu_milli)[: shape.gpus]
        return tuple(int(c) for c in cols)

    def allocate(self, node: int, gpus: Sequence[int], shape: PodShape) -> None:
        """Take ``shape`` on ``node`` using GPU columns ``gpus`` (the caller checked it fits)."""
        self.cpu_left[node] -= shape.cpu_milli
        self.mem_left[node] -= shape.memory_mib
        for col in gpus:
            self.gpu_left[node, col] -= shape.gpu_milli
        self.tag_count[node, shape.tag] += 1
        self.gen[node] += 1

    def release(self, node: int, gpus: Sequence[int], shape: PodShape) -> None:
        """Give back what :meth:`allocate` took."""
        self.cpu_left[node] += shape.cpu_milli
        self.mem_left[node] += shape.memory_mib
        for col in gpus:
            self.gpu_left[node, col] += shape.gpu_milli
        self.tag_count[node, shape.tag] -= 1
        self.gen[node] += 1

    def allocated_milli(self) -> int:
        """Milli-GPUs allocated over all nodes."""
        return int((self.gpu_count * GPU_MILLI).sum() - self.gpu_left.sum())

    def capacity_milli(self) -> int:
        """Milli-GPUs of all GPUs in the view."""
        return int(self.gpu_count.sum() * GPU_MILLI)


@dataclass(frozen=True, slots=True)
class TypicalPod:
    """One shape of the target workload and its popularity (0..1)."""

    shape: PodShape
    popularity: float


def typical_pods(shapes: Iterable[PodShape], coverage: float = 1.0,
                 gpu_weight: float = 0.0) -> tuple[TypicalPod, ...]:
    """The target workload: the distribution of pod shapes FGD measures fragmentation against.

    Shapes are counted by ``(cpu, gpu_milli, gpus, models)`` (memory is ignored, as in the
    paper), taken most popular first until their cumulative share reaches ``coverage``, then
    renormalised to sum to 1. Ties in popularity take the larger shape first.

    Args:
        shapes: the workload's pods.
        coverage: share of pods the kept shapes must cover (1.0 = every shape, the paper's
            definition; the published simulator has a knob for a 95 % cut, which drops rare
            8-GPU shapes and lets FGD break up whole nodes — see the benchmark notes).
        gpu_weight: weight each pod by ``1 + gpu_weight * GPUs requested`` instead of 1, so the
            distribution follows GPU demand rather than pod count (0 = the paper).

    Raises:
        ValueError: ``shapes`` is empty, ``coverage`` not in (0, 1] or ``gpu_weight`` < 0.
    """
    if not 0 < coverage <= 1:
        raise ValueError(f"coverage must be in (0, 1], got {coverage}")
    if gpu_weight < 0:
        raise ValueError(f"gpu_weight must be >= 0, got {gpu_weight}")
    counts: Counter[tuple[int, int, int, tuple[str, ...]]] = Counter()
    for s in shapes:
        counts[(s.cpu_milli, s.gpu_milli, s.gpus, s.models)] += 1
    if not counts:
        raise ValueError("typical_pods needs at least one shape")
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0][0], kv[0][1], kv[0][2], kv[0][3]),
                    reverse=True)
    chosen: list[tuple[tuple[int, int, int, tuple[str, ...]], float]] = []
    cum = 0
    for key, count in ranked:
        if cum >= coverage * total:
            break
        chosen.append((key, count * (1.0 + gpu_weight * key[1] * key[2] / GPU_MILLI)))
        cum += count
    mass = sum(w for _, w in chosen)
    return tuple(TypicalPod(PodShape(cpu_milli=k[0], gpu_milli=k[1], gpus=k[2], models=k[3]), w / mass)
                 for k, w in chosen)


def typical_from_requests(requests: Iterable[ResourceRequest], *, gpu_weight: float = 0.0) -> tuple[TypicalPod, ...]:
    """The target workload from past or queued requests (one shape per worker), for production use.

    The edge builds it from recent job history (e.g. the last days of submissions) and hands the
    plugin to the profile; with no history pass a representative mix.

    Raises:
        ValueError: no requests.
    """
    shapes = [PodShape.from_request(r) for r in requests for _ in range(max(1, r.workers))]
    return typical_pods(shapes, gpu_weight=gpu_weight)


class FragModel:
    """Expected GPU fragmentation of node states against a target workload, vectorised.

    For node states given as arrays it returns ``F = sum_t p_t * frag_t`` in milli-GPUs (see
    the module docstring). Shapes are grouped by ``(gpu_milli, gpus)``; inside a group the
    popularity of the shapes that fit a node is a step function of the node's free CPU and a
    property of its model, tabulated once (``_w``), so one evaluation costs O(states x groups).

    Args:
        typical: the target workload (:func:`typical_pods`).
        models: GPU models of the :class:`NodeArrays` it will score (``NodeArrays.models``).
    """

    def __init__(self, typical: Sequence[TypicalPod], models: Sequence[str]) -> None:
        gpu_t = [t for t in typical if t.shape.gpus > 0 and t.shape.gpu_milli > 0]
        self.p_all = float(sum(t.popularity for t in typical))
        self.milli = np.array(sorted({t.shape.gpu_milli for t in gpu_t}) or [GPU_MILLI], dtype=np.int64)
        groups = sorted({(t.shape.gpu_milli, t.shape.gpus) for t in gpu_t})
        self.g_mi = np.array([int(np.searchsorted(self.milli, m)) for m, _ in groups], dtype=np.int64)
        self.g_k = np.array([k for _, k in groups], dtype=np.int64)
        self.cpu_steps = np.array(sorted({t.shape.cpu_milli for t in gpu_t}), dtype=np.int64)
        n_models = len(models) + 1  # last row: nodes without GPUs
        w = np.zeros((len(groups), n_models, len(self.cpu_steps) + 1), dtype=np.float64)
        for t in gpu_t:
            g = groups.index((t.shape.gpu_milli, t.shape.gpus))
            c = int(np.searchsorted(self.cpu_steps, t.shape.cpu_milli)) + 1
            for mi, model in enumerate(models):
                if model_allowed(t.shape.models, model):
                    w[g, mi, c] += t.popularity
        # row (model * (steps + 1) + step) -> popularity per group: one gather per evaluation
        self._w = np.ascontiguousarray(np.cumsum(w, axis=2).transpose(1, 2, 0)).reshape(
            n_models * (len(self.cpu_steps) + 1), len(groups))
        self._stride = len(self.cpu_steps) + 1

    def counts(self, gpu_left: IntArray) -> tuple[IntArray, IntArray]:
        """Per state and typical GPU share ``m``: GPUs with ``>= m`` left, and milli on GPUs with ``< m``.

        Args:
            gpu_left: ``(states, gpus)`` milli-GPUs left.

        Returns:
            ``(cnt, small)``, each ``(states, len(self.milli))``.
        """
        left = gpu_left[:, :, None]
        fits = left >= self.milli[None, None, :]
        cnt = fits.sum(axis=1)
        small = np.where(fits, 0, left).sum(axis=1)
        return cnt.astype(np.int64), small.astype(np.int64)

    def frag(self, model_idx: IntArray, cpu_left: IntArray, total_left: IntArray,
             cnt: IntArray, small: IntArray) -> FloatArray:
        """Expected fragmentation (milli-GPUs) of each state.

        Args:
            model_idx: model row per state (-1 = no GPU).
            cpu_left: free CPU per state (millicores; :data:`UNTRACKED` for nodes without CPU accounting).
            total_left: milli-GPUs left per state.
            cnt, small: from :meth:`counts` for the same states.
        """
        if len(self.g_k) == 0:
            return np.asarray(total_left * self.p_all, dtype=np.float64)
        cidx = np.searchsorted(self.cpu_steps, cpu_left, side="right")
        w = self._w[model_idx * self._stride + cidx]                     # (states, groups)
        ok = cnt[:, self.g_mi] >= self.g_k                               # (states, groups)
        usable = total_left[:, None] - small[:, self.g_mi]               # (states, groups)
        saved = (usable * ok * w).sum(axis=1)
        return np.asarray(total_left * self.p_all - saved, dtype=np.float64)


_COST_SCALE = 1000
"""Fixed-point steps per score point when a subclass adds a per-GPU cost (:meth:`FgdScore._share_cost`)."""


def _sigmoid_score(delta: FloatArray) -> IntArray:
    """``int(100 * sigmoid(delta / 1000))``: the published FGD score, 0..100."""
    return np.floor(100.0 / (1.0 + np.exp(-delta / 1000.0))).astype(np.int64)


class FgdScore:
    """Placement score plugin: Fragmentation Gradient Descent (Weng et al., ATC'23).

    Scores every feasible node by how little the placement grows its expected fragmentation
    (``100 * sigmoid(-ΔF / 1000 milli)``, truncated to an int as in the published simulator);
    for a GPU-sharing pod the GPU chosen on each node is the one with the best score (lowest
    index on ties). Per-node fragmentation and share counts are cached, and scores are cached per
    request shape; both are refreshed only for rows whose :attr:`NodeArrays.gen` changed, so a
    call costs O(changed nodes x shape groups) plus O(nodes) for the gather.

    Two entry points, same model: :meth:`score_nodes` (vectorised over a :class:`NodeArrays`; what
    the production placer calls when a profile names this plugin — engine cycles and the trace
    replay alike) and :meth:`score` (the per-candidate
    :class:`~jupyter_sched.placement.scores.Score` protocol, for callers scoring one node).

    Args:
        typical: the target workload the fragmentation is measured against.
    """

    name = "FGD"

    def __init__(self, typical: Sequence[TypicalPod]) -> None:
        self.typical = tuple(typical)
        self._model: FragModel | None = None
        self._arrays: NodeArrays | None = None  # held, not its id: a new view may reuse a freed id
        self._seen: IntArray = np.zeros(0, dtype=np.int64)
        self._cnt: IntArray = np.zeros((0, 0), dtype=np.int64)
        self._small: IntArray = np.zeros((0, 0), dtype=np.int64)
        self._frag: FloatArray = np.zeros(0, dtype=np.float64)
        self._total: IntArray = np.zeros(0, dtype=np.int64)
        self._sorted: IntArray = np.zeros((0, 0), dtype=np.int64)
        self._order: IntArray = np.zeros((0, 0), dtype=np.int64)
        self._by_shape: dict[tuple[int, int, int], tuple[IntArray, FloatArray, IntArray]] = {}
        self._scalar_models: dict[tuple[str, ...], FragModel] = {}
        self.last_gpu: IntArray = np.zeros(0, dtype=np.int64)

    def _refresh(self, arrays: NodeArrays, only: IntArray | None = None) -> FragModel:
        """Bring the per-node caches up to date with ``arrays`` (only rows ``only``, when given)."""
        if self._model is None or self._arrays is not arrays or len(self._seen) != len(arrays):
            self._model = FragModel(self.typical, arrays.models)
            self._arrays = arrays
            self._seen = np.full(len(arrays), -1, dtype=np.int64)
            m = len(self._model.milli)
            self._cnt = np.zeros((len(arrays), m), dtype=np.int64)
            self._small = np.zeros((len(arrays), m), dtype=np.int64)
            self._frag = np.zeros(len(arrays), dtype=np.float64)
            self._total = np.zeros(len(arrays), dtype=np.int64)
            self._sorted = np.zeros_like(arrays.gpu_left)
            self._order = np.zeros_like(arrays.gpu_left)
            self._by_shape = {}
        model = self._model
        if only is None:
            rows = (self._seen != arrays.gen).nonzero()[0]
        else:   # a stale row outside ``only`` stays stale until a call needs it
            rows = only[self._seen[only] != arrays.gen[only]]
        if len(rows):
            left = arrays.gpu_left[rows]
            cnt, small = model.counts(left)
            self._cnt[rows] = cnt
            self._small[rows] = small
            total = left.sum(axis=1)
            self._total[rows] = total
            self._frag[rows] = model.frag(arrays.model_idx[rows], arrays.cpu_left[rows], total, cnt, small)
            self._order[rows] = np.argsort(left, axis=1, kind="stable")
            self._sorted[rows] = np.sort(left, axis=1)
            self._seen[rows] = arrays.gen[rows]
        return model

    def cluster_frag(self, arrays: NodeArrays) -> tuple[float, int]:
        """Fragmentation of the whole cluster now: ``(fragmented milli-GPUs, unallocated milli-GPUs)``.

        The fragmentation *ratio* of the paper is the first over the second; the fragmentation
        *amount* is the first (divide by 1000 for GPUs).
        """
        self._refresh(arrays)
        return float(self._frag.sum()), int(arrays.gpu_left.sum())

    def _scores(self, model: FragModel, arrays: NodeArrays, shape: PodShape,
                nodes: IntArray) -> tuple[IntArray | FloatArray, IntArray]:
        """Published FGD score (0..100) of placing ``shape`` on each of ``nodes``, and the GPU column.

        For a shared pod, one candidate per distinct free-milli value on each node is scored and the
        node keeps its best candidate (lowest GPU column on ties); nodes where no GPU fits get -1.
        Whole-GPU and CPU-only pods get column -1 (their GPUs are the first free ones).
        """
        cpu_after = arrays.cpu_left[nodes] - shape.cpu_milli
        total = self._total[nodes]
        before = self._frag[nodes]
        if not shape.shared:
            cnt = self._cnt[nodes] - shape.gpus  # whole GPUs leave every share class
            after = model.frag(arrays.model_idx[nodes], cpu_after, total - shape.total_milli,
                               cnt, self._small[nodes])
            return _sigmoid_score(before - after), np.full(len(nodes), -1, dtype=np.int64)
        srt = self._sorted[nodes]
        cand = srt >= shape.gpu_milli
        cand[:, 1:] &= srt[:, 1:] != srt[:, :-1]      # first of each run of equal values
        row, col = cand.nonzero()                     # row-major: grouped by node
        score = np.full(len(nodes), -1, dtype=np.int64)
        gpu = np.full(len(nodes), -1, dtype=np.int64)
        if len(row) == 0:
            return score, gpu
        node_of = nodes[row]
        left = srt[row, col]
        new = left - shape.gpu_milli
        ms = model.milli
        cnt = self._cnt[node_of] - (left[:, None] >= ms) + (new[:, None] >= ms)
        small = self._small[node_of] - np.where(left[:, None] < ms, left[:, None], 0) \
            + np.where(new[:, None] < ms, new[:, None], 0)
        after = model.frag(arrays.model_idx[node_of], cpu_after[row], total[row] - shape.gpu_milli, cnt, small)
        # the stable argsort maps a run's first sorted position to the lowest original column
        orig = self._order[node_of, col]
        points = _sigmoid_score(before[row] - after)
        cost = self._share_cost(shape, left)
        if cost is not None:   # fixed point, so one integer key still orders score, then column
            points = points * _COST_SCALE - np.rint(cost * _COST_SCALE).astype(np.int64)
        key = points * 16 + (15 - orig)   # best score, then lowest column
        starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))
        best = np.maximum.reduceat(key, starts)
        if cost is None:
            score[row[starts]] = best // 16
        else:
            score = score.astype(np.float64)
            score[row[starts]] = (best // 16) / _COST_SCALE
        gpu[row[starts]] = 15 - best % 16
        return score, gpu

    def _share_cost(self, shape: PodShape, free: IntArray) -> FloatArray | None:
        """Points to take off each candidate GPU of a shared pod before each node keeps its best.

        ``free`` holds the milli-GPUs left on each candidate GPU (all at least ``shape.gpu_milli``).
        FGD adds nothing (None); :class:`~.planned.FgdPlannedScore` adds its fill plan's waste.
        """
        return None

    def score_nodes(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray) -> FloatArray:
        """Score of each of ``nodes`` (feasible for ``shape``); higher is better.

        Returns the published 0..100 integer score (as float). A node's score depends only on its
        own state, so scores are cached per request shape ``(cpu, gpus, gpu_milli)`` and only the
        rows of ``nodes`` that changed since that shape last scored them are recomputed (rows not
        asked about stay stale until a call asks: near saturation most nodes are infeasible for
        most shapes, and skipping them saves about 10 % of a replay). Remembers the GPU chosen per node
        for :meth:`pick_gpus`.
        """
        model = self._refresh(arrays, nodes)
        key = (shape.cpu_milli, shape.gpus, shape.gpu_milli)
        entry = self._by_shape.get(key)
        if entry is None:
            entry = (np.full(len(arrays), -1, dtype=np.int64), np.zeros(len(arrays)),
                     np.full(len(arrays), -1, dtype=np.int64))
            self._by_shape[key] = entry
        seen, score, gpu = entry
        rows = nodes[seen[nodes] != arrays.gen[nodes]]   # only the feasible ones: others stay stale
        if len(rows):
            sc, g = self._scores(model, arrays, shape, rows)
            score[rows] = sc
            gpu[rows] = g
            seen[rows] = arrays.gen[rows]
        self.last_gpu = gpu[nodes]
        return score[nodes]

    def score(self, request: ResourceRequest, state: ClusterState, node: int, gpus: list[int]) -> int:
        """The production placer's :class:`~jupyter_sched.placement.scores.Score` protocol: 0..100.

        Scores one candidate (``gpus`` are global GPU ids on ``node`` of the cycle's ledger) by
        the same fragmentation model as :meth:`score_nodes`.
        """
        ids = [g for g in state.node_gpus[node] if state.placeable[g]][:MAX_GPUS_PER_NODE]
        if not ids:
            return 50  # a node without GPUs: no GPU fragmentation changes (sigmoid(0), as score_nodes gives)
        models = tuple(dict.fromkeys(state.gpu_model))
        model = self._scalar_models.get(models)
        if model is None:
            model = self._scalar_models[models] = FragModel(self.typical, models)
        milli = request.gpu_milli if request.fractional else GPU_MILLI
        before = np.zeros((2, MAX_GPUS_PER_NODE), dtype=np.int64)
        for j, g in enumerate(ids):
            before[0, j] = before[1, j] = state.free_milli[g]
            if g in gpus:
                before[1, j] -= milli
        cpu_free = state.node_cpu_free[node]
        cpu = UNTRACKED if cpu_free is None else cpu_free
        cpu2 = np.array([cpu, cpu - request.cpu_millis], dtype=np.int64)
        m_idx = np.full(2, models.index(state.gpu_model[ids[0]]), dtype=np.int64)
        cnt, small = model.counts(before)
        f = model.frag(m_idx, cpu2, before.sum(axis=1), cnt, small)
        return int(_sigmoid_score(np.array([f[0] - f[1]]))[0])

    def pick_gpus(self, arrays: NodeArrays, shape: PodShape, nodes: IntArray, pick: int) -> tuple[int, ...]:
        """GPU columns for ``shape`` on ``nodes[pick]`` after :meth:`score_nodes` on the same ``nodes``."""
        if shape.shared and len(self.last_gpu) == len(nodes):
            return (int(self.last_gpu[pick]),)
        return arrays.first_free_gpus(int(nodes[pick]), shape)
