"""hubadmin26 B9: a node added to or removed from the inventory (or GPUs added to one) was recorded nowhere:
no log line for new GPUs, no audit row for either ("when did node-c join, node-b leave?" had no answer).
Now each change is one ``inventory_changed`` audit row naming the node, its GPUs by model and the work still
on removed GPUs, which the service log shows as one INFO line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jupyter_sched.model import Allocation, JobState
from jupyter_sched.model.inventory_changes import inventory_changes
from jupyter_sched.services import build_services
from jupyter_sched.services.audit import AUDIT_ACTIONS
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job


def _node(name: str, model: str, n: int) -> dict[str, object]:
    return {"name": name, "gpus": [{"uuid": f"GPU-{name}-{i}", "index": i, "model": model, "memory_mib": 81920}
                                   for i in range(n)]}


def test_s26_hubadmin26_b9_inventory_changes_are_audited_and_logged_once_each(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    assert "inventory_changed" in AUDIT_ACTIONS
    path = tmp_path / "inventory.json"
    path.write_text(json.dumps({"nodes": [_node("node-a", "A100-80GB", 2), _node("node-b", "L40S", 2)]}))
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "static", "inventory_file": str(path), "telemetry_source": "off"}
    service = build_services(settings)
    try:
        service.store.insert_job(JobRecord(job=make_job(
            "j-on-b", user="ha26b", gpus=1, state=JobState.RUNNING, allocation=Allocation("node-b", ("GPU-node-b-0",))),
            executor="local"))
        service.ctx.inventory()
        assert service.store.list_events(action="inventory_changed") == [], "the first inventory is no change"
        path.write_text(json.dumps({"nodes": [_node("node-a", "A100-80GB", 3), _node("node-c", "H100-80GB", 4)]}))
        with caplog.at_level("INFO", logger="jupyter_sched"):
            service.ctx.inventory_source.invalidate()
            service.ctx.inventory()
            service.ctx.inventory_source.invalidate()
            service.ctx.inventory()  # the same again: nothing more
        rows = service.store.list_events(action="inventory_changed")
    finally:
        service.store.close()
    said = sorted(row.message for row in rows)
    assert said == ["inventory: node node-a: 1 GPU added (1 x A100-80GB; 3 in all)",
                    "inventory: node node-b removed (2 x L40S; 1 job still on GPU-node-b-0: j-on-b)",
                    "inventory: node node-c added (4 x H100-80GB)"], said
    by_node = {row.details["node"]: row.details for row in rows}
    assert by_node["node-c"] == {"node": "node-c", "change": "node_added", "models": {"H100-80GB": 4},
                                 "gpus": [f"GPU-node-c-{i}" for i in range(4)], "jobs": []}
    assert by_node["node-b"]["jobs"] == ["j-on-b"] and all(row.actor == "scheduler" for row in rows)
    lines = [r.getMessage() for r in caplog.records if "inventory_changed" in r.getMessage()]
    assert len(lines) == 3 and all(r.levelname == "INFO" for r in caplog.records if "inventory_changed" in r.getMessage())
    assert any("node node-c added (4 x H100-80GB)" in line for line in lines), lines


def test_s26_hubadmin26_b9_gpus_removed_from_a_node_name_the_work_left_on_them() -> None:
    from jupyter_sched.inventory.simulated import SimulatedInventory

    four, two = SimulatedInventory(4).current(), SimulatedInventory(2).current()
    node = four.nodes[0].name
    job = make_job("j-x", user="u", gpus=1, state=JobState.RUNNING, allocation=Allocation(node, (f"GPU-sim-{node}-3",)))
    (change,) = inventory_changes(four, two, [job])
    assert change.text == (f"node {node}: 2 GPUs removed ({change.text.split('(')[1].split(';')[0]}; 2 left; "
                           f"1 job still on GPU-sim-{node}-3: j-x)"), change.text
    assert change.kind == "gpus_removed" and change.jobs == ("j-x",)
    assert inventory_changes(four, four, [job]) == []
