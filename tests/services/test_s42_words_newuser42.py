"""Session 42, s42-words (/work/coord/s42/p-words42.md): what the CLI and the magics say.

newuser42 n1: a job whose shell passed on a child's SIGKILL ended ``exit code 137`` and nothing said what 137 means;
now every line that says a job's exit code says the signal 129-159 stand for, by one wording function
(:func:`jupyter_sched.wording.exit_codes.exit_code_words`) — the CLI's job lines and the magics' tables read it.

In-process: the wording functions on job rows as the REST API returns them (no server is needed for a rule of words).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.magics.render import _ended_row
from jupyter_sched.wording import job_line
from jupyter_sched.wording.exit_codes import exit_code_words

NOW = datetime(2026, 12, 8, 0, 10, tzinfo=timezone.utc)


def _ended(code: int, message: str | None = None) -> dict[str, Any]:
    return {"id": "j-n42", "name": "plain", "kind": "job", "user": "ana", "state": "failed", "gpus": 0,
            "exit_code": code, "message": f"exited with code {code}" if message is None else message,
            "started_at": "2026-12-08T00:00:00Z", "finished_at": "2026-12-08T00:01:00Z"}


SIGKILL_137 = ("exit code 137 (128+9: a process it started was killed by SIGKILL — out of memory (the OOM killer) "
               "or kill -9)")


@pytest.mark.parametrize(("code", "want"), [
    pytest.param(137, SIGKILL_137, id="137 is 128+9: SIGKILL, most often the OOM killer"),
    pytest.param(143, "exit code 143 (128+15: a process it started was killed by SIGTERM — asked to stop (kill, a "
                      "time limit, a cancel))", id="143 is SIGTERM"),
    pytest.param(139, "exit code 139 (128+11: a process it started was killed by SIGSEGV — a crash: it read or "
                      "wrote memory it does not own)", id="139 is SIGSEGV"),
    pytest.param(129, "exit code 129 (128+1: a process it started was killed by SIGHUP — its terminal or session "
                      "went away)", id="129 is the first signal's"),
    pytest.param(140, "exit code 140 (128+12: a process it started was killed by SIGUSR2)",
                 id="a signal with no usual cause is named alone"),
    pytest.param(128, "exit code 128", id="128 is no signal's"),
    pytest.param(160, "exit code 160", id="above 159 is no signal's"),
    pytest.param(1, "exit code 1", id="a program's own code is said as it is"),
])
def test_newuser42_n1_exit_codes_129_to_159_name_their_signal(code: int, want: str) -> None:
    assert exit_code_words(code) == want
    line = job_line(_ended(code), NOW)
    assert f"failed, {want} · ended" in line, line  # the CLI's (and %schedule status's) line
    # %schedule jobs --all's detail (before: "exited with code 137"); a code no signal's: the message as it was
    assert _ended_row(_ended(code))["detail"] == (want if "128+" in want else f"exited with code {code}")


def test_newuser42_n1_the_magics_table_keeps_the_message_after_the_code() -> None:
    message = "exited with code 137; last lines: loading | epoch 3"
    assert _ended_row(_ended(137, message))["detail"] == f"{SIGKILL_137}; last lines: loading | epoch 3"
    assert _ended_row(_ended(137, "cancelled by ana"))["detail"] == f"{SIGKILL_137}; cancelled by ana"
    assert "killed by SIGKILL" in job_line(_ended(-9, "killed by SIGKILL"), NOW)  # a signal that ended it: as before


def test_newuser42_n1_the_panel_reads_the_same_words() -> None:
    """The panel's ``exitCodeWords`` (labextension/src/format.ts) is checked against this table by its vitest
    (labextension/test/s42_newuser42_n1_exit_codes.test.ts); the table must be what the CLI and magics say."""
    import json
    from pathlib import Path

    table = json.loads((Path(__file__).parents[2] / "labextension" / "test" / "exit_codes.json").read_text("utf-8"))
    assert set(map(int, table)) >= set(range(129, 160)) and table["137"] == SIGKILL_137
    assert table == {code: exit_code_words(int(code)) for code in table}


@pytest.mark.parametrize(("argv", "want"), [
    pytest.param(["-q", "submit", "--gpus", "1", "--", "python", "x.py"],
                 "-q: not an option of jupyter-sched — -q is an option of submit: jupyter-sched submit -q …",
                 id="submit's -q given before submit"),
    pytest.param(["--gpus", "2", "submit", "--", "true"],
                 "--gpus: not an option of jupyter-sched — --gpus is an option of submit: jupyter-sched submit "
                 "--gpus 2 …", id="an option's value moves with it"),
    pytest.param(["--all", "jobs"], "--all: not an option of jupyter-sched — --all is an option of jobs: "
                 "jupyter-sched jobs --all [usage_error]", id="nothing after the command: no ellipsis"),
    pytest.param(["--cron", "* * * * *", "definitions", "create", "x.py"],
                 "--cron is an option of definitions create: jupyter-sched definitions create --cron '* * * * *' …",
                 id="an action's option goes after both words, its value quoted for the shell"),
])
def test_newuser42_n2_a_commands_option_given_first_is_said_to_go_after_it(
        argv: list[str], want: str, capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.cli.main import EXIT_USAGE, main

    assert main(argv) == EXIT_USAGE  # argparse's errors: on sys.stderr
    said = capsys.readouterr().err
    assert want in said and said.count("\n") == 1 and "usage: jupyter-sched [-h]" not in said, said


@pytest.mark.parametrize("argv", [["--bogus", "submit", "--", "true"], ["-q", "status"], ["-q"]],
                         ids=["no command has it", "the command typed has no such option", "no command typed"])
def test_newuser42_n2_an_option_no_command_typed_has_is_not_moved(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from jupyter_sched.cli.main import EXIT_USAGE, main

    assert main(argv) == EXIT_USAGE
    said = capsys.readouterr().err
    assert said.startswith("jupyter-sched: ") and "is an option of" not in said and "usage: jupyter-sched [-h]" in said, \
        said


def test_newuser42_n3_the_path_note_is_said_when_the_jobs_path_finds_another_program(tmp_path: Any) -> None:
    """newuser42 n3: "runs python as … (the one on your PATH) …" was four lines on every submit, though the job's PATH
    (this shell's, sent with it) finds the same program. It is said only when the job's own PATH would run another
    program, none, or is not sent (the server's) — by content, never by a count (the CLI keeps no state)."""
    import os

    from jupyter_sched.cli.commands import _found_elsewhere

    mine, other, empty = (tmp_path / name for name in ("mine", "other", "empty"))
    for folder in (mine, other, empty):
        folder.mkdir()
    for folder in (mine, other):
        (folder / "python").write_text("#!/bin/sh\n", encoding="utf-8")
        (folder / "python").chmod(0o755)
    resolved = str(mine / "python")
    assert _found_elsewhere("python", resolved, {"PATH": f"{mine}{os.pathsep}{other}"}) == ""
    assert _found_elsewhere("python", resolved, {"PATH": f"{other}{os.pathsep}{mine}"}) == \
        f"the job's PATH finds {other / 'python'} first"
    assert _found_elsewhere("python", resolved, {"PATH": str(empty)}) == "the job's PATH finds no python"
    assert _found_elsewhere("python", resolved, {}) == "the job gets the server's PATH"
