"""A real jupyter_server with jupyter_sched (pytest-jupyter), configured with test-sized idle windows.

Reuses the web tests' fixtures (``sched_app``, ``api``, the per-user token identity provider) and
overrides only the server config: simulated GPUs on a node of their own, warning after 4 s idle,
reclaim 2 s later, samples every 0.5 s.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (fixtures + async test hooks)

from tests.web.conftest import api, sched_app, server_config

__all__ = ["api", "jp_server_config", "sched_app"]


@pytest.fixture  # type: ignore[no-redef]  # overrides the plugin's fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, simulated_gpus=2, node_name=f"itest-{uuid.uuid4().hex[:8]}",
                         idle_window_s=4.0, idle_grace_s=2.0, telemetry_interval_s=0.5, inventory_refresh_s=1.0)
