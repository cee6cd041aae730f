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
