"""red39 R9: worker groups slipped past the host_share check at submit. On an inventory file node ``vm`` (8 GPUs,
16 CPUs: 2 CPUs per GPU), the flat ``{"gpus": 1, "cpu": 16}`` was refused, but ``{"groups": [{"name": "a", "gpus": 1,
"cpu": 16}]}`` was accepted and pended for ever ("no node with 1 free GPU has 16000 millicores CPU free"), and a gang
with a 0-GPU worker asking for CPU on GPU nodes (which it may never reserve) pended saying "only 2 of its 2 workers
fit now". Now each group's worker is held to its GPUs' part at submit, the refusal naming ``groups[i].cpu``. Real
inventory file (StaticInventory), real SQLite store, real core, the local executor running ``true``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

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


@pytest.mark.parametrize(("groups", "field", "words"), [
    ([{"name": "a", "gpus": 1, "cpu": 16}], "groups[0].cpu", "more than its 1 GPU's part of any GPU node"),
    ([{"name": "a", "gpus": 0, "cpu": 16}, {"name": "b", "gpus": 1}], "groups[0].cpu",
     "a job without GPUs reserves no CPU or host memory on a GPU node"),
    ([{"name": "a", "gpus": 1}, {"name": "b", "gpus": 2, "cpu": 5}], "groups[1].cpu",
     "more than its 2 GPUs' part of any GPU node"),
])
def test_red39_r9_a_group_over_its_gpus_part_is_refused_at_submit(sqlite_db: str, tmp_path: Path,
                                                                  groups: list[dict[str, Any]], field: str,
                                                                  words: str) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES)
    svc = SchedulerService(store=Store(sqlite_db), inventory=StaticInventory(tmp_path / "nodes.yaml"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0),
                           cycle_interval_s=0.0, stop_grace_s=5.0)
    with pytest.raises(UnschedulableError) as refused:
        svc.submit({"name": "grp", "command": ["true"], "groups": groups}, user="r39c")
    assert refused.value.field == field, refused.value
    assert words in str(refused.value), refused.value
    name = groups[int(field[7])]["name"]
    assert f"group '{name}'" in str(refused.value), refused.value
    assert svc.list_jobs(user=None) == [], "the refused submit stored nothing"
    # a gang whose groups ask within their part is taken and starts (and within this host's cores, where local
    # jobs run: session 40, newuser39 n10)
    cores = os.cpu_count() or 1
    job = svc.submit({"name": "ok", "command": ["true"],
                      "groups": [{"name": "a", "gpus": 1, "cpu": min(2, cores)},
                                 {"name": "b", "gpus": 2, "cpu": min(4, cores)}]},
                     user="r39c")
    svc.tick()
    assert svc.get_job(job["id"], user="r39c")["state"] in ("starting", "running", "succeeded")
