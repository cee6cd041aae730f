"""The example notebooks execute headless (nbclient) in kernels started by a real jupyter_sched server.

Each notebook runs unchanged from ``notebooks/`` in a tmp root dir against the simulated default
inventory (this machine has no GPU); the assertions read the cells' outputs.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.slow  # end-to-end: kernels, jobs and notebooks on a real server

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


async def _execute(serverapp: Any, root: Path, name: str) -> nbformat.NotebookNode:
    shutil.copy(NOTEBOOKS / name, root / name)
    nb = nbformat.read(str(root / name), as_version=4)
    kernel_id = await serverapp.kernel_manager.start_kernel(path="")
    km = serverapp.kernel_manager.get_kernel(kernel_id)
    try:
        client = NotebookClient(nb, km=km, timeout=180, allow_errors=False)
        await client.async_execute()
    finally:
        await serverapp.kernel_manager.shutdown_kernel(kernel_id, now=True)
    return nb


def cell_text(cell: Any) -> str:
    """What one executed cell showed: its streams, plain-text results and tracebacks, in order."""
    parts: list[str] = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        elif "data" in output:
            parts.append(str(output["data"].get("text/plain", "")))
        elif output.get("output_type") == "error":
            parts.extend(output.get("traceback", []))
    return "\n".join(parts)


def _text(nb: nbformat.NotebookNode) -> str:
    return "\n".join(text for text in (cell_text(cell) for cell in nb.cells) if text)


def _mimetypes(nb: nbformat.NotebookNode) -> set[str]:
    return {mime for cell in nb.cells for out in cell.get("outputs", []) for mime in out.get("data", {})}


def test_notebooks_are_committed_without_outputs() -> None:
    for path in NOTEBOOKS.glob("*.ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            assert not cell.get("outputs") and not cell.get("execution_count"), path.name


async def test_quickstart_runs_end_to_end(sched_app: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    nb = await _execute(jp_serverapp, jp_root_dir, "quickstart.ipynb")
    text = _text(nb)
    assert "Allocated GPU-" in text
    granted = next(line for line in text.splitlines() if line.startswith("granted:")).split()[-1]
    assert f"CUDA_VISIBLE_DEVICES: {granted}" in text
    assert "Submitted job" in text
    assert "CUDA_VISIBLE_DEVICES in the job: GPU-" in text
    assert "checkpoint written to checkpoints/model.npz" in text
    assert "succeeded" in text
    assert "Released lease" in text
    assert (jp_root_dir / "checkpoints" / "model.npz").is_file()
    assert "text/html" in _mimetypes(nb)  # the %gpu and queue DataFrames


async def test_admin_quotas_sets_quotas_and_charts_usage(sched_app: Any, jp_serverapp: Any,
                                                          jp_root_dir: Path) -> None:
    nb = await _execute(jp_serverapp, jp_root_dir, "admin_quotas.ipynb")
    text = _text(nb)
    # issue 20 (new-user finding 10): a fresh server has no quotas — one sentence, not a table with no columns
    assert "No quotas set: every team shares all GPUs." in text
    assert "Empty DataFrame" not in text and "Columns: []" not in text
    set_cell = next(c for c in nb.cells if "updated = sched.set_quotas(" in c.source)
    set_table = "".join(str(o.get("data", {}).get("text/plain", "")) for o in set_cell.outputs)
    assert set_table.splitlines()[0].split() == ["team", "user", "gpu_model", "guaranteed", "borrowing_limit"]
    # round 3, finding 13: whole GPU counts and durations as an admin types them; no claim of a column it lacks
    assert ".0 " not in set_table and "(whole team)" in set_table, set_table
    assert "window_s" in text and "1800.0" not in text and "30m" in text
    assert "utilized where telemetry exists" not in "".join(c.source for c in nb.cells)
    assert "admin: True" in text
    assert "refused:" in text and "guaranteed" in text
    assert "succeeded" in text
    assert "application/vnd.plotly.v1+json" in _mimetypes(nb)
    # issue 20: the text promises usage "rolled up per user and team" — the table has a team column
    usage_cell = next(c for c in nb.cells if c.source.startswith("usage = sched.usage("))
    table = "".join(str(o.get("data", {}).get("text/plain", "")) for o in usage_cell.outputs)
    header = table.splitlines()[0].split()
    assert "team" in header and "user" in header, table
    assert "research" in table


async def test_definitions_notebook_defines_runs_with_parameters_and_reads_a_failure(
        sched_app: Any, jp_serverapp: Any, jp_root_dir: Path) -> None:
    nb = await _execute(jp_serverapp, jp_root_dir, "definitions.ipynb")
    text = _text(nb)
    assert "At 07:00 on Monday through Friday (Europe/Berlin); next run" in text
    assert "apac: mean GPU load over 30 days" not in text  # the run's log, not the notebook, has the numbers
    assert "succeeded" in text and "failed" in text
    assert ("cell 3 (In [4] in the executed notebook) raised ValueError: unknown region 'mars'; use one of "
            "['apac', 'eu', 'us']") in text
    assert "failing cell source: if region not in KNOWN:" in text
    assert "its error: ValueError - unknown region 'mars'" in text
    assert "Deleted" in text
