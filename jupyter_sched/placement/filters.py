"""Placement filters: may this job go on this node at all? (kube-scheduler's Filter extension point).

Each filter is a small plugin behind :class:`Filter` returning a :class:`Status` whose reason
carries numbers (STYLE §5). Filters here are *static*: they depend on node attributes, not on
what is free, so the placer evaluates them once per (job shape, node pool) and caches the
answer. Free capacity is handled by the ledger's index (:mod:`.state`), fragmentation and
capacity reasons by :mod:`.reasons`.

Source: kube-scheduler framework ``Filter`` plugins (NodeUnschedulable, TaintToleration,
NodeAffinity) and Kueue's flavor assigner, which reports one reason per flavor (case 005).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..model import Node, ResourceRequest, Taint
from .state import ClusterState

__all__ = [
    "FILTERS",
    "Filter",
    "GpuMemoryFilter",
    "GpuModelFilter",
    "NodeReadyFilter",
    "NodeSelectorFilter",
    "Status",
    "TaintFilter",
    "model_matches",
    "tolerates",
]


@dataclass(frozen=True, slots=True)
class Status:
    """Outcome of a filter: ``ok`` or a coded reason with its numbers.

    Attributes:
        code: ``""`` when the node passes; otherwise e.g. ``"UntoleratedTaint"``.
        message: one sentence with the numbers.
        plugin: the filter's name.
        details: the numbers (JSON-serializable).
    """

    code: str = ""
    message: str = ""
    plugin: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when the node passed."""
        return not self.code


OK = Status()


class Filter(Protocol):
    """A node filter: ``filter(request, node, state) -> Status`` (pure).

    ``state`` is the cycle's ledger (None when a filter is evaluated outside a cycle). The
    built-in filters are static — they read node attributes only — which lets the placer cache
    their verdict per node pool; free capacity is the ledger index's business.
    """

    name: str

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        """Return :data:`OK` when ``node`` may hold ``request``, else a reason."""
        ...


def model_matches(wanted: str, model: str) -> bool:
    """Loose GPU model match: ``A100`` matches ``NVIDIA A100-SXM4-80GB`` (case-insensitive).

    The same rule as :func:`jupyter_sched.model.validation._model_matches`, so what the API
    accepts is what placement honours.
    """
    return wanted.lower() in model.lower()


def tolerates(tolerations: tuple[str, ...], taint: Taint) -> bool:
    """True when one toleration (``key``, ``key=value`` or ``key=value:Effect``) matches ``taint``."""
    if taint.effect not in ("NoSchedule", "NoExecute"):
        return True  # PreferNoSchedule only lowers preference
    for tol in tolerations:
        if tol in (taint.key, str(taint), f"{taint.key}={taint.value}", f"{taint.key}:{taint.effect}"):
            return True
    return False


class NodeReadyFilter:
    """Rejects nodes that are NotReady.

    A cordoned node passes: its GPUs are never placeable (``ClusterState.placeable``), so nothing new
    is placed there, but a job only such a node could hold *waits* for it (reason ``NodeCordoned``,
    naming the cordon) instead of being refused as never fitting — a cordon is maintenance, it ends
    (hubadmin24: ``jupyter-sched nodes cordon``)."""

    name = "NodeReady"

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        if not node.ready:
            return Status("NodeNotReady", f"node {node.name} is not ready", self.name, {"node": node.name})
        return OK


GPU_TAINT_KEYS = frozenset({"nvidia.com/gpu"})
"""Taint keys every GPU job tolerates without asking: GPU nodes are commonly tainted
``nvidia.com/gpu`` to keep CPU-only pods off them (the NVIDIA GPU Operator / GKE / AKS convention;
Kubernetes' ExtendedResourceToleration admission plugin adds the same toleration to pods that
request ``nvidia.com/gpu``)."""


class TaintFilter:
    """Rejects nodes with a NoSchedule/NoExecute taint the job does not tolerate.

    Jobs that ask for GPUs (``total_gpus > 0``) tolerate taints whose key is in
    :data:`GPU_TAINT_KEYS` automatically, as Kubernetes' ExtendedResourceToleration does.
    """

    name = "TaintToleration"

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        wants_gpus = request.total_gpus > 0
        for taint in node.taints:
            if wants_gpus and taint.key in GPU_TAINT_KEYS:
                continue
            if not tolerates(request.tolerations, taint):
                return Status("UntoleratedTaint", f"node {node.name} is tainted {taint}", self.name,
                              {"taint": str(taint), "node": node.name})
        return OK


class NodeSelectorFilter:
    """Rejects nodes whose labels lack one of the job's ``node_selector`` pairs."""

    name = "NodeSelector"

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        for key, value in request.node_selector.items():
            if node.labels.get(key) != value:
                return Status("NodeSelectorMismatch",
                              f"node {node.name} lacks label {key}={value}", self.name,
                              {"label": f"{key}={value}", "node": node.name,
                               "has": node.labels.get(key)})
        return OK


class GpuModelFilter:
    """Rejects nodes without any GPU of an acceptable model (GPU-less jobs pass)."""

    name = "GpuModel"

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        if request.gpus == 0 or not request.gpu_models:
            return OK
        for gpu in node.gpus:
            if any(model_matches(w, gpu.model) for w in request.gpu_models):
                return OK
        return Status("NoMatchingGpuModel",
                      f"node {node.name} has no GPU of model {' or '.join(request.gpu_models)}", self.name,
                      {"wanted": list(request.gpu_models),
                       "has": sorted({g.model for g in node.gpus})})


class GpuMemoryFilter:
    """Rejects nodes whose GPUs all have less memory than ``min_memory_mib``."""

    name = "GpuMemory"

    def filter(self, request: ResourceRequest, node: Node, state: ClusterState | None = None) -> Status:
        if request.gpus == 0 or not request.min_memory_mib:
            return OK
        best = max((g.memory_mib for g in node.gpus), default=0)
        if best < request.min_memory_mib:
            return Status("InsufficientGpuMemory",
                          f"node {node.name} GPUs have {best} MiB, job needs {request.min_memory_mib} MiB",
                          self.name, {"requested_mib": request.min_memory_mib, "capacity_mib": best})
        return OK


FILTERS: dict[str, Filter] = {
    f.name: f for f in (NodeReadyFilter(), TaintFilter(), NodeSelectorFilter(), GpuModelFilter(),
                        GpuMemoryFilter())
}
"""Filter plugins by name; a :class:`~jupyter_sched.scheduling.SchedulingProfile` lists the ones it runs."""
