"""A slim install, reproduced in a subprocess: some packages behave as if not installed.

A ``sitecustomize.py`` on ``PYTHONPATH`` puts a meta-path finder first that refuses the named
top-level packages with ``ModuleNotFoundError`` (exactly what Python raises when a package is
absent) and writes each refused import to a log. A child started with :func:`slim_env` therefore
runs as it would in a venv without those packages, and the log says whether anything even tried
to import them. This stands in for building a second venv with pip (minutes, and network) and
checks the same thing: which imports a code path needs.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HEAVY", "refused_imports", "slim_env"]

HEAVY = ("pandas", "plotly", "scipy", "jupyterlab")
"""What ``pip install jupyter_sched`` without extras leaves out (see pyproject.toml's extras)."""

_SITECUSTOMIZE = '''\
import os
import sys

_BLOCKED = frozenset(os.environ["SCHED_SLIM_BLOCK"].split(","))
_LOG = os.environ["SCHED_SLIM_LOG"]


class _NotInstalled:
    """Refuse the blocked packages as an absent package would be refused."""

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _BLOCKED:
            with open(_LOG, "a", encoding="utf-8") as log:
                log.write(f"{os.getpid()} {name}\\n")
            raise ModuleNotFoundError(f"No module named {name!r} (slim install)", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def slim_env(folder: Path, blocked: tuple[str, ...] = HEAVY, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a child process in which ``blocked`` packages are not installed.

    Args:
        folder: a private folder for the ``sitecustomize.py`` and the refusal log.
        blocked: top-level package names to refuse.
        base: environment to extend (default ``os.environ``); its ``PYTHONPATH`` is kept after ours.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH", "")) if p)
    env["SCHED_SLIM_BLOCK"] = ",".join(blocked)
    env["SCHED_SLIM_LOG"] = str(folder / "refused.log")
    return env


def refused_imports(folder: Path) -> list[str]:
    """The imports refused so far in children started with ``slim_env(folder)`` (``"PID module"``)."""
    log = folder / "refused.log"
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
