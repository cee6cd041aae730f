"""newuser39 n8: refusals of a GPU node's host part spoke millicores and MiB to a user who typed cores and GiB
("asks for 5000 millicores CPU … ask for at most 4000 millicores CPU", which a newcomer copies as ``--cpu 4000``),
and the CLI's field-to-flag rewrite made "16384 MiB host --memory". Now cores and GiB, and the hint names the value
to type (``cpu 4``, ``memory 16GiB``: ``--cpu 4`` on the CLI). Real inventory file (StaticInventory), real SQLite
store, real core, the local executor."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import UnschedulableError
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.static import StaticInventory
from jupyter_sched.store import Store
from jupyter_sched.wording.flags import CLI, in_surface_terms
from tests.runtime.builders import T0

NODES = """nodes:
  - {name: g1, gpu_count: 4, gpu_model: A100-80GB, gpu_memory: 80GiB, cpus: 16, memory: 64GiB}
  - {name: c1, gpus: [], cpus: 8, memory: 32GiB}
"""


@pytest.mark.parametrize(("body", "field", "said", "hint"), [
    ({"gpus": 1, "cpu": 5}, "cpu", "asks for 5 CPU cores, more than its 1 GPU's part of any GPU node it fits on: "
     "at most 4 CPU cores", "ask for at most --cpu 4 per worker"),
    ({"gpus": 1, "memory": "17GiB"}, "memory", "asks for 17 GiB host memory, more than its 1 GPU's part of any GPU "
     "node it fits on: at most 16 GiB host memory", "ask for at most --memory 16GiB per worker"),
])
def test_newuser39_n8_host_part_refusals_speak_cores_and_gib_with_the_value_to_type(
        sqlite_db: str, tmp_path: Path, body: dict[str, object], field: str, said: str, hint: str) -> None:
    (tmp_path / "nodes.yaml").write_text(NODES)
    svc = SchedulerService(store=Store(sqlite_db), inventory=StaticInventory(tmp_path / "nodes.yaml"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0),
                           cycle_interval_s=0.0, stop_grace_s=5.0)
    with pytest.raises(UnschedulableError) as refused:
        svc.submit({"name": "n8", "command": ["true"], **body}, user="ann")
    err = refused.value
    assert err.field == field and said in err.message, err
    assert "millicores" not in str(err) and "MiB" not in str(err), err
    _, cli_hint = in_surface_terms(err.message, err.hint, field, CLI)
    assert cli_hint is not None and cli_hint.startswith(hint), cli_hint
    assert "host --memory" not in cli_hint, cli_hint


def test_newuser39_n9_a_cpu_only_ask_names_the_largest_node_without_gpus(sqlite_db: str, tmp_path: Path) -> None:
    """``--gpus 0 --cpu 9`` with c1 (no GPUs, 8 cores) was told "no node without GPUs has 9000 millicores CPU — ask
    for at least one GPU, or run it where the inventory has a node without GPUs": it has one. Now the largest such
    node and its size, the value to type, and GPUs only as many as a GPU node's part needs (3 of g1's 4: 12 cores)."""
    (tmp_path / "nodes.yaml").write_text(NODES)
    svc = SchedulerService(store=Store(sqlite_db), inventory=StaticInventory(tmp_path / "nodes.yaml"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(T0),
                           cycle_interval_s=0.0, stop_grace_s=5.0)
    with pytest.raises(UnschedulableError) as refused:
        svc.submit({"name": "n9", "command": ["true"], "gpus": 0, "cpu": 9}, user="ann")
    err = refused.value
    assert err.field == "cpu", err
    assert "the largest node without GPUs (c1) has 8 CPU cores" in err.message, err.message
    assert "where the inventory has a node without GPUs" not in str(err), err
    assert err.hint is not None and err.hint.startswith("ask for at most cpu 8, or ask for at least 3 GPUs;"), err.hint
