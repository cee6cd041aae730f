"""newuser23 N1: a negative value after a space (``--time-limit -5m``, ``--memory -3GiB``, ``wait J --for -1s``)
was told to join it (``--time-limit=-5m``), which was then refused as negative: two round trips for one
mistake. It is now refused as negative at once, in the CLI and the magics; a value that could be valid
(``--name -5m``) keeps the advice to join it."""
from __future__ import annotations

import contextlib
import io

import pytest

from jupyter_sched.cli.main import EXIT_USAGE, main
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line


def _usage(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = main(list(argv), out=out, err=err)
    assert code == EXIT_USAGE and out.getvalue() == "", (code, out.getvalue())
    return err.getvalue().strip()


@pytest.mark.parametrize(("argv", "said"), [
    (("submit", "--gpus", "1", "--time-limit", "-5m", "--", "true"),
     "jupyter-sched submit: --time-limit: must not be negative (got -5m) — e.g. --time-limit 30m [usage_error]"),
    (("submit", "--gpus", "1", "--memory", "-3GiB", "--", "true"),
     "jupyter-sched submit: --memory: must not be negative (got -3GiB) — e.g. --memory 64GiB [usage_error]"),
    (("wait", "j-1", "--for", "-1s"),
     "jupyter-sched wait: --for: must not be negative (got -1s) — e.g. --for 10m [usage_error]"),
])
def test_newuser23_n1_a_negative_value_after_a_space_is_refused_as_negative_at_once(
        argv: tuple[str, ...], said: str) -> None:
    # before: `… expected one argument — a value starting with "-" is joined to its option: --time-limit=-5m`
    assert _usage(*argv) == said


def test_newuser23_n1_the_magics_say_the_same() -> None:
    with pytest.raises(ValidationError) as cell:
        parse_schedule_line("--time-limit -5m", cell=True)
    assert cell.value.field == "--time-limit", cell.value.field
    assert cell.value.message == "--time-limit: must not be negative (got -5m) — e.g. --time-limit 30m", \
        cell.value.message
    with pytest.raises(ValidationError) as gpu:
        parse_gpu_line("request 1 --timeout -5s")
    assert gpu.value.message.startswith("--timeout: must not be negative (got -5s)"), gpu.value.message
    assert "joined" not in gpu.value.message, gpu.value.message


def test_newuser23_n1_a_value_that_could_be_valid_is_still_told_to_join_it() -> None:
    said = _usage("submit", "--gpus", "1", "--name", "-5m", "--", "true")
    assert 'a value starting with "-" is joined to its option: --name=-5m' in said, said
