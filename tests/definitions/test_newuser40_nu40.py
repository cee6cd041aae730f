"""newuser40 n4 and red40's cron nits: what a definition's schedule says in words (pure, no clock read)."""

from __future__ import annotations

import re

import pytest

from jupyter_sched.definitions.schedule import parse_schedule
from jupyter_sched.errors import ValidationError


@pytest.mark.parametrize("cron, said", [
    ("59 23 31 12 7", "on the 31st day of month"),
    ("0 0 1,21,22,23 * *", "the 21st, the 22nd, and the 23rd day of month"),
    ("0 0 11,12,13 * *", "the 11th, the 12th, and the 13th day of month"),
    ("0 0 4,24 * *", "the fourth and the 24th day of month"),
])
def test_red40_nit_cron_descriptions_say_ordinals_right(cron: str, said: str) -> None:
    """red40 nit: ``59 23 31 12 7`` was described "on the 31th day"; 21th/22th/23th likewise."""
    description = parse_schedule(cron).description
    assert said in description, description
    assert not re.search(r"\b(1|2|3|21|22|23|31)th\b", description), description


@pytest.mark.parametrize("cron", ["0 0 1 1 * 2099", "30 2 * * 1 2027-2030", "0 12 1 * * 1999"])
def test_red40_nit_a_year_as_sixth_field_is_said_to_be_one(cron: str) -> None:
    """red40 nit: ``0 0 1 1 * 2099`` (a year last, as Quartz/AWS write it) was refused "day-of-week 2099 is out of
    range 0-7" — read as seconds first. Now: cron takes 5 fields, the 6th reads as a year, which is not read."""
    with pytest.raises(ValidationError) as refused:
        parse_schedule(cron)
    year = cron.split()[5]
    assert refused.value.message.startswith("cron takes 5 fields (minute hour day month weekday); got 6"), refused.value
    assert f"'{year}', reads as a year" in refused.value.message and refused.value.field == "schedule"
    assert f"leave the year out: '{' '.join(cron.split()[:5])}'" in (refused.value.hint or "")


def test_red40_nit_six_fields_with_seconds_first_still_read() -> None:
    assert parse_schedule("*/10 * * * * *", min_interval_s=1).expression == "*/10 * * * * *"
    with pytest.raises(ValidationError, match="day-of-week 9 is out of range 0-7"):
        parse_schedule("0 0 0 1 1 9")


def _firings(cron: str, zone: str, after: str, count: int) -> list[tuple[str, str]]:
    from datetime import datetime, timezone

    from jupyter_sched.definitions.schedule import next_firing, wall_clock_note

    schedule = parse_schedule(cron, zone)
    at = datetime.fromisoformat(after).replace(tzinfo=timezone.utc)
    out = []
    for _ in range(count):
        nxt = next_firing(schedule, at)
        assert nxt is not None
        out.append((f"{nxt.astimezone(schedule.zone):%m-%d %H:%M}", wall_clock_note(schedule, nxt)))
        at = nxt
    return out


@pytest.mark.parametrize("cron, zone, after, said", [
    ("30 2 * * *", "Europe/Berlin", "2027-03-26T12:00", [
        ("03-27 02:30", ""), ("03-28 03:00", "02:30 does not exist that day: clocks go forward"), ("03-29 02:30", "")]),
    ("30 2 * * *", "Europe/Berlin", "2027-10-30T12:00", [
        ("10-31 02:30", "02:30 happens twice that day; it runs once, at the first"), ("11-01 02:30", "")]),
    ("0,30 2 * * *", "America/New_York", "2027-03-14", [
        ("03-14 03:00", "02:00 and 02:30 do not exist that day: clocks go forward"), ("03-15 02:00", "")]),
    ("30 1 * * *", "America/New_York", "2027-11-06T12:00", [
        ("11-07 01:30", "01:30 happens twice that day; it runs once, at the first"), ("11-08 01:30", "")]),
    ("30 1 * * *", "Australia/Lord_Howe", "2027-04-03", [  # a half-hour shift
        ("04-04 01:30", "01:30 happens twice that day; it runs once, at the first"), ("04-05 01:30", "")]),
    ("15 2 * * *", "Australia/Lord_Howe", "2027-10-02", [
        ("10-03 02:30", "02:15 does not exist that day: clocks go forward"), ("10-04 02:15", "")]),
    ("*/30 * * * *", "Europe/Berlin", "2027-03-28T00:45", [("03-28 03:00", ""), ("03-28 03:30", "")]),
    ("0 3 * * *", "Europe/Berlin", "2027-03-27T12:00", [("03-28 03:00", "")]),
    ("30 2 * * *", "UTC", "2027-03-27T12:00", [("03-28 02:30", "")]),
])
def test_newuser40_n4_a_firing_daylight_saving_moves_says_why(cron: str, zone: str, after: str,
                                                             said: list[tuple[str, str]]) -> None:
    """newuser40 n4: ``30 2 28 3 *`` in Europe/Berlin showed ``next Mar 28 03:00 CEST`` with nothing saying why
    (read as a bug). The note for a firing in a spring-forward gap or the repeated hour, across zones (a
    half-hour shift too); real-time schedules (``*`` in minute or hour), unmoved firings and UTC say nothing."""
    assert _firings(cron, zone, after, len(said)) == said
