"""newuser37 n9: n6's note said "(%schedule run --help lists its options)", but ``%schedule run --help`` printed
only its usage line — no option — and the note ran into the next note with no full stop ("… -- ARGS Runs with this
kernel's PATH"). A subcommand whose usage says ``[options]`` now lists the %%schedule options it takes, and the note is
a sentence of its own (the kernel's submit prints each note on its own line)."""

from __future__ import annotations

import pytest

from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.magics.parsing import help_text, passed_on_note


@pytest.mark.parametrize("topic", ["run", "notebook", "serve", "dryrun"])
def test_newuser37_nit9_a_subcommands_help_lists_the_options_it_takes(topic: str) -> None:
    said = help_text(SchedMagics.schedule.__doc__ or "", "%schedule", topic)
    assert said.startswith(f"%schedule {topic}"), said
    options = said.split("[options], as %%schedule takes them:\n", 1)[1]
    for option in ("--gpus N", "--time-limit 2h", "--no-preempt", "--name NAME", "--env NAME[=VALUE]"):
        assert option in options, said
    assert "<cell body>" not in said and said.endswith("%schedule? shows the whole help."), said


def test_newuser37_nit9_a_subcommand_without_options_gets_no_options_list() -> None:
    said = help_text(SchedMagics.schedule.__doc__ or "", "%schedule", "queue")
    assert "[options], as" not in said and "--gpus" not in said, said


def test_newuser37_nit9_the_passed_on_note_is_a_whole_sentence() -> None:
    note = passed_on_note("%schedule run", "train_ok.py", ["--after j-1"]) or ""
    assert note.endswith("%schedule run [OPTIONS] train_ok.py -- ARGS."), note
    assert "(%schedule run --help lists its options)" in note, note
