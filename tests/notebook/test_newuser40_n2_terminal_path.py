"""newuser40 n2: a JupyterLab Terminal of the README's ``.venv/bin/jupyter lab`` said ``jupyter-sched: command not
found`` while a notebook's ``!jupyter-sched`` of the same server worked. The extension now puts the folder of this
server's ``jupyter-sched`` first on its terminals' PATH when the server's own PATH lacks it.

Real parts: pytest-jupyter's server with jupyter_server_terminals and jupyter_sched loaded; the terminal manager's own
environment for a new terminal, and a real terminal process started through ``POST api/terminals``.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

VENV_BIN = str(Path(sys.executable).parent)


@pytest.fixture
def sched_settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    bare = os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != VENV_BIN)
    monkeypatch.setenv("PATH", bare)  # as a shell that did not activate the venv
    return {}


async def test_newuser40_n2_a_terminal_of_the_server_finds_jupyter_sched(sched_app: Any, jp_serverapp: Any,
                                                                          tmp_path: Path) -> None:
    assert (Path(VENV_BIN) / "jupyter-sched").exists()
    manager = jp_serverapp.web_app.settings["terminal_manager"]
    env = manager.make_term_env()
    assert env["PATH"].split(os.pathsep)[0] == VENV_BIN, env["PATH"]  # was the server's PATH, without the venv
    assert VENV_BIN not in os.environ["PATH"].split(os.pathsep)  # the server's own PATH is left as it was
    found = tmp_path / "found.txt"
    name, _ = manager.new_named_terminal(shell_command=["sh", "-c", f"command -v jupyter-sched > {found}"])
    deadline = time.monotonic() + 30
    while not found.exists() or not found.read_text().strip():
        assert time.monotonic() < deadline, "the terminal's shell did not write where jupyter-sched is"
        time.sleep(0.1)
    assert found.read_text().strip() == f"{VENV_BIN}/jupyter-sched"
    await manager.terminate(name, force=True)
