"""New user 20, N17, on the real server (pytest-jupyter, simulated GPUs): a started scheduler leaves
its entry in the host's temporary folder (so another account's scheduler starting later says it),
and removes it when it stops."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from jupyter_sched.extension.host_schedulers import PREFIX


async def test_newuser20_n17_a_started_scheduler_leaves_its_entry_and_removes_it_at_stop(sched_app: Any) -> None:
    # fails before the fix: no entry (nothing said that a scheduler runs here)
    entry = Path(tempfile.gettempdir()) / f"{PREFIX}{os.getuid()}-{os.getpid()}.json"
    assert sched_app._host_entry.path == entry
    said = json.loads(entry.read_text())
    assert said["gpus"] == 4 and said["simulated"] is True and said["kind"] == "jupyter lab", said
    assert said["url"].startswith("http://") and "token" not in said["url"], said
    await sched_app.stop_extension()
    assert not entry.exists()
