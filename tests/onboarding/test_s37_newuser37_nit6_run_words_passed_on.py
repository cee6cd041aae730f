"""newuser37 n6: ``%schedule run train_ok.py --steps 3 --gpus 1 --after JOB`` (a newcomer's guess at a
dependency) gave ``--after JOB`` to the script, unsaid, and the job failed a second later on
"unrecognized arguments" — while ``jupyter-sched submit --after`` is refused. An option-looking word that
sits behind one of the magic's own options typed after the script is now named in the submit's note as
the script's argument, not an option of the magic, with how to write script arguments (after ``--``).
Words before our first option after the script, and after ``--``, are the script's as written: unnamed.
(The note as a submit prints it: tests/web/test_s37_newuser37_n2_n6_pending_logs.py.)"""

from __future__ import annotations

import pytest

from jupyter_sched.magics.parsing import parse_schedule_line, passed_on_note


@pytest.mark.parametrize(("line", "passed_on"), [
    ("run train_ok.py --steps 3 --gpus 1 --after j-1", ("--after j-1",)),
    ("run train.py --gpus=1 --after=j-1 --dry", ("--after=j-1", "--dry")),
    ("run train.py --nvlink --lr 0.1 --name n", ("--lr 0.1",)),  # a switch of ours takes no value
    ("serve app.py --port 8000 --workers 2", ("--workers 2",)),
    ("run train.py --time-limit 5m --offset -3", ("--offset -3",)),
    ("run --name train.py train.py --gpus 1 --after j-1", ("--after j-1",)),  # a value of ours naming the script
], ids=["the finding", "with =", "after a switch", "serve", "a negative value", "value like the script"])
def test_newuser37_nit6_option_words_behind_our_options_are_named_as_the_scripts(
        line: str, passed_on: tuple[str, ...]) -> None:
    cmd = parse_schedule_line(line)
    assert cmd.passed_on == passed_on
    assert all(word.split()[0] in cmd.args for word in passed_on), cmd.args  # still given to the script
    note = passed_on_note("%schedule run", str(cmd.target), cmd.passed_on) or ""
    assert note.startswith(f"Note: {', '.join(passed_on)} go"), note
    assert f"to {cmd.target} as its argument" in note and "of %schedule run" in note, note
    assert f"put them after --: %schedule run [OPTIONS] {cmd.target} -- ARGS" in note, note


@pytest.mark.parametrize("line", [
    "run train.py --lr 0.1",  # must pass to the script, said nothing about
    "run train.py --epochs 3 --lr 0.1 --gpus 1",
    "run --gpus 1 train.py --after j-1",
    "run train.py --gpus 1 -- --after j-1 --lr 0.1",
    "run train.py --gpus 1 3 4",
    "run train.py --offset -3 --time-limit 5m",
])
def test_newuser37_nit6_the_scripts_own_words_as_written_get_no_note(line: str) -> None:
    cmd = parse_schedule_line(line)
    assert cmd.passed_on == () and passed_on_note("%schedule run", str(cmd.target), cmd.passed_on) is None
    assert cmd.args  # and go to the script
