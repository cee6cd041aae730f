"""Firing times of cron schedules in IANA time zones: DST neither skips nor doubles a firing."""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from jupyter_sched.definitions.schedule import (
    firings_between,
    next_firing,
    parse_schedule,
    plan_firings,
    previous_firing,
)
from jupyter_sched.errors import ValidationError

BERLIN = ZoneInfo("Europe/Berlin")
UTC = timezone.utc


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def local_days(firings: tuple[datetime, ...]) -> Counter[date]:
    return Counter(t.astimezone(BERLIN).date() for t in firings)


@dataclass(frozen=True)
class DstCase:
    id: str
    expression: str
    start: datetime
    end: datetime
    want_local: tuple[str, ...]   # wall-clock times in Berlin, one per firing, in order


DST_CASES = [
    DstCase("daily 02:30 on the spring-forward day fires once, at 03:00 (02:30 does not exist)",
            "30 2 * * *", utc(2025, 3, 28), utc(2025, 4, 1),
            ("2025-03-28 02:30 CET", "2025-03-29 02:30 CET", "2025-03-30 03:00 CEST", "2025-03-31 02:30 CEST")),
    DstCase("daily 02:30 on the fall-back day fires once, at the first 02:30 (it occurs twice)",
            "30 2 * * *", utc(2025, 10, 24), utc(2025, 10, 28),
            ("2025-10-24 02:30 CEST", "2025-10-25 02:30 CEST", "2025-10-26 02:30 CEST", "2025-10-27 02:30 CET")),
    DstCase("daily 02:00 on the spring-forward day fires at 03:00, still once",
            "0 2 * * *", utc(2025, 3, 29), utc(2025, 3, 31, 3),
            ("2025-03-29 02:00 CET", "2025-03-30 03:00 CEST", "2025-03-31 02:00 CEST")),
    DstCase("daily 12:00 is untouched by the change (one firing a day, 12:00 local)",
            "0 12 * * *", utc(2025, 3, 29), utc(2025, 3, 31, 12),
            ("2025-03-29 12:00 CET", "2025-03-30 12:00 CEST", "2025-03-31 12:00 CEST")),
]


@pytest.mark.parametrize("case", DST_CASES, ids=lambda c: c.id)
def test_dst_transition_in_berlin_neither_skips_nor_doubles(case: DstCase) -> None:
    schedule = parse_schedule(case.expression, "Europe/Berlin")
    firings = firings_between(schedule, case.start, case.end)
    got = tuple(f"{t.astimezone(BERLIN):%Y-%m-%d %H:%M %Z}" for t in firings)
    assert got == case.want_local
    assert set(local_days(firings).values()) == {1}, "exactly one firing per local day"
    assert len(set(firings)) == len(firings)


def test_hourly_wildcards_run_in_real_time_through_the_repeated_hour() -> None:
    """'*/30 * * * *' fires every real 30 minutes; the repeated 02:xx hour gives new instants, never the same one twice."""
    schedule = parse_schedule("*/30 * * * *", "Europe/Berlin")
    firings = firings_between(schedule, utc(2025, 10, 25, 23), utc(2025, 10, 26, 3))
    gaps = {b - a for a, b in itertools.pairwise(firings)}
    assert gaps == {timedelta(minutes=30)}
    assert len(firings) == 8


def test_a_week_of_weekday_noon_in_berlin_is_five_firings_at_10_utc() -> None:
    """Case 028: '0 12 * * 1-5' Europe/Berlin over Mon 2025-06-02 .. Sun 2025-06-08."""
    schedule = parse_schedule("0 12 * * 1-5", "Europe/Berlin")
    firings = firings_between(schedule, utc(2025, 6, 2, 9, 51), utc(2025, 6, 8, 23))
    assert [t.isoformat() for t in firings] == [f"2025-06-0{d}T10:00:00+00:00" for d in range(2, 7)]
    assert schedule.description == "At 12:00 on Monday through Friday"


def test_next_and_previous_firing_bracket_an_instant() -> None:
    schedule = parse_schedule("0 12 * * 1-5", "Europe/Berlin")
    assert next_firing(schedule, utc(2025, 6, 6, 10)) == utc(2025, 6, 9, 10)   # Friday 12:00 → Monday
    assert previous_firing(schedule, utc(2025, 6, 6, 10)) == utc(2025, 6, 6, 10)
    assert previous_firing(schedule, utc(2025, 6, 8, 10)) == utc(2025, 6, 6, 10)


@dataclass(frozen=True)
class PlanCase:
    id: str
    cursor: datetime
    now: datetime
    run_missed_once: bool
    want_fire: tuple[datetime, ...]
    want_missed: int


HOURLY_PLANS = [
    PlanCase("an on-time firing runs", utc(2025, 6, 2, 9, 30), utc(2025, 6, 2, 10, 0, 20), True,
             (utc(2025, 6, 2, 10),), 0),
    PlanCase("a firing a few seconds late (within the grace) still runs", utc(2025, 6, 2, 9, 30),
             utc(2025, 6, 2, 10, 0, 59), False, (utc(2025, 6, 2, 10),), 0),
    PlanCase("after 3 h down, run_once runs the latest missed firing once", utc(2025, 6, 2, 6, 30),
             utc(2025, 6, 2, 9, 30), True, (utc(2025, 6, 2, 9),), 2),
    PlanCase("after 3 h down, skip runs none", utc(2025, 6, 2, 6, 30), utc(2025, 6, 2, 9, 30), False, (), 3),
    PlanCase("back exactly at a firing: the on-time one runs alone and stands for the missed ones",
             utc(2025, 6, 2, 6, 30), utc(2025, 6, 2, 9, 0, 10), True, (utc(2025, 6, 2, 9),), 2),
    PlanCase("nothing due", utc(2025, 6, 2, 9, 0), utc(2025, 6, 2, 9, 30), True, (), 0),
]


@pytest.mark.parametrize("case", HOURLY_PLANS, ids=lambda c: c.id)
def test_missed_firing_policy(case: PlanCase) -> None:
    schedule = parse_schedule("0 * * * *", "UTC")
    plan = plan_firings(schedule, cursor=case.cursor, now=case.now, grace_s=60, run_missed_once=case.run_missed_once)
    assert plan.fire == case.want_fire
    assert plan.missed == case.want_missed
    assert plan.cursor >= max((case.cursor, *case.want_fire))
    again = plan_firings(schedule, cursor=plan.cursor, now=case.now, grace_s=60, run_missed_once=case.run_missed_once)
    assert again.fire == () and again.missed == 0, "a second pass at the same time plans nothing"


@pytest.mark.parametrize(("expression", "zone", "field", "fragment"), [
    ("0 12 * *", "UTC", "schedule", "5 fields"),
    ("0 25 * * *", "UTC", "schedule", "invalid cron expression"),
    ("0 12 * * 1-5", "Europe/Berlinn", "timezone", "unknown time zone"),
    ("0 0 31 2 *", "UTC", "schedule", "invalid cron expression"),
    ("*/10 * * * * *", "UTC", "schedule", "shortest interval allowed here is 60 s"),
    (42, "UTC", "schedule", "must be a cron expression"),
], ids=["four fields", "hour 25", "misspelt zone", "31 February", "every 10 seconds", "a number"])
def test_bad_schedules_name_the_field_and_the_fix(expression: object, zone: str, field: str, fragment: str) -> None:
    with pytest.raises(ValidationError) as err:
        parse_schedule(expression, zone)
    assert err.value.field == field
    assert fragment in err.value.message
    assert err.value.hint


def test_seconds_schedules_are_allowed_when_the_admin_lowers_the_interval() -> None:
    schedule = parse_schedule("*/2 * * * * *", "UTC", min_interval_s=1)
    firings = firings_between(schedule, utc(2025, 1, 1), utc(2025, 1, 1, 0, 0, 10))
    assert [t.second for t in firings] == [2, 4, 6, 8, 10]


def test_newuser18_n6_a_step_wider_than_its_field_a_macro_and_a_far_next_run_say_what_they_mean() -> None:
    """``*/90`` was taken as "Every 90th minute of every hour" and fired hourly; ``@hourly`` was
    "5 fields … got 1"; a 6-field line's refusal listed 5 fields; ``next Feb 29 00:00 UTC`` had no
    year although it is 2028 (new user 18, N6)."""
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.cli.definitions import _clock

    with pytest.raises(ValidationError) as wide:
        parse_schedule("*/90 * * * *", "UTC")
    assert "minute step /90 is wider than the minute field (0-59)" in wide.value.message, wide.value.message
    assert "fires hourly, not every 90 minutes" in wide.value.message and wide.value.field == "schedule"
    with pytest.raises(ValidationError) as hours:
        parse_schedule("0 5/30 * * *", "UTC")
    assert "hour step /30 is wider than the hour field (0-23): '5/30' matches only 5" in hours.value.message
    assert parse_schedule("*/45 * * * *", "UTC").expression == "*/45 * * * *"  # within the field: cron's meaning
    assert parse_schedule("@hourly", "UTC").expression == "0 * * * *"
    assert parse_schedule("@Daily", "UTC").expression == "0 0 * * *"
    with pytest.raises(ValidationError) as reboot:
        parse_schedule("@reboot", "UTC")
    assert "@reboot is not" in (reboot.value.hint or "")
    with pytest.raises(ValidationError) as six:
        parse_schedule("0 0 0 1 1 2030", "UTC")
    assert "second minute hour day-of-month month day-of-week" in (six.value.hint or ""), six.value.hint
    far = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=400)
    said = _clock(far.isoformat())
    assert str(far.year) in said and said.startswith(f"{far:%b} {far.day} {far.year} "), said
    near = datetime.now(timezone.utc) + timedelta(days=1)
    if near.year == datetime.now(timezone.utc).year:
        assert str(near.year) not in _clock(near.isoformat())
