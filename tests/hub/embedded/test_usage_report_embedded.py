"""``GET usage/report`` in embedded mode serves utilized GPU-hours from the stored rollups.

Real jupyter_server (pytest-jupyter) with jupyter_sched on a temporary SQLite store and
simulated GPUs; the usage interval and rollup rows are written through the real store (at the
service's real clock, ten minutes ago), then read back over HTTP as JSON and CSV.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.model import parse_utc

TOKEN = "embedded-report-token"


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": TOKEN},
        "SchedApp": {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                     "inventory_source": "simulated", "simulated_gpus": 1, "telemetry_source": "off"},
    }


async def test_the_embedded_report_has_utilized_hours_and_efficiency(sched_app: Any, jp_fetch: Any) -> None:
    store = sched_app.services.store
    start = datetime.now(timezone.utc).replace(second=0, microsecond=0) - timedelta(minutes=10)
    with store.transaction(now=start) as tx:
        tx.open_usage(job_id="J1", attempt=1, user="ana", team="ml", kind="training",
                      gpus=[("GPU-e1", "A100", 1.0)], started_at=start)
        tx.close_usage("J1", start + timedelta(minutes=2))
    store.add_rollups([{"gpu_uuid": "GPU-e1", "minute": (start + timedelta(minutes=m)).isoformat(), "samples": 60,
                        "utilization_avg": pct} for m, pct in ((0, 30.0), (1, 90.0))])

    response = await jp_fetch("api", "sched", "usage", "report", params={"all": "true", "by": "user"},
                              headers={"Authorization": f"token {TOKEN}"})  # the server's owner: an admin
    rows = json.loads(response.body)
    assert [(r["user"], r["allocated_gpu_seconds"], r["utilized_gpu_seconds"], r["efficiency"]) for r in rows] == [
        ("ana", 120.0, 0.3 * 60 + 0.9 * 60, 0.6)]
    csv_text = (await jp_fetch("api", "sched", "usage", "report", params={"all": "true", "format": "csv"},
                               headers={"Authorization": f"token {TOKEN}"})).body.decode()
    # no cost, no cost_unit; then the period (hubadmin23 A10): the last 7 days by default (s23-acct), to the second
    line, since, until = csv_text.splitlines()[1].rsplit(",", 2)
    assert line == "ana,120.0,0.033333333,72.0,0.02,1.0,0.6,,,1,False", csv_text
    assert until.endswith("Z") and "." not in until, until
    assert parse_utc(until, field="until") - parse_utc(since, field="since") == timedelta(days=7)
    refused = await jp_fetch("api", "sched", "usage", "report", params={"format": "xml"},
                             headers={"Authorization": f"token {TOKEN}"}, raise_error=False)
    assert refused.code == 400 and json.loads(refused.body)["error"]["field"] == "format"
