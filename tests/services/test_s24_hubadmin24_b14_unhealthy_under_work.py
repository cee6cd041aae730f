"""Hubadmin24 B14: a GPU an admin marks unhealthy (``healthy: false``, "ECC errors, RMA") under a running
job was said only in ``GET inventory``'s GPU row: the log said nothing, admin ``status`` said "gpus 4".
Now one WARNING per such GPU names the work on it (what happens: it runs on, nothing new is placed
there, the GPU is free when the work ends), at the refresh that marks it, once; admins' ``GET inventory``
warnings (and so admin ``status``) carry the same sentence; users see no other user's work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.model.off_inventory import unhealthy_under_work
from jupyter_sched.services import Services, build_services
from jupyter_sched.store.codec import JobRecord
from jupyter_sched.wording.status import status_lines
from tests.runtime.builders import make_job

HEALTHY = ("nodes:\n  - {name: n1, gpu_count: 2, gpu_model: A100-80GB, gpu_memory: 80GiB}\n"
           "  - name: n2\n    gpus:\n"
           "      - {uuid: GPU-n2-0, model: A100-80GB, memory: 80GiB}\n"
           "      - {uuid: GPU-n2-1, model: A100-80GB, memory: 80GiB}\n")
MARKED = HEALTHY.replace("{uuid: GPU-n2-0, model: A100-80GB, memory: 80GiB}",
                         '{uuid: GPU-n2-0, model: A100-80GB, memory: 80GiB, healthy: false, '
                         'health_reason: "ECC errors, RMA"}')
SENTENCE = ('GPU-n2-0 (node n2) is marked unhealthy (ECC errors, RMA) under job j-s (ha24s, "j-s"): it runs on; '
            "nothing new is placed on that GPU; it is free for maintenance when that work ends (or an admin "
            "cancels it)")


def two_jobs_on_n2(tmp_path: Path) -> tuple[Services, Path]:
    """Services on a static inventory file (:data:`HEALTHY`, returned to be edited) with two running jobs on
    n2: j-s of ha24s on GPU-n2-0 and j-t of ha24t on GPU-n2-1."""
    nodes = tmp_path / "nodes.yaml"
    nodes.write_text(HEALTHY)
    services = build_services({"db_url": f"sqlite:///{tmp_path / 's.sqlite'}", "log_dir": str(tmp_path / "logs"),
                               "inventory_source": "static", "inventory_file": str(nodes),
                               "inventory_refresh_s": 3600, "telemetry_source": "off"})
    for job_id, user, uuid in (("j-s", "ha24s", "GPU-n2-0"), ("j-t", "ha24t", "GPU-n2-1")):
        services.store.insert_job(JobRecord(job=make_job(job_id, user=user, gpus=1, state=JobState.RUNNING,
                                                         allocation=Allocation("n2", (uuid,))), executor="local"))
    return services, nodes


def test_s24_hubadmin24_b14_the_core_names_the_work_under_an_unhealthy_gpu() -> None:
    inv = SimulatedInventory(2).current()
    node = inv.nodes[0].name
    assert unhealthy_under_work(inv, [make_job("j-s", user="ha24s", gpus=1, state=JobState.RUNNING,
                                               allocation=Allocation(node, (f"GPU-sim-{node}-0",)))]) == []


def test_s24_hubadmin24_b14_marking_a_busy_gpu_unhealthy_is_logged_once_and_shown_to_admins(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # before: no WARNING, admin warnings [] and `status` said only "gpus 4"
    services, nodes = two_jobs_on_n2(tmp_path)
    try:
        services.ctx.inventory()
        with caplog.at_level("WARNING", logger="jupyter_sched"):
            nodes.write_text(MARKED)  # the admin marks it out of service for an RMA
            services.ctx.inventory_source.invalidate()
            services.ctx.inventory()
            services.ctx.inventory_source.invalidate()
            services.ctx.inventory()  # a refresh that changes nothing: said once
        said = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
        assert [line for line in said if "unhealthy" in line] == [f"jupyter_sched: {SENTENCE}"], said
        admin = services.system.inventory(services.caller("boss", admin=True))
        user = services.system.inventory(services.caller("ha24s", admin=False))
    finally:
        services.store.close()
    assert SENTENCE in admin.warnings, admin.warnings
    assert not any("unhealthy" in w for w in user.warnings), user.warnings
    lines = status_lines("http://x/", {"mode": "hub"}, {"user": "boss", "is_admin": True}, admin.to_wire())
    assert f"inventory  {SENTENCE}" in lines, lines
