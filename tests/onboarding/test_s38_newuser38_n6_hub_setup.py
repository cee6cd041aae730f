"""newuser38 n6: a hub set up from docs/admin.md and server/jupyterhub_config.py WARNed at every service start
"user servers are not fenced: this hub's spawner is jupyterhub.spawner.LocalProcessSpawner … set
c.JupyterHub.spawner_class = …FencedLocalProcessSpawner" — the example config the docs point at did not have that
line, and admin.md's JupyterHub section reached it some 270 lines later. Now the example has it (commented out:
local hosts only) and the section's first paragraph names it.

Real parts: the example config exec'd as JupyterHub loads it (its commented line uncommented, as an admin of a local
host does), the spawner class it names imported, and the fix the service's WARNING gives.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.hub.spawner_check import FENCED_SPAWNER, spawner_fence_line

ROOT = Path(__file__).resolve().parents[2]
LINE = f'# c.JupyterHub.spawner_class = "{FENCED_SPAWNER}"'


class _Config(dict[str, Any]):
    def __getattr__(self, name: str) -> Any:
        return self.setdefault(name, _Config())

    def __setattr__(self, name: str, value: Any) -> None:
        self[name] = value


def test_newuser38_n6_the_example_config_has_the_spawner_the_service_asks_for(monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: no spawner_class line in server/jupyterhub_config.py."""
    text = (ROOT / "server" / "jupyterhub_config.py").read_text()
    assert text.count(LINE + "\n") == 1, "the example sets no fenced spawner"
    before = text[:text.index(LINE)].rsplit("\n\n", 1)[-1]  # its comment block says where it applies
    assert "Local hosts only" in before and '"command" form' in before and "Kubernetes" in before, before
    _, fix = spawner_fence_line("jupyterhub.spawner.LocalProcessSpawner")
    assert LINE[2:] in fix, fix  # the WARNING's fix is the example's line, word for word
    monkeypatch.setenv("JUPYTER_SCHED_HUB_TOKEN", "test-token")
    config = _Config()
    exec(compile(text.replace(LINE, LINE[2:]), "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    assert config["JupyterHub"]["spawner_class"] == FENCED_SPAWNER
    module, _, name = FENCED_SPAWNER.rpartition(".")
    spawner = getattr(importlib.import_module(module), name)
    from jupyterhub.spawner import LocalProcessSpawner

    assert issubclass(spawner, LocalProcessSpawner)


def test_newuser38_n6_the_jupyterhub_sections_first_paragraph_names_the_spawner() -> None:
    """Failed before: admin.md named the fenced spawner first ~270 lines into its JupyterHub section."""
    text = (ROOT / "docs" / "admin.md").read_text()
    section = text[text.index("\n## JupyterHub\n"):]
    first = re.split(r"\n\s*\n", section.split("\n", 2)[2].strip(), maxsplit=1)[0]
    assert f'`c.JupyterHub.spawner_class = "{FENCED_SPAWNER}"`' in first, first
    assert "user servers are not fenced" in first and "LocalProcessSpawner" in first, first
