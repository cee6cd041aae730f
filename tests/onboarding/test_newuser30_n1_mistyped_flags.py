"""newuser30 N1: a mistyped FLAG got no "did you mean" while a mistyped command or action did, a flag with a
value after it was "unexpected arguments: --fro 2h", and a mistyped global flag was blamed on its value
(``--urll URL status``: "COMMAND: 'http://…' is not one of …") or not named at all (``--verison``: "COMMAND:
missing"). Now every unknown flag reads ``FLAG: not an option of PROG — did you mean …?`` on the CLI, the
simulator's CLI and the magics."""

from __future__ import annotations

import io

import pytest
from IPython.core.error import UsageError

from jupyter_sched.cli.main import main
from jupyter_sched.magics.core import _parsing
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
from jupyter_sched.wording.flags import close_option


@pytest.mark.parametrize("argv, said", [
    (["submit", "--gpus", "1", "--time-limt", "5m", "--", "true"],
     "jupyter-sched submit: --time-limt: not an option of jupyter-sched submit — did you mean --time-limit?"),
    (["logs", "x", "--follw"], "jupyter-sched logs: --follw: not an option of jupyter-sched logs — did you mean --follow?"),
    (["wait", "x", "--fro", "2h"], "jupyter-sched wait: --fro: not an option of jupyter-sched wait — did you mean --for?"),
    (["update", "x", "--priorty", "high"],
     "jupyter-sched update: --priorty: not an option of jupyter-sched update — did you mean --priority?"),
    (["--urll", "http://127.0.0.1:18900/", "status"],
     "jupyter-sched: --urll: not an option of jupyter-sched — did you mean --url?"),
    (["--verison"], "jupyter-sched: --verison: not an option of jupyter-sched — did you mean --version?"),
    (["-v", "status"], "jupyter-sched: -v: not an option of jupyter-sched — did you mean -V?"),
    (["definitions", "create", "x.ipynb", "--crn", "0 6 * * *"],
     "jupyter-sched definitions create: --crn: not an option of jupyter-sched definitions create — did you mean "
     "--cron?"),
], ids=["submit", "logs", "wait-with-value", "update", "global-before-url", "global-alone", "case", "action"])
def test_newuser30_n1_a_mistyped_flag_is_named_with_the_one_meant(argv: list[str], said: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    code = main(argv, out=io.StringIO(), err=err)
    shown = (err.getvalue() + capsys.readouterr().err).strip()
    assert code == 2 and shown == f"{said} [usage_error]", shown


def test_newuser30_n1_a_flag_like_nothing_known_gets_the_usage_and_a_global_one_is_not_blamed_on_the_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(["submit", "--gpus", "1", "--xyzzy", "--", "true"], out=io.StringIO(), err=err) == 2
    shown = err.getvalue() + capsys.readouterr().err
    assert shown.startswith("jupyter-sched submit: --xyzzy: not an option of jupyter-sched submit — usage: "), shown
    err = io.StringIO()
    assert main(["--zzz", "stauts"], out=io.StringIO(), err=err) == 2
    shown = err.getvalue() + capsys.readouterr().err
    assert shown.startswith("jupyter-sched: --zzz: not an option of jupyter-sched"), shown
    assert "is not one of" not in shown and "COMMAND: " not in shown, shown


def test_newuser30_n1_close_option_prefers_the_same_letters_in_another_case_then_the_nearest_spelling() -> None:
    options = ["-h", "--help", "-V", "--version", "--url", "--utc"]
    assert close_option("-v", "", options) == "did you mean -V?"
    assert close_option("--urll", "", options) == "did you mean --url?"
    assert close_option("--nothing-like-it", "", options) == ""
    # without the parser's options, those its usage line lists
    assert close_option("--lmit", "usage: jupyter-sched queue [-h] [--limit N | --all] [--mine]") == \
        "did you mean --limit?"


@pytest.mark.parametrize("parse, line, meant", [
    (parse_gpu_line, "request 1 --modle A100", "--model"),
    (lambda line: parse_schedule_line(line, cell=True), "--gpus 1 --tem nlp", "--team"),
], ids=["%gpu", "%%schedule"])
def test_newuser30_n1_the_magics_name_the_flag_meant(parse, line: str, meant: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UsageError) as refused, _parsing():
        parse(line)
    assert f"did you mean {meant}?" in str(refused.value), str(refused.value)


@pytest.mark.parametrize("parse, line, meant", [
    (parse_gpu_line, "reqest 1", "request"),
    (lambda line: parse_schedule_line(line), "wiat j-1", "wait"),
], ids=["%gpu", "%schedule"])
def test_verify30_the_magics_name_the_subcommand_meant(parse, line: str, meant: str) -> None:  # type: ignore[no-untyped-def]
    """verify30: mistyped flags got "did you mean" in the magics, mistyped subcommands still only the list."""
    with pytest.raises(UsageError) as refused, _parsing():
        parse(line)
    assert f"unknown subcommand {line.split()[0]!r} — did you mean {meant}?" in str(refused.value), str(refused.value)
    with pytest.raises(UsageError) as refused, _parsing():
        parse("frobnicate 1")
    assert "did you mean" not in str(refused.value) and "Use one of:" in str(refused.value), str(refused.value)
