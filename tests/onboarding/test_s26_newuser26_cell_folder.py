"""newuser26: a job sees what the notebook's kernel sees — its folder (issue 20).

N9: the README's own ``%%schedule … import train; train.main()`` failed "No module named 'train'": the
cell ran as ``python .jupyter_sched/cells/<hash>.py``, which puts that folder first on ``sys.path``,
not the notebook's, as the kernel has. A cell, and any script carried by content (a hub's ``%%schedule``,
REST ``source``), now runs with its working directory first on ``sys.path``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import api, module_server, wait_state
from tests.onboarding.test_newuser11 import _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
HELPER = ("import os\nimport sys\n\n\ndef main():\n"
          "    print('main of train in', os.getcwd(), 'argv', sys.argv[1:], 'file', os.path.basename(__file__))\n")
PROBE = "import sys; print('name', __name__, 'script', sys.argv[0].rsplit('/', 1)[-1])\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu26folder", USERS)


@pytest.fixture
def notebook_dir(tmp_path: Path) -> Iterator[Path]:
    """A notebook's folder holding ``train.py``, the kernel's current folder (as Jupyter starts it)."""
    (tmp_path / "train.py").write_text(HELPER)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def _ended(server: EmbeddedServer, job_id: str) -> tuple[str, str]:
    state = wait_state(server, "tok-ann", job_id, "succeeded", "failed", "cancelled")["state"]
    return str(state), str(api(server, "tok-ann").get(f"jobs/{job_id}/logs").json()["text"])


def test_newuser26_n9_a_cell_job_imports_a_module_beside_its_notebook(server: EmbeddedServer,
                                                                     notebook_dir: Path) -> None:
    job_id = _magics(server).schedule("--gpus 0 --time-limit 2m --name n9cell", "import train; train.main()\n" + PROBE)
    state, log = _ended(server, job_id)
    assert state == "succeeded", log
    assert f"main of train in {notebook_dir} argv [] file train.py" in log, log
    cell = next(notebook_dir.joinpath(".jupyter_sched", "cells").glob("*.py")).name
    assert f"name __main__ script {cell}" in log, log  # run as `python CELL.py` would, but for sys.path


def test_newuser26_n9_a_carried_cell_imports_from_its_working_directory(server: EmbeddedServer,
                                                                       notebook_dir: Path) -> None:
    """The hub's route: the cell's text is carried and written into the job's own directory; the job
    starts in its working directory, which goes first on ``sys.path`` (not the job's directory)."""
    made = api(server, "tok-ann").post("jobs", json={
        "gpus": 0, "name": "n9carried", "time_limit_s": 120, "working_dir": str(notebook_dir),
        "script": "cell-n9.py", "source": "import train; train.main()\n" + PROBE, "args": ["--epochs", "3"]})
    assert made.status_code == 201, made.text
    state, log = _ended(server, made.json()["id"])
    assert state == "succeeded", log
    assert f"main of train in {notebook_dir} argv ['--epochs', '3'] file train.py" in log, log
    assert "name __main__ script cell-n9.py" in log, log
