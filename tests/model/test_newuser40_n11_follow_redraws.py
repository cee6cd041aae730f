"""newuser40 n11: ``jupyter-sched logs -f`` of a job drawing a ``\\r`` progress bar printed every redraw as a line of its
own (20 lines for one bar; ~36,000 for an hour of a 10 Hz tqdm bar). On a terminal a redraw that changes no letter is
now passed as ``\\r`` (the terminal redraws in place, as ``kubectl logs -f``); elsewhere, and for any ``\\r`` that would
replace words, the state goes on a line of its own (red team 6: a carriage return never hides a line of words).

Pure: :class:`jupyter_sched.textsafe.FollowedLine` over the chunks a follow reads.
"""

from __future__ import annotations

from jupyter_sched.textsafe import FollowedLine

CHUNKS = ["start\n", "\rtraining  5% |#   |", "\rtraining 10% |##  |\r", "training 15% |### |\rtraining 20% |####|",
          "\n", "rm -rf ~\rall good\n", "x\x01y\x1b[31mred\x1b]0;title\x07\n"]


def _follow(terminal: bool) -> str:
    followed = FollowedLine(terminal=terminal)
    return "".join(followed.shown(chunk) for chunk in CHUNKS)


def test_newuser40_n11_a_progress_bar_followed_on_a_terminal_is_redrawn_in_place() -> None:
    assert _follow(True) == ("start\ntraining  5% |#   |\rtraining 10% |##  |\rtraining 20% |####|\n"
                             "rm -rf ~\nall good\nx^Ayred\n")  # was one line per redraw


def test_newuser40_n11_into_a_file_each_chunk_keeps_its_last_state_and_words_are_never_overwritten() -> None:
    said = _follow(False)
    assert "\r" not in said, repr(said)
    assert said == ("start\ntraining  5% |#   |\ntraining 10% |##  |\ntraining 20% |####|\n"
                    "rm -rf ~\nall good\nx^Ayred\n"), repr(said)  # 15 % was redrawn within its chunk: left out
