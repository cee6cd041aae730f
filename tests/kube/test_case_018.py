"""Case 018: a GPU the device plugin marked unhealthy after an Xid. The node's allocatable is the
truth (7 of 8); the Xid from the plugin's log (or DCGM) says why and since when; quotas,
``/metrics`` and capacity reports count only healthy GPUs; reasons say what an admin can do."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.accounting.waste import capacity_hours
from jupyter_sched.errors import ValidationError
from jupyter_sched.extension.events import EventHub
from jupyter_sched.extension.metrics import make_registry
from jupyter_sched.inventory.kubernetes import inventory_from_objects
from jupyter_sched.model import Inventory, Job, JobSpec, JobState, Quota, QuotaSet, ResourceRequest, validate_quotas
from jupyter_sched.model.samples import GpuSample
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import Snapshot
from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url
from jupyter_sched.telemetry.health import HealthTracker, apply_health, health_summary, parse_device_plugin_log
from jupyter_sched.telemetry.views import health_text

from .kube_builders import make_node

PLUGIN_LOG = """\
I1025 02:19:08 health.go] Processing event: XidCriticalError Xid=94 on Device=GPU-5c1e...
I1025 02:19:08 health.go] 'nvidia.com/gpu' device marked unhealthy: GPU-5c1e...
"""
PRODUCT = "NVIDIA-H100-80GB-HBM3"


def h100_node(allocatable: int = 7) -> dict[str, Any]:
    return make_node("h100-node-3", gpus=8, product=PRODUCT, allocatable_gpus=allocatable, count_label=8)


def inventory(allocatable: int = 7) -> Inventory:
    events = parse_device_plugin_log(PLUGIN_LOG, year=2024, node="h100-node-3")
    return apply_health(inventory_from_objects([h100_node(allocatable)]), events)


def test_case_018_the_plugin_log_names_the_xid_and_its_time() -> None:
    (event,) = parse_device_plugin_log(PLUGIN_LOG, year=2024, node="h100-node-3")
    assert (event.problem, event.xid, event.at) == ("Xid 94", 94, datetime(2024, 10, 25, 2, 19, 8, tzinfo=timezone.utc))
    assert event.gpu_uuid == "GPU-5c1e..."


def test_case_018_inventory_physical_8_schedulable_7_one_unhealthy_with_reason_and_hint() -> None:
    inv = inventory()
    assert health_summary(inv)["h100-node-3"] == {"physical": 8, "schedulable": 7, "unhealthy": 1}
    (bad,) = [g for g in inv.gpus() if not g.healthy]
    assert health_text(bad) == "Xid 94, since 2024-10-25T02:19:08Z"
    assert "restart the device plugin pod on h100-node-3" in bad.health_hint and "drain" in bad.health_hint


def job(job_id: str, gpus: int) -> Job:
    return Job(id=job_id, spec=JobSpec(name=job_id, user="ana", resources=ResourceRequest(gpus=gpus),
                                       command=("python", "train.py")), state=JobState.PENDING)


def test_case_018_ft4_is_placed_on_healthy_gpus_and_llm8_pends_with_the_reason() -> None:
    inv = inventory()
    bad = {g.uuid for g in inv.gpus() if not g.healthy}
    result = run_cycle(Snapshot(now=datetime(2024, 10, 25, 3, tzinfo=timezone.utc), inventory=inv,
                                jobs=(job("llm-8", 8), job("ft-4", 4))))
    (admit,) = result.admits
    assert admit.job_id == "ft-4" and admit.allocation.node == "h100-node-3"
    assert not bad & set(admit.allocation.gpu_uuids)
    (pend,) = [p for p in result.pending if p.job_id == "llm-8"]
    assert pend.reason.code == "UnhealthyGpu"
    # The core ends every reason with a full stop (scheduling/reasons.py); the sentence is the case's.
    assert pend.reason.message.rstrip(".") == "h100-node-3: only 7 of 8 GPUs allocatable (1 unhealthy: Xid 94)"
    assert "restart the NVIDIA device plugin" in pend.reason.unblock


def test_case_018_quotas_may_promise_only_healthy_gpus() -> None:
    inv = inventory()
    model = next(iter(inv.models()))
    with pytest.raises(ValidationError, match="only 7 exist"):
        validate_quotas([Quota(team="llm", gpu_model=model, guaranteed=8)], inv.healthy_models())
    validate_quotas([Quota(team="llm", gpu_model=model, guaranteed=7)], inv.healthy_models())


def test_case_018_capacity_reports_use_allocatable_and_report_unavailable_apart() -> None:
    assert capacity_hours(inventory(), hours=10) == {"allocatable_gpu_hours": 70, "unavailable_gpu_hours": 10}


def test_case_018_never_healed_by_a_clean_reading_and_follows_allocatable() -> None:
    tracker = HealthTracker()
    tracker.add(parse_device_plugin_log(PLUGIN_LOG, year=2024, node="h100-node-3"))
    clean = GpuSample(gpu_uuid="GPU-5c1e...", mig_instance=None, node="h100-node-3", utilization_pct=0.0, xid=0,
                      timestamp=datetime(2024, 10, 26, tzinfo=timezone.utc))
    assert tracker.observe([clean]) == []
    still = apply_health(inventory_from_objects([h100_node(7)]), tracker.events())
    assert health_summary(still)["h100-node-3"]["schedulable"] == 7
    restarted = apply_health(inventory_from_objects([h100_node(8)]), tracker.events())
    assert health_summary(restarted)["h100-node-3"] == {"physical": 8, "schedulable": 8, "unhealthy": 0}


def test_case_018_dcgm_xid_marks_a_known_gpu_unhealthy_with_time_and_evidence() -> None:
    tracker = HealthTracker()
    at = datetime(2024, 10, 25, 2, 19, 8, tzinfo=timezone.utc)
    sample = GpuSample(gpu_uuid="GPU-1111", mig_instance=None, timestamp=at, utilization_pct=0.0, xid=79,
                       node="n1")
    (event,) = tracker.observe([sample])
    assert (event.problem, event.at) == ("Xid 79", at) and "DCGM_FI_DEV_XID_ERRORS=79" in event.evidence
    app_error = GpuSample(gpu_uuid="GPU-2222", mig_instance=None, timestamp=at, utilization_pct=0.0, xid=13)
    assert tracker.observe([app_error]) == [], "Xid 13 is an application error the device plugin ignores too"


def service_7_of_8(tmp_path: Path) -> SchedulerService:
    """A real service over a static inventory: h100-node-3 with GPU-7 withdrawn (Xid 94)."""
    static = tmp_path / "inventory.yaml"
    static.write_text(yaml.safe_dump({"nodes": [{"name": "h100-node-3", "gpus": [
        {"uuid": f"GPU-{i}", "model": "H100-80GB", "memory": "80GiB", "healthy": i != 7,
         **({"health_reason": "Xid 94"} if i == 7 else {})} for i in range(8)]}]}))
    return SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                         "inventory_source": "static", "inventory_file": str(static),
                                         "telemetry_source": "off"})


def test_case_018_put_quotas_refuses_a_guarantee_of_8_and_admins_are_warned_of_an_old_one(tmp_path: Path) -> None:
    service = service_7_of_8(tmp_path)
    with pytest.raises(ValidationError, match=r"only 7 of its 8 may get work now \(GPU-7 on h100-node-3 marked "
                                              r"unhealthy \(Xid 94\)\)") as refused:  # hubadmin25 B12: which one
        service.set_quotas([{"team": "llm", "gpu_model": "H100-80GB", "guaranteed": 8}], actor="admin")
    assert refused.value.field == "guaranteed"
    assert service.set_quotas([{"team": "llm", "gpu_model": "H100-80GB", "guaranteed": 7}],
                              actor="admin")["quotas"][0]["guaranteed"] == 7
    # a guarantee of 8 set before the Xid: requests keep working, the admin reads why it cannot be honoured
    with service.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(Quota(team="llm", gpu_model="H100-80GB", guaranteed=8),)))
    admin = service.services.quotas.get(service.services.caller("admin", admin=True)).to_wire()
    (warning,) = [w for w in admin["warnings"] if "(no quota line" not in w]  # team default's: red team 19, R3
    assert "only 7 of its 8 may get work now" in warning
    assert "warnings" not in service.services.quotas.get(service.services.caller("ana", admin=False)).to_wire()


def test_case_018_metrics_count_the_bad_gpu_as_unavailable_not_free(tmp_path: Path) -> None:
    service = service_7_of_8(tmp_path)
    exposition = generate_latest(make_registry(service.services, EventHub(16))).decode()
    states = {s.labels["state"]: s.value for family in text_string_to_metric_families(exposition)
              for s in family.samples if family.name == "jupyter_sched_gpus"}
    assert states == {"allocated": 0.0, "free": 7.0, "unavailable": 1.0}
