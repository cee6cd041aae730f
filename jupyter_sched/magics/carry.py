"""What ``%%schedule`` sends through a hub: the work's content, not paths on the kernel's host.

Embedded, a job runs on the kernel's own machine, as the kernel's user: the magics send the
kernel's interpreter and absolute paths, as before. Through a hub the job runs where the central
service puts it — another host, a Kubernetes pod — where neither the kernel's interpreter nor its
files exist. There the magics send:

* a cell or script as ``{"script": "<name>.py", "source": <text>, "args": [...]}``;
* a notebook as ``{"notebook": "<name>.ipynb", "notebook_json": <JSON without outputs>}``
  (outputs are not needed to run it and would only make the request larger);
* no interpreter: the executing side runs ``python`` of the owner's default environment;
* the working directory only as ``~/<path>`` when the kernel works inside its home directory (the
  executing side resolves ``~`` to the owner's home locally, or to the configured home volume on
  Kubernetes), else none: the job starts in the owner's home.

Files the work reads besides itself (data, modules it imports) must be where the job runs: the
home directory on the same host, or the home volume mounted into job pods (docs/admin.md, JupyterHub).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .. import untrusted_json

__all__ = ["carried_notebook", "carried_script", "home_working_dir"]


def home_working_dir(cwd: Path, home: Path) -> str | None:
    """``~/<relative>`` (or ``~``) for a ``cwd`` inside ``home``; None elsewhere."""
    try:
        relative = cwd.resolve().relative_to(home.resolve())
    except ValueError:
        return None
    return "~" if not relative.parts else f"~/{relative.as_posix()}"


def carried_script(name: str, source: str, args: Sequence[str] = ()) -> dict[str, Any]:
    """Body fields of a script or cell carried by content (``name`` ends in ``.py``)."""
    body: dict[str, Any] = {"script": name if name.endswith(".py") else f"{name}.py", "source": source}
    if args:
        body["args"] = list(args)
    return body


def carried_notebook(path: Path, text: str | None = None) -> dict[str, Any]:
    """Body fields of a notebook carried by content (``text``: its text, read by the caller in bounds; else read
    here), outputs and execution counts removed.

    Raises:
        OSError: the notebook cannot be read.
        ValueError: it is not JSON.
    """
    notebook = untrusted_json.loads(path.read_text(encoding="utf-8") if text is None else text)
    for cell in notebook.get("cells", ()) if isinstance(notebook, dict) else ():
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
    return {"notebook": path.name, "notebook_json": json.dumps(notebook)}
