"""The wire shapes round-trip: what the store writes, it reads back unchanged."""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.model import (
    GPU,
    Allocation,
    Inventory,
    Job,
    JobState,
    Node,
    NvmlStatus,
    PendingReason,
    spec_from_request,
)
from jupyter_sched.model.codec import inventory_from_dict, inventory_to_dict, job_from_dict, job_to_dict


def test_job_round_trips_through_json_shape() -> None:
    spec = spec_from_request({"gpus": 2, "command": ["python", "t.py"], "env": {"A": "1"}}, user="alice")
    now = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    job = Job(id="j-1", spec=spec, state=JobState.RUNNING, submitted_at=now, started_at=now,
              allocation=Allocation(node="n1", gpu_uuids=("GPU-a", "GPU-b")),
              reason=PendingReason(code="WaitingForCapacity", message="m", details={"free": 1}, eta=now))
    data = job_to_dict(job)
    assert data["submitted_at"] == "2026-01-01T12:00:00Z"
    assert job_from_dict(data) == job


def test_inventory_round_trips_and_labels_simulated() -> None:
    inv = Inventory(nodes=(Node(name="n1", gpus=(GPU(uuid="GPU-sim-0", index=0, node="n1", model="Simulated GPU",
                                                   memory_mib=16384, simulated=True),)),),
                    source="simulated", nvml=NvmlStatus(available=False, error="NVML shared library not found (libnvidia-ml.so.1)"))
    data = inventory_to_dict(inv)
    assert data["simulated"] is True
    assert data["gpus"][0]["simulated"] is True
    assert data["nvml"]["available"] is False
    assert inventory_from_dict(data) == inv
