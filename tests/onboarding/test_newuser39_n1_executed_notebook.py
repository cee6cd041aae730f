"""newuser39 N1: a failed one-off notebook job pointed at "the executed notebook" its owner could not open.

``jupyter-sched submit --notebook rep.ipynb -p region=mars --wait`` failed with "cell 2 (In [3] in the executed
notebook) raised …" and the log ended with a path in the job's folder (on a hub, the service's 0700 folder:
``Permission denied``); no command fetched it. Now the log's last line and the wait's outcome say how to open it
(``jupyter-sched logs JOB --notebook``, the panel's Open notebook), and ``logs JOB --notebook [-o FILE]`` saves
it through the server — the owner's only; another user's try is refused and audited. Real ``jupyter server``
subprocess (SQLite, simulated GPUs), a real notebook job run by the local executor, real CLI subprocesses.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cli_server import Run
from tests.onboarding.test_cli_firsthour import module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

pytestmark = pytest.mark.slow  # a real server and a real notebook run

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", "tok-bob": "bob", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nbopen", USERS)


def cli(server: EmbeddedServer, token: str, cwd: Path, *argv: str) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": token, "PYTHONPATH": str(ROOT)})
    done = subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=180, cwd=cwd)
    return Run(done.returncode, done.stdout, done.stderr)


def _report(path: Path) -> Path:
    cells = [{"cell_type": "code", "source": "region = 'eu'", "metadata": {"tags": ["parameters"]}, "outputs": [],
              "execution_count": None},
             {"cell_type": "code", "source": "print('REGION', region)", "metadata": {}, "outputs": [],
              "execution_count": None},
             {"cell_type": "code", "source": "if region not in ('eu', 'us'):\n"
                                             "    raise ValueError(f'unknown region {region!r}')",
              "metadata": {}, "outputs": [], "execution_count": None}]
    nb = {"cells": cells, "nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}}
    path.write_text(json.dumps(nb), encoding="utf-8")
    return path


def test_newuser39_N1_a_failed_notebook_jobs_executed_notebook_is_fetched_by_its_owner_only(
        server: EmbeddedServer, tmp_path: Path) -> None:
    _report(tmp_path / "rep.ipynb")
    ran = cli(server, "tok-ann", tmp_path, "submit", "--notebook", "rep.ipynb", "-p", "region=mars", "--gpus", "0",
              "--name", "nbf", "--wait")
    assert ran.code == 4, ran
    assert "raised ValueError: unknown region 'mars'" in ran.out, ran
    job_id = next(word for word in (ran.out + ran.err).split() if word.startswith("j-"))
    # the failure sentence is followed by how to open what it points at (not a path)
    assert f"jupyter-sched logs {job_id} --notebook saves it here" in ran.err, ran
    assert "Open notebook" in ran.err, ran
    log = cli(server, "tok-ann", tmp_path, "logs", job_id)
    assert log.code == 0, log
    last = log.out.rstrip("\n").splitlines()[-1]
    assert f"jupyter-sched logs {job_id} --notebook" in last and "Open notebook" in last, log.out
    assert str(server.workdir) not in last and ".ipynb" not in last, last  # no path its owner may not read

    saved = cli(server, "tok-ann", tmp_path, "logs", "nbf", "--notebook")  # a name of mine, as logs takes it
    assert saved.code == 0, saved
    target = tmp_path / f"rep (executed {job_id}).ipynb"
    assert str(target) in saved.out, saved
    executed = json.loads(target.read_text(encoding="utf-8"))
    errors = [out for cell in executed["cells"] for out in cell.get("outputs", ()) if out["output_type"] == "error"]
    assert errors and errors[0]["ename"] == "ValueError" and "mars" in errors[0]["evalue"], executed["cells"]
    again = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook")  # newuser40 n13: the same notebook
    assert again.code == 0 and "already saved, the same" in again.out and str(target) in again.out, again
    target.write_text("my own edits", encoding="utf-8")  # a file that differs is never overwritten
    changed = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook")
    assert changed.code == 2 and "already exists and holds something else" in changed.err, changed
    assert "-o FILE" in changed.err and "-o:" not in changed.err, changed  # no option the user did not type
    assert target.read_text(encoding="utf-8") == "my own edits"  # not overwritten
    target.write_text(json.dumps(executed), encoding="utf-8")
    printed = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook", "-o", "-")
    assert printed.code == 0 and json.loads(printed.out)["cells"] == executed["cells"], printed
    named = cli(server, "tok-ann", tmp_path, "logs", job_id, "--notebook", "-o", "mine.ipynb")
    assert named.code == 0 and json.loads((tmp_path / "mine.ipynb").read_text())["cells"] == executed["cells"]
    stray = cli(server, "tok-ann", tmp_path, "logs", job_id, "-o", "x.ipynb")
    assert stray.code == 2 and "--notebook" in stray.err and not (tmp_path / "x.ipynb").exists(), stray

    # another user's: refused (as no such job, existence not revealed) and audited; nothing written
    theirs = tmp_path / "bob"
    theirs.mkdir()
    refused = cli(server, "tok-bob", theirs, "logs", job_id, "--notebook")
    assert refused.code == 1 and "Traceback" not in refused.err and job_id in refused.err, refused
    assert list(theirs.iterdir()) == []
    boss = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-boss"}, timeout=30)
    audit = boss.get("audit", params={"user": "bob", "limit": 10}).json()
    assert any(r.get("job_id") == job_id or job_id in json.dumps(r) for r in audit), audit


def test_newuser39_N1_logs_help_names_the_notebook_option() -> None:
    from jupyter_sched.cli.main import build_parser

    text = build_parser("logs")._subparsers._group_actions[0].choices["logs"].format_help()  # type: ignore[union-attr]
    assert "--notebook" in text and "-o FILE" in text and "executed notebook" in text, text
