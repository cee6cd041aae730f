"""``jupyter-sched`` as a person in a terminal uses it: a real subprocess against a real server."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_JOB_FAILED, EXIT_NO_SERVER, EXIT_OK, EXIT_REFUSED, EXIT_USAGE
from jupyter_sched.client.submitter_env import SUBMITTER_VARIABLES

from .conftest import IVAN_TOKEN

CLI = shutil.which("jupyter-sched", path=str(Path(sys.executable).parent)) or "jupyter-sched"
JUPYTER = shutil.which("jupyter", path=str(Path(sys.executable).parent)) or "jupyter"


@dataclass
class Run:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(sched_app: Any, http_server: Any, http_server_port: Any, jp_base_url: str, tmp_path: Path) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}",
                "JUPYTER_SCHED_TOKEN": IVAN_TOKEN})

    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")

    async def run(*args: str, environ: dict[str, str] | None = None, argv0: tuple[str, ...] = (CLI,)) -> Run:
        proc = await asyncio.create_subprocess_exec(*argv0, *args, env=environ or env, cwd=str(tmp_path),
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode is not None
        return Run(proc.returncode, out.decode(), err.decode())

    return run


@pytest.mark.parametrize("argv0", [(CLI,), (JUPYTER, "sched")], ids=["as jupyter-sched", "as jupyter sched"])
async def test_status_shows_server_user_and_simulated_gpus(cli: Any, argv0: tuple[str, ...]) -> None:
    run = await cli("status", argv0=argv0)
    assert run.code == EXIT_OK, run.err
    assert "ivan" in run.out
    assert "4 (simulated)" in run.out


async def test_submit_then_follow_logs_prints_the_output_and_ends(cli: Any) -> None:
    run = await cli("submit", "--gpus", "1", "--name", "hello", "--", sys.executable, "-c", "print('hello from job')")
    assert run.code == EXIT_OK, run.err
    assert run.out.startswith("submitted ")
    job_id = run.out.split()[1].rstrip(":")
    logs = await cli("logs", "-f", job_id)
    assert logs.code == EXIT_OK, logs.err
    assert "hello from job" in logs.out
    queue = await cli("queue")
    assert queue.code == EXIT_OK and queue.out.startswith(("ID", "The queue is empty"))


async def test_newuser17_n20_logs_f_of_a_failed_job_ends_with_its_outcome_and_exit_4(cli: Any) -> None:
    """``jupyter-sched logs J -f`` ended silently with exit 0 when the job failed, where ``%schedule
    logs -f`` said the outcome (and quoted again the lines it had just printed): both end with the
    outcome line, without the last lines, and ``logs -f`` exits as ``wait`` does (0 / 4)."""
    from jupyter_sched.wording import job_line

    code = "import sys; [print('line', i, flush=True) for i in range(1, 5)]; sys.exit(3)"
    run = await cli("submit", "--gpus", "0", "--name", "lf4", "--", sys.executable, "-c", code)
    assert run.code == EXIT_OK, run.err
    job_id = run.out.split()[1].rstrip(":")
    logs = await cli("logs", "-f", job_id)
    assert logs.code == EXIT_JOB_FAILED, (logs.out, logs.err)
    assert logs.out == "line 1\nline 2\nline 3\nline 4\n", logs.out  # stdout stays the log alone
    last = logs.err.strip().splitlines()[-1]
    # the lines are not quoted again, only the line it failed on, as a traceback's error stays (newuser34 N2); when
    # it ran is said (newuser27 N5)
    assert re.fullmatch(rf"job {job_id} \(lf4\): failed, exit code 3 · ended \d\d:\d\d UTC \(ran \d+s\) — line 4",
                        last), logs.err
    ok = await cli("submit", "--gpus", "0", "--name", "lf0", "--", sys.executable, "-c", "print('fine')")
    ok_id = ok.out.split()[1].rstrip(":")
    good = await cli("logs", "-f", ok_id)
    assert good.code == EXIT_OK and good.out == "fine\n", good
    # following a job that has printed nothing yet may first say so on stderr (a CI host was slow
    # enough to show it); the outcome is still the last line and nothing else is said
    *before, outcome = good.err.strip().splitlines()
    assert re.fullmatch(rf"job {ok_id} \(lf0\): succeeded, exit code 0 · ended \d\d:\d\d UTC \(ran \d+s\)", outcome), good
    assert len(before) <= 1 and all(line.startswith(f"{ok_id} is ") and "no output yet" in line for line in before), good
    # the magic's line after following is the same function with the same flag
    failed = {"id": "j-1", "name": "lf3", "kind": "training", "state": "failed", "exit_code": 3,
              "message": "exited with code 3; last lines: line 2 | line 3"}
    assert job_line(failed, None, log_shown=True) == "job j-1 (lf3): failed, exit code 3"
    assert job_line(failed, None).endswith("— last lines: line 2 | line 3")  # status/wait still quote them


async def test_cancel_of_an_unknown_job_is_one_line_and_exit_1(cli: Any) -> None:
    run = await cli("cancel", "no-such-job")
    assert run.code == EXIT_REFUSED
    assert run.err.count("\n") == 1 and "not_found" in run.err


async def test_a_word_for_gpus_reads_the_same_in_the_cli_the_magics_and_rest(cli: Any, tmp_path: Path) -> None:
    """One wording for ``--gpus two`` (issue 20): the CLI said "--gpus must be a number" while REST and
    the magics said 'must be an integer (got "two")' — handed case 019 b3's words, kept since 58c298d
    with the hint that names the fractions --gpus takes (new user 6, F4 / new user 7, F3). The words
    come from one place, ``model.validation.parse_gpus``; each surface frames them its own way."""
    from IPython.core.error import UsageError

    from jupyter_sched.magics.core import _parsing
    from jupyter_sched.magics.parsing import parse_schedule_line

    words = '--gpus must be an integer (got "two")'
    hint = "use a whole number such as 1 or 4, or a fraction below 1 such as 0.5"
    run = await cli("submit", "--gpus", "two", "--", "true")
    assert run.code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert run.err == f"jupyter-sched submit: {words} — {hint} [validation_error]\n", run.err
    with pytest.raises(UsageError) as magic, _parsing():
        parse_schedule_line("--gpus two", cell=True)
    assert str(magic.value) == f"{words}. {hint[0].upper()}{hint[1:]}.", str(magic.value)
    (tmp_path / "nb.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    defined = await cli("definitions", "create", "nb.ipynb", "--gpus", "two")
    assert defined.code != 0 and words in defined.err and "a number" not in defined.err, defined.err


async def test_newuser6_finding_3_a_bad_env_shows_the_option_once(cli: Any) -> None:
    """New user 6, F3: the hint read "e.g. ----env SEED=1" (the field name rewritten inside the option)."""
    run = await cli("submit", "--gpus", "1", "--env", "=x", "--", "true")
    assert run.code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert run.err == ("jupyter-sched submit: --env '=x' is not NAME=VALUE — e.g. --env SEED=1, or --env SEED to "
                       "pass this shell's SEED [validation_error]\n"), run.err


@pytest.fixture
def shell_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """This shell's NU26_PASS (set before the ``cli`` fixture copies the environment); NU26_UNSET unset."""
    monkeypatch.setenv("NU26_PASS", "from the shell")
    monkeypatch.delenv("NU26_UNSET", raising=False)


async def test_newuser26_n2_env_name_alone_passes_the_shells_value_and_is_refused_when_unset(
        shell_env: None, cli: Any) -> None:
    """newuser26 n2: ``--env FOO`` was refused ("is not NAME=VALUE"); docker's ``-e FOO`` and Slurm's
    ``--export=FOO`` pass the submitter's FOO. Now it does too, and an unset FOO is refused naming it."""
    run = await cli("--json", "submit", "--gpus", "0", "--env", "NU26_PASS", "--env", "SEED=1", "--", "true")
    assert run.code == EXIT_OK, run.err
    sent = json.loads(run.out)["env"]  # with the shell's PATH (newuser27 N2: a local server's job runs with it)
    assert {k: v for k, v in sent.items() if k not in SUBMITTER_VARIABLES} == {"NU26_PASS": "from the shell", "SEED": "1"}
    assert sent.get("PATH"), sent
    unset = await cli("submit", "--gpus", "0", "--env", "NU26_UNSET", "--", "true")
    assert unset.code == EXIT_USAGE  # bad input: 2 whoever finds it (newuser38 n2)
    assert unset.err == ("jupyter-sched submit: --env NU26_UNSET: NU26_UNSET is not set in this shell — export "
                         "NU26_UNSET=… first, or give its value: --env NU26_UNSET=VALUE [validation_error]\n"), unset.err


async def test_submit_reserves_cpu_and_host_memory_and_names_a_bad_value(cli: Any) -> None:
    run = await cli("--json", "submit", "--gpus", "0", "--cpu", "0.5", "--memory", "1GiB", "--name", "small",
                    "--", "true")
    assert run.code == EXIT_OK, run.err
    resources = json.loads(run.out)["resources"]
    assert (resources["cpu_millis"], resources["memory_mib"]) == (500, 1024)
    for value in ("lots", "inf", "nan", "-1"):
        bad = await cli("submit", "--cpu", value, "--", "true")
        assert bad.code == EXIT_USAGE and "submit: --cpu " in bad.err and bad.err.count("\n") == 1, (value, bad.err)


async def test_no_server_is_one_line_and_exit_3(cli: Any, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env["JUPYTER_RUNTIME_DIR"] = str(tmp_path / "empty-runtime")
    run = await cli("queue", environ=env)
    assert run.code == EXIT_NO_SERVER
    assert run.err.count("\n") == 1 and "no jupyter_sched server found" in run.err.lower()


async def test_a_bad_command_line_is_exit_2(cli: Any) -> None:
    run = await cli("frobnicate")
    assert run.code == EXIT_USAGE


async def test_newuser37_n1_definitions_list_ends_with_the_last_runs_outcome(cli: Any, tmp_path: Path) -> None:
    """newuser37 N1, n1, n2 from the terminal: a definition made without ``--gpus`` says ``1 GPU`` in ``show`` (n1);
    after its run failed on a relative data file, ``definitions list`` ends its line with the run's outcome (N1) —
    the file's error, the job's folder it was read from and what to do (n2) — and ``runs`` quotes whole traceback
    lines, never a ``^^^^`` underline row (n2)."""
    from jupyter_sched.executors.outcome import LOG_TAIL_LINES
    from jupyter_sched.wording.jobs import split_log_quote

    (tmp_path / "missing_data.py").write_text("def load(path):\n    return open(path).read()\n\n"
                                             "rows = load('data/train.csv').splitlines()\n")
    made = await cli("definitions", "create", "missing_data.py", "--name", "nodata", "--time-limit", "5m")
    assert made.code == EXIT_OK, made.err
    shown = await cli("definitions", "show", "nodata")
    assert " · 1 GPU · " in shown.out, shown.out  # n1: the default, said as --gpus 1 says it
    ran = await cli("definitions", "run", "nodata")
    assert ran.code == EXIT_OK, ran.err
    job_id = ran.out.split()[2]
    assert (await cli("wait", job_id)).code == EXIT_JOB_FAILED
    listed = await cli("definitions", "list")
    line = listed.out.strip().splitlines()[0]
    want = (f"FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv' (missing_data.py, line 2) — a "
            f"relative path is read from the job's working folder, {tmp_path}, and there is no {tmp_path}/data/train.csv: "
            "check the path, or give an absolute one")
    assert re.search(r"  last: failed, exit code 1 · ended \d\d:\d\d UTC \(ran \d+s\) — ", line), line
    assert line.endswith(want), line  # the log's lines are for `runs` and `logs`
    runs = (await cli("definitions", "runs", "nodata")).out
    run_line = next(text for text in runs.splitlines() if job_id in text)
    said, opening, quoted = split_log_quote(run_line)
    assert said.endswith(want) and opening == "; last lines: ", run_line
    lines = quoted.split(" | ")
    assert len(lines) == LOG_TAIL_LINES and lines[0].lstrip().startswith("File "), run_line
    assert not any(set(text.strip()) <= set("^~") for text in lines), run_line


# newuser37 N4 and n7 (session 37's s37-defparams) share one server: test_s38_defs_cli_one_server.py
