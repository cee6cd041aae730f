"""New user 35 (/work/coord/notes/newuser35.md), n12: the panel said "03:00 UTC+1" where the CLI said "03:00 CET"
(the panel now names its zone by the server's ``GET zone-labels``, :func:`zone_labels`; its route is pinned in
tests/web/test_openapi.py's live-responses test, the panel's use in labextension/test/s35_newuser35_n12_zone_names).
n12 "Also": a wait whose ``--for`` ran out said
``still pending after 10 s`` and ``%schedule``'s help ``still running after 1800 s`` where every other
line says a duration ``10s`` / ``30m``. Pure wording: no server (the magic's and the CLI's wait both print
:func:`still_going`, pinned end to end in test_newuser17_words / test_cli_firsthour)."""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.magics.core import SchedMagics
from jupyter_sched.model.units import clock_text, shown_in, zone_labels
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


def test_newuser35_n12_the_zones_names_the_panel_gets_are_the_clis() -> None:
    now = datetime(2026, 12, 7, 1, 40, tzinfo=timezone.utc)
    assert zone_labels("Europe/Berlin", now) == {60: "CET", 120: "CEST"}
    assert zone_labels("America/New_York", now) == {-300: "EST", -240: "EDT"}
    assert zone_labels("Asia/Dubai", now) == {240: "UTC+4"}  # a zone with no letters: its offset, as the CLI says it
    assert zone_labels("UTC", now) == {0: "UTC"}
    with shown_in("Europe/Berlin"):  # the CLI's and the magics' clock of the same moment: the same name
        assert clock_text(datetime(2026, 12, 7, 2, 0, tzinfo=timezone.utc), now) == "03:00 CET"
