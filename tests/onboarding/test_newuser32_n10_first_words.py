"""newuser32 n10: ``jupyter-sched`` alone said "COMMAND: missing — usage: …", ``help`` / ``help submit`` were "'help'
is not one of …", and the words people try first (``run``, ``sbatch``, ``kill``, ``ps``, ``ls``, ``info``) got the
list of commands with no pointer (``ls`` even "did you mean logs?"). Now the bare command and ``help [COMMAND]``
print the help (as git, pip and kubectl do), and each first word is answered with the command that does it
(:data:`jupyter_sched.cli.main.NOT_COMMANDS`)."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main


@pytest.mark.parametrize("argv, opens", [
    ([], "usage: jupyter-sched [-h]"),
    (["help"], "usage: jupyter-sched [-h]"),
    (["help", "submit"], "usage: jupyter-sched submit"),
    (["help", "queue"], "usage: jupyter-sched queue [-h]"),
], ids=["bare", "help", "help-submit", "help-queue"])
def test_newuser32_n10_bare_and_help_print_the_help(argv: list[str], opens: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(argv, out=io.StringIO(), err=err) == 0
    shown = capsys.readouterr()
    assert shown.out.startswith(opens) and "usage_error" not in shown.out + shown.err + err.getvalue(), shown
    if not argv[1:]:
        assert "submit" in shown.out and "queue" in shown.out  # the commands, with what each does


@pytest.mark.parametrize("word, pointer", [
    ("run", "`jupyter-sched submit --gpus 1 -- python train.py` runs a command as a job"),
    ("sbatch", "`jupyter-sched submit --gpus 1 -- python train.py`"),
    ("kill", "`jupyter-sched cancel JOB` stops a job"),
    ("scancel", "`jupyter-sched cancel JOB`"),
    ("ps", "`jupyter-sched queue` shows the pending and running work; `jupyter-sched jobs` lists yours"),
    ("ls", "`jupyter-sched queue` shows"),
    ("squeue", "`jupyter-sched queue` shows"),
    ("info", "`jupyter-sched status` says the GPUs and your work; `jupyter-sched nodes` lists the nodes"),
    ("sinfo", "`jupyter-sched status` says"),
])
def test_newuser32_n10_the_words_tried_first_point_at_the_command_that_does_it(
        word: str, pointer: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main([word, "x"], out=io.StringIO(), err=err) == 2
    shown = err.getvalue() + capsys.readouterr().err
    assert f"'{word}' is not one of" in shown and f" — {pointer}" in shown, shown
    assert "did you mean" not in shown and "usage: jupyter-sched [-h]" not in shown, shown
