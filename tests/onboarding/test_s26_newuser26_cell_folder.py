"""newuser26: a job sees what the notebook's kernel sees — its folder (issue 20).

N9: the README's own ``%%schedule … import train; train.main()`` failed "No module named 'train'": the
cell ran as ``python .jupyter_sched/cells/<hash>.py``, which puts that folder first on ``sys.path``,
not the notebook's, as the kernel has. A cell, and any script carried by content (a hub's ``%%schedule``,
REST ``source``), now runs with its working directory first on ``sys.path``.

N10: a one-off notebook job (``%schedule notebook``, ``submit --notebook``) ran in the submitter's folder
while a definition's run of the same notebook ran in its folder: one rule now, the notebook's folder
unless ``--workdir``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.onboarding.test_cli_firsthour import api, cli, module_server, wait_state
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


def _reads_a_file_beside_it(folder: Path) -> Path:
    """``folder/sub/readlocal.ipynb`` reading ``local.txt`` and importing ``helper26`` beside it."""
    sub = folder / "sub"
    sub.mkdir()
    (sub / "local.txt").write_text("read beside the notebook\n")
    (sub / "helper26.py").write_text("WORD = 'helper beside the notebook'\n")
    source = "import os, helper26\nprint('cwd', os.getcwd())\nprint(open('local.txt').read().strip(), helper26.WORD)\n"
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "id": "c1", "metadata": {}, "outputs": [],
                           "source": source}],
                "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
                "nbformat": 4, "nbformat_minor": 5}
    (sub / "readlocal.ipynb").write_text(json.dumps(notebook))
    return sub


def test_newuser26_n10_a_one_off_notebook_job_starts_in_the_notebooks_folder(server: EmbeddedServer,
                                                                             notebook_dir: Path) -> None:
    sub = _reads_a_file_beside_it(notebook_dir)
    by_magic = _magics(server).schedule("notebook sub/readlocal.ipynb --gpus 0 --time-limit 2m --name n10magic", None)
    ran = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "2m", "--name", "n10cli",
              "--notebook", "sub/readlocal.ipynb")  # from the notebook's parent folder, as the tester's terminal
    assert ran.code == 0, ran.err
    by_cli = re.search(r"submitted (j-[\w-]+) ", ran.out)
    assert by_cli, ran.out
    for job_id in (by_magic, by_cli.group(1)):
        state, log = _ended(server, job_id)
        assert state == "succeeded", log
        assert f"cwd {sub}" in log and "read beside the notebook helper beside the notebook" in log, log
        job = api(server, "tok-ann").get(f"jobs/{job_id}").json()
        assert job["working_dir"] == str(sub) and job["notebook"] == str(sub / "readlocal.ipynb"), job
    # --workdir still says where it starts; the notebook's path is read there, as before
    ran = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "2m", "--name", "n10workdir",
              "--workdir", str(sub), "--notebook", "readlocal.ipynb")
    assert ran.code == 0, ran.err
    job_id = re.search(r"submitted (j-[\w-]+) ", ran.out).group(1)  # type: ignore[union-attr]
    assert api(server, "tok-ann").get(f"jobs/{job_id}").json()["working_dir"] == str(sub)
    assert _ended(server, job_id)[0] == "succeeded"


def test_newuser26_n10_rest_starts_a_notebook_named_by_its_path_in_its_folder(server: EmbeddedServer,
                                                                              notebook_dir: Path) -> None:
    """The one rule lives in the request's reading: a REST client sending only the notebook's path
    gets the notebook's folder too (a carried notebook has none: it starts where jobs naming none do)."""
    sub = _reads_a_file_beside_it(notebook_dir)
    made = api(server, "tok-ann").post("jobs", json={"gpus": 0, "name": "n10rest", "time_limit_s": 120,
                                                     "notebook": str(sub / "readlocal.ipynb")})
    assert made.status_code == 201, made.text
    assert made.json()["working_dir"] == str(sub), made.json()
    state, log = _ended(server, made.json()["id"])
    assert state == "succeeded" and "read beside the notebook" in log, log


def test_newuser26_n11_the_cell_note_names_the_environment_the_kernel_set_and_not_its_values(
        server: EmbeddedServer, notebook_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``%env FOO=bar`` did not reach a ``%%schedule`` job and the note named only the kernel's variables."""
    magics = _magics(server)
    monkeypatch.setenv("NU26_FLAG", "secret-value")  # %env NU26_FLAG=secret-value, after the magics loaded
    monkeypatch.setenv("NU26_GIVEN", "x")
    job_id = magics.schedule("--gpus 0 --time-limit 2m --name n11env --env NU26_GIVEN=y",
                             "import os; print('flag', os.environ.get('NU26_FLAG'), os.environ.get('NU26_GIVEN'))\n")
    said = capsys.readouterr().out
    assert ("this kernel's variables are not shared with it, nor its environment (%env): --env NAME passes one as "
            "set here, --env NAME=VALUE another value (set in this kernel, not passed: NU26_FLAG).") in said, said
    assert "secret-value" not in said
    state, log = _ended(server, job_id)
    assert state == "succeeded" and "flag None y" in log, log  # as the note says


def test_newuser26_n2_a_second_job_of_a_live_name_is_said_at_submit(server: EmbeddedServer, notebook_dir: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Re-running a ``%%schedule`` cell (or ``submit --name X``) while X runs started a second job silently."""
    magics = _magics(server)
    cell = "import time; time.sleep(120)\n"
    first = magics.schedule("--gpus 0 --time-limit 3m --name rerun26", cell)
    assert "already" not in capsys.readouterr().out  # the first of its name: no note
    second = magics.schedule("--gpus 0 --time-limit 3m --name rerun26", cell)
    said = capsys.readouterr().out
    assert "Note: a job named 'rerun26' is already " in said and f"({first}, submitted " in said, said
    # no surface's command in the server's note (newuser32 n4: the CLI's first, in a notebook): each has its own cancel
    assert f"): this is another one — if re-running it was a slip, cancel the older, {first}" in said, said
    assert "jupyter-sched" not in said, said
    ran = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "3m", "--name", "rerun26", "--", "true")
    assert ran.code == 0, ran.err
    assert "jupyter-sched submit: note: a job named 'rerun26' is already " in ran.err, ran.err
    assert f"({first}, submitted " in ran.err and ", and 1 more of that name)" in ran.err, ran.err
    for job_id in (first, second):
        assert api(server, "tok-ann").delete(f"jobs/{job_id}").status_code in (200, 202)
    other = cli(server, "tok-boss", "submit", "--gpus", "0", "--time-limit", "1m", "--name", "rerun26", "--", "true")
    assert other.code == 0 and "already" not in other.err, other.err  # another user's job of that name: not mine


def test_newuser26_n3_python_of_a_missing_script_is_refused_at_submit(server: EmbeddedServer, notebook_dir: Path) -> None:
    """``submit -- python nosuch.py`` was accepted and failed at its start (exit 2), while ``-- nosuchprog`` is
    refused at once; a script that exists, ``-m``/``-c`` and a non-Python program are not touched."""
    ran = cli(server, "tok-ann", "submit", "--gpus", "0", "--time-limit", "2m", "--", "python", "nosuch.py")
    assert ran.code != 0 and "submitted" not in ran.out, ran.out
    assert (f"'nosuch.py' does not exist in {notebook_dir} (the job's working directory)") in ran.err, ran.err
    assert "give the path of the script" in ran.err, ran.err
    ann = api(server, "tok-ann")
    refused = ann.post("jobs", json={"gpus": 0, "command": ["python3", str(notebook_dir / "gone.py"), "--x"],
                                     "working_dir": str(notebook_dir)})
    assert refused.status_code == 400, refused.text
    error = refused.json()["error"]
    assert error["field"] == "command" and error["message"] == f"script {str(notebook_dir / 'gone.py')!r} does not exist"  # newuser31 n15
    for fine in (["python3", "train.py"], ["python3", "-c", "print(1)"], ["python3", "-m", "train"], ["true", "x.py"]):
        made = ann.post("jobs", json={"gpus": 0, "command": fine, "working_dir": str(notebook_dir), "time_limit_s": 60})
        assert made.status_code == 201, (fine, made.text)


def test_newuser26_n4_logs_tail_prints_the_last_lines_and_follows_from_there(server: EmbeddedServer,
                                                                            notebook_dir: Path) -> None:
    """``logs -n 5`` / ``--tail 5`` was "unexpected arguments": an 18 MB log printed whole, ``-f`` replayed it all."""
    made = api(server, "tok-ann").post("jobs", json={
        "gpus": 0, "name": "tail26", "time_limit_s": 60, "working_dir": str(notebook_dir),
        "command": ["python3", "-c", "print('\\n'.join(f'row {i}' for i in range(3000)), end=''); print(' end')"]})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    assert _ended(server, job_id)[0] == "succeeded"
    shown = cli(server, "tok-ann", "logs", job_id, "--tail", "3")
    assert shown.code == 0 and shown.out == "row 2997\nrow 2998\nrow 2999 end\n", shown
    followed = cli(server, "tok-ann", "logs", "tail26", "-n", "2", "-f")
    assert followed.code == 0 and followed.out == "row 2998\nrow 2999 end\n", followed
    assert "succeeded" in followed.err, followed.err
    assert cli(server, "tok-ann", "logs", job_id, "--tail", "0").out == ""
    refused = cli(server, "tok-ann", "logs", job_id, "--tail", "-4")
    # the option the user typed, and the rule (newuser36 n6 made the CLI's and the magic's words one)
    assert refused.code != 0 and "--tail: '-4' is not a count of lines — give 0 or more" in refused.err, refused.err


def test_newuser26_n8_submit_dry_run_says_the_fit_and_submits_nothing(server: EmbeddedServer, notebook_dir: Path) -> None:
    """``submit --dry-run`` was "not an option" while ``%schedule dryrun`` and the panel's Check fit existed."""
    def count() -> int:
        rows = api(server, "tok-ann").get("jobs", params={"limit": 1000}).json()
        return len(rows["jobs"] if isinstance(rows, dict) else rows)

    before = count()
    fits = cli(server, "tok-ann", "submit", "--dry-run", "--gpus", "1", "--time-limit", "1m", "--", "python3", "train.py")
    assert fits.code == 0 and fits.out.startswith("Would start now on "), fits
    never = cli(server, "tok-ann", "submit", "--dry-run", "--gpus", "4", "--time-limit", "1m", "--", "true")
    assert never.code == 0 and never.out.startswith("Would never start here: "), never
    assert "submitted" not in fits.out + never.out
    assert count() == before  # nothing was enqueued
