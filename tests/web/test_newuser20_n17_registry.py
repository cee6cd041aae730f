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


async def test_newuser20_n17_a_started_scheduler_leaves_its_entry_and_removes_it_at_stop(sched_app: Any,
                                                                                           host_registry: Path) -> None:
    # fails before the fix: no entry (nothing said that a scheduler runs here)
    entry = host_registry / f"{PREFIX}{os.getuid()}-{os.getpid()}.json"
    assert sched_app._host_entry.path == entry
    said = json.loads(entry.read_text())
    assert said["gpus"] == 4 and said["simulated"] is True and said["kind"] == "jupyter lab", said
    assert said["url"].startswith("http://") and "token" not in said["url"], said
    await sched_app.stop_extension()
    assert not entry.exists()


async def test_s21_a_test_server_registers_in_the_sessions_own_registry_never_in_the_hosts(
        sched_app: Any, host_registry: Path) -> None:
    """Session 20's note: tests registered in the real host-wide registry (/tmp) while their servers ran
    (verify 20 saw a test server named by a real one). The test session's registry is its own
    ($JUPYTER_SCHED_HOST_REGISTRY, tests/conftest.py); the production default stays the host's
    temporary folder."""
    mine = f"{PREFIX}{os.getuid()}-{os.getpid()}.json"
    assert (host_registry / mine).is_file()
    assert not (Path(tempfile.gettempdir()) / mine).exists()  # failed before: the entry was in /tmp
    assert host_registry != Path(tempfile.gettempdir())
