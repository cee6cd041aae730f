"""A static inventory described in a YAML file (nodes and GPUs an admin writes by hand).

Format::

    nodes:
      - name: gpu-node-1
        labels: {zone: a}            # optional
        gpus:
          - {uuid: GPU-1111, model: A100-80GB, memory: 80GiB}   # index defaults to position
          - {uuid: GPU-2222, model: A100-80GB, memory_mib: 81920, nvlink_peers: [0]}
        # or, for identical GPUs:
        gpu_count: 8
        gpu_model: H100-80GB
        gpu_memory: 80GiB
        nvlink_pairs: [[0, 1], [2, 3]]
        cpus: 96                     # optional: CPU cores (or cpu_millis: 96000), for CPU requests
        memory: 768GiB               # optional: host memory (or memory_mib), for memory requests

Without ``cpus`` / ``memory`` a node's CPU and host memory are not tracked (never binding, and
``placement_policy = "fgd-planned"`` or ``"fgd-balanced"`` then has no CPU to balance). On a node with GPUs they
are split among its GPUs: a job reserves at most its GPUs' part, a job without GPUs none
(:mod:`jupyter_sched.placement.host_share`). Unknown keys are refused.
Errors name the field (``nodes[0].gpus[1].memory``) and how to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import ValidationError
from ..model import GPU, Health, Inventory, MigDevice, Node, parse_memory_mib
from ..model.resources import MAX_CPU_MILLIS, MAX_MEMORY_MIB

__all__ = ["StaticInventory", "inventory_from_mapping"]


MAX_NODE_GPUS = 4096  # more GPUs than any one machine has: a bound a reader can take in


def _require(mapping: Mapping[str, Any], key: str, where: str, hint: str) -> Any:
    if key not in mapping or mapping[key] in (None, ""):
        raise ValidationError(f"{where}.{key} is required", field=f"{where}.{key}", hint=hint)
    return mapping[key]


def _int(value: Any, where: str, hint: str, maximum: int = 1 << 40, unit: str = "") -> int:
    """``value`` as a whole number from 0 to ``maximum`` (of ``unit``, e.g. "GPUs", when given).

    Raises:
        ValidationError: not one (field ``where``); with a unit the message says "a whole number of
            GPUs from 0 to 4,096", not a bare byte-sized bound (hub admin 22, H12).
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        what = f"a whole number of {unit} from 0 to {maximum:,}" if unit else f"a whole number from 0 to {maximum:,}"
        raise ValidationError(f"{where} must be {what} (got {value!r})", field=where, hint=hint)
    return value


def _gpu(raw: Any, where: str, node: str, position: int) -> GPU:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must be a mapping", field=where, hint="e.g. {uuid: GPU-1111, model: A100, memory: 80GiB}")
    uuid = str(_require(raw, "uuid", where, "give the GPU's UUID as nvidia-smi -L prints it"))
    model = str(_require(raw, "model", where, "e.g. model: A100-80GB"))
    if "memory_mib" in raw:
        memory = _int(raw["memory_mib"], f"{where}.memory_mib", "memory in MiB, e.g. 81920")
    else:
        memory = parse_memory_mib(_require(raw, "memory", where, "e.g. memory: 80GiB"), field=f"{where}.memory")
    peers = raw.get("nvlink_peers", [])
    if not isinstance(peers, list):
        raise ValidationError(f"{where}.nvlink_peers must be a list of GPU indices", field=f"{where}.nvlink_peers",
                              hint="e.g. nvlink_peers: [1]")
    migs = []
    for k, mig in enumerate(raw.get("mig_devices", []) or []):
        w = f"{where}.mig_devices[{k}]"
        if not isinstance(mig, Mapping):
            raise ValidationError(f"{w} must be a mapping", field=w, hint="{uuid: MIG-..., profile: 3g.40gb, gpu_instance_id: 1}")
        migs.append(MigDevice(uuid=str(_require(mig, "uuid", w, "the MIG-... UUID")),
                              profile=str(_require(mig, "profile", w, "e.g. 3g.40gb")),
                              gpu_instance_id=_int(mig.get("gpu_instance_id", k), f"{w}.gpu_instance_id", "GI ID"),
                              memory_mib=parse_memory_mib(mig.get("memory", 0), field=f"{w}.memory")))
    healthy = raw.get("healthy", True)
    return GPU(uuid=uuid, index=_int(raw.get("index", position), f"{where}.index", "the NVML index"), node=node,
               model=model, memory_mib=memory, pci_bus_id=str(raw.get("pci_bus_id", "")),
               mig_enabled=bool(migs), mig_devices=tuple(migs),
               nvlink_peers=tuple(_int(p, f"{where}.nvlink_peers", "GPU indices") for p in peers),
               health=Health.HEALTHY if healthy else Health.UNHEALTHY,
               health_reason="" if healthy else str(raw.get("health_reason", "marked unhealthy in the inventory file")))


def _node(raw: Any, where: str) -> Node:
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{where} must be a mapping", field=where, hint="e.g. {name: node-1, gpus: [...]}")
    unknown = sorted(str(k) for k in raw if k not in _NODE_KEYS)  # before "required": a typo is the likelier cause
    if unknown:
        raise ValidationError(f"{where}: unknown key {unknown[0]!r}", field=f"{where}.{unknown[0]}",
                              hint="node keys: " + ", ".join(sorted(_NODE_KEYS)))
    name = str(_require(raw, "name", where, "every node needs a unique name"))
    if "gpus" in raw:
        if not isinstance(raw["gpus"], list):
            raise ValidationError(f"{where}.gpus must be a list", field=f"{where}.gpus", hint="a list of GPU mappings")
        gpus = [_gpu(g, f"{where}.gpus[{i}]", name, i) for i, g in enumerate(raw["gpus"])]
    else:
        count = _int(_require(raw, "gpu_count", where, "give either gpus: [...] or gpu_count with gpu_model"),
                     f"{where}.gpu_count", "write the node's GPU count as digits, e.g. gpu_count: 8",
                     maximum=MAX_NODE_GPUS, unit="GPUs")
        model = str(_require(raw, "gpu_model", where, "e.g. gpu_model: H100-80GB"))
        memory = parse_memory_mib(_require(raw, "gpu_memory", where, "e.g. gpu_memory: 80GiB"), field=f"{where}.gpu_memory")
        peers: dict[int, set[int]] = {i: set() for i in range(count)}
        for k, pair in enumerate(raw.get("nvlink_pairs", []) or []):
            if not (isinstance(pair, list) and len(pair) == 2 and all(p in peers for p in pair) and pair[0] != pair[1]):
                raise ValidationError(f"{where}.nvlink_pairs[{k}] must be two distinct indices below {count}",
                                      field=f"{where}.nvlink_pairs[{k}]", hint="e.g. [0, 1]")
            peers[pair[0]].add(pair[1])
            peers[pair[1]].add(pair[0])
        gpus = [GPU(uuid=f"GPU-static-{name}-{i}", index=i, node=name, model=model, memory_mib=memory,
                    nvlink_peers=tuple(sorted(peers[i]))) for i in range(count)]
    indices = [g.index for g in gpus]
    if len(set(indices)) != len(indices):
        raise ValidationError(f"{where}: duplicate GPU index", field=f"{where}.gpus", hint="each GPU needs its own index")
    labels = raw.get("labels", {}) or {}
    if not isinstance(labels, Mapping):
        raise ValidationError(f"{where}.labels must be a mapping", field=f"{where}.labels", hint="e.g. {zone: a}")
    return Node(name=name, gpus=tuple(sorted(gpus, key=lambda g: g.index)),
                labels={str(k): str(v) for k, v in labels.items()},
                cpu_millis=_cpu_millis(raw, where), memory_mib=_host_memory_mib(raw, where))


_MAX_CORES = MAX_CPU_MILLIS // 1000
_NODE_KEYS = frozenset({"name", "labels", "gpus", "gpu_count", "gpu_model", "gpu_memory", "nvlink_pairs",
                        "cpus", "cpu_millis", "memory", "memory_mib"})


def _cpu_millis(raw: Mapping[str, Any], where: str) -> int:
    """Millicores from ``cpus`` (cores) or ``cpu_millis``; 0 = not tracked."""
    if "cpu_millis" in raw:
        return _int(raw["cpu_millis"], f"{where}.cpu_millis", "millicores, e.g. cpu_millis: 96000",
                    maximum=MAX_CPU_MILLIS)
    cpus = raw.get("cpus")
    if cpus is None:
        return 0
    if isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or not 0 <= cpus <= _MAX_CORES:
        raise ValidationError(f"{where}.cpus must be a number of cores from 0 to {_MAX_CORES:,} (got {cpus!r})",
                              field=f"{where}.cpus", hint="e.g. cpus: 96 (0 or no key: CPU not tracked)")
    return round(cpus * 1000)


def _host_memory_mib(raw: Mapping[str, Any], where: str) -> int:
    """Host memory in MiB from ``memory`` (e.g. 768GiB) or ``memory_mib``; 0 = not tracked."""
    if "memory_mib" in raw:
        return _int(raw["memory_mib"], f"{where}.memory_mib", "MiB, e.g. memory_mib: 786432", maximum=MAX_MEMORY_MIB)
    if raw.get("memory") is None:
        return 0
    mib = parse_memory_mib(raw["memory"], field=f"{where}.memory")
    if mib > MAX_MEMORY_MIB:
        raise ValidationError(f"{where}.memory must be at most 1 PiB (got {raw['memory']!r})", field=f"{where}.memory",
                              hint="e.g. memory: 768GiB")
    return mib


def inventory_from_mapping(data: Any) -> Inventory:
    """Validate a parsed inventory document and build the :class:`Inventory` (``source="static"``).

    Raises:
        ValidationError: naming the bad field (e.g. ``nodes[0].gpus[1].memory``) and the fix;
            also for duplicate node names or GPU UUIDs.
    """
    if not isinstance(data, Mapping) or not isinstance(data.get("nodes"), list):
        raise ValidationError("inventory file must have a top-level 'nodes' list", field="nodes",
                              hint="start the file with 'nodes:' followed by a list of nodes")
    nodes = [_node(n, f"nodes[{i}]") for i, n in enumerate(data["nodes"])]
    names = [n.name for n in nodes]
    if len(set(names)) != len(names):
        raise ValidationError("inventory file: duplicate node name", field="nodes", hint="node names must be unique")
    uuids = [g.uuid for n in nodes for g in n.gpus]
    dup = sorted({u for u in uuids if uuids.count(u) > 1})
    if dup:
        raise ValidationError(f"inventory file: GPU uuid {dup[0]} appears twice", field="nodes",
                              hint="every GPU needs its own UUID")
    return Inventory(nodes=tuple(nodes), source="static")


class StaticInventory:
    """Inventory source reading a YAML file on every :meth:`current` call (edits apply live).

    ``setting``: what a run-time read failure is said against (``c.SchedApp.inventory_file``).

    Raises (from :meth:`current`):
        ValidationError: unreadable file, invalid YAML or invalid content (field + fix).
    """

    setting = "c.SchedApp.inventory_file"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def current(self) -> Inventory:
        """Read, validate and return the inventory."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ValidationError(f"cannot read inventory file {self.path}: {exc.strerror}", field="inventory_file",
                                  hint="check c.SchedApp.inventory_file") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValidationError(f"inventory file {self.path} is not valid YAML: {exc}", field="inventory_file",
                                  hint="fix the YAML syntax at the position shown") from None
        try:
            return inventory_from_mapping(data)
        except ValidationError as exc:  # say which file: the field (nodes[1].cpus) is inside it
            raise ValidationError(f"inventory file {self.path}: {exc.message}", field=exc.field,
                                  hint=exc.hint) from None
