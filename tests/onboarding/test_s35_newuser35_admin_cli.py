"""newuser35's admin-CLI nits (issue 20, the admin's first hour), at the parser and the renderer — no server.

n1: ``doctor ends``'s help said "(red33 R3)" — an internal finding id in a user's help —, and the program's
``--help`` line for doctor said nothing of ends, correct-end or migrate. n4: argparse wrapped a help example's id at
its hyphen (``j-1m93d0kba-`` / ``gtkhhs``), so it did not copy as one word.
"""

from __future__ import annotations

import argparse
import io
import itertools
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from jupyter_sched.cli import doctor, doctor_args
from jupyter_sched.cli.main import build_parser
from jupyter_sched.magics.core import SchedMagics

FINDING_ID = re.compile(r"\b(?:red|newuser|hubadmin|verify|clifast|mend)\d{1,3}\b|\bs3\d-[a-z]|\bnew user \d+\b"
                        r"|\b(?:red|newuser|hubadmin|verify) ?\d{1,3} ?[A-Z]\d{1,2}\b", re.IGNORECASE)
"""An internal finding id (``red33 R3``, ``newuser29 n5``, ``verify27 V8``, ``s34-r3admin``, ``new user 14``)."""


def _helps(parser: argparse.ArgumentParser, path: str) -> Iterator[tuple[str, str]]:
    """``(command, its --help)`` of ``parser`` and every subcommand under it."""
    yield path, parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _helps(sub, f"{path} {name}")


def test_newuser35_n1_no_help_of_any_command_or_magic_names_an_internal_finding_id() -> None:
    helps = [*_helps(build_parser(), "jupyter-sched"), *_helps(doctor_args.doctor_parser(), "jupyter-sched doctor")]
    helps += [(f"%{name}", getattr(SchedMagics, name).__doc__ or "") for name in ("gpu", "schedule")]
    assert len(helps) > 40, [path for path, _ in helps]  # every subcommand's, each action's
    found = [(path, m.group(0), text[max(0, m.start() - 60):m.end()]) for path, text in helps
             for m in FINDING_ID.finditer(" ".join(text.split()))]
    assert found == [], found
    top = " ".join(dict(_helps(build_parser(), "jupyter-sched"))["jupyter-sched"].split())
    line = top[top.index("doctor admin"):]
    assert all(word in line[:300] for word in ("ends", "correct-end", "migrate")), line[:300]


def test_newuser35_n4_help_examples_and_ids_are_never_cut_at_a_hyphen() -> None:
    helps = dict(_helps(build_parser(), "jupyter-sched"))
    text = helps["jupyter-sched top"]
    assert "jupyter-sched top j-1m93d0kba-gtkhhs\n" in text, text  # the example: one line, copied whole
    for path, help_text in helps.items():
        lines = help_text.splitlines()
        cut = [(a, b) for a, b in itertools.pairwise(lines) if re.search(r"\w-$", a) and b.strip()[:1].isalnum()]
        assert cut == [], (path, cut)
    out = io.StringIO()
    assert doctor.main(["correct-end", "--help"], out=out, err=out) == doctor.EXIT_OK
    assert "Example: jupyter-sched doctor correct-end j-123 --reason" in out.getvalue(), out.getvalue()


def test_newuser35_n10_uncordon_takes_yes_as_cordon_does_and_an_unknown_flag_names_the_innermost_command(
        capsys: pytest.CaptureFixture[str]) -> None:
    """newuser35 n10: ``nodes uncordon vm --yes`` (a script's ``cordon --yes …; uncordon --yes``) was refused as
    "--yes: not an option of jupyter-sched nodes", and the node stayed cordoned."""
    from jupyter_sched.cli.main import main

    for action in (["cordon", "vm", "--reason", "PSU"], ["drain", "vm", "--reason", "PSU"], ["uncordon", "vm"]):
        args = build_parser("nodes").parse_args(["nodes", *action, "--yes"])
        assert args.yes is True and args.node == "vm", action
    out, err = io.StringIO(), io.StringIO()
    assert main(["nodes", "uncordon", "vm", "--force"], out=out, err=err) == 2
    said = err.getvalue() + capsys.readouterr().err  # argparse's own exit writes to sys.stderr
    assert said.startswith("jupyter-sched nodes uncordon: --force: not an option of jupyter-sched nodes uncordon"), said


@pytest.mark.parametrize("argv", [["doctor", "--help"], ["doctor", "correct-end", "--help"], ["doctor", "--nope"]])
def test_newuser37_nit5_doctor_help_and_usage_errors_do_not_import_the_store(argv: list[str]) -> None:
    """``doctor --help`` took 2 to 3 s where every other command's took ≤ 0.5 s: importing the doctor (SQLAlchemy, the
    store) before argparse answered. Its arguments are now read first; the store is imported to run an action only."""
    probe = ("import sys, io; from jupyter_sched.cli.main import main; "
             f"code = main({argv!r}, out=io.StringIO(), err=io.StringIO()); "
             "print(code, 'sqlalchemy' in sys.modules, 'jupyter_sched.store' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    code, sqlalchemy_loaded, store_loaded = done.stdout.split()
    assert code == ("2" if "--nope" in argv else "0"), done
    assert (sqlalchemy_loaded, store_loaded) == ("False", "False"), done
