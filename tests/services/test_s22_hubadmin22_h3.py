"""Hubadmin22 H3: GPUs going away under running work — nobody was told.

The service restarted with ``--SchedApp.simulated_gpus=2`` under 4 GPUs' worth of running jobs (and a
node deleted from an inventory file at run time did the same): ``status`` said "gpus 2", the jobs on
GPU-sim-vm-2/3 ran on, 4 GPUs stayed allocated on a 2-GPU inventory, and the start-up log said nothing,
not even the quota warning ``GET quotas`` had (teams guaranteed 4 GPUs, 2 exist). Now the pure core finds
the work on GPUs or nodes the inventory no longer lists (:mod:`jupyter_sched.model.off_inventory`) and the
edge logs one WARNING naming it — owner, GPU UUIDs, what happens, the fix — plus the capacity warning, at
start and at each refresh that changes the inventory, each once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, JobKind, JobState
from jupyter_sched.model.off_inventory import allocated_gpus, off_inventory, off_inventory_warning
from jupyter_sched.services import build_services
from jupyter_sched.store.codec import JobRecord
from tests.runtime.builders import make_job


def _running(job_id: str, user: str, node: str, *uuids: str, **spec: object) -> object:
    return make_job(job_id, user=user, gpus=len(uuids), state=JobState.RUNNING,
                    allocation=Allocation(node, tuple(uuids)), **spec)


def test_s22_hubadmin22_h3_the_core_finds_the_work_on_gpus_and_nodes_gone() -> None:
    two = SimulatedInventory(2).current()
    node = two.nodes[0].name
    jobs = [_running("j-a", "ha22a", node, f"GPU-sim-{node}-0", f"GPU-sim-{node}-1"),
            _running("j-b", "ha22b", node, f"GPU-sim-{node}-2"),
            _running("l-c", "ha22c", node, f"GPU-sim-{node}-3", kind=JobKind.LEASE),
            _running("j-n", "ha22d", "n2", "GPU-static-n2-0"),
            make_job("j-p", user="ha22a", gpus=1)]  # pending: holds nothing
    found = off_inventory(two, jobs)
    assert [(f.job_id, f.user, f.noun, f.gpus, f.nodes) for f in found] == [
        ("j-b", "ha22b", "job", (f"GPU-sim-{node}-2",), ()),
        ("l-c", "ha22c", "lease", (f"GPU-sim-{node}-3",), ()),
        ("j-n", "ha22d", "job", ("GPU-static-n2-0",), ("n2",))]
    assert allocated_gpus(jobs) == 5
    said = off_inventory_warning(found, allocated=5, in_inventory=2)
    assert said.startswith("3 GPUs held off the inventory by 3 pieces of work (5 GPUs allocated in all, 2 in the "
                           f"inventory) — job j-b (ha22b, \"j-b\") on GPU-sim-{node}-2; lease l-c (ha22c, \"l-c\") "
                           f"on GPU-sim-{node}-3; job j-n (ha22d, \"j-n\") on GPU-static-n2-0 (node n2 is gone)."), said
    assert "bring the GPUs or node back" in said and "jupyter-sched cancel ID" in said, said
    assert off_inventory(SimulatedInventory(4).current(), jobs[:3]) == []  # all GPUs listed: nothing


def test_s22_hubadmin22_h3_a_restart_with_fewer_gpus_is_said_once_in_the_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # before: the restart's log said nothing of the jobs on GPU-sim-…-2/3, nor of the guarantees
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "simulated", "simulated_gpus": 4, "telemetry_source": "off",
                "quotas": [{"team": "default", "guaranteed": 4, "borrowing_limit": 0}]}
    first = build_services(settings)
    try:
        node = first.ctx.inventory().nodes[0].name
        for job in (_running("j-a", "ha22a", node, f"GPU-sim-{node}-0", f"GPU-sim-{node}-1"),
                    _running("j-b", "ha22b", node, f"GPU-sim-{node}-2"),
                    _running("j-c", "ha22c", node, f"GPU-sim-{node}-3")):
            first.store.insert_job(JobRecord(job=job, executor="local"))
    finally:
        first.store.close()
    with caplog.at_level("WARNING", logger="jupyter_sched"):
        again = build_services({**settings, "simulated_gpus": 2, "quotas": []})
        try:
            again.ctx.inventory()  # the first read (the engine's first cycle does it)
            again.ctx.inventory()
            again.ctx.inventory_source.invalidate()
            again.ctx.inventory()  # a refresh that changes nothing: said once
        finally:
            again.store.close()
    said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    gone = [line for line in said if "held off the inventory" in line]
    assert gone == [f"jupyter_sched: 2 GPUs held off the inventory by 2 pieces of work (4 GPUs allocated in all, 2 in "
                    f"the inventory) — job j-b (ha22b, \"j-b\") on GPU-sim-{node}-2; job j-c (ha22c, \"j-c\") on "
                    f"GPU-sim-{node}-3. " + off_inventory_warning([], allocated=0, in_inventory=0).split(". ", 1)[1]], \
        said
    capacity = [line for line in said if "teams are guaranteed" in line]
    assert capacity == ["jupyter_sched: teams are guaranteed 4 GPUs of any model but only 2 exist: until the GPUs are "
                        "back, guarantees cannot all be honoured (lower them with PUT quotas, or bring the node back)"], \
        said


def test_s22_hubadmin22_h3_get_inventory_and_admin_status_say_it_users_do_not_see_it(tmp_path: Path) -> None:
    # before: GET inventory listed GPU-sim-vm-0/1 with warnings [] and `status` said "gpus 2 (simulated)"
    from jupyter_sched.wording.status import status_lines

    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"}
    services = build_services(settings)
    try:
        node = services.ctx.inventory().nodes[0].name
        services.store.insert_job(JobRecord(job=_running("j-c", "ha22c", node, f"GPU-sim-{node}-3"), executor="local"))
        services.store.insert_job(JobRecord(job=_running("j-a", "ha22a", node, f"GPU-sim-{node}-0"), executor="local"))
        admin = services.system.inventory(services.caller("boss", admin=True))
        user = services.system.inventory(services.caller("ha22c", admin=False))
    finally:
        services.store.close()
    assert admin.warnings == [f"1 GPU held off the inventory by 1 piece of work (2 GPUs allocated in all, 2 in the "
                              f"inventory) — job j-c (ha22c, \"j-c\") on GPU-sim-{node}-3. "
                              + off_inventory_warning([], allocated=0, in_inventory=0).split(". ", 1)[1]], admin.warnings
    assert user.warnings == [], user.warnings
    lines = status_lines("http://x/", {"mode": "hub"}, {"user": "boss", "is_admin": True}, admin.to_wire())
    assert any(line.startswith("inventory  1 GPU held off the inventory by 1 piece of work ") for line in lines), lines


def test_s22_hubadmin22_h3_the_jobs_own_line_says_its_gpu_is_no_longer_in_the_inventory(tmp_path: Path) -> None:
    # before: `jupyter-sched jobs` said "on vm: GPU-sim-vm-3 [simulated GPUs] · ends by …", as if nothing happened
    # (session 23: the job answer's gone_gpus carries it, which the CLI's detail line says — the CLI no longer
    # asks GET inventory for it)
    from jupyter_sched.services.models import ListJobsRequest
    from jupyter_sched.wording.jobs import job_detail

    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "inventory_source": "simulated", "simulated_gpus": 2, "telemetry_source": "off"}
    services = build_services(settings)
    try:
        node = services.ctx.inventory().nodes[0].name
        services.store.insert_job(JobRecord(job=_running("j-c", "ha22c", node, f"GPU-sim-{node}-3"), executor="local"))
        services.store.insert_job(JobRecord(job=_running("j-a", "ha22c", node, f"GPU-sim-{node}-0"), executor="local"))
        rows = services.jobs.list(services.caller("ha22c", admin=False), ListJobsRequest()).jobs.to_wire()
    finally:
        services.store.close()
    notes = {row["id"]: job_detail(row, None) for row in rows}
    assert notes["j-c"] == (f"on {node}: GPU-sim-{node}-3 [simulated GPUs] · GPU-sim-{node}-3 no longer in the "
                            "inventory (it runs on unless its GPUs went with it; an admin can cancel it)"), notes
    assert "inventory" not in notes["j-a"], notes
