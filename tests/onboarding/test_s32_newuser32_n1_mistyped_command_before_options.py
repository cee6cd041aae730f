"""newuser32 N1: a mistyped COMMAND followed by options blamed the first option, not the command —
``jupyter-sched sumbit --gpus 1 -- python train.py`` said "--gpus: not an option of jupyter-sched", so a newcomer took
``--gpus`` out or hunted for another GPU flag. The scan for a mistyped global flag (newuser30 N1: ``--urll URL status``)
stepped over the unknown command word. It now stops at the COMMAND's place (the first word that is neither a flag nor
a global flag's value) and leaves the naming to argparse's "is not one of … — did you mean" line."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main


@pytest.mark.parametrize("argv, typo, meant", [
    (["sumbit", "--gpus", "1", "--", "python", "train.py"], "sumbit", "submit"),
    (["qeue", "--all"], "qeue", "queue"),
    (["--url", "http://127.0.0.1:9/", "sumbit", "--gpus", "1"], "sumbit", "submit"),  # a global flag's value skipped
    (["--timeout=3", "stauts", "--json"], "stauts", "status"),
    (["--json", "canel", "--mine"], "canel", "cancel"),
], ids=["submit", "queue", "after-url", "after-timeout=", "after-json"])
def test_newuser32_n1_a_mistyped_command_is_named_whatever_options_follow(
        argv: list[str], typo: str, meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    code = main(argv, out=io.StringIO(), err=err)
    shown = (err.getvalue() + capsys.readouterr().err).strip()
    assert code == 2, shown
    assert shown.startswith(f"jupyter-sched: COMMAND: '{typo}' is not one of status, submit"), shown
    assert shown.endswith(f"did you mean {meant}? [usage_error]"), shown
    assert "not an option" not in shown, shown


def test_newuser32_n1_a_mistyped_global_flag_before_the_command_is_still_named(
        capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(["--urll", "http://127.0.0.1:9/", "sumbit", "--gpus", "1"], out=io.StringIO(), err=err) == 2
    shown = err.getvalue() + capsys.readouterr().err
    assert shown.startswith("jupyter-sched: --urll: not an option of jupyter-sched — did you mean --url?"), shown
