"""newuser38 n15: the README names the notebook toolbar's button "Run on GPUs", but the button showed only an icon
(JupyterLab shows no text for a settings-declared toolbar command that has an icon, unless the item gives a
``label``), so a newcomer looking for the README's words did not find it. The toolbar item in the extension's
settings schema carries the label the README uses; the browser test (ui-tests/tests/panel.spec.ts) checks the
button's text in a real JupyterLab."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_newuser38_n15_the_notebook_toolbar_button_shows_the_readmes_name() -> None:
    schema = json.loads((ROOT / "labextension" / "schema" / "plugin.json").read_text())
    [item] = [i for i in schema["jupyter.lab.toolbars"]["Notebook"] if i["command"] == "jupyter-sched:run-notebook"]
    readme = (ROOT / "README.md").read_text()
    named = re.search(r"toolbar button\s+\"([^\"]+)\"", readme)
    assert named is not None, "the README names the notebook toolbar button"
    assert item.get("label") == named.group(1) == "Run on GPUs", (item, named.group(1))
