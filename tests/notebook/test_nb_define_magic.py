"""``%schedule define`` in a real kernel against a real server: the whole life of a definition from a notebook."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nb_harness import Kernel, wait_for
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.slow

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    return {"definition_min_interval_s": 1.0}


async def test_define_list_run_pause_resume_edit_delete_from_a_notebook(start_kernel: StartKernel,
                                                                        jp_root_dir: Path) -> None:
    cell = new_code_cell("region = 'us'")
    cell.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[cell, new_code_cell("print('report for', region)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(jp_root_dir / "report.ipynb"))
    kernel = await start_kernel()
    await kernel.run(f"import os; os.chdir({str(jp_root_dir)!r})")
    defined = await kernel.run('d = %schedule define report.ipynb --cron "0 12 * * 1-5" --tz Europe/Berlin '
                               "-p region=eu --gpus 0\nd")
    assert defined.error is None, defined.text
    assert "At 12:00 on Monday through Friday (Europe/Berlin); next run" in defined.stdout
    listed = await kernel.run("%schedule define list")
    assert "report" in listed.text and "At 12:00 on Monday through Friday" in listed.text
    run = await kernel.run("job = %schedule define run {d} -p region=apac\njob")
    assert run.error is None, run.text
    assert 'parameters {"region": "apac"}' in run.stdout
    waited = await kernel.run("%schedule wait {job} --timeout 2m", timeout_s=150)
    assert "succeeded" in waited.stdout, waited.text
    runs = await kernel.run("%schedule define runs {d}")
    assert "run now" in runs.text and "succeeded" in runs.text and "apac" in runs.text  # N7 (s24): not "manual"
    assert "Paused" in (await kernel.run("%schedule define pause {d}")).stdout
    assert "Resumed" in (await kernel.run("%schedule define resume {d}")).stdout
    edited = await kernel.run("%schedule define edit {d} --cron '*/2 * * * * *'")
    assert "Every second second" in edited.stdout, edited.text

    async def fired() -> bool:
        shown = await kernel.run("%schedule define show {d}")
        return "schedule" in shown.text

    await wait_for(fired, timeout_s=60)
    deleted = await kernel.run("%schedule define delete {d}")
    assert "Deleted" in deleted.stdout
    bad = await kernel.run('%schedule define report.ipynb --cron "0 25 * * *"')
    assert bad.error is not None and "--cron:" in bad.text and "Traceback" not in bad.text  # the flag typed (issue 20)
