"""red38 R4 through the service: on an inventory file with ``cpus: 16`` on an 8-GPU node, r38c's 0-GPU job asking for
all 16 CPUs ran and kept every other team's GPU work off the node. Now the submit is refused naming the field and the
most it may ask (a GPU node's CPUs and host memory are split among its GPUs: placement/host_share.py), and r38b's
1-GPU job asking for its part starts. Real inventory file (StaticInventory), real SQLite store, real core, the local
executor running ``true``."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import UnschedulableError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.static import StaticInventory
from jupyter_sched.store import Store
from tests.runtime.builders import T0

NODES = """nodes:
  - name: vm
    gpu_count: 8
    gpu_model: Simulated GPU 80GB
    gpu_memory: 80GiB
    cpus: 16
"""


def test_red38_r4_a_cpu_hold_on_a_gpu_node_is_refused_through_the_service(sqlite_db: str, tmp_path: Path) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES)
    svc = SchedulerService(store=Store(sqlite_db), inventory=StaticInventory(tmp_path / "nodes.yaml"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0),
                           cycle_interval_s=0.0, stop_grace_s=5.0)
    with pytest.raises(UnschedulableError) as hog:
        svc.submit({"name": "c-cpuhog", "command": ["true"], "gpus": 0, "cpu": 16}, user="r38c")
    assert hog.value.field == "cpu", hog.value  # as the body spells it
    assert "a job without GPUs reserves no CPU or host memory on a GPU node" in str(hog.value), hog.value
    with pytest.raises(UnschedulableError) as wide:
        svc.submit({"name": "c-gpu16", "command": ["true"], "gpus": 1, "cpu": 16}, user="r38c")
    assert wide.value.field == "cpu" and "at most 2 CPU cores" in str(wide.value), wide.value
    job = svc.submit({"name": "b-guar", "command": ["true"], "gpus": 1, "cpu": 2}, user="r38b")
    svc.tick()
    state = svc.get_job(job["id"], user="r38b")["state"]
    assert state in ("starting", "running", "succeeded"), state
    assert [j["name"] for j in svc.list_jobs(user=None)] == ["b-guar"], "the refused submits stored nothing"
