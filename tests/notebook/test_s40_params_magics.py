"""Session 40 (s40-params), the magics in a real kernel of a real jupyter_server with jupyter_sched.

- newuser39 n3: ``%schedule notebook daily_report.ipynb -p regoin=eu`` says the server's note on a parameter the
  notebook's parameters cell does not set ("did you mean 'region'?") once — the server's answer carries it now, and
  the magic's own reading of the file is said only where the answer did not.
- The executed notebook: a failed notebook job's line says "cell 1 (In [2] in the executed notebook) raised …";
  the CLI's ``wait`` said under it how to open that notebook, ``%schedule wait`` and ``%schedule status JOB`` did
  not (s39 nbopen's left-over). They say it in the CLI's words (:mod:`jupyter_sched.wording.executed`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nb_harness import TOKEN, Kernel
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sched.client import AsyncSchedClient, Connection
from jupyter_sched.wording.executed import executed_notebook_hint

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def _job_id(result: Any) -> str:
    return str(result.data[-1]["text/plain"]).strip("'\"")


def _report(root: Path, body: str = "print('REPORT', region, days)") -> None:
    nb = new_notebook(cells=[new_code_cell("region = 'us'\ndays = 7", metadata={"tags": ["parameters"]}),
                             new_code_cell(body)])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(root / "daily_report.ipynb"))


async def test_newuser39_n3_schedule_notebook_says_a_misspelt_parameter_once(start_kernel: StartKernel,
                                                                            jp_root_dir: Path) -> None:
    _report(jp_root_dir)
    kernel = await start_kernel()
    submitted = await kernel.run("%schedule notebook daily_report.ipynb -p regoin=eu --gpus 0 --time-limit 5m")
    assert submitted.error is None, submitted.text
    said = submitted.stdout
    assert said.count("did you mean 'region'?") == 1, said
    assert ("Note: parameter 'regoin' is not in daily_report.ipynb's parameters cell (region, days) — did you mean "
            "'region'? It is injected anyway") in said, said
    assert 'With parameters {"regoin": "eu"}, assigned after the notebook\'s cell tagged "parameters".' in said, said
    await kernel.run(f"%schedule cancel {_job_id(submitted)}")


async def test_s40_executed_schedule_wait_and_status_say_how_to_open_a_failed_notebook(
        start_kernel: StartKernel, jp_root_dir: Path, api: AsyncSchedClient) -> None:
    _report(jp_root_dir, "raise ValueError(f'unknown region {region!r}')")
    kernel = await start_kernel()
    submitted = await kernel.run("%schedule notebook daily_report.ipynb -p region=mars --gpus 0 --time-limit 5m")
    assert submitted.error is None, submitted.text
    job_id = _job_id(submitted)
    hint = (f"Its executed notebook (outputs and errors): %schedule logs {job_id} --notebook saves it here; "  # n11
            f"or the panel: My work → {job_id} → Open notebook.")
    waited = await kernel.run(f"%schedule wait {job_id} --no-raise-error", timeout_s=180)
    lines = waited.stdout.splitlines()
    failed = next(i for i, line in enumerate(lines) if "failed" in line and "in the executed notebook" in line)
    assert lines[failed + 1] == hint, waited.stdout  # right under the sentence that sends the reader there
    status = await kernel.run(f"%schedule status {job_id}")
    assert status.stdout.splitlines()[-1] == hint, status.stdout
    # one cancelled before it started, a running one, a script's: nothing to open, no hint (the same rule as the panel's)
    ended = await api.job(job_id)
    assert executed_notebook_hint(ended, save="S") is not None
    for unlike in ({"state": "cancelled", "started_at": None}, {"state": "running", "finished_at": None},
                   {"notebook": None, "script": "train.py"}):
        assert executed_notebook_hint({**ended, **unlike}, save="S") is None, unlike
