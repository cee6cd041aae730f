"""newuser29 N3: the README's and ``update --help``'s own example ``jupyter-sched update JOB --time-limit -30m``
was refused "must not be negative … e.g. --time-limit 30m" (argparse reads ``-30m`` as an option; only
``--time-limit=-30m`` worked), and its fix would have SET 30m. A relative value written apart is taken, in the
CLI and in ``%schedule update`` alike (the end-to-end run against a server: tests/web/test_hubadmin25_b18_cli)."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import EXIT_USAGE, main
from jupyter_sched.magics.parsing import parse_schedule_line
from jupyter_sched.wording.flags import relative_values_joined


def test_newuser29_n3_update_takes_a_relative_limit_written_apart_in_the_cli_and_the_magics(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_schedule_line("update j-1 --time-limit -30m").changes == {"time_limit": "-30m"}
    assert parse_schedule_line("update j-1 j-2 --time-limit -1.5h --priority low").changes == {
        "time_limit": "-1.5h", "priority": "low"}
    out, err = io.StringIO(), io.StringIO()
    code = main(["--url", "http://127.0.0.1:9", "update", "j-1", "--time-limit", "-30m"], out=out, err=err)
    said = err.getvalue() + capsys.readouterr().err
    assert code != EXIT_USAGE and "negative" not in said, (code, said)
    # only a number after the dash is a value; an option stays an option, and nothing after -- is touched
    assert relative_values_joined(["j", "--time-limit", "--priority", "low"]) == ["j", "--time-limit", "--priority",
                                                                                   "low"]
    assert relative_values_joined(["--", "--time-limit", "-5m"]) == ["--", "--time-limit", "-5m"]
    # submit keeps refusing a negative limit at once (newuser23 N1): only update's limits are relative
    code = main(["--url", "http://127.0.0.1:9", "submit", "--time-limit", "-5m", "--", "true"], out=out, err=err)
    said = err.getvalue() + capsys.readouterr().err
    assert code == EXIT_USAGE and "must not be negative (got -5m)" in said, said
