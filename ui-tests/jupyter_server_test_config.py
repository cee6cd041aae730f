"""Jupyter server configuration of the browser tests (Galata), one file for both test servers.

Environment (set by ui-tests/run.sh and read by playwright.config.js too):
    SCHED_UI_PORT: the port of this server (a free port chosen by run.sh; never a fixed one).
    SCHED_UI_STATE: a fresh temporary directory for the SQLite store, job logs and notebooks.
    SCHED_UI_ROLE: "admin" (default; the server owner, who is the scheduler admin), "visual" (the
        same, for the screenshot and accessibility tests only) or "user" (identities come from
        jupyter_server's per-browser anonymous user, who is not an admin).

The scheduler runs embedded with a real SQLite store and the real local executor. The admin
server has a simulated inventory of 4 GPUs (this machine has no GPU or NVML) on a node named
"gpu-node-a" whatever the host is called (stable screenshots); the team quota makes a 3-GPU job
impossible, and short idle windows let the idle-warning test finish in seconds. The user server
reads a static inventory file (``$SCHED_UI_STATE/inventory-user.yaml``, re-read every 0.5 s) that
a test rewrites to make a GPU go unhealthy.
"""

from __future__ import annotations

import os
from pathlib import Path
from tempfile import mkdtemp
from typing import Any

from jupyterlab.galata import configure_jupyter_server

UI_BOSS = "ui-boss"
"""The one other identity of the user server: an admin (a request header names it)."""

c = get_config()  # type: ignore[name-defined]  # noqa: F821

configure_jupyter_server(c)
c.ServerApp.allow_root = True  # development machines and CI run as root
c.ServerApp.log_level = "WARN"  # the test output shows warnings and errors, not every request

state = Path(os.environ.get("SCHED_UI_STATE") or mkdtemp(prefix="sched-ui-"))
role = os.environ.get("SCHED_UI_ROLE", "admin")
root = state / f"root-{role}"
data = state / f"data-{role}"
root.mkdir(parents=True, exist_ok=True)
data.mkdir(parents=True, exist_ok=True)

c.ServerApp.port = int(os.environ.get("SCHED_UI_PORT", "0") or 0) or 18888
c.ServerApp.port_retries = 0
c.ServerApp.root_dir = str(root)
c.ServerApp.jpserver_extensions = {"jupyter_sched": True}

c.SchedApp.db_url = f"sqlite:///{data / 'sched.sqlite'}"
c.SchedApp.log_dir = str(data / "logs")
c.SchedApp.node_name = "gpu-node-a"
if role == "user":
    inventory_file = state / "inventory-user.yaml"
    if not inventory_file.exists():
        inventory_file.write_text(
            "nodes:\n"
            "  - name: gpu-node-b\n"
            "    gpus:\n"
            "      - {uuid: GPU-static-b-0, model: A100-SXM4-80GB, memory: 80GiB}\n"
            "      - {uuid: GPU-static-b-1, model: A100-SXM4-80GB, memory: 80GiB}\n"
        )
    c.SchedApp.inventory_source = "static"
    c.SchedApp.inventory_file = str(inventory_file)
    c.SchedApp.inventory_refresh_s = 0.5
    # Telemetry as dcgm-exporter text read from a file each second: usagechart.spec.ts writes
    # valid readings, then DCGM blank sentinels, to show the chart's gap (issue 18, i18-telemetry).
    metrics_file = state / "metrics-user.prom"
    if not metrics_file.exists():
        metrics_file.write_text("".join(
            f'DCGM_FI_DEV_GPU_UTIL{{gpu="{i}",UUID="GPU-static-b-{i}",Hostname="gpu-node-b"}} 0\n'
            f'DCGM_FI_DEV_FB_USED{{gpu="{i}",UUID="GPU-static-b-{i}",Hostname="gpu-node-b"}} 0\n' for i in range(2)))
    c.SchedApp.telemetry_source = "dcgm"
    c.SchedApp.telemetry_url = f"file://{metrics_file}"
else:
    c.SchedApp.inventory_source = "simulated"
    c.SchedApp.simulated_gpus = 4
c.SchedApp.cycle_interval = 0.5
c.SchedApp.default_team = "team-ui"
# 2 guaranteed + 0 borrowing: a job asking for 3 GPUs can never run (the over-quota test)
c.SchedApp.quotas = [{"team": "team-ui", "gpu_model": "*", "guaranteed": 2, "borrowing_limit": 0}]
# idle after 2 s under 5 % utilization, then 120 s of grace: the warning shows, nothing is released
c.SchedApp.idle_threshold_percent = 5.0
c.SchedApp.idle_window_s = 2.0
c.SchedApp.idle_grace_s = 120.0
c.SchedApp.identity_source = "jupyter_user" if role == "user" else "owner"
if role == "user":
    from jupyter_server.auth.identity import PasswordIdentityProvider, User

    class _UIUsers(PasswordIdentityProvider):
        """The browser's anonymous user, or — for a test's request with ``X-Sched-UI-User: ui-boss``
        — the admin ui-boss: another user (an admin) who acts on the page user's work
        (othercancel.spec.ts, verify 22 V2). Test servers only: this trusts a header."""

        def get_user(self, handler: Any) -> Any:
            if handler.request.headers.get("X-Sched-UI-User") == UI_BOSS:
                return User(username=UI_BOSS, name=UI_BOSS, display_name=UI_BOSS)
            return super().get_user(handler)

    c.ServerApp.identity_provider_class = _UIUsers
    c.SchedApp.admin_users = {UI_BOSS}
