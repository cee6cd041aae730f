"""newuser25 N12: ``--memory 16`` is the job's hard memory limit where the local executor makes memory
cgroups (the job is OOM-killed above it), but the submit note said memory "is not reserved … the job
runs with whatever the machine has free"; a bare ``memory`` number got no MiB note (``mem_per_gpu``
did); and ``cpu 1000`` on a host of a few cores was not said to be more than the host has.

The server's answer carries the notes, so the CLI, the magics and REST say the same.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import UnschedulableError
from jupyter_sched.executors.limits import LocalLimits
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


def _service(tmp_path: Path, *, v2: bool) -> SchedulerService:
    """A service whose local executor has memory cgroups (a cgroup v2 mount at a scratch root) or none."""
    root = tmp_path / "cgroup"
    root.mkdir()
    if v2:
        (root / "cgroup.controllers").write_text("cpu memory pids\n")
    limits = LocalLimits(root=root)
    assert limits.caps_memory is v2
    ex = LocalExecutor(tmp_path / "jobs", limits=limits)
    return SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                            executor=ex, clock=ManualClock(T0), cycle_interval_s=0.0)


def test_newuser25_n12_memory_limited_note_says_the_job_is_killed_above_it(tmp_path: Path) -> None:
    svc = _service(tmp_path, v2=True)
    made = svc.submit({"command": ["true"], "gpus": 0, "memory": 16}, user="ana")
    notes = made["warnings"]
    assert ("memory is not reserved on this server (its inventory declares no host memory), but the job is "
            "limited to 16 MiB: it is killed above it") in notes, notes
    assert not any("whatever the machine has free" in n and n.startswith("memory") for n in notes), notes
    # a bare number is MiB, said as for mem_per_gpu (new user 9)
    assert "memory 16 is read as 16 MiB (a bare number is MiB): for GiB per worker give the unit, e.g. 16GiB" \
        in notes, notes
    for fine in ("16GiB", 4096):
        said = svc.submit({"command": ["true"], "gpus": 0, "memory": fine}, user="ana")["warnings"]
        assert not any("a bare number is MiB" in n for n in said), said


def test_newuser25_n12_without_memory_cgroups_the_old_truth_stays(tmp_path: Path) -> None:
    svc = _service(tmp_path, v2=False)
    notes = svc.submit({"command": ["true"], "gpus": 0, "memory": "1GiB"}, user="ana")["warnings"]
    assert ("memory is not reserved on this server (its inventory declares no host memory): the job runs with "
            "whatever the machine has free") in notes, notes


def test_newuser25_n12_cpu_over_the_hosts_cores_is_said(tmp_path: Path) -> None:
    svc = _service(tmp_path, v2=False)
    cores = os.cpu_count() or 1
    with pytest.raises(UnschedulableError) as over:  # newuser39 n1: refused as memory above the host is
        svc.submit({"command": ["true"], "gpus": 0, "cpu": cores * 500 + 1000}, user="ana")
    assert over.value.field == "cpu" and f"cpu {cores * 500 + 1000:g} is more than this host's {cores} core" \
        in over.value.message, over.value
    within = svc.submit({"command": ["true"], "gpus": 0, "cpu": cores}, user="ana")["warnings"]
    assert not any("more than this host" in n for n in within), within
