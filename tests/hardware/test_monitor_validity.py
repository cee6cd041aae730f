"""The engine's telemetry monitor applies the validity rules to every collector's samples: the
latch relabels the stored run, Xid evidence is kept, exporter labels that disagree with the
allocation are logged once per hour. The collector is the real dcgm-exporter parser over text."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.telemetry import DcgmCollector

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


class Scrapes:
    """What the exporter answers now (the test changes it between samples)."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self) -> str:
        return self.text


def line(metric: str, uuid: str, value: float, pod: str = "") -> str:
    labels = f'gpu="0",UUID="{uuid}",Hostname="n1"' + (f',namespace="ns",pod="{pod}"' if pod else "")
    return f"{metric}{{{labels}}} {value}\n"


def monitor() -> tuple[TelemetryMonitor, Scrapes, ManualClock]:
    scrapes = Scrapes()
    clock = ManualClock(T0)
    return TelemetryMonitor(DcgmCollector(scrapes), source="dcgm", interval_s=60, clock=clock), scrapes, clock


def test_a_latch_confirmed_at_the_third_scrape_relabels_the_first_two_in_the_store() -> None:
    mon, scrapes, clock = monitor()
    scrapes.text = line("DCGM_FI_DEV_GPU_UTIL", "GPU-a", 100) + line("DCGM_FI_DEV_FB_USED", "GPU-a", 0)
    labels = []
    for _ in range(3):
        mon.sample()
        labels.append([s.label for s in mon.window(("GPU-a", None), T0)])
        clock.advance(60)
    assert labels == [["blank_latch_unconfirmed"], ["blank_latch_unconfirmed"] * 2, ["suspect_util_latch"] * 3]


def test_xid_evidence_is_kept_and_reported_in_the_status() -> None:
    mon, scrapes, _ = monitor()
    scrapes.text = line("DCGM_FI_DEV_GPU_UTIL", "GPU-a", 10) + line("DCGM_FI_DEV_XID_ERRORS", "GPU-a", 79)
    mon.sample()
    (event,) = mon.health_events()
    assert (event.gpu_uuid, event.problem, event.at) == ("GPU-a", "Xid 79", T0)
    assert mon.status()["health_events"] == 1


def test_a_wrong_pod_label_is_logged_once_per_hour_and_the_allocation_wins(caplog: pytest.LogCaptureFixture) -> None:
    mon, scrapes, clock = monitor()
    mon.set_allocations({"GPU-b": "j-102"})
    scrapes.text = line("DCGM_FI_DEV_GPU_UTIL", "GPU-b", 60, pod="other-pod-zzz")
    with caplog.at_level(logging.WARNING, logger="jupyter_sched.engine.telemetry"):
        for _ in range(61):  # one scrape a minute for an hour
            mon.sample()
            clock.advance(60)
    warnings = [r.getMessage() for r in caplog.records if "label_mismatch" in r.getMessage()]
    assert len(warnings) == 2 and mon.label_mismatches == 2
    assert warnings[0] == ("telemetry: label_mismatch: GPU-b at 2026-03-02T09:00:00Z: pod label ns/other-pod-zzz, "
                           "allocated to j-102 (the allocation wins)")
    # what admins read in GET inventory's telemetry.warnings: the mismatch warned within the last hour
    assert mon.label_warnings() == [warnings[1].removeprefix("telemetry: ")]
    scrapes.text = line("DCGM_FI_DEV_GPU_UTIL", "GPU-b", 60, pod="j-102-abcde")
    mon.sample()
    assert mon.label_mismatches == 2, "a matching label is no warning"
    assert clock.now() - T0 == timedelta(minutes=61)


def test_a_gpu_with_an_xid_is_unhealthy_in_the_inventory_the_engine_places_on() -> None:
    from jupyter_sched.engine.telemetry import HealthAwareInventory
    from jupyter_sched.model import GPU, Inventory, Node
    from jupyter_sched.placement.state import ClusterState

    class Source:
        def current(self) -> Inventory:
            return Inventory(nodes=(Node(name="n1", gpus=(
                GPU(uuid="GPU-a", index=0, node="n1", model="A100", memory_mib=81920),
                GPU(uuid="GPU-b", index=1, node="n1", model="A100", memory_mib=81920))),))

    mon, scrapes, _ = monitor()
    scrapes.text = line("DCGM_FI_DEV_GPU_UTIL", "GPU-a", 10) + line("DCGM_FI_DEV_XID_ERRORS", "GPU-a", 79)
    mon.sample()
    inventory = HealthAwareInventory(Source(), mon).current()
    bad = inventory.nodes[0].gpus[0]
    assert (bad.healthy, bad.health_reason, bad.health_since) == (False, "Xid 79", T0)
    assert "reset it or drain n1" in bad.health_hint
    assert ClusterState(inventory).placeable == [False, True]
