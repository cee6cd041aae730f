"""New user 35 (/work/coord/notes/newuser35.md), n12 "Also": a wait whose ``--for`` ran out said
``still pending after 10 s`` and ``%schedule``'s help ``still running after 1800 s`` where every other
line says a duration ``10s`` / ``30m``. Pure wording: no server (the magic's and the CLI's wait both print
:func:`still_going`, pinned end to end in test_newuser17_words / test_cli_firsthour)."""

from __future__ import annotations

from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.wording.jobs import still_going


def test_newuser35_n12_a_wait_that_runs_out_says_its_duration_as_every_line_does() -> None:
    pending = {"id": "j-7", "name": "train", "state": "pending", "user": "ann"}
    running = {**pending, "state": "running"}
    assert still_going(pending, 10, None).startswith("still pending after 10s: job j-7 (train)")
    assert still_going(running, 1800, None).startswith("still running after 30m: job j-7 (train)")
    assert still_going(running, 5430.2, None).startswith("still running after 1h30m: ")
    help_text = SchedMagics.schedule.__doc__ or ""
    assert '"still running after 30m: …"' in help_text and "still pending" in help_text, help_text
    assert " s: " not in help_text and "1800 s" not in help_text
