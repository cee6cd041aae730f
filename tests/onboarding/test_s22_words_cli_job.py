"""Session 22, issue 20 (verify21 nits): the CLI's ``logs``, ``wait`` and ``cancel`` said ``JOB_ID`` in
their usage, --help and missing-argument errors although a job's name works there too (``%schedule``
says ``JOB: a job's id or name``). Each case fails on the words said before (quoted in its comment).

No server: usage errors and --help are decided before any connection.
"""

from __future__ import annotations

import argparse
import contextlib
import io

import pytest

from jupyter_sched.cli.main import EXIT_USAGE, build_parser, main


def _run(*argv: str) -> tuple[int, str]:
    """Exit code and stderr (a usage error is written by argparse to ``sys.stderr``)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=io.StringIO(), err=err)
    return code, err.getvalue()


def _job_arguments() -> list[tuple[str, argparse.Action]]:
    """Every positional argument of every subcommand (and definitions action) that names a job or a
    definition: the whole kind, so a command added later is held to the same words."""
    found: list[tuple[str, argparse.Action]] = []

    def walk(parser: argparse.ArgumentParser, prog: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    walk(child, f"{prog} {name}")
            elif not action.option_strings and action.dest in ("job_id", "job_ids", "definition"):
                found.append((prog, action))

    walk(build_parser(), "")
    return found


def test_s22_words_every_cli_argument_naming_a_job_says_an_id_or_a_name() -> None:
    # before: metavar JOB_ID and no help at all ("positional arguments:\n  JOB_ID")
    found = _job_arguments()
    commands = {prog.strip() for prog, _ in found}
    assert {"wait", "logs", "cancel", "definitions show", "definitions run"} <= commands, commands
    for prog, action in found:
        assert action.metavar in ("JOB", "DEF"), (prog, action.metavar)
        assert action.help and "id" in action.help and "name" in action.help, (prog, action.help)
        assert "lists" in action.help, (prog, action.help)  # where the caller's own are listed


@pytest.mark.parametrize("command", ["logs", "wait"])
def test_s22_words_missing_job_says_what_is_accepted_and_where_to_find_one(command: str) -> None:
    # before: "jupyter-sched logs: JOB_ID: missing — usage: jupyter-sched logs [-h] [-f] [--raw] JOB_ID [usage_error]"
    code, err = _run(command)
    assert code == EXIT_USAGE and err.count("\n") == 1, err
    assert err.startswith(f"jupyter-sched {command}: JOB: missing — give a job's id or name, e.g. jupyter-sched "
                          f"{command} train (`jupyter-sched jobs` lists yours) — usage: jupyter-sched {command} "), err
    assert "JOB_ID" not in err and err.endswith(" JOB [usage_error]\n"), err


def test_s22_words_cancel_errors_and_usage_say_job_not_job_id(capsys: pytest.CaptureFixture[str]) -> None:
    # before: "say which jobs: JOB_ID ..., --mine …", "give job ids or --mine / --all, not both",
    # "a job id must not be empty: give one", usage "cancel (JOB_ID [JOB_ID ...] | --mine | --all)"
    code, err = _run("cancel")
    assert code == EXIT_USAGE and err.startswith("jupyter-sched cancel: say which jobs: JOB ... (each a job's id or "
                                                 "name), --mine (all of yours) or --all"), err
    assert "e.g. jupyter-sched cancel train" in err and "JOB_ID" not in err, err
    code, err = _run("cancel", "train", "--mine")
    assert code == EXIT_USAGE and "give JOB ... or --mine / --all, not both" in err and "job ids" not in err, err
    for command in ("cancel", "logs", "wait"):
        code, err = _run(command, " ")
        assert code == EXIT_USAGE and "JOB must not be empty — give a job's id or name" in err, err
    with pytest.raises(SystemExit):
        build_parser("cancel").parse_args(["cancel", "--help"])
    helped = capsys.readouterr().out
    assert "usage: jupyter-sched cancel (JOB [JOB ...] | --mine | --all [--user U | --team T])" in helped and "JOB_ID" not in helped, helped


def test_s22_words_missing_definition_says_an_id_or_a_name() -> None:
    # before: "jupyter-sched definitions show: DEF: missing — usage: jupyter-sched definitions show [-h] DEF"
    code, err = _run("definitions", "show")
    assert code == EXIT_USAGE and err.startswith(
        "jupyter-sched definitions show: DEF: missing — give a definition's id or name, e.g. jupyter-sched "
        "definitions show daily (`jupyter-sched definitions` lists yours) — usage: "), err
