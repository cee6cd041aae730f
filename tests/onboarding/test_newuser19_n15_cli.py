"""New user 19, N15: ``jupyter-sched definitions create/edit`` take ``--team`` as ``submit`` and
``%schedule define`` do (``--queue`` still works, everywhere), and ``definitions edit --help`` says
an option left out keeps the current value — never create's "(default 1)". Before the fix
``definitions create --team vision …`` was "unexpected arguments: --team" and ``edit --help`` said
``--gpus GPUS  GPUs per run (default 1)``."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from jupyter_sched.cli.definitions import _body
from jupyter_sched.cli.main import build_parser


def _parsed(*argv: str) -> tuple[argparse.Namespace, argparse.ArgumentParser]:
    parser = build_parser(argv[0])
    return parser.parse_args(list(argv)), parser


@pytest.mark.parametrize("flag", ["--team", "--queue"])
def test_newuser19_n15_definitions_create_and_edit_take_team_and_queue(flag: str, tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    args, parser = _parsed("definitions", "create", flag, "vision", str(script), "--cron", "0 3 * * *")
    body = _body(args, parser, create=True)
    assert body["team"] == "vision" and "queue" not in body, body
    args, parser = _parsed("definitions", "edit", "d-1", flag, "nlp")
    assert _body(args, parser, create=False) == {"team": "nlp"}


@pytest.mark.parametrize("flag", ["--team", "--queue"])
def test_newuser19_n15_submit_takes_team_and_queue(flag: str) -> None:
    args, _ = _parsed("submit", flag, "vision", "--", "true")
    assert args.team == "vision"


def _help(*argv: str) -> str:
    parser = build_parser(argv[0])
    sub = parser._subparsers._group_actions[0].choices[argv[0]]  # type: ignore[union-attr]
    for name in argv[1:]:
        sub = sub._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
    return " ".join(sub.format_help().split())


def test_newuser19_n15_edit_help_says_left_out_is_unchanged_never_a_default() -> None:
    edit = _help("definitions", "edit")
    assert "(default" not in edit and "default)" not in edit, edit
    # submit's own words for what a run asks for (one definition: cli/run_options, newuser42 n4)
    assert "fraction below 1 (left out: unchanged)" in edit and "--team TEAM, --queue TEAM" in edit, edit
    create = _help("definitions", "create")
    assert "fraction below 1 (default 1)" in create and "--team TEAM, --queue TEAM" in create, create
