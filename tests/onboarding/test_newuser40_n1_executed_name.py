"""newuser40 N1: one run's executed notebook had three names — the panel's ``scheduled-runs/<job>/fail.ipynb`` (then
``fail-2.ipynb``, ``fail-3.ipynb``, … on each click), the CLI's ``fail-j-….ipynb`` and the download's — and the
panel's read like the user's own notebook. Now one rule on the server, ``executed_copy_name``:
``fail (executed j-…).ipynb``, which the CLI's ``logs JOB --notebook``, the download's ``Content-Disposition``
and the server's ``notebook/open`` use, and which the panel's ``executedCopyName`` follows (both checked against
one table, labextension/test/executed_names.json). Real ``jupyter server`` subprocess (SQLite, simulated GPUs), a
real notebook job run by the local executor, real CLI subprocesses.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest

from jupyter_sched.wording.executed import executed_copy_name
from tests.onboarding.test_cli_firsthour import module_server
from tests.onboarding.test_newuser39_n1_executed_notebook import USERS, cli
from tests.reliability.harness import EmbeddedServer

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "labextension" / "test" / "executed_names.json").read_text(encoding="utf-8"))


def test_newuser40_N1_the_server_names_every_case_of_the_shared_table_as_the_panel_does() -> None:
    for case in TABLE["cases"]:
        assert executed_copy_name(case["notebook"], case["job_id"]) == case["name"], case


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nbname40", USERS)


@pytest.mark.slow  # a real server and a real notebook run
def test_newuser40_N1_the_cli_and_the_download_give_one_name_that_says_it_is_the_run(
        server: EmbeddedServer, tmp_path: Path) -> None:
    notebook = "报告.ipynb"  # a name a download header cannot carry as it is (latin-1)
    cells = [{"cell_type": "code", "source": "raise IndexError('list index out of range')", "metadata": {},
              "outputs": [], "execution_count": None}]
    (tmp_path / notebook).write_text(json.dumps({
        "cells": cells, "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}))
    ran = cli(server, "tok-ann", tmp_path, "submit", "--notebook", notebook, "--gpus", "0", "--name", "fail40",
              "--wait")
    assert ran.code == 4, ran
    job_id = next(word for word in (ran.out + ran.err).split() if word.startswith("j-"))
    name = f"报告 (executed {job_id}).ipynb"
    assert executed_copy_name(notebook, job_id) == name

    saved = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook")
    assert saved.code == 0 and str(tmp_path / name) in saved.out, saved  # before: 报告-j-….ipynb
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([notebook, name])

    ann = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-ann"}, timeout=30)
    download = ann.get(f"jobs/{job_id}/notebook", params={"download": "true"})
    assert download.status_code == 200, download.text  # before: a non-latin-1 header
    disposition = download.headers["Content-Disposition"]
    assert disposition.startswith('attachment; filename="__ (executed '), disposition  # ASCII for old clients
    assert unquote(disposition.split("filename*=UTF-8''", 1)[1]) == name, disposition
    assert json.loads(download.text)["cells"] == json.loads((tmp_path / name).read_text())["cells"]
    assert "--notebook" in cli(server, "tok-ann", tmp_path, "logs", "--help").out
    assert '"NOTEBOOK (executed JOB).ipynb"' in " ".join(
        cli(server, "tok-ann", tmp_path, "logs", "--help").out.split())
