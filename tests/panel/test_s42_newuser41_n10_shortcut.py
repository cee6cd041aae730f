"""newuser41 n10: "Show GPUs Panel" had no shortcut (the File Browser's tab says "(Ctrl+Shift+F)"). The panel's
settings schema binds one by default; these check it is bound to the command, clashes with no binding of the
JupyterLab installed here (every core plugin's ``jupyter.lab.shortcuts``, read from its schemas as JupyterLab reads
them), and is the one the README names. The panel's own tests (labextension/test/s42_newuser41_panel.test.ts,
plugins.test.ts) check the tab's tooltip and the focus on activate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyterlab.commands import get_app_dir

ROOT = Path(__file__).resolve().parents[2]
OPEN = "jupyter-sched:open"


def keystroke(keys: list[str]) -> tuple[frozenset[str], ...]:
    """``["Accel Shift F"]`` → its chords, each a set of its parts, with ``Accel`` read as ``Ctrl`` (Linux, Windows:
    where a clash would bite), so ``Shift Alt G`` and ``Alt Shift G`` are one."""
    return tuple(frozenset("Ctrl" if part == "Accel" else part for part in chord.split()) for chord in keys)


def ours() -> list[dict[str, Any]]:
    schema = json.loads((ROOT / "labextension" / "schema" / "plugin.json").read_text())
    return list(schema.get("jupyter.lab.shortcuts", []))


def test_newuser41_n10_show_gpus_panel_has_a_default_shortcut_that_clashes_with_no_jupyterlab_one() -> None:
    [binding] = [b for b in ours() if b["command"] == OPEN]
    assert binding["selector"] == "body" and not binding.get("disabled", False), binding
    mine = keystroke(binding["keys"])
    schemas = Path(get_app_dir()) / "schemas" / "@jupyterlab"
    seen = 0
    for path in sorted(schemas.rglob("*.json")):
        for other in json.loads(path.read_text()).get("jupyter.lab.shortcuts", []):
            seen += 1
            if not other.get("disabled", False) and other.get("keys"):
                theirs = keystroke(other["keys"])
                # the same keys, or ours a prefix of a chord sequence of theirs (or theirs of ours)
                n = min(len(theirs), len(mine))
                assert theirs[:n] != mine[:n], (f"{binding['keys']} is bound to {other['command']} "
                                                f"({other.get('selector')}) in {path.relative_to(schemas)}")
    assert seen > 100, f"JupyterLab's own shortcuts were not found under {schemas}"


def test_newuser41_n10_the_readme_names_the_default_keys() -> None:
    [binding] = [b for b in ours() if b["command"] == OPEN]
    said = "+".join(binding["keys"][0].split())  # "Alt Shift G" → "Alt+Shift+G", as JupyterLab writes it
    readme = (ROOT / "README.md").read_text()
    assert f'quotas ({said})"' in readme and f"{said} or the palette's \"Show GPUs" in readme, said
