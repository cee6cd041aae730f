"""newuser32 n9: every mistyped one-letter flag was answered "did you mean -h?" (``queue -f``, ``jobs -a``): a
one-letter flag is one edit from every other, ``-h`` above all. Now a one-letter flag is offered the long options
starting with its letter (``jobs -a`` → ``--all``), else the command's usage — on the CLI and in the magics, which
say it through the same :func:`jupyter_sched.wording.flags.close_option`."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main
from jupyter_sched.magics.core import _parsing
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line
from jupyter_sched.wording.flags import close_option


@pytest.mark.parametrize("argv, hint", [
    (["jobs", "-a"], "did you mean --all?"),
    (["queue", "-a"], "did you mean --all?"),
    (["queue", "-f"], "usage: jupyter-sched queue [-h]"),
    (["status", "-x"], "usage: jupyter-sched status [-h]"),
    (["-j", "status"], "did you mean --json?"),
    (["-v", "status"], "did you mean -V?"),  # another case of the same letter is still the one meant
], ids=["jobs-a-is-all", "queue-a-is-all", "queue-f-usage", "status-x-usage", "global-j-is-json", "case"])
def test_newuser32_n9_a_one_letter_flag_is_offered_its_long_option_or_the_usage_never_h(
        argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(argv, out=io.StringIO(), err=err) == 2
    shown = err.getvalue() + capsys.readouterr().err
    assert f"{argv[0] if argv[0].startswith('-') else argv[1]}: not an option of" in shown, shown
    assert f" — {hint}" in shown and "did you mean -h?" not in shown, shown


def test_newuser32_n9_close_option_of_one_letter_gives_the_long_options_of_that_letter() -> None:
    options = ["-h", "--help", "--all", "--limit", "--mine", "--mem-per-gpu", "--memory", "--model", "--json",
               "--team", "--time-limit", "--timeout", "--token"]
    assert close_option("-a", "", options) == "did you mean --all?"
    assert close_option("-f", "", options) == ""  # no --f…: the caller says the usage
    assert close_option("-m", "", options[:5]) == "did you mean --mine?"
    assert close_option("-m", "", options[:7]) == "did you mean --mem-per-gpu, --memory or --mine?"
    assert close_option("-t", "", options) == ""  # four of them: the usage says them better
    assert close_option("-x", "", options) == ""


@pytest.mark.parametrize("parse, line, said", [
    (parse_gpu_line, "request 1 -m A100", "unknown argument -m — did you mean --mem-per-gpu, --memory or --model?"),
    (lambda line: parse_schedule_line(line, cell=True), "--gpus 1 -x", "unknown argument -x. See"),
    (parse_schedule_line, "jobs -f", "unknown argument -f. See"),
], ids=["%gpu-m", "%%schedule-x", "%schedule-jobs-f"])
def test_newuser32_n9_the_magics_say_the_same_of_a_one_letter_flag(parse, line: str, said: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(Exception) as refused, _parsing():
        parse(line)
    assert said in str(refused.value) and "-h?" not in str(refused.value), str(refused.value)
