"""``jupyter-sched definitions …`` against a real server (a subprocess jupyter server with jupyter_sched)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from tests.reliability.harness import EmbeddedServer, no_strays, wait_until

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server for the module (one start per test until session 41): each test makes its own definitions, by
    their own names, and leaves no GPU held."""
    workdir = tmp_path_factory.mktemp("defs-cli")
    with no_strays(workdir):
        s = EmbeddedServer.start(workdir, definition_min_interval_s=1.0)
        try:
            yield s
        finally:
            s.terminate()


def test_the_whole_life_of_a_definition_from_the_terminal(server: EmbeddedServer, tmp_path: Path) -> None:
    script = tmp_path / "prep.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    code, out, err = server.cli("definitions", "create", str(script), "--cron", "0 6 * * *", "--tz", "Asia/Tokyo",
                         "-p", "day=mon", "--gpus", "0")
    assert code == EXIT_OK, err
    assert out.startswith("defined d-") and "At 06:00 every day (Asia/Tokyo)" in out
    definition_id = out.split()[1]
    assert server.cli("definitions")[1].startswith(definition_id)
    assert server.cli("definitions", "pause", definition_id)[1].startswith("paused " + definition_id)
    assert "paused" in server.cli("definitions", "list")[1]
    assert server.cli("definitions", "resume", definition_id)[0] == EXIT_OK
    code, out, _ = server.cli("definitions", "run", definition_id, "-p", "day=fri")
    assert code == EXIT_OK and out.startswith(("started run j-", "queued run j-")), out  # its real state (newuser34 N5 nit)
    job_id = out.split()[2]

    def finished() -> bool:
        state = json.loads(server.cli("--json", "definitions", "runs", definition_id)[1])["runs"][0]["job"]["state"]
        return bool(state == "succeeded")

    wait_until(finished, "the run succeeds", timeout_s=60)
    runs = server.cli("definitions", "runs", definition_id)[1]
    assert job_id in runs and "run now" in runs and "succeeded" in runs  # N7 (s24): not the wire's "manual"
    code, out, _ = server.cli("logs", job_id)
    assert "args ['--day', 'fri']" in out
    edited = server.cli("definitions", "edit", definition_id, "--no-schedule")[1]
    assert edited.startswith("edited ") and "no schedule: runs only with `jupyter-sched definitions run " in edited
    assert server.cli("definitions", "delete", definition_id)[0] == EXIT_OK
    code, _, err = server.cli("definitions", "show", definition_id)
    assert code == EXIT_REFUSED and "not_found" in err


def test_a_bad_schedule_is_one_line_naming_the_option(server: EmbeddedServer, tmp_path: Path) -> None:
    nb = tmp_path / "x.ipynb"
    nb.write_text("{}")
    code, _, err = server.cli("definitions", "create", str(nb), "--cron", "0 12 * *")
    assert code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert err.count("\n") == 1 and "5 fields" in err and "Traceback" not in err


def test_newuser6_finding_10_a_parameter_the_notebook_does_not_set_is_said(server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 6, F10: `definitions create daily_report.ipynb -p regoin=eu` was accepted silently and
    every run used the default region. The CLI says so at create (it can read the notebook here),
    and each run's log says it, whoever created the definition."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    nb = new_notebook(cells=[new_code_cell("region = 'us'\ndays = 7", metadata={"tags": ["parameters"]}),
                             new_code_cell("print('report for', region, days)")])
    path = tmp_path / "daily_report.ipynb"
    nbformat.write(nb, str(path))
    code, out, err = server.cli("definitions", "create", str(path), "--cron", "0 6 * * *", "--paused", "-p", "regoin=eu",
                         "--gpus", "0")
    assert code == EXIT_OK, err
    # the server's note (it reads the notebook too), said once, as its other notes (newuser39 n3)
    assert err == ("jupyter-sched definitions create: note: parameter 'regoin' is not in daily_report.ipynb's parameters "
                   "cell (region, days) — did you mean 'region'? It is injected anyway; the notebook's own value of any "
                   "name it sets is what runs.\n")
    definition_id = out.split()[1]
    code, out, err = server.cli("definitions", "run", definition_id)
    assert code == EXIT_OK and err == "", err
    job_id = out.split()[2]
    code, out, err = server.cli("wait", job_id, "--for", "120s")
    assert code == EXIT_OK, (out, err)
    log = server.cli("logs", job_id)[1]
    assert "[jupyter_sched] warning: parameter 'regoin' is not in daily_report.ipynb's parameters cell" in log, log
    assert "report for us 7" in log
    code, _, err = server.cli("definitions", "run", definition_id, "-p", "region=eu")
    assert code == EXIT_OK and err == "", err  # a name the cell sets: nothing to say


def test_newuser8_n3_deleting_a_definition_names_its_queued_runs_or_cancels_them(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """New user 8, N3: a firing queued behind the user's cap ran two minutes after ``definitions delete``,
    which said only "its runs stay in the job history". The answer now names the runs still waiting
    and how to cancel them; ``--cancel-runs`` cancels them in the same request."""
    import httpx

    headers = {"Authorization": f"token {server.token}"}
    held = httpx.post(server.api + "leases", json={"gpus": 4}, headers=headers, timeout=30).json()
    wait_until(lambda: httpx.get(server.api + f"leases/{held['id']}", headers=headers, timeout=30).json()["state"]
               == "running", "the lease holds every GPU", timeout_s=30)
    script = tmp_path / "report.py"
    script.write_text("print('report')\n")

    def queued_run() -> tuple[str, str]:
        code, out, err = server.cli("definitions", "create", str(script), "--gpus", "1", "--name", "report")
        assert code == EXIT_OK, err
        definition_id = out.split()[1]
        code, out, err = server.cli("definitions", "run", definition_id)
        assert code == EXIT_OK, err
        return definition_id, out.split()[2]

    definition_id, job_id = queued_run()
    code, out, err = server.cli("definitions", "delete", definition_id)
    assert code == EXIT_OK, err
    assert f"1 run is still queued and will run: {job_id} (report, run now)" in out and f"jupyter-sched cancel {job_id}" in out, out
    job = httpx.get(server.api + f"jobs/{job_id}", headers=headers, timeout=30).json()
    assert job["state"] == "pending", job  # kept, as said
    definition_id, second = queued_run()
    code, out, err = server.cli("definitions", "delete", definition_id, "--cancel-runs")
    assert code == EXIT_OK, err
    assert f"cancelled its 1 queued run ({second})" in out, out
    assert httpx.get(server.api + f"jobs/{second}", headers=headers, timeout=30).json()["state"] == "cancelled"
    assert httpx.get(server.api + f"jobs/{job_id}", headers=headers, timeout=30).json()["state"] == "pending"
    httpx.delete(server.api + f"jobs/{job_id}", headers=headers, timeout=30)
    httpx.delete(server.api + f"leases/{held['id']}", headers=headers, timeout=30)


def test_newuser8_n3_the_magic_deletes_with_cancel_runs_and_says_the_same() -> None:
    from jupyter_sched.magics.define import parse_define
    from jupyter_sched.wording import definition_deleted

    assert parse_define(["delete", "d-1", "--cancel-runs"]).cancel_runs
    assert not parse_define(["delete", "d-1"]).cancel_runs
    said = definition_deleted("d-1", {"waiting_runs": [{"id": "j-1", "name": "daily", "state": "pending"},
                                                       {"id": "j-2", "name": "daily", "state": "preempted"}],
                                      "waiting_total": 2}, cancel="%schedule cancel")
    assert said == ("deleted d-1: it fires no more; 2 runs are still queued and will run: j-1 (daily), j-2 (daily) "
                    "— to cancel them: %schedule cancel j-1 j-2"), said


def test_verify21_v9_definitions_create_and_edit_priority_low_print_the_jobs_note(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Verify 21, V9 (new user 21, N5 nit): `definitions create --priority low` said nothing of what
    `submit --priority low` says, though its runs are low jobs; create and edit now print the note."""
    script = tmp_path / "low.py"
    script.write_text("print('x')\n")
    code, _, err = server.cli("definitions", "create", str(script), "--gpus", "1", "--name", "lowrun",
                                "--priority", "low", "--time-limit", "10m")
    assert code == EXIT_OK, err
    assert "jupyter-sched definitions create: note: priority low: higher-priority work may preempt it" in err, err
    code, _, err = server.cli("definitions", "create", str(script), "--gpus", "1", "--name", "normrun",
                                "--time-limit", "10m")
    assert code == EXIT_OK and "note: priority" not in err, err
    code, _, err = server.cli("definitions", "edit", "normrun", "--priority", "low")
    assert code == EXIT_OK, err
    assert "jupyter-sched definitions edit: note: priority low:" in err, err


def test_newuser42_n4_definitions_take_submits_run_options_from_one_definition() -> None:
    """newuser42 n4: ``definitions create``/``edit`` lacked --memory, --cpu, --env, --workdir, --nvlink. Every option
    of what a run asks for is submit's, declared once (cli/run_options.RUN_OPTIONS): each parser holds them all."""
    from jupyter_sched.cli.main import build_parser
    from jupyter_sched.cli.run_options import RUN_OPTIONS

    def options(*path: str) -> set[str]:
        parser = build_parser(path[0])
        for name in path:
            sub = next(a for a in parser._actions if isinstance(a, __import__("argparse")._SubParsersAction))
            parser = sub.choices[name]
        return set(parser._option_string_actions)

    shared = {f for flags, *_ in RUN_OPTIONS for f in flags} | {"--team", "--nvlink", "--env", "--workdir"}
    assert {"--memory", "--cpu", "--env", "--workdir", "--nvlink"} <= shared
    for path in (("submit",), ("definitions", "create"), ("definitions", "edit")):
        assert shared <= options(*path), (path, shared - options(*path))
    assert {"--file", "--unset-env", "--no-nvlink"} <= options("definitions", "edit")


def test_newuser42_n4_create_and_edit_with_memory_env_workdir_and_another_file(
        server: EmbeddedServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """newuser42 n4: a definition says what a submit says (--cpu, --memory, --env, --workdir, --nvlink), and
    ``edit --file`` changes the file its runs run, checked as create checks it (a missing one refused)."""
    first, data = tmp_path / "first.py", tmp_path / "data"
    first.write_text("import os\nprint('seed', os.environ.get('SEED'), os.getcwd())\n")
    data.mkdir()
    code, out, err = server.cli("definitions", "create", str(first), "--name", "n42n4", "--gpus", "0", "--cpu", "1",
                                "--memory", "64MiB", "--env", "SEED=7", "--env", "KEEP=1", "--workdir", str(data))
    assert code == EXIT_OK, err
    definition_id = out.split()[1]
    job = json.loads(server.cli("--json", "definitions", "show", definition_id)[1])["job"]
    assert job["env"] == {"SEED": "7", "KEEP": "1"} and job["working_dir"] == str(data), job
    assert job["cpu"] == 1 and job["memory"] == "64MiB", job
    # edit: a variable changed by name, one removed, the others kept; NVLink asked and undone
    code, _, err = server.cli("definitions", "edit", definition_id, "--env", "SEED=8", "--unset-env", "KEEP")
    assert code == EXIT_OK, err
    job = json.loads(server.cli("--json", "definitions", "show", definition_id)[1])["job"]
    assert job["env"] == {"SEED": "8"}, job
    # another file: a missing one is refused before anything is sent, by its kind
    capsys.readouterr()
    code, _, err = server.cli("definitions", "edit", definition_id, "--file", str(tmp_path / "nosuch.py"))
    err += capsys.readouterr().err  # a usage error, as argparse writes it
    assert code == EXIT_USAGE and "script '" in err and "nosuch.py' does not exist" in err, err
    second = tmp_path / "second.py"
    second.write_text("print('second')\n")
    code, out, err = server.cli("definitions", "edit", definition_id, "--file", str(second))
    assert code == EXIT_OK, err
    shown = json.loads(server.cli("--json", "definitions", "show", definition_id)[1])
    assert shown["script"] == str(second) and shown["notebook"] is None, shown
    assert shown["job"]["working_dir"] == str(data), shown  # a --workdir given is kept; only the file changed
    assert server.cli("definitions", "delete", definition_id, "--yes")[0] == EXIT_OK


def test_newuser42_n4_script_parameters_checked_at_create_and_named_when_a_run_fails(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """newuser42 n4: ``-p fial=yes`` on a script definition was accepted silently and each firing failed
    ``unrecognized arguments: --fial yes``. Now the save says it as the notebook case does ("did you mean"); a
    script whose options cannot be read from its text is said once; a run failing on one names the parameter and
    the edit that fixes the definition."""
    script = tmp_path / "n42opts.py"
    script.write_text("import argparse\np = argparse.ArgumentParser()\np.add_argument('--fail', default='no')\n"
                      "print(p.parse_args())\n")
    code, out, err = server.cli("definitions", "create", str(script), "--gpus", "0", "-p", "fial=yes")
    assert code == EXIT_OK, err
    assert "note: parameter 'fial' is not an option of n42opts.py (--fail) — did you mean 'fail'?" in err, err
    definition_id = out.split()[1]
    code, out, _ = server.cli("definitions", "run", definition_id)
    assert code == EXIT_OK, out

    def failed() -> bool:
        run = json.loads(server.cli("--json", "definitions", "runs", definition_id)[1])["runs"][0]
        return bool(run["job"]["state"] == "failed")

    wait_until(failed, "the run fails on --fial", timeout_s=60)
    runs = server.cli("definitions", "runs", definition_id)[1]
    assert ("parameter 'fial' of n42opts is not among the script's options: remove it (jupyter-sched definitions "
            "edit n42opts --unset-parameter fial)") in runs, runs
    unread = tmp_path / "n42argv.py"
    unread.write_text("import sys\nprint(sys.argv)\n")
    code, _, err = server.cli("definitions", "create", str(unread), "--gpus", "0", "-p", "days=3")
    assert code == EXIT_OK and "n42argv.py's options cannot be read without running it" in err, err
    for name in ("n42opts", "n42argv"):
        assert server.cli("definitions", "delete", name, "--yes")[0] == EXIT_OK


def test_newuser42_N4_a_runs_name_in_jobs_is_its_whole_name_and_a_definitions_name_points_at_its_runs(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """newuser42 N4: ``jobs`` showed a definition's run ``nb-def @ 2026-12-07 23:59 UTC`` as ``nb-def @ 23:59 UTC``
    — no name ``status``/``logs`` took (not_found), and the same every day; the NAME column now shows a run's
    whole name, typed back as shown. ``status nb-def`` (a definition's own name, no job's) said only "none of
    your jobs is named"; it now names ``definitions runs nb-def``."""
    from jupyter_sched.wording.jobs import RUN_NAME_WIDTH, fit_name

    for name in ("nb-def @ 2026-12-07 23:59 UTC", "t-3448 @ 2026-12-08 00:57 CET",
                 "every-min @ 2026-12-04 16:26:30 UTC+04"):
        assert fit_name(name) == name  # the date stays: a cut one is no name and is every day's
    long_run = "a-very-long-nightly-definition-name @ 2026-12-04 16:26 UTC"
    assert fit_name(long_run) == "a-very-long-nigh… @ 2026-12-04 16:26 UTC"  # a cut is shown by its "…"
    assert len(fit_name(long_run)) == RUN_NAME_WIDTH
    # end to end: the NAME column's text, typed back, is the job
    code, out, err = server.cli("submit", "--gpus", "0", "--name", "n42N4 @ 2026-12-07 23:59 UTC",
                                "--", "python", "-c", "pass")
    assert code == EXIT_OK, err
    table = server.cli("jobs")[1]
    row = next(line for line in table.splitlines() if "n42N4" in line)
    shown = row[row.index("n42N4"):].rstrip()
    assert shown == "n42N4 @ 2026-12-07 23:59 UTC", table
    code, out, err = server.cli("status", shown)
    assert code == EXIT_OK and "n42N4 @ 2026-12-07 23:59 UTC" in out, err
    # a definition's own name given as a job's: its runs' command, not a bare not_found
    script = tmp_path / "nbdef.py"
    script.write_text("print('x')\n")
    code, out, err = server.cli("definitions", "create", str(script), "--name", "n42N4def", "--gpus", "0",
                                "--cron", "0 6 * * *", "--tz", "UTC")
    assert code == EXIT_OK, err
    for command in ("status", "logs"):
        code, _, err = server.cli(command, "n42N4def")
        assert code == EXIT_REFUSED, err
        assert "'n42N4def' is a job definition, not a job" in err, err
        assert "`jupyter-sched definitions runs n42N4def` lists its runs" in err and "[not_found]" in err, err
    assert server.cli("definitions", "runs", "n42N4def")[0] == EXIT_OK  # the command it names takes the name
    code, _, err = server.cli("status", "n42N4nosuch")  # no definition of that name either: as before
    assert code == EXIT_REFUSED and "none of your jobs is named 'n42N4nosuch'" in err, err
    server.cli("wait", "n42N4 @ 2026-12-07 23:59 UTC")  # leaves nothing running for the module's next test
    assert server.cli("definitions", "delete", "n42N4def", "--yes")[0] == EXIT_OK
