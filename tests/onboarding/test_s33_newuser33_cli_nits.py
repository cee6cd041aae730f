"""newuser33 n7, n8, n5: CLI words of the first hour (issue 20).

n7: ``jupyter-sched teams`` and ``jupyter-sched users`` alone said "ACTION: missing — usage: … ACTION ..." (exit 2), no
action listed; a command of actions typed alone now prints its help, as bare ``jupyter-sched`` does.
"""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import main


@pytest.mark.parametrize("argv", [["teams"], ["users"], ["--json", "teams"], ["users", "--json"]])
def test_newuser33_n7_a_command_of_actions_alone_prints_its_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    assert main(argv, out=io.StringIO(), err=err) == 0
    said = capsys.readouterr().out
    group = next(word for word in argv if not word.startswith("-"))
    assert said.startswith(f"usage: jupyter-sched {group} "), said
    assert ("move" if group == "teams" else "rename") in said  # its actions listed
    assert "jupyter-sched status" in said  # where a user who is no admin looks at their own team
    assert "missing" not in said + err.getvalue()
