"""A JupyterLab Terminal of this server finds ``jupyter-sched``, login shell or not.

newuser40 n2: a notebook's ``!jupyter-sched status`` worked (its kernel runs the venv's python) while a Terminal of
the same server said ``jupyter-sched: command not found``. Session 40 put the venv's folder first on the PATH of the
terminal manager's ``extra_env``; newuser41 N2: jupyter_server_terminals starts ``$SHELL -l`` when the server's stdout
is not a terminal (every hub server, and JupyterLab started from a script), and a login shell's ``/etc/profile``
(Debian's) sets PATH outright, so the folder was gone before the first prompt.

The folder is now put back *after* the shell's own start-up files, the way VS Code's shell integration does it:

- bash: ``bash --rcfile RC -i``, where RC reads what the shell would have read — for a login shell ``/etc/profile``
  then the first of ``~/.bash_profile``, ``~/.bash_login``, ``~/.profile``; else ``/etc/bash.bashrc`` and
  ``~/.bashrc`` — then puts the folder first on PATH when it is not on it;
- sh, dash, ksh, mksh, ash: their ``ENV`` file (read by an interactive shell after its profiles) does the same, after
  reading the ``ENV`` the server's environment had.

Other shells (zsh, fish, …) get the folder on the PATH of their environment only (their profiles may drop it). An
explicit ``c.ServerApp.terminado_settings = {"shell_command": [...]}`` is the admin's or user's choice: it is never
changed (its environment still has the folder first on PATH). The files are written at start into the server's
runtime dir (``jupyter_sched-terminal/``); the same for every server, each terminal's folder is in its environment.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger("jupyter_sched")

BIN = "JUPYTER_SCHED_TERMINAL_BIN"
LOGIN = "JUPYTER_SCHED_TERMINAL_LOGIN"
OWN_ENV = "JUPYTER_SCHED_TERMINAL_ENV"
ENV_SHELLS = frozenset({"sh", "dash", "ksh", "mksh", "ash"})
LOGIN_FLAGS = frozenset({"-l", "--login"})

_PREPEND = f"""case ":$PATH:" in
  *":${BIN}:"*) ;;
  *) if [ -n "${BIN}" ]; then PATH="${BIN}${{PATH:+:$PATH}}"; export PATH; fi ;;
esac
"""

BASH_RC = f"""# A JupyterLab terminal's bash, written by the jupyter_sched server extension (each start; safe to delete).
# It reads what bash itself would have read, then puts the folder of the server's jupyter-sched first on PATH.
if [ -n "${LOGIN}" ]; then
  unset {LOGIN}
  if [ -r /etc/profile ]; then . /etc/profile; fi
  if [ -r ~/.bash_profile ]; then . ~/.bash_profile
  elif [ -r ~/.bash_login ]; then . ~/.bash_login
  elif [ -r ~/.profile ]; then . ~/.profile
  fi
else
  if [ -r /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
  if [ -r ~/.bashrc ]; then . ~/.bashrc; fi
fi
{_PREPEND}unset {BIN}
"""

SH_ENV = f"""# A JupyterLab terminal's ENV file, written by the jupyter_sched server extension (each start; safe to delete).
# Read by an interactive sh after its profiles: the server's own ENV, then the folder of jupyter-sched first on PATH.
if [ -n "${OWN_ENV}" ] && [ -r "${OWN_ENV}" ]; then . "${OWN_ENV}"; fi
{_PREPEND}"""


def _write(folder: Path, name: str, text: str) -> str:
    """Write ``text`` to ``folder/name`` whole (servers sharing a runtime dir write the same bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    part = folder / f".{name}.{os.getpid()}"
    part.write_text(text, encoding="utf-8")
    os.replace(part, path)
    return str(path)


def terminal_finds_jupyter_sched(serverapp: Any) -> None:
    """Make this server's JupyterLab terminals find its ``jupyter-sched`` (see the module's words).

    Call once the server's extensions are loaded (the terminal manager is made by its own extension)."""
    web_app = getattr(serverapp, "web_app", None)
    manager = web_app.settings.get("terminal_manager") if web_app is not None else None
    folder = str(Path(sys.executable).parent)
    if manager is None or not (Path(folder) / "jupyter-sched").exists():
        return
    env = dict(getattr(manager, "extra_env", None) or {})
    path = os.environ.get("PATH", "")
    if folder not in path.split(os.pathsep):
        env["PATH"] = os.pathsep.join([folder, path]) if path else folder
    settings = getattr(serverapp, "terminado_settings", None) or {}
    command = list(getattr(manager, "shell_command", None) or ())
    if settings.get("shell_command") is None and command:
        name, flags = os.path.basename(command[0]), command[1:]
        here = Path(serverapp.runtime_dir) / "jupyter_sched-terminal"
        try:
            if name == "bash" and set(flags) <= LOGIN_FLAGS:
                manager.shell_command = [command[0], "--rcfile", _write(here, "bashrc", BASH_RC), "-i"]
                env.update({BIN: folder, **({LOGIN: "1"} if flags else {})})
            elif name in ENV_SHELLS:
                env.update({BIN: folder, "ENV": _write(here, "sh-env", SH_ENV)})
                if os.environ.get("ENV"):
                    env[OWN_ENV] = os.environ["ENV"]
        except OSError as exc:
            log.warning("jupyter_sched: a login shell of a JupyterLab terminal may not find jupyter-sched "
                        "(could not write its start-up file in %s: %s)", here, exc)
    manager.extra_env = env
