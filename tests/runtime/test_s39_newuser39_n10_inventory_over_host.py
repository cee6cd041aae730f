"""newuser39 n10: a personal lab with an inventory file declaring node g1 with 16 cores / 64 GiB, where local jobs
run on a 2-core / 23.5 GiB host: ``--memory 64GiB`` was refused against this host and ``--cpu 16`` placed by the
inventory, and nothing at start said the inventory declares more than the host its jobs run on. Now a start-up
WARNING names the nodes and this host's size. Real inventory file (StaticInventory) read by the service's build,
real SQLite store, the local executor."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from jupyter_sched.engine import SchedulerService
from jupyter_sched.services.host_size import host_memory_mib
from tests.runtime.test_engine import extension_settings


def _start(tmp_path: Path, sqlite_db: str, cpus: int, memory_gib: int, caplog: pytest.LogCaptureFixture) -> str:
    nodes = tmp_path / f"nodes-{cpus}.yaml"
    nodes.write_text(f"nodes:\n  - {{name: g1, gpu_count: 2, gpu_model: A100, gpu_memory: 80GiB, cpus: {cpus}, "
                     f"memory: {memory_gib}GiB}}\n")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        SchedulerService.from_config(extension_settings(tmp_path, sqlite_db, inventory_source="static",
                                                        inventory_file=str(nodes)))
    return "\n".join(r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING)


def test_newuser39_n10_an_inventory_bigger_than_this_host_is_said_at_start(
        sqlite_db: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    cores, memory = os.cpu_count() or 1, host_memory_mib()
    said = _start(tmp_path, sqlite_db, cores * 8, memory // 1024 * 4 + 4, caplog)
    assert "the inventory declares more host CPU or memory than this host has" in said, said
    assert f"g1 (cpus {cores * 8}, memory {memory // 1024 * 4 + 4} GiB)" in said, said
    assert "declare this host's own cpus and memory in the inventory file" in said, said
    within = _start(tmp_path, sqlite_db, 1, 1, caplog)
    assert "more host CPU or memory than this host has" not in within, within
