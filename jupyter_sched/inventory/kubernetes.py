"""GPU inventory of a Kubernetes cluster, from Node objects, kept current by list + watch.

Two halves:

* **Pure parsing** (:func:`node_from_dict`, :func:`pod_gpu_use`, :func:`inventory_from_objects`):
  API JSON (camelCase dicts, exactly as the API server sends them) in, :class:`~jupyter_sched.model.Inventory`
  out. No client, no clock.
* **Watching** (:class:`KubernetesInventory`): two reflectors (nodes, pods) that LIST, then WATCH
  from the list's ``resourceVersion``, and LIST again when the server answers 410 Gone.

What a node tells us (NVIDIA device plugin + GPU feature discovery, GFD):

==========================================  ================================================
field / label                               use
==========================================  ================================================
``status.capacity["nvidia.com/gpu"]``       GPUs the device plugin found
``status.allocatable["nvidia.com/gpu"]``    healthy ones; ``capacity - allocatable`` GPUs are
                                            marked unhealthy (the plugin withdraws sick devices)
``nvidia.com/mig-<profile>`` resources      MIG devices under the ``mixed`` strategy
``nvidia.com/gpu.product``                  model (GFD writes spaces as ``-``:
                                            ``NVIDIA-A100-SXM4-80GB``)
``nvidia.com/gpu.memory``                   memory per GPU in MiB
``nvidia.com/gpu.count``                    physical GPUs (MIG parents included)
``nvidia.com/mig.strategy``                 ``single`` | ``mixed`` | ``none``
``nvidia.com/mig-<profile>.memory``         MIG device memory in MiB
``spec.taints``, ``spec.unschedulable``     taints, cordon
``status.conditions[type=Ready]``           a NotReady (or Unknown) node's GPUs are unhealthy
==========================================  ================================================

GFD label quirks handled here:

* Time-slicing with ``renameByDefault: false`` appends ``-SHARED`` to the product label and
  multiplies ``allocatable["nvidia.com/gpu"]`` by ``nvidia.com/gpu.replicas``; the model drops
  the suffix and the physical count is ``gpu.count`` (or allocatable / replicas).
* Under the MIG ``single`` strategy ``nvidia.com/gpu`` counts MIG devices, the product label
  ends in ``-MIG-<profile>`` and ``gpu.memory`` is the MIG device's memory; we rebuild
  ``gpu.count`` physical GPUs, each holding its share of the MIG devices.

Kubernetes hides device identity from everyone but the kubelet, so GPU uuids are synthesised
and stable: ``k8s-<node>-gpu<i>`` and ``k8s-<node>-gpu<i>-mig<j>``. Pods we did not create
(no ``app.kubernetes.io/managed-by: jupyter-sched`` label) that hold GPUs on a node mark that
many GPUs of the node as held by a foreign owner (``foreign_memory_mib``, case 014) — never a
GPU our own pods' annotation ``jupyter-sched/gpu-uuids`` names.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ValidationError
from ..executors.kubernetes.manifests import (
    ANNOTATION_GPU_UUIDS,
    GPU_PRODUCT_LABEL,
    GPU_RESOURCE,
    LABEL_MANAGED_BY,
    MANAGED_BY,
    MIG_RESOURCE_PREFIX,
)
from ..executors.kubernetes.quantity import parse_quantity
from ..executors.kubernetes.reflector import Reflector
from ..model import GPU, Health, Inventory, MigDevice, Node, Taint
from ..model.mig import compute_slices, gpus_for_mig_devices

__all__ = [
    "GPU_COUNT_LABEL",
    "GPU_MEMORY_LABEL",
    "KubernetesInventory",
    "MIG_STRATEGY_LABEL",
    "PodGpuUse",
    "gpu_uuid",
    "inventory_from_objects",
    "mig_uuid",
    "node_from_dict",
    "pod_gpu_use",
]

GPU_MEMORY_LABEL = "nvidia.com/gpu.memory"
GPU_COUNT_LABEL = "nvidia.com/gpu.count"
GPU_REPLICAS_LABEL = "nvidia.com/gpu.replicas"
MIG_STRATEGY_LABEL = "nvidia.com/mig.strategy"
_SHARED_SUFFIX = "-SHARED"
log = logging.getLogger(__name__)
_MIG_PRODUCT = re.compile(r"^(?P<parent>.+?)-MIG-(?P<profile>\d+g\.\d+gb)$")
_PROFILE_GB = re.compile(r"(\d+)gb$")
_MIG_LABEL = re.compile(r"^nvidia\.com/mig-(?P<profile>\d+g\.\d+gb)\.(?P<field>count|memory)$")
_PRODUCT_GB = re.compile(r"(\d+)GB")


def gpu_uuid(node: str, index: int) -> str:
    """Synthetic, stable uuid of GPU ``index`` of ``node``."""
    return f"k8s-{node}-gpu{index}"


def mig_uuid(node: str, index: int, slot: int) -> str:
    """Synthetic, stable uuid of MIG device ``slot`` on GPU ``index`` of ``node``."""
    return f"k8s-{node}-gpu{index}-mig{slot}"


def _int(text: object, default: int = 0) -> int:
    try:
        return int(parse_quantity(str(text)))
    except (ValidationError, ValueError, ArithmeticError):
        return default


def _label_int(labels: Mapping[str, str], key: str) -> int | None:
    value = labels.get(key)
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _ready(node: Mapping[str, Any]) -> tuple[bool, str]:
    """(ready, why not) from the Ready condition; no condition at all counts as not ready."""
    for cond in (node.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") == "True":
                return True, ""
            why = cond.get("reason") or f"Ready={cond.get('status')}"
            message = cond.get("message")
            return False, f"{why}: {message}" if message else str(why)
    return False, "no Ready condition reported"


def _mig_label_groups(labels: Mapping[str, str]) -> dict[str, tuple[int | None, int | None]]:
    """``{profile: (count label, memory label)}`` of the ``nvidia.com/mig-<profile>.*`` labels."""
    groups: dict[str, list[int | None]] = {}
    for key, value in labels.items():
        match = _MIG_LABEL.match(key)
        if match is None:
            continue
        slot = groups.setdefault(match.group("profile"), [None, None])
        try:
            number = int(value)
        except ValueError:
            continue
        slot[0 if match.group("field") == "count" else 1] = number
    return {k: (v[0], v[1]) for k, v in groups.items()}


def _profile_memory_mib(profile: str, devices: int, labels: Mapping[str, str], warnings: list[str]) -> int:
    """Memory of one MIG device of ``profile`` from the node's labels (case 022).

    1. ``nvidia.com/mig-<profile>.memory``;
    2. else a label group with the same compute slices and the same device count (GFD has named
       profiles differently from the device plugin: ``3g.21gb`` labels, ``3g.20gb`` resource) —
       with a warning naming both;
    3. else the size in the profile name (rounded; GiB → MiB).
    """
    groups = _mig_label_groups(labels)
    own = groups.get(profile)
    if own is not None and own[1] is not None:
        return own[1]
    slices = compute_slices(profile)
    for other, (count, memory) in sorted(groups.items()):
        if other != profile and memory is not None and compute_slices(other) == slices and count == devices:
            warnings.append(f"MIG label name {other} does not match resource {profile}")
            return memory
    match = _PROFILE_GB.search(profile)
    return int(match.group(1)) * 1024 if match else 0


@dataclass(frozen=True, slots=True)
class _Shape:
    """What a node's GPUs look like once labels and resources are reconciled."""

    model: str
    memory_mib: int
    whole: int                    # GPUs outside MIG mode
    healthy_whole: int            # of which allocatable
    mig_parents: int              # GPUs in MIG mode
    mig: tuple[tuple[str, int, int], ...] = ()  # (profile, devices, memory MiB per device)
    strategy: str = "none"
    warnings: tuple[str, ...] = ()


def _shape(labels: Mapping[str, str], capacity: Mapping[str, Any], allocatable: Mapping[str, Any]) -> _Shape:
    """Counts from ``status.allocatable`` / ``capacity``; labels only add model, memory and names
    (case 022: ``gpu.count`` keeps counting partitioned GPUs; MIG label names may differ)."""
    product = labels.get(GPU_PRODUCT_LABEL, "")
    memory = _label_int(labels, GPU_MEMORY_LABEL) or 0
    count_label = _label_int(labels, GPU_COUNT_LABEL)
    cap = _int(capacity.get(GPU_RESOURCE, 0))
    alloc = _int(allocatable.get(GPU_RESOURCE, cap))
    strategy = labels.get(MIG_STRATEGY_LABEL, "none")
    model = product[: -len(_SHARED_SUFFIX)] if product.endswith(_SHARED_SUFFIX) else product
    single = _MIG_PRODUCT.match(model)
    warnings: list[str] = []
    if strategy == "single" and single:
        # nvidia.com/gpu counts MIG devices of one profile; gpu.memory is one device's memory.
        profile = single.group("profile")
        parent_model = single.group("parent")
        parents = count_label or gpus_for_mig_devices([(profile, cap)], parent_model)
        gb = _PRODUCT_GB.search(parent_model)
        parent_memory = int(gb.group(1)) * 1024 if gb else 0  # unknown: shares come from slices, not memory
        return _Shape(model=parent_model, memory_mib=parent_memory, whole=0, healthy_whole=0,
                      mig_parents=parents, mig=((profile, alloc, memory),), strategy="single")
    replicas = _label_int(labels, GPU_REPLICAS_LABEL) or 1
    if replicas > 1:  # time-slicing: each physical GPU is advertised `replicas` times
        physical = count_label if count_label is not None else math.ceil(cap / replicas)
        healthy = min(physical, math.ceil(alloc / replicas))
        return _Shape(model=model, memory_mib=memory, whole=physical, healthy_whole=healthy, mig_parents=0,
                      strategy=strategy)
    mig: list[tuple[str, int, int]] = []
    for key in sorted(allocatable):
        if key.startswith(MIG_RESOURCE_PREFIX):
            profile = key[len(MIG_RESOURCE_PREFIX):]
            devices = _int(allocatable[key])
            if devices > 0:
                mig.append((profile, devices, _profile_memory_mib(profile, devices, labels, warnings)))
    parents = 0
    if mig:
        if count_label is not None and count_label > cap:
            parents = count_label - cap
        else:
            parents = gpus_for_mig_devices([(p, n) for p, n, _ in mig], model)
        if count_label is not None and count_label != alloc:
            warnings.insert(0, f"{GPU_COUNT_LABEL.split('/', 1)[1]} label {count_label} != allocatable "
                               f"{GPU_RESOURCE} {alloc} (mixed MIG)")
    return _Shape(model=model, memory_mib=memory, whole=cap, healthy_whole=min(cap, alloc),
                  mig_parents=parents, mig=tuple(mig), strategy="mixed" if mig else strategy,
                  warnings=tuple(warnings))


def node_from_dict(node: Mapping[str, Any], *, foreign_gpus: int = 0,
                   foreign_mig: Mapping[str, int] | None = None,
                   our_uuids: frozenset[str] = frozenset()) -> Node:
    """Turn one Node object (API JSON) into a :class:`~jupyter_sched.model.Node`.

    Args:
        node: the Node as the API returns it (``metadata``, ``spec``, ``status``).
        foreign_gpus: whole GPUs held on this node by pods we did not create.
        foreign_mig: MIG devices held by such pods, by profile.
        our_uuids: GPU / MIG uuids our own pods hold here (never marked foreign).

    Returns:
        The node with synthesised GPUs (see module docstring): unhealthy when the node is not
        Ready or the device plugin withdrew them; held by a foreign owner (whole memory in
        ``foreign_memory_mib``) for ``foreign_gpus`` of them; foreign-held MIG devices omitted.
    """
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    status = node.get("status") or {}
    name = str(meta.get("name", ""))
    labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
    capacity = status.get("capacity") or {}
    allocatable = status.get("allocatable") or capacity
    ready, not_ready_why = _ready(node)
    shape = _shape(labels, capacity, allocatable)

    gpus: list[GPU] = []
    not_ready_hint = f"Node {name} is not Ready: check its kubelet; drain {name} if it does not come back."
    withdrawn_hint = (f"The NVIDIA device plugin withdrew this GPU (an Xid or a failed health check) and keeps it "
                      f"withdrawn until it restarts: check the GPU, then restart the device plugin pod on {name} to "
                      f"re-probe it, or drain {name}.")
    for index in range(shape.whole):
        health, reason, hint = Health.HEALTHY, "", ""
        if not ready:
            health, reason, hint = Health.UNHEALTHY, f"node {name} is not Ready ({not_ready_why})", not_ready_hint
        elif index >= shape.healthy_whole:
            health, reason, hint = Health.UNHEALTHY, (
                f"device plugin withdrew it (allocatable {shape.healthy_whole} of {shape.whole} {GPU_RESOURCE})"
            ), withdrawn_hint
        gpus.append(GPU(uuid=gpu_uuid(name, index), index=index, node=name, model=shape.model,
                        memory_mib=shape.memory_mib, health=health, health_reason=reason, health_hint=hint))
    gpus = _mark_foreign(gpus, foreign_gpus, our_uuids)

    foreign_left = dict(foreign_mig or {})
    parents: list[list[MigDevice]] = [[] for _ in range(shape.mig_parents)]
    for profile, devices, memory in shape.mig:
        for slot in range(devices):
            parent = slot % len(parents)
            parents[parent].append(MigDevice(uuid="", profile=profile, gpu_instance_id=0, memory_mib=memory))
    for offset, devices_of_parent in enumerate(parents):
        index = shape.whole + offset
        migs = tuple(replace(dev, uuid=mig_uuid(name, index, slot), gpu_instance_id=slot)
                     for slot, dev in enumerate(devices_of_parent))
        kept = []
        for dev in reversed(migs):  # foreign pods take the highest slots first, never ours
            if foreign_left.get(dev.profile, 0) > 0 and dev.uuid not in our_uuids:
                foreign_left[dev.profile] -= 1
                continue
            kept.append(dev)
        health, reason = ((Health.HEALTHY, "") if ready
                          else (Health.UNHEALTHY, f"node {name} is not Ready ({not_ready_why})"))
        gpus.append(GPU(uuid=gpu_uuid(name, index), index=index, node=name, model=shape.model,
                        memory_mib=shape.memory_mib, mig_enabled=True, mig_devices=tuple(reversed(kept)),
                        health=health, health_reason=reason))

    cpu = allocatable.get("cpu")
    host_memory = allocatable.get("memory")
    return Node(
        name=name,
        gpus=tuple(gpus),
        cpu_millis=int(parse_quantity(str(cpu)) * 1000) if cpu is not None else 0,
        memory_mib=int(parse_quantity(str(host_memory)) / (1024 * 1024)) if host_memory is not None else 0,
        labels=labels,
        taints=tuple(Taint(key=str(t.get("key", "")), value=str(t.get("value") or ""),
                           effect=str(t.get("effect", "NoSchedule"))) for t in spec.get("taints") or []),
        ready=ready,
        unschedulable=bool(spec.get("unschedulable", False)),
        mig_strategy=shape.strategy,
        warnings=tuple(f"node {name}: {w}" for w in shape.warnings),
    )


def _mark_foreign(gpus: list[GPU], count: int, our_uuids: frozenset[str]) -> list[GPU]:
    """Mark ``count`` GPUs (highest index first, never ours) as held by a foreign owner."""
    out = list(gpus)
    for pos in range(len(out) - 1, -1, -1):
        if count <= 0:
            break
        gpu = out[pos]
        if gpu.uuid in our_uuids:
            continue
        # The device plugin gives a whole device to one pod: all of its memory is held. At least
        # 1 MiB so the GPU reads as held even when GFD did not label the memory.
        out[pos] = replace(gpu, foreign_memory_mib=max(gpu.memory_mib, 1))
        count -= 1
    return out


@dataclass(frozen=True, slots=True)
class PodGpuUse:
    """GPUs one bound, non-terminated pod holds.

    Attributes:
        node: the node it is bound to.
        gpus: whole GPUs (``nvidia.com/gpu``), the pod's effective request.
        mig: MIG devices by profile.
        ours: created by jupyter_sched (label ``app.kubernetes.io/managed-by``).
        uuids: our allocation's uuids (annotation ``jupyter-sched/gpu-uuids``), ours only.
    """

    node: str
    gpus: int
    mig: Mapping[str, int] = field(default_factory=dict)
    ours: bool = False
    uuids: tuple[str, ...] = ()


def _container_requests(container: Mapping[str, Any]) -> dict[str, int]:
    resources = container.get("resources") or {}
    merged = dict(resources.get("requests") or {})
    merged.update(resources.get("limits") or {})  # extended resources: limits decide
    return {key: _int(value) for key, value in merged.items()
            if key == GPU_RESOURCE or key.startswith(MIG_RESOURCE_PREFIX)}


def pod_gpu_use(pod: Mapping[str, Any]) -> PodGpuUse | None:
    """GPUs a pod holds, or None when it holds none (not bound, finished, or no GPU request).

    The effective request follows the scheduler: the larger of the sum over containers and the
    largest init container, per resource.
    """
    spec = pod.get("spec") or {}
    node = spec.get("nodeName")
    phase = (pod.get("status") or {}).get("phase")
    if not node or phase in ("Succeeded", "Failed"):
        return None
    total: dict[str, int] = {}
    for container in spec.get("containers") or []:
        for key, value in _container_requests(container).items():
            total[key] = total.get(key, 0) + value
    for container in spec.get("initContainers") or []:
        for key, value in _container_requests(container).items():
            total[key] = max(total.get(key, 0), value)
    if not any(total.values()):
        return None
    meta = pod.get("metadata") or {}
    ours = (meta.get("labels") or {}).get(LABEL_MANAGED_BY) == MANAGED_BY
    uuids_text = (meta.get("annotations") or {}).get(ANNOTATION_GPU_UUIDS, "") if ours else ""
    return PodGpuUse(
        node=str(node), gpus=total.get(GPU_RESOURCE, 0),
        mig={key[len(MIG_RESOURCE_PREFIX):]: v for key, v in total.items()
             if key.startswith(MIG_RESOURCE_PREFIX) and v > 0},
        ours=ours, uuids=tuple(u for u in uuids_text.split(",") if u))


def inventory_from_objects(nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]] = (), *,
                           count_foreign_pods: bool = True) -> Inventory:
    """Build the inventory from Node and Pod objects (API JSON); nodes sorted by name.

    Nodes without any GPU resource are kept (CPU-only work can go there).

    Args:
        nodes: Node objects.
        pods: Pod objects of all namespaces (to count GPUs held by pods we did not create).
        count_foreign_pods: when False, foreign pods are ignored.
    """
    foreign: dict[str, int] = {}
    foreign_mig: dict[str, dict[str, int]] = {}
    ours: dict[str, set[str]] = {}
    for pod in pods:
        use = pod_gpu_use(pod)
        if use is None:
            continue
        if use.ours:
            ours.setdefault(use.node, set()).update(use.uuids)
        elif count_foreign_pods:
            foreign[use.node] = foreign.get(use.node, 0) + use.gpus
            by_profile = foreign_mig.setdefault(use.node, {})
            for profile, n in use.mig.items():
                by_profile[profile] = by_profile.get(profile, 0) + n
    built = [node_from_dict(n, foreign_gpus=foreign.get(_name(n), 0), foreign_mig=foreign_mig.get(_name(n)),
                            our_uuids=frozenset(ours.get(_name(n), ()))) for n in nodes]
    return Inventory(nodes=tuple(sorted(built, key=lambda n: n.name)), source="kubernetes")


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


class KubernetesInventory:
    """The cluster's GPU inventory, kept current by watching Nodes and Pods.

    Args:
        core_api: a ``kubernetes.client.CoreV1Api`` (its ``list_node`` and
            ``list_pod_for_all_namespaces`` are used; RBAC: get/list/watch nodes and pods
            cluster-wide, see ``server/rbac.yaml``).
        count_foreign_pods: count GPUs held by pods we did not create as used (needs the pod watch).
        on_change: called with the new inventory after every change.
        watch_timeout_s: server-side timeout of each watch request (seconds).

    Usage::

        inv = KubernetesInventory(CoreV1Api(api_client)); inv.start()
        inv.current()   # -> Inventory(source="kubernetes"), an InventorySource
        inv.stop()

    A node that turns NotReady keeps its entry (``ready=False``) and its GPUs turn unhealthy with
    the kubelet's reason, so they leave the placeable capacity but stay visible to admins.
    """

    def __init__(self, core_api: Any, *, count_foreign_pods: bool = True,
                 on_change: Callable[[Inventory], None] | None = None, watch_timeout_s: int = 240) -> None:
        self._count_foreign = count_foreign_pods
        self.on_change = on_change
        """Called with the new inventory after every change, from a watch thread (the service's
        :class:`~jupyter_sched.services.inventory_watch.InventoryWatch`: work left on nodes that went away)."""
        self._lock = threading.Lock()
        self._cached: Inventory | None = None
        self._warned: dict[str, tuple[str, ...]] = {}
        self._started = False
        self.nodes = Reflector(core_api.list_node, name="nodes", on_change=self._changed,
                               watch_timeout_s=watch_timeout_s)
        # Only pods bound to a node and not finished can hold devices (kube-scheduler's own selector).
        self.pods: Reflector | None = (
            Reflector(core_api.list_pod_for_all_namespaces, name="pods", on_change=self._changed,
                      watch_timeout_s=watch_timeout_s,
                      list_kwargs={"field_selector": "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"})
            if count_foreign_pods else None)

    def start(self) -> None:
        """List nodes (and pods), then keep watching in background threads.

        Raises:
            ExecutorError: the API server cannot be listed.
        """
        self.nodes.start()
        if self.pods is not None:
            self.pods.start()
        self._started = True
        self._changed()

    def stop(self) -> None:
        """Stop both watches."""
        self.nodes.stop()
        if self.pods is not None:
            self.pods.stop()

    def current(self) -> Inventory:
        """The current inventory (:class:`~jupyter_sched.inventory.base.InventorySource`); never blocks
        on the API server: it reads the watch caches."""
        return self.inventory()

    def inventory(self) -> Inventory:
        """The current inventory (rebuilt after each change, cached between changes). A node's
        warnings (label/allocatable disagreements, case 022) are logged once per node and change."""
        with self._lock:
            if self._cached is None:
                pods = self.pods.items() if self.pods is not None else []
                self._cached = inventory_from_objects(self.nodes.items(), pods,
                                                      count_foreign_pods=self._count_foreign)
                for node in self._cached.nodes:
                    if node.warnings and self._warned.get(node.name) != node.warnings:
                        for warning in node.warnings:
                            log.warning("kubernetes inventory: %s", warning)
                    self._warned[node.name] = node.warnings
            return self._cached

    def _changed(self) -> None:
        with self._lock:
            self._cached = None
        if self.on_change is not None and self._started:
            self.on_change(self.inventory())
