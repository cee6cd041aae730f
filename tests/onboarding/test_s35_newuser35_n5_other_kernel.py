"""newuser35 N5: with a kernel of another environment (a conda env, a project venv — the usual case) the README's
first notebook line failed with a bare ``ModuleNotFoundError`` traceback and nothing said the kernel needs
jupyter_sched. The README's "In a notebook" and the quickstart's first cell now say which kernel has it and how to
add it to another one, with an extra the package really has (checked against pyproject.toml)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[2]


def _said(text: str) -> None:
    assert "No module named 'jupyter_sched'" in text and "Python 3" in text, text
    install = re.search(r"/bin/python -m pip install '[^']*\[(\w+)\]'", text)
    assert install, text
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert install.group(1) in extras and any(dep.startswith("pandas") for dep in extras[install.group(1)]), extras


def test_newuser35_n5_the_readme_says_which_kernels_run_the_magics_and_how_to_add_one() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### In a notebook"):]
    _said(section[:section.index("\n### ", 5)])


def test_newuser35_n5_the_quickstarts_first_cell_says_it_before_load_ext() -> None:
    cells = json.loads((ROOT / "notebooks" / "quickstart.ipynb").read_text())["cells"]
    first_code = next(i for i, c in enumerate(cells) if c["cell_type"] == "code")
    assert "%load_ext jupyter_sched" in "".join(cells[first_code]["source"])
    _said("".join("".join(c["source"]) for c in cells[:first_code] if c["cell_type"] == "markdown"))
