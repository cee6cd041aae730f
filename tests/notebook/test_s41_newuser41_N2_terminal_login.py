"""newuser41 N2: JupyterLab's own Terminal had no ``jupyter-sched``, embedded and on a hub: jupyter_server_terminals
starts ``$SHELL -l`` when the server's stdout is not a terminal, and a login shell's profile (Debian's /etc/profile)
sets PATH outright, dropping the venv's folder that session 40 put on the terminal's PATH. The folder is now put back
after the shell's own start-up files (bash: ``--rcfile`` reading them as bash would; sh: its ``ENV`` file).

Real parts: pytest-jupyter's server with jupyter_server_terminals and jupyter_sched loaded, a real terminal started by
``POST api/terminals`` and driven over its websocket, running this host's bash/dash. The profile that sets PATH is
the host's own /etc/profile (Debian's sets it outright) *and* one the test controls: the test's HOME (pytest-jupyter's
``jp_home_dir``) has a ``~/.bash_profile`` / ``~/.profile`` that sets PATH outright and marks that it was read — the
real /etc/profile is not edited. The server's stdout is not a terminal under pytest, so the shell is a login shell as
under a hub's spawner.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from nb_harness import sched_server_config

VENV_BIN = str(Path(sys.executable).parent)
PROFILE = 'PATH=/usr/bin:/bin; export PATH; N2_PROFILE=read\n'  # as Debian's /etc/profile: PATH set outright
ASK = "printf 'N2''OUT<%s|%s>\\n' \"$(command -v jupyter-sched)\" \"$N2_PROFILE\"\r"
SAID = re.compile(r"N2OUT<([^|\r\n]*)\|([^>\r\n]*)>")


@pytest.fixture
def login_shell() -> str:
    return "bash"


@pytest.fixture
def shell_override() -> list[str] | None:
    return None


@pytest.fixture
def jp_server_config(tmp_path: Path, shell_override: list[str] | None, login_shell: str,
                     monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    bare = os.pathsep.join(p for p in os.environ.get("PATH", "/usr/bin:/bin").split(os.pathsep) if p != VENV_BIN)
    monkeypatch.setenv("PATH", bare)  # the README's `.venv/bin/jupyter lab`: the venv is not activated
    monkeypatch.setenv("SHELL", str(shutil.which(login_shell)))
    config = sched_server_config(tmp_path)
    if shell_override is not None:
        config.setdefault("ServerApp", {})["terminado_settings"] = {"shell_command": shell_override}
    return config


async def _terminal_says(jp_fetch: Any, jp_ws_fetch: Any) -> tuple[str, str]:
    """Open a terminal as JupyterLab does, ask where jupyter-sched is and whether the profile ran; its answer."""
    reply = await jp_fetch("api", "terminals", method="POST", body="{}")
    name = json.loads(reply.body)["name"]
    ws = await jp_ws_fetch("terminals", "websocket", name)
    seen = ""
    try:
        await ws.write_message(json.dumps(["stdin", ASK]))
        while not (found := SAID.search(seen)):
            message = await ws.read_message()
            assert message is not None, f"the terminal closed; it said: {seen!r}"
            kind, *rest = json.loads(message)
            seen += str(rest[0]) if kind == "stdout" and rest else ""
    finally:
        ws.close()
        await jp_fetch("api", "terminals", name, method="DELETE")
    return found.group(1), found.group(2)


@pytest.mark.parametrize("login_shell, profile", [("bash", ".bash_profile"), ("sh", ".profile")])
async def test_newuser41_N2_terminal_login_shell_finds_jupyter_sched(sched_app: Any, jp_serverapp: Any,
                                                                     jp_fetch: Any, jp_ws_fetch: Any,
                                                                     jp_home_dir: Path, login_shell: str,
                                                                     profile: str) -> None:
    (jp_home_dir / profile).write_text(PROFILE)
    manager = jp_serverapp.web_app.settings["terminal_manager"]
    assert "-l" in manager.shell_command or manager.extra_env.get("JUPYTER_SCHED_TERMINAL_LOGIN") == "1"
    where, profile_read = await _terminal_says(jp_fetch, jp_ws_fetch)
    assert profile_read == "read"  # the user's login profile still ran (PATH set outright by it)
    assert where == f"{VENV_BIN}/jupyter-sched"  # was '' (command not found)


@pytest.mark.parametrize("shell_override", [["bash", "-l"]])
async def test_newuser41_N2_an_explicit_shell_command_is_left_as_chosen(sched_app: Any, jp_serverapp: Any,
                                                                        jp_fetch: Any, jp_ws_fetch: Any,
                                                                        jp_home_dir: Path) -> None:
    (jp_home_dir / ".bash_profile").write_text(PROFILE)
    manager = jp_serverapp.web_app.settings["terminal_manager"]
    assert manager.shell_command == ["bash", "-l"]  # c.ServerApp.terminado_settings' choice is the admin's
    assert manager.extra_env["PATH"].split(os.pathsep)[0] == VENV_BIN  # its environment still has the folder
    where, profile_read = await _terminal_says(jp_fetch, jp_ws_fetch)
    assert (where, profile_read) == ("", "read")  # its own profile's PATH, as chosen (the docs say so)
