"""``jupyter-sched definitions`` as a person types it, against ONE real server for the module.

Session 38 (s38-defs, item 4): session 37's ``s37-defparams`` CLI tests (newuser37 N4's parameters in ``show`` /
``runs`` / ``edit --args``, n7's ``audit --job NAME``) each started their own jupyter server through
pytest-jupyter's per-test fixtures (12-16 s a test, most of it the server's start). They only add definitions and
jobs under names of their own and read those back, so they share one server here (tests/reliability/harness.py:
a real ``jupyter server`` subprocess, SQLite, simulated GPUs, per-user tokens at the identity boundary) — their
assertions unchanged. Each test works in its own folder (``tmp_path``, the CLI's working directory) and under names
no other test uses, and reads only its own lines of a list.

Session 38's own CLI findings ride on the same server: ``definitions list`` says each definition's parameters
(item 1), a notebook definition given ``--args`` is refused naming ``--args`` and ``-p`` (item 2), and a definition
carries ``--no-preempt`` to its runs (item 5).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_USAGE
from tests.cli_server import TLS, Run, server_for_module
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = shutil.which("jupyter-sched", path=str(Path(sys.executable).parent)) or "jupyter-sched"
IVAN_TOKEN = "s38-defs-ivan-token"
BOSS_TOKEN = "s38-defs-boss-token"
USERS = {OWNER_TOKEN: "ivan", IVAN_TOKEN: "ivan", BOSS_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server for the module: ivan a user, boss an admin."""
    yield from server_for_module(tmp_path_factory, "s38defs", USERS, admin_users=["boss"])


@dataclass
class Cli:
    server: EmbeddedServer
    cwd: Path

    def __call__(self, *args: str, token: str = IVAN_TOKEN) -> Run:
        """``jupyter-sched ARGS`` as a subprocess in this test's folder, as ``token``'s user."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
        env.update({"JUPYTER_SCHED_URL": self.server.url, "JUPYTER_SCHED_TOKEN": token,
                    "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")})
        done = subprocess.run([CLI, *args], env=env, cwd=self.cwd, capture_output=True, text=True, timeout=120)
        return Run(done.returncode, done.stdout, done.stderr)

    def rest(self, token: str = IVAN_TOKEN) -> httpx.Client:
        return httpx.Client(base_url=self.server.api, headers=self.server.headers(token), timeout=30, verify=TLS)


@pytest.fixture
def cli(server: EmbeddedServer, tmp_path: Path) -> Cli:
    return Cli(server, tmp_path)


def _notebook(path: Path, cell: str = "epochs = 3") -> Path:
    path.write_text(json.dumps({"cells": [{"cell_type": "code", "source": cell, "metadata": {"tags": ["parameters"]},
                                           "outputs": [], "execution_count": None}],
                                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return path


# ---- session 37 (s37-defparams), moved here unchanged but for the fixture ------------------------------------------

def test_newuser37_n4_definitions_show_runs_and_edit_say_the_parameters(cli: Cli, tmp_path: Path) -> None:
    """newuser37 N4: ``definitions show`` said no parameters, and for a script its ``runs … --steps 5`` was not what ran
    once ``-p steps=4`` was set (passed as ``--steps 4`` after its arguments); ``runs`` never said a ``run now -p`` run's
    own parameters; ``edit`` had no ``--args``. Now show says them and how a script gets them, runs says a run's where
    they differ from the definition's, and ``edit --args`` changes the arguments (an unclosed quote: a usage error)."""
    (tmp_path / "steps.py").write_text("import sys\nprint(sys.argv[1:])\n")
    made = cli("definitions", "create", "steps.py", "--name", "stepper", "--args", "--steps 5", "--gpus", "0",
               "--paused", "--cron", "0 3 * * *")
    assert made.code == EXIT_OK, made.err
    assert cli("definitions", "edit", "stepper", "-p", "steps=4").code == EXIT_OK
    shown = cli("definitions", "show", "stepper").out
    assert "\n  parameters steps=4 (passed as --steps 4 after its arguments)\n" in shown, shown
    ran = cli("definitions", "run", "stepper", "-p", "region=apac")
    assert ran.code == EXIT_OK, ran.err
    job_id = ran.out.split()[2]
    assert cli("wait", job_id).code == EXIT_OK
    runs = cli("definitions", "runs", "stepper").out
    assert f"{job_id}  (parameters region=apac) succeeded" in runs, runs
    edited = cli("definitions", "edit", "stepper", "--args", "--steps 3 --seed 1")
    assert edited.code == EXIT_OK, edited.err
    assert "changed: runs " in edited.out and "steps.py --steps 3 --seed 1" in edited.out, edited.out
    bad = cli("definitions", "edit", "stepper", "--args", "--name 'x")
    assert bad.code == EXIT_USAGE and "--args: No closing quotation" in bad.err and "Traceback" not in bad.err, bad.err
    _notebook(tmp_path / "nbtrain.ipynb")
    made = cli("definitions", "create", "nbtrain.ipynb", "--name", "nightly-nb", "-p", "epochs=1", "--paused",
               "--cron", "0 3 * * *", "--gpus", "0")
    assert made.code == EXIT_OK, made.err
    shown = cli("definitions", "show", "nightly-nb").out
    assert "\n  parameters epochs=1\n" in shown, shown


def test_newuser37_nit7_audit_job_takes_a_jobs_name(cli: Cli) -> None:
    """newuser37 n7: ``audit --job a-two`` said "no audit rows match" where every other JOB argument takes a job's name.
    Now an admin's ``--job NAME`` is the one job of that name (anyone's), a name two jobs have is refused naming their
    ids (exit 2, as ``--job``), and a name no job has says so."""
    ids = []
    for name in ("aud-one", "aud-twice", "aud-twice"):
        run = cli("submit", "--gpus", "0", "--name", name, "--", sys.executable, "-c", "pass")
        assert run.code == EXIT_OK, run.err
        ids.append(run.out.split()[1].rstrip(":"))
    boss = cli("audit", "--job", "aud-one", token=BOSS_TOKEN)
    assert boss.code == EXIT_OK, boss.err
    assert ids[0] in boss.out and "no audit rows match" not in boss.out, boss.out
    twice = cli("audit", "--job", "aud-twice", token=BOSS_TOKEN)
    assert twice.code == EXIT_USAGE and "--job" in twice.err and ids[1] in twice.err and ids[2] in twice.err, twice.err
    none = cli("audit", "--job", "aud-none", token=BOSS_TOKEN)
    assert none.code != EXIT_OK and "'aud-none'" in none.err and "Traceback" not in none.err, none.err


# ---- session 38 ----------------------------------------------------------------------------------------------------

def _listed(cli: Cli, name: str) -> str:
    """The ``definitions list`` line of my definition ``name`` (other tests' definitions share the server)."""
    listed = cli("definitions", "list")
    assert listed.code == EXIT_OK, listed.err
    return next(line for line in listed.out.splitlines() if f"  {name}  " in line)


def test_s38_defs_1_definitions_list_says_each_definitions_parameters(cli: Cli, tmp_path: Path) -> None:
    """Item 1: ``definitions list`` said no parameters (``show`` alone did): each line says them as ``show`` writes
    them, compact — a long value cut with ``…``, pairs past the line's share counted — and REST's list carries them
    whole (what the magics' ``parameters`` column and the CLI render)."""
    _notebook(tmp_path / "plist.ipynb")
    made = cli("definitions", "create", "plist.ipynb", "--name", "s38-plist", "-p", "epochs=2", "-p", "region=eu",
               "--gpus", "0", "--paused", "--cron", "0 3 * * *")
    assert made.code == EXIT_OK, made.err
    line = _listed(cli, "s38-plist")
    assert "  paused  parameters epochs=2 region=eu" in line, line
    many = ["-p", f"a_note={'x' * 40}"] + [w for n in range(12) for w in ("-p", f"k{n}={n}")]
    made = cli("definitions", "create", "plist.ipynb", "--name", "s38-pmany", *many, "--gpus", "0", "--paused",
               "--cron", "0 3 * * *")
    assert made.code == EXIT_OK, made.err
    line = _listed(cli, "s38-pmany")
    said = line[line.index("parameters "):]
    assert said.startswith(f"parameters a_note={'x' * 23}… k0=0 "), said
    assert said.endswith(" more") and " … and " in said and len(said) < 100, said
    left = int(said.rsplit(" and ", 1)[1].split()[0])
    assert said.count("=") + left == 13, said  # every pair shown or counted
    with cli.rest() as rest:
        rows = rest.get("definitions").json()
    mine = next(d for d in rows if d["name"] == "s38-pmany")
    assert mine["parameters"]["a_note"] == "x" * 40 and len(mine["parameters"]) == 13


def test_s38_defs_2_a_notebook_definition_given_args_is_refused_naming_args_and_parameters(
        cli: Cli, tmp_path: Path) -> None:
    """Item 2: ``definitions create nb.ipynb --args "--epochs 3"`` was saved and every run left the arguments out
    (a notebook takes parameters, not argv). Refused on create and edit, CLI and REST, naming the field and ``-p``;
    an edit that drops them, or makes the definition a script, is taken."""
    nb = _notebook(tmp_path / "argsnb.ipynb")
    refused = cli("definitions", "create", "argsnb.ipynb", "--name", "s38-argsnb", "--args", "--epochs 3",
                  "--gpus", "0", "--paused")
    assert refused.code == EXIT_USAGE, (refused.code, refused.err)  # bad input (newuser38 n2)
    assert "--args '--epochs 3' are a script's arguments: a notebook takes none" in refused.err, refused.err
    assert "-p NAME=VALUE" in refused.err and "Traceback" not in refused.err, refused.err
    assert "s38-argsnb" not in cli("definitions", "list").out  # nothing saved
    made = cli("definitions", "create", "argsnb.ipynb", "--name", "s38-argsnb", "-p", "epochs=3", "--gpus", "0",
               "--paused")
    assert made.code == EXIT_OK, made.err
    edit = cli("definitions", "edit", "s38-argsnb", "--args", "--epochs 4")
    assert edit.code == EXIT_USAGE and "a notebook takes none" in edit.err and "--args" in edit.err, edit.err
    with cli.rest() as rest:
        d_id = next(d["id"] for d in rest.get("definitions").json() if d["name"] == "s38-argsnb")
        for method, path, body in (
                ("POST", "definitions", {"name": "s38-rest-nb", "notebook": str(nb), "args": ["--epochs", "3"],
                                         "gpus": 0}),
                ("PATCH", f"definitions/{d_id}", {"args": ["--epochs", "4"]})):
            answer = rest.request(method, path, json=body)
            assert answer.status_code == 400, answer.text
            error = answer.json()["error"]
            assert error["field"] == "args" and "a notebook takes none" in error["message"], error
            assert "parameters" in error["hint"], error
        assert rest.patch(f"definitions/{d_id}", json={"args": []}).status_code == 200
        script = tmp_path / "argsnb.py"
        script.write_text("print('hi')\n")
        # a script may take arguments: the same edit that makes it one is taken
        switched = rest.patch(f"definitions/{d_id}", json={"script": str(script), "notebook": None, "args": ["-v"]})
        assert switched.status_code == 200, switched.text
        back = rest.patch(f"definitions/{d_id}", json={"notebook": str(nb), "script": None})
        assert back.status_code == 400 and back.json()["error"]["field"] == "args", back.text
        assert "send args [] with the notebook" in back.json()["error"]["message"], back.text


def test_s38_defs_5_a_definition_carries_no_preempt_to_its_runs(cli: Cli, tmp_path: Path) -> None:
    """Item 5: a definition could not carry ``--no-preempt`` (session 37's submit option; REST refused
    ``no_preempt`` as an unknown field). ``create``/``edit --no-preempt`` set it, ``show`` says it, its runs ask it,
    ``edit --preempt`` undoes it; REST takes ``no_preempt`` on create and edit."""
    (tmp_path / "np.py").write_text("print('np')\n")
    made = cli("definitions", "create", "np.py", "--name", "s38-nopre", "--no-preempt", "--gpus", "0", "--paused",
               "--cron", "0 3 * * *")
    assert made.code == EXIT_OK, made.err
    shown = cli("definitions", "show", "s38-nopre").out
    assert " · no preempt: free GPUs only, never stops another's job" in shown, shown
    ran = cli("definitions", "run", "s38-nopre")
    assert ran.code == EXIT_OK, ran.err
    job_id = ran.out.split()[2]
    with cli.rest() as rest:
        assert rest.get(f"jobs/{job_id}").json().get("no_preempt") is True
    undone = cli("definitions", "edit", "s38-nopre", "--preempt")
    assert undone.code == EXIT_OK, undone.err
    assert "changed: no preempt free GPUs only, never stops another's job → (default)" in undone.out, undone.out
    assert "no preempt" not in cli("definitions", "show", "s38-nopre").out
    ran = cli("definitions", "run", "s38-nopre")
    with cli.rest() as rest:
        assert "no_preempt" not in rest.get(f"jobs/{ran.out.split()[2]}").json()
        made = rest.post("definitions", json={"name": "s38-rest-nopre", "script": str(tmp_path / "np.py"),
                                              "no_preempt": True, "gpus": 0})
        assert made.status_code == 201 and made.json()["job"]["no_preempt"] is True, made.text
        edited = rest.patch(f"definitions/{made.json()['id']}", json={"no_preempt": False})
        assert edited.status_code == 200 and edited.json()["job"]["no_preempt"] is False, edited.text
        bad = rest.patch(f"definitions/{made.json()['id']}", json={"no_preempt": "yes"})
        assert bad.status_code == 400 and bad.json()["error"]["field"] == "no_preempt", bad.text


def test_s38_defs_2_post_jobs_refuses_a_notebook_given_args_as_definitions_do(cli: Cli, tmp_path: Path) -> None:
    """The same kind on the jobs side: ``POST jobs {"notebook": …, "args": […]}`` was taken and the args went to
    ``command``, which a notebook run never reads (``executors.local.job_argv``). Refused alike (field ``args``, the fix
    named); ``args: []`` with a notebook and args with a script stay taken."""
    nb = _notebook(tmp_path / "jobnb.ipynb")
    with cli.rest() as rest:
        refused = rest.post("jobs", json={"notebook": str(nb), "args": ["--epochs", "3"], "gpus": 0})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["field"] == "args" and error["message"] == (
            "args '--epochs 3' are a script's arguments: a notebook takes none"), error
        assert "parameters" in error["hint"], error
        taken = rest.post("jobs", json={"notebook": str(nb), "args": [], "gpus": 0, "parameters": {"epochs": 1}})
        assert taken.status_code == 201, taken.text
        (tmp_path / "j.py").write_text("print(1)\n")
        script = rest.post("jobs", json={"script": str(tmp_path / "j.py"), "args": ["-v"], "gpus": 0})
        assert script.status_code == 201, script.text
        for made in (taken, script):
            rest.delete(f"jobs/{made.json()['id']}")


def test_newuser38_n1_edit_p_sets_the_parameters_it_names_and_keeps_the_others(cli: Cli, tmp_path: Path) -> None:
    """newuser38 N1: ``definitions edit rep -p region=us`` dropped ``days=3`` silently (the notebook's default ran from
    then on) — every other edit option leaves what it does not name, and ``-p``'s help said nothing. Now ``-p`` sets
    the ones it names, ``--unset-parameter`` removes one, the answer says each change as ``show`` writes values, and
    ``%schedule define edit`` does the same (its run_define through a real client, on the same server)."""
    from jupyter_sched.client import Connection, SchedClient
    from jupyter_sched.magics.define import run_define

    _notebook(tmp_path / "daily_report.ipynb", "region = 'x'\ndays = 7")
    made = cli("definitions", "create", "daily_report.ipynb", "--name", "n38-rep", "--cron", "0 7 * * 1-5",
               "-p", "region=eu", "-p", "days=3", "--gpus", "0", "--paused")
    assert made.code == EXIT_OK, made.err
    edited = cli("definitions", "edit", "n38-rep", "-p", "region=us")
    assert edited.code == EXIT_OK, edited.err
    assert "changed: parameter region eu → us\n" in edited.out, edited.out  # not region='eu', and days unsaid
    assert "\n  parameters days=3 region=us\n" in cli("definitions", "show", "n38-rep").out
    assert "sets the ones named; the others are unchanged" in " ".join(cli("definitions", "edit", "--help").out.split())
    unset = cli("definitions", "edit", "n38-rep", "--unset-parameter", "days", "-p", "hours=2")
    assert unset.code == EXIT_OK, unset.err
    assert "changed: parameter days removed (was 3); parameter hours=2 added" in unset.out, unset.out
    missing = cli("definitions", "edit", "n38-rep", "--unset-parameter", "nosuch")
    assert missing.code == EXIT_USAGE and "--unset-parameter nosuch: the definition has no parameter 'nosuch' (it " \
        "has: hours, region)" in missing.err and "Traceback" not in missing.err, missing.err

    client = SchedClient(Connection(cli.server.url, token=IVAN_TOKEN))
    said: list[str] = []
    run_define(client.call, ["edit", "n38-rep", "-p", "region=apac", "--unset-parameter", "hours"],
               resolve=lambda path, what: Path(path), say=said.append)
    assert "Changed: parameter hours removed (was 2); parameter region us → apac." in said, said
    with cli.rest() as rest:
        assert rest.get("definitions/" + made.out.split()[1]).json()["parameters"] == {"region": "apac"}


def test_newuser38_n20_definitions_outputs_say_one_zone_the_definitions(cli: Cli, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """newuser38 n20: with a definition in Europe/Berlin and the reader's clock UTC, ``definitions runs`` said
    ``11:52 CET   run now   j-…   succeeded, exit code 0 · ended 10:53 UTC`` — the run "ended" an hour before it was
    run, at a glance. Now every clock of a definition's output is in the definition's zone (its firings' zone), named
    once after the runs' header: ``runs``, ``show`` and ``list``'s ``last:``."""
    monkeypatch.setenv("TZ", "UTC")  # the reader's zone is UTC (the CLI's clocks would say UTC)
    (tmp_path / "quick.py").write_text("print('ok')\n")
    made = cli("definitions", "create", "quick.py", "--name", "n20-berlin", "--tz", "Europe/Berlin", "--cron",
               "0 3 * * *", "--gpus", "0", "--paused")
    assert made.code == EXIT_OK, made.err
    ran = cli("definitions", "run", "n20-berlin")
    assert ran.code == EXIT_OK, ran.err
    job_id = ran.out.split()[2]
    assert cli("wait", job_id).code == EXIT_OK
    runs = cli("definitions", "runs", "n20-berlin")
    assert runs.code == EXIT_OK, runs.err
    header = next(line for line in runs.out.splitlines() if line.startswith("WHEN "))
    assert header.endswith("(times in Europe/Berlin, the definition's zone)"), runs.out
    line = next(line for line in runs.out.splitlines() if job_id in line)
    assert " · ended " in line and line.count(" CET") == 2 and "UTC" not in line, line  # December: CET
    shown = cli("definitions", "show", "n20-berlin").out
    line = next(line for line in shown.splitlines() if job_id in line)
    assert " · ended " in line and "UTC" not in line, shown
    listed = _listed(cli, "n20-berlin")
    assert "last: succeeded" in listed and " · ended " in listed and "UTC" not in listed, listed
