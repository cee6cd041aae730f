"""Static YAML inventory (validation names field and fix) and the simulated inventory."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.inventory import InventorySource, SimulatedInventory, StaticInventory, default_inventory_source
from jupyter_sched.model import Health
from jupyter_sched.model.codec import inventory_to_dict

GOOD = """\
nodes:
  - name: gpu-node-1
    labels: {zone: a}
    gpus:
      - {uuid: GPU-1111, model: A100-80GB, memory: 80GiB, nvlink_peers: [1], pci_bus_id: "00000000:17:00.0"}
      - {uuid: GPU-2222, model: A100-80GB, memory_mib: 81920, nvlink_peers: [0]}
      - uuid: GPU-3333
        model: A100-80GB
        memory: 80GiB
        healthy: false
        health_reason: "Xid 79: GPU fell off the bus"
        mig_devices:
          - {uuid: MIG-aaaa, profile: 3g.40gb, gpu_instance_id: 1, memory: 40GiB}
  - name: gpu-node-2
    gpu_count: 4
    gpu_model: H100-80GB
    gpu_memory: 80GiB
    nvlink_pairs: [[0, 2], [1, 3]]
    cpus: 96
    memory: 768GiB
"""


def write(tmp_path: Path, text: str) -> StaticInventory:
    path = tmp_path / "inventory.yaml"
    path.write_text(text)
    return StaticInventory(path)


def test_static_inventory_reads_nodes_and_gpus(tmp_path: Path) -> None:
    source = write(tmp_path, GOOD)
    assert isinstance(source, InventorySource)
    inventory = source.current()
    assert inventory.source == "static" and not inventory.simulated
    node1, node2 = inventory.nodes
    assert node1.labels == {"zone": "a"}
    assert [(g.uuid, g.index, g.memory_mib, g.nvlink_peers) for g in node1.gpus] == [
        ("GPU-1111", 0, 81920, (1,)), ("GPU-2222", 1, 81920, (0,)), ("GPU-3333", 2, 81920, ())]
    assert node1.gpus[2].health is Health.UNHEALTHY and node1.gpus[2].mig_devices[0].memory_mib == 40960
    assert [g.nvlink_peers for g in node2.gpus] == [(2,), (3,), (0,), (1,)]
    assert (node1.cpu_millis, node1.memory_mib) == (0, 0)  # not tracked
    assert (node2.cpu_millis, node2.memory_mib) == (96_000, 786_432)
    assert inventory_to_dict(inventory)["gpus"][0]["pci_bus_id"] == "00000000:17:00.0"


@pytest.mark.parametrize("text,field", [
    ("gpus: []\n", "nodes"),
    ("nodes:\n  - gpus: []\n", "nodes[0].name"),
    ("nodes:\n  - name: n\n    gpus:\n      - {model: A100, memory: 80GiB}\n", "nodes[0].gpus[0].uuid"),
    ("nodes:\n  - name: n\n    gpus:\n      - {uuid: G, model: A100, memory: lots}\n", "nodes[0].gpus[0].memory"),
    ("nodes:\n  - name: n\n    gpu_count: 2\n    gpu_model: X\n    gpu_memory: 1GiB\n    nvlink_pairs: [[0, 5]]\n",
     "nodes[0].nvlink_pairs[0]"),
    ("nodes:\n  - name: n\n    gpu_count: -1\n    gpu_model: X\n    gpu_memory: 1GiB\n", "nodes[0].gpu_count"),
    ("nodes:\n  - {name: n, gpus: [{uuid: G, model: X, memory: 1GiB}]}\n  - {name: m, gpus: [{uuid: G, model: X, memory: 1GiB}]}\n",
     "nodes"),
    ("nodes: [\n", "inventory_file"),
    ("nodes:\n  - name: n\n    gpu_count: 1\n    gpu_model: X\n    gpu_memory: 1GiB\n    cpu: 64\n", "nodes[0].cpu"),
    ("nodes:\n  - name: n\n    gpu_count: 1\n    gpu_model: X\n    gpu_memory: 1GiB\n    cpus: many\n",
     "nodes[0].cpus"),
    ("nodes:\n  - name: n\n    gpu_count: 1\n    gpu_model: X\n    gpu_memory: 1GiB\n    memory: lots\n",
     "nodes[0].memory"),
    ("nodes:\n  - name: n\n    gpu_count: 1\n    gpu_model: X\n    gpu_memory: 1GiB\n"
     "    cpu_millis: 100000000000000000000\n", "nodes[0].cpu_millis"),
    ("nodes:\n  - name: n\n    gpu_cout: 1\n    gpu_model: X\n    gpu_memory: 1GiB\n", "nodes[0].gpu_cout"),
], ids=["no nodes list", "node without name", "gpu without uuid", "unparseable memory", "pair outside the node",
        "negative count", "duplicate uuid", "invalid YAML", "a misspelt node key", "cores that are not a number",
        "unparseable host memory", "millicores beyond 64 bits", "a misspelt required key"])
def test_static_inventory_errors_name_the_field_and_the_fix(tmp_path: Path, text: str, field: str) -> None:
    with pytest.raises(ValidationError) as info:
        write(tmp_path, text).current()
    assert info.value.field == field and info.value.hint
    assert str(tmp_path / "inventory.yaml") in info.value.message  # which file


def test_missing_inventory_file_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="cannot read inventory file") as info:
        StaticInventory(tmp_path / "nope.yaml").current()
    assert info.value.field == "inventory_file"


def test_default_source_prefers_the_inventory_file(tmp_path: Path) -> None:
    (tmp_path / "inv.yaml").write_text(GOOD)
    source, status = default_inventory_source(inventory_file=tmp_path / "inv.yaml")
    assert isinstance(source, StaticInventory) and status is None


def test_simulated_inventory_defaults() -> None:
    inventory = SimulatedInventory().current()
    (node,) = inventory.nodes
    assert node.name == socket.gethostname() and inventory.source == "simulated" and inventory.simulated
    assert [g.uuid for g in node.gpus] == [f"GPU-sim-{node.name}-{i}" for i in range(4)]
    assert all(g.simulated and g.memory_mib == 81920 for g in node.gpus)
    assert all(g["simulated"] for g in inventory_to_dict(inventory)["gpus"])


def test_simulated_inventory_is_configurable_and_stable() -> None:
    a = SimulatedInventory(8, model="Sim-H100", memory_mib=40960, nvlink_pairs=[(0, 2), (1, 3)], node="ws").current()
    b = SimulatedInventory(8, model="Sim-H100", memory_mib=40960, nvlink_pairs=[(0, 2), (1, 3)], node="ws").current()
    assert a == b
    gpus = list(a.gpus())
    assert [g.nvlink_peers for g in gpus[:4]] == [(2,), (3,), (0,), (1,)] and gpus[0].model == "Sim-H100"
    assert SimulatedInventory(0).current().nodes == ()


@pytest.mark.parametrize("kwargs,field", [
    (dict(count=-1), "simulated_gpus"),
    (dict(count=2, memory_mib=0), "simulated_memory_mib"),
    (dict(count=2, nvlink_pairs=[(0, 2)]), "simulated_nvlink_pairs"),
], ids=["negative count", "no memory", "pair outside"])
def test_simulated_inventory_validation(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValidationError) as info:
        SimulatedInventory(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
