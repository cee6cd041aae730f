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

from jupyter_sched.wording.executed import NAME_BUDGET_BYTES, executed_copy_name
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


LONG_STEMS = ["🚀" * 55, "🚀" * 64, "é" * 126, "报告" * 45, "a" * 250, "x" * 220 + " " * 30 + "y",
              "e\u0301" * 90, "👩‍👩‍👧" * 20]


def test_newuser41_N4_a_long_name_in_bytes_is_cut_on_a_character_boundary_and_keeps_its_tail_whole(
        tmp_path: Path) -> None:
    """newuser41 N4: ``🚀`` 55 times + ``.ipynb`` (226 bytes, a legal name) + `` (executed j-…).ipynb`` passed the 255-byte
    NAME_MAX. Every derived name now fits (with room for the server's ``-50`` of a taken name), is the stem's start
    (whole characters), and ends in the whole tail; a short one is as it was; the file system takes each."""
    job_id = "j-1m994hzqx-cbjffj"
    tail = f" (executed {job_id}).ipynb"
    for stem in LONG_STEMS:
        for cut in (len(stem), len(stem) - 1, len(stem) // 2):
            notebook = stem[:cut] + ".ipynb"
            name = executed_copy_name(notebook, job_id)
            assert name.endswith(tail), name
            kept = name[: -len(tail)]
            assert len(name.encode("utf-8")) <= NAME_BUDGET_BYTES, (len(name.encode("utf-8")), name)
            if len((stem[:cut] + tail).encode("utf-8")) <= NAME_BUDGET_BYTES:
                assert kept == stem[:cut].strip(), name  # short enough: not cut
            else:
                assert kept.endswith("…") and stem[:cut].startswith(kept[:-1]), name
            (tmp_path / name).write_text("{}")  # before: OSError [Errno 36] File name too long
            (tmp_path / (Path(name).stem + "-50.ipynb")).write_text("{}")
    assert len(executed_copy_name("🚀" * 55 + ".ipynb", job_id).encode("utf-8")) == 251


@pytest.mark.slow  # a real server and a real notebook run
def test_newuser41_N4_the_cli_and_the_server_save_the_copy_of_a_long_named_notebook(
        server: EmbeddedServer, tmp_path: Path) -> None:
    notebook = "🚀" * 55 + ".ipynb"  # 226 bytes
    (tmp_path / notebook).write_text(json.dumps({
        "cells": [{"cell_type": "code", "source": "print(1)", "metadata": {}, "outputs": [], "execution_count": None}],
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}))
    ran = cli(server, "tok-ann", tmp_path, "submit", "--notebook", notebook, "--gpus", "0", "--name", "longnb41",
              "--wait")
    assert ran.code == 0, ran
    job_id = next(word for word in (ran.out + ran.err).split() if word.startswith("j-"))
    name = executed_copy_name(notebook, job_id)
    saved = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook")
    assert saved.code == 0 and str(tmp_path / name) in saved.out, saved  # before: "-o: cannot write …", exit 2
    assert "-o:" not in saved.err and (tmp_path / name).is_file()
    ann = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-ann"}, timeout=30)
    opened = ann.post(f"jobs/{job_id}/notebook/open")
    assert opened.status_code == 200, opened.text  # before: 500 and a traceback
    assert opened.json()["path"] == f"scheduled-runs/{name}"
    download = ann.get(f"jobs/{job_id}/notebook", params={"download": "true"})
    assert unquote(download.headers["Content-Disposition"].split("filename*=UTF-8''", 1)[1]) == name
