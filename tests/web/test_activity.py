"""Polling does not keep an idle server alive; running work does (hub idle culling, DESIGN)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .conftest import wait_for

POLLED = ["config", "me", "inventory", "jobs", "leases", "queue", "quotas", "profiles", "usage", "metrics"]


async def test_polling_endpoints_do_not_count_as_user_activity(sched_app: Any, jp_serverapp: Any, api: Any) -> None:
    settings = jp_serverapp.web_app.settings
    settings.pop("api_last_activity", None)
    for path in POLLED:
        status, _ = await api("GET", path)
        assert status == 200, path
    assert "api_last_activity" not in settings, "a GET marked the server active"
    status, _ = await api("POST", "jobs", {"gpus": 0, "command": ["true"]})
    assert status == 201
    assert "api_last_activity" in settings, "a submission is user activity"


async def test_running_work_is_reported_as_activity(sched_app: Any, jp_serverapp: Any, api: Any,
                                                    tmp_path: Path) -> None:
    assert sched_app.current_activity() == []
    script = tmp_path / "hold.py"
    script.write_text("import time\ntime.sleep(120)\n")
    _, job = await api("POST", "jobs", {"gpus": 1, "command": [sys.executable, str(script)]})

    async def active() -> list[dict[str, Any]]:
        return list(sched_app.current_activity())

    activity = await wait_for(active)
    assert activity[0]["id"] == job["id"]
    jp_serverapp.web_app.settings.pop("jupyter_sched_last_activity", None)
    assert await sched_app.note_activity() is True  # what the periodic tick runs, the store read off the loop
    assert jp_serverapp.web_app.last_activity() == jp_serverapp.web_app.settings["jupyter_sched_last_activity"]
    assert jp_serverapp.extension_manager.any_activity()
