"""newuser34 n1's small bits: ``definitions create --help`` gave NOTEBOOK_OR_SCRIPT and ``definitions run -p`` no help
text; ``cancel j-… j-…`` (pasted from ``definitions delete``'s hint) said ``cancelled j-… (was pending; …)`` without the
job's name, where every other line names it.

Real parts: the CLI's own parser (every command, every argument) and the one renderer of a cancel's line, which the CLI
and ``%schedule cancel`` print.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from jupyter_sched.cli.main import build_parser
from jupyter_sched.wording import cancel_outcome


def _unexplained(parser: argparse.ArgumentParser, path: str) -> Iterator[str]:
    """``definitions create NOTEBOOK_OR_SCRIPT``: each argument of ``parser`` and its sub-commands without help text."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _unexplained(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            yield f"{path} {'/'.join(action.option_strings) or action.metavar or action.dest}"


def test_newuser34_n1_every_cli_argument_says_what_it_takes() -> None:
    assert sorted(set(_unexplained(build_parser(), "jupyter-sched"))) == []


def test_newuser34_n1_a_cancel_names_the_job_it_cancelled() -> None:
    run = {"id": "j-7", "name": "d7 @ 22:01 UTC", "state": "pending", "user": "ann", "mine": True}
    assert cancel_outcome(run, {**run, "state": "cancelled"}) == (
        "cancelled j-7 (d7 @ 22:01 UTC; was pending; removed from the queue)")
    running = {**run, "name": "train", "state": "running"}
    assert cancel_outcome(running, running, grace_s=60) == "cancelled j-7 (train; was running; stopping, grace 60 s)"
    # no name, or the server's default one: the id alone, as before
    for name in (None, "", "job", "j-7"):
        bare = {**run, "name": name}
        assert cancel_outcome(bare, {**bare, "state": "cancelled"}) == "cancelled j-7 (was pending; removed from the queue)"
    # the magic reads nothing first: the answer's name serves
    assert cancel_outcome(None, {**run, "state": "cancelled"}).startswith("cancelled j-7 (d7 @ 22:01 UTC; was ")
    # an admin cancelling another's job: whose and which, as before (new user 10, N8)
    theirs = {**running, "mine": False, "user": "bob"}
    assert cancel_outcome(theirs, theirs, grace_s=60) == "cancelled j-7 (bob's train; was running; stopping, grace 60 s)"
    # a hidden character in a name is shown, never obeyed (as every line shows names)
    odd = {**run, "name": "evil\x1b[2J"}
    assert "\x1b" not in cancel_outcome(odd, {**odd, "state": "cancelled"})
