"""New user 14's finding N23 (/work/coord/notes/newuser14.md), of branch nu15-fix: a file that cannot run
— a notebook nbformat cannot read, a "script" that is not Python — was accepted at submit and at
definition create, and failed when it ran (a definition at night, after holding a GPU). One rule now
(``jupyter_sched.userfiles.content_problem``), said alike by REST (the service reads the file as the
job would), the CLI and the magics — against a real embedded server, the installed ``jupyter-sched``
command and the magics with a real client."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError

from jupyter_sched.magics.core import MagicError
from jupyter_sched.model import spec_from_request
from tests.accounts import os_accounts, shared_dir, skip_reason
from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.onboarding.test_hub_paths import hub_executor, owned
from tests.onboarding.test_newuser10 import _env
from tests.onboarding.test_newuser11 import _cli, _magics
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}
PASSWD = "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
NOTEBOOK_HINT = "give an .ipynb file saved by Jupyter (a Python file runs as a script)"
SCRIPT_HINT = "it would run with the job's Python: fix the file, or run another program as a command"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu15files", USERS)


@pytest.fixture
def files(tmp_path: Path) -> Path:
    """A folder with a notebook whose JSON is not a notebook, one that is not JSON, a "script" that is a
    passwd file, a shell script named .py, and a real notebook and script."""
    (tmp_path / "bad.ipynb").write_text('{"cells": 5}\n')
    (tmp_path / "text.ipynb").write_text("hello\n")
    (tmp_path / "passwd").write_text(PASSWD)
    (tmp_path / "run.py").write_text("#!/bin/bash\necho hi\n")
    good = {"cells": [{"cell_type": "code", "execution_count": None, "id": "a1", "metadata": {}, "outputs": [],
                       "source": "print(1)"}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "good.ipynb").write_text(json.dumps(good))
    (tmp_path / "good.py").write_text("print(1)\n")
    return tmp_path


def _refused(server: EmbeddedServer, route: str, body: dict[str, object]) -> dict[str, str]:
    answer = api(server, "tok-ann").post(route, json=body)
    assert answer.status_code == 400, (body, answer.text)
    error: dict[str, str] = answer.json()["error"]
    return error


def test_newuser15_n23_rest_refuses_a_file_that_cannot_run_at_submit(server: EmbeddedServer, files: Path) -> None:
    """N23: ``{"notebook": "bad.ipynb"}`` (``{"cells": 5}``) was a 201 that then failed "cannot read notebook
    bad.ipynb: its JSON is not a Jupyter notebook"; a passwd file as ``script`` failed "SyntaxError". Both
    are a 400 at submit now, in the words the run would have said; a carried cell or notebook likewise;
    a real notebook and script are taken."""
    for name, problem in (("bad.ipynb", "its JSON is not a Jupyter notebook"), ("text.ipynb", "it is not JSON")):
        error = _refused(server, "jobs", {"gpus": 0, "notebook": str(files / name)})
        assert (error["field"], error["message"], error["hint"]) == (
            "notebook", f"notebook {str(files / name)!r} cannot be read: {problem}", NOTEBOOK_HINT), error
    for name, problem in (("passwd", "line 1: invalid syntax"), ("run.py", "line 2: invalid syntax")):
        error = _refused(server, "jobs", {"gpus": 0, "script": str(files / name)})
        assert (error["field"], error["message"], error["hint"]) == (
            "script", f"script {str(files / name)!r} is not a Python script: {problem}", SCRIPT_HINT), error
    carried = _refused(server, "jobs", {"gpus": 0, "script": "cell.py", "source": "!nvidia-smi\n"})
    assert (carried["field"], carried["message"]) == ("source", "script 'cell.py' is not a Python script: line 1: "
                                                                "invalid syntax"), carried
    shape = _refused(server, "jobs", {"gpus": 0, "notebook": "x.ipynb", "notebook_json": '{"cells": [{"x": 1}]}'})
    assert shape["message"] == "notebook 'x.ipynb' cannot be read: its JSON is not a Jupyter notebook", shape
    ann = api(server, "tok-ann")
    try:
        for body in ({"gpus": 0, "notebook": str(files / "good.ipynb")}, {"gpus": 0, "script": str(files / "good.py")}):
            assert ann.post("jobs", json=body).status_code == 201, body
    finally:
        clear(server)


def test_newuser15_n23_a_definition_of_a_file_that_cannot_run_is_refused_at_create(
        server: EmbeddedServer, files: Path) -> None:
    """N23: ``jupyter-sched definitions create /etc/passwd --cron "0 7 * * *"`` was defined (1 GPU) and
    failed with a SyntaxError when it fired — the user learns the next morning. REST and the CLI refuse it
    at create, with the submit's words."""
    error = _refused(server, "definitions", {"name": "nightly", "script": str(files / "passwd"),
                                             "schedule": "0 7 * * *"})
    assert (error["field"], error["message"]) == (
        "script", f"script {str(files / 'passwd')!r} is not a Python script: line 1: invalid syntax"), error
    said = _cli(_env(files, server), "definitions", "create", str(files / "bad.ipynb"), "--cron", "0 7 * * *")
    assert said.returncode != 0, said.stdout
    line = said.stderr.strip().splitlines()[-1]
    assert line.startswith(f"jupyter-sched definitions create: --notebook {str(files / 'bad.ipynb')!r} cannot be "
                           "read: its JSON is not a Jupyter notebook"), line
    assert "defined" not in said.stdout, said.stdout


def test_newuser15_n23_the_cli_and_the_magics_say_the_same_rule(server: EmbeddedServer, files: Path) -> None:
    """The CLI read the file at submit and said only "not a notebook (not JSON)" of a non-JSON one;
    ``{"cells": 5}`` and a passwd ``--script`` went through. Now ``submit`` and the magics' ``%schedule
    run`` / ``notebook`` refuse them before anything is sent, in REST's words with their own option."""
    env = _env(files, server)
    said = _cli(env, "submit", "--gpus", "0", "--notebook", str(files / "bad.ipynb"))
    assert said.returncode != 0 and "submitted" not in said.stdout, said.stdout
    assert said.stderr.strip().splitlines()[-1].startswith(
        f"jupyter-sched submit: --notebook {str(files / 'bad.ipynb')!r} cannot be read: its JSON is not a Jupyter "
        f"notebook — {NOTEBOOK_HINT}"), said.stderr
    said = _cli(env, "submit", "--gpus", "0", "--script", str(files / "passwd"))
    assert said.stderr.strip().splitlines()[-1].startswith(
        f"jupyter-sched submit: --script {str(files / 'passwd')!r} is not a Python script: line 1: invalid syntax — "
        "it would run with the job's Python: fix the file, or run another program after --"), said.stderr
    magics = _magics(server)
    here = os.getcwd()
    os.chdir(files)
    try:
        for line, want in (("run passwd", "script 'passwd' is not a Python script: line 1: invalid syntax"),
                           ("notebook bad.ipynb", "notebook 'bad.ipynb' cannot be read: its JSON is not a Jupyter "
                                                  "notebook")):
            with pytest.raises((MagicError, UsageError)) as refused:
                magics.schedule(line, None)
            assert str(refused.value).startswith(want), str(refused.value)
    finally:
        os.chdir(here)
    with pytest.raises(UsageError) as cell:  # a %%schedule cell runs as a Python file: `!ls` failed at its start
        magics.schedule("--gpus 0", "!nvidia-smi\nprint(1)\n")
    assert str(cell.value).startswith("%%schedule: the cell is not a Python script: line 1: invalid syntax. The "
                                      "cell runs as a Python file, not in IPython"), str(cell.value)
    jobs = api(server, "tok-ann").get("jobs").json()
    sent = [j for j in (jobs["jobs"] if isinstance(jobs, dict) else jobs)
            if str(j.get("script") or j.get("notebook") or "").endswith(("bad.ipynb", "passwd"))]
    assert not sent, sent  # nothing was submitted


def test_newuser33_n4_a_notebook_whose_kernel_is_not_installed_is_refused_at_submit_and_check_fit(
        server: EmbeddedServer, files: Path) -> None:
    """newuser33 N4: a notebook saved with a kernel not installed where it runs (``nosuchkernel``; a notebook from
    another machine) was accepted, held its GPU ~9 s and failed with jupyter_client's ``NoSuchKernel`` traceback.
    Embedded, the job runs as this server's account with its Python, so the server lists the kernels the runner
    could start and refuses it at submit — by path and carried (the panel) —, at dry run (the panel's Check fit)
    and on the CLI, naming the kernel, the kernels there are and the fix; ``Python3`` (any case) is taken."""
    nb = json.loads((files / "good.ipynb").read_text())
    nb["metadata"]["kernelspec"] = {"name": "nosuchkernel", "display_name": "X", "language": "python"}
    (files / "badkern.ipynb").write_text(json.dumps(nb))
    carried = json.dumps(nb)
    # jupyter_client finds a kernel whatever the case of its name: "Python3" runs, so it is taken
    nb["metadata"]["kernelspec"] = {"name": "Python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    (files / "py3.ipynb").write_text(json.dumps(nb))
    problem = "its kernel 'nosuchkernel' (X) is not installed where the job runs — kernels there: "
    fix = "change the notebook's kernel (Kernel → Change Kernel…, then save) or install that kernel: "
    path = str(files / "badkern.ipynb")
    for route, body, field, named in (("jobs", {"gpus": 0, "notebook": path}, "notebook", path),
                                      ("dryrun", {"gpus": 1, "notebook": path}, "notebook", path),
                                      ("jobs", {"gpus": 0, "notebook": "b.ipynb", "notebook_json": carried},
                                       "notebook_json", "b.ipynb")):
        error = _refused(server, route, body)
        assert (error["field"], error["message"].split("python3")[0]) == (
            field, f"notebook {named!r} cannot run: {problem}"), (route, error)
        assert error["hint"].startswith(fix) and error["hint"].endswith(
            " -m ipykernel install --user --name nosuchkernel"), error
        # newuser33 N4b: the panel's own fix is the kernel's, not its generic "give the path of a file…"
        assert error["details"]["fixes"] == {"panel": error["hint"]}, error
    said = _cli(_env(files, server), "submit", "--gpus", "0", "--notebook", path)
    assert said.returncode != 0 and "submitted" not in said.stdout, said.stdout
    assert said.stderr.strip().splitlines()[-1].startswith(
        f"jupyter-sched submit: --notebook {path!r} cannot run: {problem}"), said.stderr
    try:
        assert api(server, "tok-ann").post("jobs", json={"gpus": 0, "notebook": str(files / "py3.ipynb")}
                                           ).status_code == 201
    finally:
        clear(server)


@pytest.mark.skipif(skip_reason() is not None, reason=skip_reason() or "")
def test_newuser15_n23_on_a_hub_the_file_is_read_as_its_owner() -> None:
    """Hub mode: the service (root) reads what a job names as the job's owner (``head`` with their uid and
    groups), so the check says only what the owner could find out: the first bytes of a file they may
    read, nothing of one they may not (its start, or the path check, says that). Real OS accounts."""
    with os_accounts(2) as (alice, bob), shared_dir() as root:
        executor = hub_executor(root)
        mine = owned(Path(alice.home) / "passwd.py", alice, 0o644, PASSWD)
        secret = owned(root / "secret.py", bob, 0o600, "!bob's secret\n")

        def heads(path: Path) -> list[tuple[str, str, bytes]]:
            return executor.named_file_heads(spec_from_request({"gpus": 0, "script": str(path)}, user=alice.name), 64)

        assert heads(mine) == [("script", str(mine), PASSWD.encode()[:65])]
        assert heads(secret) == []  # alice may not read it: nothing is read for her
