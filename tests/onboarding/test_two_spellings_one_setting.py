"""An option with two spellings of one setting, given both ways with different values, is refused
naming both (session 19's leftover: ``jupyter-sched submit --team a --queue b`` charged team b
without a word, argparse keeping the last). Covers every such pair: the CLI's ``submit``,
``definitions create/edit`` (``--team``/``--queue``) and ``wait`` (``--for``/``--timeout``), the
magics' ``%%schedule`` (``--team``/``--queue``), ``%gpu request`` (``--timeout``/``--for``) and
``%schedule wait`` (``--for``/``--timeout``). One spelling twice keeps the last, as any option."""

from __future__ import annotations

import io

import pytest

from jupyter_sched.cli.main import build_parser, main
from jupyter_sched.errors import ValidationError
from jupyter_sched.magics.parsing import parse_gpu_line, parse_schedule_line


@pytest.mark.parametrize("argv", [
    ["submit", "--team", "a", "--queue", "b", "--", "true"],
    ["definitions", "create", "--queue", "a", "--team", "b", "train.py", "--cron", "0 3 * * *"],
    ["definitions", "edit", "d-1", "--team", "a", "--queue", "b"],
    ["wait", "j-1", "--for", "5m", "--timeout", "6m"],
])
def test_cli_refuses_two_spellings_with_different_values(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv, out=io.StringIO(), err=io.StringIO()) == 2  # usage error (argparse's exit, caught by main)
    said = capsys.readouterr().err
    assert "are two names of one setting; give it once" in said, said
    first, second = [w for w in argv if w.startswith("--") and w not in ("--", "--cron")][:2]
    assert f"{first} " in said and f"{second} " in said, said
    assert "Traceback" not in said


def test_cli_same_value_under_both_spellings_and_one_spelling_twice_are_fine() -> None:
    parser = build_parser("submit")
    assert parser.parse_args(["submit", "--team", "a", "--queue", "a", "--", "true"]).team == "a"
    assert parser.parse_args(["submit", "--team", "a", "--team", "b", "--", "true"]).team == "b"


@pytest.mark.parametrize("parse, line", [
    (lambda text: parse_schedule_line(text, cell=True), "--gpus 1 --team a --queue b"),
    (parse_gpu_line, "request 1 --timeout 10 --for 20"),
    (parse_schedule_line, "wait j-1 --for 10 --timeout 20"),
])
def test_magics_refuse_two_spellings_with_different_values(parse, line: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValidationError) as refused:
        parse(line)
    assert "are two names of one setting; give it once" in refused.value.message, refused.value.message
