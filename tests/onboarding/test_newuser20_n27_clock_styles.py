"""New user 20, N27: three styles for one thing — ``%schedule define`` said ``next run 2026-12-07 12:00
CET``, the CLI ``next Dec 5 03:00 UTC`` (and the panel ``2026-12-07 12:00 GMT+1``); the panel said
``elapsed 2 min 02 s`` where the CLI said ``2m02s``.

One style now: a definition's firings are written as every clock is (:func:`~jupyter_sched.model.units.
clock_text`, in the definition's zone: ``Dec 7 12:00 CET``, ``12:00 CET`` on today's date there) by the
CLI, the magics and the panel (labextension/test/definitions.test.ts); durations in the compact form
(``2m02s``: ``format_duration``; the panel's ``formatDuration`` mirrors it, labextension/test/format.
test.ts), which ``--time-limit`` and ``time_limit`` take back — a spelled-out ``2 min 02 s`` is refused
with one message naming the forms taken, the same on REST, the CLI and the magics."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.model.units import clock_text, format_duration, parse_duration

NOW = datetime(2026, 12, 5, 2, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("when,zone,want", [
    (datetime(2026, 12, 7, 11, 0, tzinfo=timezone.utc), "Europe/Berlin", "Dec 7 12:00 CET"),
    (datetime(2026, 12, 5, 11, 0, tzinfo=timezone.utc), "Europe/Berlin", "12:00 CET"),
    (datetime(2026, 12, 5, 23, 30, tzinfo=timezone.utc), "Europe/Berlin", "Dec 6 00:30 CET"),
    (datetime(2026, 12, 5, 3, 0, tzinfo=timezone.utc), "America/New_York", "22:00 EST"),
    (datetime(2026, 12, 5, 6, 0, tzinfo=timezone.utc), "America/New_York", "Dec 5 01:00 EST"),
    (datetime(2027, 7, 1, 10, 0, tzinfo=timezone.utc), "Europe/Berlin", "Jul 1 2027 12:00 CEST"),
    (datetime(2026, 12, 5, 3, 0, tzinfo=timezone.utc), None, "03:00 UTC"),
    (datetime(2026, 12, 5, 3, 0, tzinfo=timezone.utc), "Not/AZone", "03:00 UTC"),
], ids=["another day in Berlin", "today in Berlin: the clock alone", "tomorrow in Berlin though today in UTC",
        "Dec 4 in New York, as now is there: today", "Dec 5 in New York: tomorrow there", "more than half a year away: with its year", "no zone: UTC", "no such zone: UTC"])
def test_newuser20_n27_a_clock_in_a_zone_is_written_as_every_clock_is(
        when: datetime, zone: str | None, want: str) -> None:
    assert clock_text(when, NOW, zone=zone) == want


def test_newuser20_n27_cli_and_magic_say_a_definitions_next_run_alike() -> None:
    from jupyter_sched.cli.definitions import _line
    from jupyter_sched.magics.define import definition_line

    soon = (datetime.now(timezone.utc) + timedelta(days=3)).replace(hour=11, minute=0, second=0, microsecond=0)
    d = {"id": "d-1", "name": "daily", "schedule": "0 12 * * *", "schedule_description": "At 12:00",
         "timezone": "Europe/Berlin", "next_run_at": soon.isoformat().replace("+00:00", "Z")}
    cli = _line(d).split("  next ", 1)[1]
    magic = definition_line(d).split("; next run ", 1)[1]
    assert cli == magic, (cli, magic)
    assert re.fullmatch(r"[A-Z][a-z]{2} \d{1,2} 12:00 CES?T", magic), magic  # was 2026-12-08 12:00 CET
    assert str(soon.year) not in magic


@pytest.mark.parametrize("seconds", [0, 45, 59.4, 61, 122, 1200, 3599, 3600, 7500, 90061, 172800, 273600])
def test_newuser20_n27_every_duration_written_is_taken_back_as_a_time_limit(seconds: float) -> None:
    written = format_duration(seconds)
    if seconds == 0:
        assert written == "0s"
        return
    taken = parse_duration(written, field="--time-limit")
    assert abs(taken - seconds) < 60 * 60 if seconds >= 48 * 3600 else abs(taken - seconds) < 60, (written, taken)
    assert " " not in written and "min" not in written, written


def test_newuser20_n27_a_spelled_out_duration_is_one_refusal_naming_the_forms_on_every_surface() -> None:
    from jupyter_sched.magics.parsing import parse_schedule_line
    from jupyter_sched.model.validation import spec_from_request

    said = []
    for field, refuse in [
        ("time_limit", lambda: spec_from_request({"command": ["x"], "time_limit": "2 min 02 s"}, user="a",
                                                 default_team="d")),  # REST, and the CLI's --time-limit sent as typed
        ("--time-limit", lambda: parse_schedule_line("run train.py --time-limit '2 min 02 s'")),
    ]:
        with pytest.raises(ValidationError) as refused:
            refuse()
        assert refused.value.field == field
        said.append((refused.value.message.removeprefix(field), refused.value.hint))
    assert said[0] == said[1], said
    # the form it nearly is (verify30 V2: every near miss of a duration is told the one it means)
    assert said[0][1] == "write 2m2s (units d, h, m, s)", said
