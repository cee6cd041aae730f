"""When a job definition fires: cron expressions in an IANA time zone, as UTC instants (pure).

The cron parser is `cronsim <https://pypi.org/project/cronsim/>`_ (Pēteris Caune, the cron
evaluator behind healthchecks.io). Why cronsim and not croniter: it has no dependencies, it is
actively maintained, and it states and tests its daylight-saving behaviour, which is Debian
cron's — the behaviour people expect of a cron line:

* an expression with a fixed minute *and* hour (``30 2 * * *``) is read in wall-clock time:
  a time that does not exist on a spring-forward day fires at the first minute that exists
  after it (03:00 in Europe/Berlin), and a time that occurs twice on a fall-back day fires once
  (the first occurrence);
* an expression with ``*`` in the minute or hour field (``*/15 * * * *``) runs in real time:
  every real 15 minutes, also through the repeated hour (those are different instants, so no
  firing is doubled).

(croniter also pins an old major version when jupyter-scheduler is installed beside us:
jupyter-scheduler 2.x requires ``croniter~=1.4``; cronsim keeps the two independent.)

Five fields are standard cron. Six fields put *seconds* first (``*/10 * * * * *``); they run in
real time and are only accepted when the admin's minimum interval allows it (tests, demos).

Every function takes the times it needs; nothing here reads the clock. Instants in and out are
aware datetimes; results are in UTC.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from cronsim import CronSim, CronSimError

from ..errors import ValidationError
from ..model.units import iana_zone, unknown_zone

__all__ = [
    "CronSchedule",
    "FiringPlan",
    "firings_between",
    "next_firing",
    "parse_schedule",
    "plan_firings",
    "previous_firing",
    "wall_clock_note",
]

_REFERENCE = datetime(2001, 1, 1, tzinfo=timezone.utc)
_GAP_SAMPLE = 24
"""Firings looked at (from a fixed reference time) to find a schedule's shortest interval."""
MAX_FIRINGS_PER_CALL = 1000
"""Most firings one call enumerates; the caller continues from the last one."""


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A validated cron expression in an IANA time zone.

    Attributes:
        expression: five fields (minute hour day-of-month month day-of-week) or six (seconds first).
        timezone: IANA name such as ``"Europe/Berlin"`` or ``"UTC"``.
        description: the expression in words (cronsim's ``explain``), e.g. ``"At 12:00 on Monday
            through Friday"``; empty when cronsim cannot explain it.
    """

    expression: str
    timezone: str
    description: str = ""

    @property
    def zone(self) -> ZoneInfo:
        """The time zone (``zoneinfo.ZoneInfo``)."""
        return ZoneInfo(self.timezone)

    def _iterate(self, start: datetime, *, reverse: bool = False) -> Iterator[datetime]:
        local = start.astimezone(self.zone)
        if not reverse:
            # cronsim yields strictly after its start; sub-second starts are truncated first
            local = local.replace(microsecond=0)
        return CronSim(self.expression, local, reverse=reverse)


def parse_schedule(expression: object, timezone_name: object = "UTC", *, min_interval_s: float = 60.0,
                   field: str = "schedule") -> CronSchedule:
    """Validate ``expression`` in ``timezone_name`` and return a :class:`CronSchedule`.

    Args:
        expression: a cron line (5 fields, or 6 with seconds first).
        timezone_name: an IANA time zone name (``Europe/Berlin``); ``UTC`` by default.
        min_interval_s: the shortest allowed time between two firings, in seconds (the admin's
            ``definition_min_interval_s``); checked over the first firings after a fixed date.
        field: the request field named in errors.

    Raises:
        ValidationError: not a string, not a valid cron line, unknown time zone, never fires,
            or fires more often than ``min_interval_s`` (each names the field and the fix).
    """
    if not isinstance(expression, str) or not expression.strip():
        raise ValidationError("schedule must be a cron expression", field=field,
                              hint='e.g. "0 12 * * 1-5" (12:00 on weekdays)')
    text = " ".join(expression.split())
    if not isinstance(timezone_name, str) or not timezone_name:
        raise ValidationError("timezone must be an IANA time zone name", field="timezone",
                              hint='e.g. "Europe/Berlin" or "UTC"')
    zone = iana_zone(timezone_name)  # a folder or a too-long name was a 500 (red team 19, R4)
    if zone is None:
        raise ValidationError(unknown_zone(timezone_name), field="timezone",
                              hint='use an IANA name such as "Europe/Berlin", "America/New_York" or "UTC"')
    text = _MACROS.get(text.lower(), text)  # @daily and friends, as Vixie cron reads them (new user 18, N6)
    if text.startswith("@"):
        raise ValidationError(f"{text!r} is not a schedule a definition can have", field=field,
                              hint="@hourly, @daily, @weekly, @monthly and @yearly are read; @reboot is not "
                                   "(nothing here starts with the server): give a time, e.g. '0 12 * * 1-5'")
    fields = len(text.split())
    order = _SIX_FIELDS if fields == 6 else _FIVE_FIELDS
    if fields not in (5, 6):
        raise ValidationError(f"a cron expression has 5 fields (or 6 with seconds first); got {fields}",
                              field=field, hint=f'{_FIVE_FIELDS}, e.g. "0 12 * * 1-5"; or 6: {_SIX_FIELDS}')
    if fields == 6 and _YEAR.fullmatch(text.split()[5]):  # Quartz/AWS's year last, not our seconds first (red40 nit)
        raise ValidationError(
            f"cron takes 5 fields (minute hour day month weekday); got 6 — the last, {text.split()[5]!r}, reads as a "
            "year, and a year field is not read (six fields put seconds first)", field=field,
            hint=f"leave the year out: {' '.join(text.split()[:5])!r} (pause or delete the definition when it is "
                 f"done); six fields here are {_SIX_FIELDS}")
    if (wide := _step_past_range(text)) is not None:
        raise ValidationError(f"invalid cron expression {text!r}: {wide}", field=field, hint=f"the fields are {order}")
    try:
        it = CronSim(text, _REFERENCE.astimezone(zone))
        sample = [next(it) for _ in range(_GAP_SAMPLE)]
    except CronSimError as exc:
        raise ValidationError(f"invalid cron expression {text!r}: {_cron_problem(text, str(exc))}", field=field,
                              hint=f'the fields are {order}, e.g. "0 12 * * 1-5"') from None
    except StopIteration:
        raise ValidationError(f"cron expression {text!r} never fires", field=field,
                              hint="check the day-of-month and month fields (e.g. 31 in a 30-day month)") from None
    gap = min((b - a).total_seconds() for a, b in itertools.pairwise(sample))
    if gap < min_interval_s:
        raise ValidationError(
            f"schedule {text!r} fires every {gap:g} s; the shortest interval allowed here is {min_interval_s:g} s",
            field=field, hint="fire less often (e.g. every minute: '* * * * *'), or ask an admin "
                              "about c.SchedApp.definition_min_interval_s")
    try:
        from cronsim.explain import Expression

        words = Expression(text.upper().split() if fields == 6 else ["0", *text.upper().split()])
        description = _ordinals(_plain_steps(_either_day(words, words.explain())))
    except Exception:  # explain() covers most but not all expressions; words are a nicety
        description = ""
    return CronSchedule(expression=text, timezone=timezone_name, description=description)


_YEAR = re.compile(r"(19|2[0-9])[0-9]{2}([-/,][0-9]+)*")
"""A last field that reads as a year (``2099``, ``2027-2030``): no weekday or second is above 7 or 59."""
_NUMBERED = re.compile(r"\b([0-9]+)(?:st|nd|rd|th)\b")


def _ordinals(description: str) -> str:
    """cronsim's "the 31th day", "the 22th" as "the 31st", "the 22nd" (red40 nit); 11th-13th stay."""

    def said(match: re.Match[str]) -> str:
        number = int(match.group(1))
        suffix = "th" if 11 <= number % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
        return f"{match.group(1)}{suffix}"

    return _NUMBERED.sub(said, description)


_ORDINALS = {"second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
             "tenth": 10}
_STEP = re.compile(r"\b([Ee])very (\d+)(?:st|nd|rd|th)? (minute|hour)\b( of every hour)?|\b([Ee])very "
                   r"(second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) (minute|hour)\b( of every hour)?")
_WHOLE = {"minute": 60, "hour": 24}


def _plain_steps(description: str) -> str:
    """cronsim's step words as people say them: "Every 15th minute of every hour" → "Every 15 minutes",
    "past every second hour" → "past every 2 hours" (new user 30, n12) — only where the step divides the hour
    (the day), so the gaps are all equal; "every 7th minute" (…, 49, 56, then 0) keeps cronsim's words."""

    def said(match: re.Match[str]) -> str:
        e = match.group(1) or match.group(5)
        step = int(match.group(2)) if match.group(2) else _ORDINALS[match.group(6)]
        unit = match.group(3) or match.group(7)
        if _WHOLE[unit] % step:
            return match.group(0)
        return f"{e}very {step} {unit}s"

    return _STEP.sub(said, description)


def _either_day(words: Any, description: str) -> str:
    """cronsim's ``explain`` with "or" between a restricted day of month and day of week: cron
    fires on either (``0 0 29 2 1``: every Monday of February and the 29th), and cronsim's own
    evaluator does, but its words join them with "and" — "on the 29th day of month and on Monday
    in February" (red team 15, R15). Both fields' words are cronsim's own; only the joint is ours."""
    if words.day.star or words.dow.star or words.day_and:
        return description
    both = f"{words.day} and {words.dow}"
    return description.replace(both, f"{words.day} or {words.dow}", 1)


_CRON_FIELDS = {"second": (0, 59), "minute": (0, 59), "hour": (0, 23), "day-of-month": (1, 31), "month": (1, 12),
                "day-of-week": (0, 7)}
"""Each cron field's range of numbers (day of week: 0 and 7 are Sunday)."""
_FIVE_FIELDS = "minute hour day-of-month month day-of-week"
_SIX_FIELDS = "second minute hour day-of-month month day-of-week"
_MACROS = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0",
           "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}
"""Vixie cron's shorthands, as crontab(5) defines them."""


def _step_past_range(text: str) -> str | None:
    """A step wider than its field (``*/90`` in minutes) matches one value only — ``*/90`` fires
    hourly, not every 90 minutes, which is what it reads as (new user 18, N6): what is wrong and
    what to write instead; None when every step fits its field."""
    parts = text.split()
    names = list(_CRON_FIELDS)[0 if len(parts) == 6 else 1:]
    for name, value in zip(names, parts, strict=True):
        low, high = _CRON_FIELDS[name]
        for item in value.split(","):
            head, _, step = item.partition("/")
            if not step.isdigit() or int(step) <= high - low:
                continue
            start = low if head in ("*", "") else head.split("-", 1)[0]
            said = f"{name} step /{int(step)} is wider than the {name} field ({low}-{high}): {item!r} matches only {start}"
            if name == "minute":
                return (f"{said}, so it fires hourly, not every {int(step)} minutes — a step starts again each hour: "
                        "use the hour field (every 2 hours: '0 */2 * * *') or several definitions (every 90 minutes: "
                        "'0 0-21/3 * * *' and '30 1-22/3 * * *')")
            return f"{said} — write {start} itself, or a step up to {high - low}"
    return None


def _cron_problem(text: str, said: str) -> str:
    """cronsim's ``Bad minute`` as what is wrong in that field (new user 15, N10: ``61 * * * *`` was
    "Bad minute"): ``minute 61 is out of range 0-59``, a step of 0, or the field's text."""
    names = list(_CRON_FIELDS)[0 if len(text.split()) == 6 else 1:]
    name = said.removeprefix("Bad ").strip()
    if name not in names:
        return said
    value = text.split()[names.index(name)]
    low, high = _CRON_FIELDS[name]
    for item in value.split(","):
        head, _, step = item.partition("/")
        if step == "0" or re.fullmatch(r"0+", step):
            return f"{name} step /{step} never advances: use /1 or more"
        for number in re.findall(r"[0-9]+", head.split("#", 1)[0]):
            if not low <= int(number) <= high:
                return f"{name} {int(number)} is out of range {low}-{high}"
    parts = text.split()
    example = " ".join("L" if i == names.index(name) else part for i, part in enumerate(parts))
    if name == "day-of-month" and (never := _day_never(value, parts[names.index("month")], example)):
        return never
    return f"the {name} field {value!r} is not one cron reads (numbers {low}-{high}, *, ranges a-b, lists a,b, steps /n)"


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def _day_never(day: str, month: str, example: str) -> str:
    """``it never fires: February has no day 31 — …`` when every day of ``day`` (numbers 1-31) is past
    the end of every month of ``month`` (new user 17, N7: ``0 0 31 2 *`` read "the day-of-month field
    '31' is not one cron reads (numbers 1-31 …)"); "" when that is not the problem."""
    if not re.fullmatch(r"[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*", day) or not re.fullmatch(r"[0-9,-]+", month):
        return ""
    days = [int(n) for n in re.findall(r"[0-9]+", day)]
    months: set[int] = set()
    for item in month.split(","):
        first, _, last = item.partition("-")
        if not first.isdigit() or (last and not last.isdigit()):
            return ""
        months.update(range(int(first), int(last or first) + 1))
    if not days or not months or not all(1 <= d <= 31 for d in days) or not all(1 <= m <= 12 for m in months):
        return ""
    longest = max(_MONTH_DAYS[m - 1] for m in months)
    if min(days) <= longest:
        return ""
    named = [_MONTHS[m - 1] for m in sorted(months)]
    which = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
    return (f"it never fires: {which} {'has' if len(named) == 1 else 'have'} no day {min(days)} — "
            f"'L' is the last day of the month ('{example}'), or use a day up to {longest}")


def _utc(value: datetime, name: str) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"{name} must be timezone-aware")
    return value.astimezone(timezone.utc)


def firings_between(schedule: CronSchedule, after: datetime, until: datetime, *,
                    limit: int = MAX_FIRINGS_PER_CALL) -> tuple[datetime, ...]:
    """The scheduled instants ``t`` with ``after < t <= until``, in UTC, oldest first, at most ``limit``.

    Raises:
        ValueError: a naive datetime.
    """
    lo, hi = _utc(after, "after"), _utc(until, "until")
    out: list[datetime] = []
    if hi <= lo:
        return ()
    # Start one second early: cronsim yields strictly after its (second-truncated) start, and a
    # start inside a repeated hour loses its fold in wall-clock mode, so results are filtered.
    for local in schedule._iterate(lo - timedelta(seconds=1)):
        at = local.astimezone(timezone.utc)
        if at > hi:
            break
        if at > lo and (not out or at > out[-1]):
            out.append(at)
            if len(out) >= limit:
                break
    return tuple(out)


def next_firing(schedule: CronSchedule, after: datetime) -> datetime | None:
    """The first scheduled instant strictly after ``after`` (UTC), or None if it never fires again."""
    lo = _utc(after, "after")
    try:
        for local in schedule._iterate(lo - timedelta(seconds=1)):
            at = local.astimezone(timezone.utc)
            if at > lo:
                return at
    except StopIteration:
        return None
    return None


def previous_firing(schedule: CronSchedule, at_or_before: datetime) -> datetime | None:
    """The latest scheduled instant ``<= at_or_before`` (UTC), or None when none in 50 years."""
    hi = _utc(at_or_before, "at_or_before")
    try:
        for local in schedule._iterate(hi + timedelta(seconds=1), reverse=True):
            at = local.astimezone(timezone.utc)
            if at <= hi:
                return at
    except StopIteration:
        return None
    return None


@dataclass(frozen=True, slots=True)
class FiringPlan:
    """What one pass of the firing loop does for one definition.

    Attributes:
        fire: scheduled instants (UTC) that get a run now, oldest first: the on-time ones, or the
            one catch-up.
        missed: how many scheduled instants were missed (later than the grace) and get no run
            (capped at :data:`MAX_FIRINGS_PER_CALL`; ``missed_from``/``missed_to`` bound them).
        missed_from / missed_to: the first and last missed instant (None when none).
        cursor: every instant ``<= cursor`` has been dealt with (run, or missed by policy).
        catch_up: the first run in ``fire`` is the one run that stands for the missed instants
            (policy ``run_once``): late itself, or the first on-time run after them.
    """

    fire: tuple[datetime, ...]
    missed: int
    missed_from: datetime | None
    missed_to: datetime | None
    cursor: datetime
    catch_up: bool = False


def plan_firings(schedule: CronSchedule, *, cursor: datetime, now: datetime, grace_s: float,
                 run_missed_once: bool) -> FiringPlan:
    """Decide which scheduled instants in ``(cursor, now]`` get a run.

    Rules (the missed-firing policy, documented for users in the definitions help and README):

    1. An instant at most ``grace_s`` seconds old is *on time* and gets its run (the loop runs
       every few seconds and a new leader takes over within the leader lease; those delays
       never drop a firing).
    2. Older instants were *missed* (no server led the store then). They get at most ONE run
       together, whatever their number — never one per missed instant (cron skips missed runs; a
       Kubernetes CronJob starts only its most recent unmet schedule time): with
       ``run_missed_once`` (policy ``run_once``) that run is the first on-time run of this pass
       when there is one (hub admin 22: after a 90 s outage a minutely definition made a catch-up
       run for the missed minute *and* the on-time run, two runs at once), else the most recent
       missed instant's, late; with ``skip`` none. The run that stands for them is marked
       ``catch_up`` and every missed instant is counted, so the caller records both.

    A second pass at the same ``now`` plans nothing; the store's unique key refuses a second run
    for one instant in any case.

    Args:
        schedule: the definition's schedule.
        cursor: every instant ``<= cursor`` was dealt with before (creation time, resume time,
            or the last instant planned).
        now: the current time.
        grace_s: seconds an instant may be late and still count as on time (>= 0).
        run_missed_once: the ``run_once`` policy (else ``skip``).

    Returns:
        The plan; its ``cursor`` is the newest instant considered (or the old cursor when none).
        At most :data:`MAX_FIRINGS_PER_CALL` on-time instants are planned; a later call continues.

    Raises:
        ValueError: a naive datetime.
    """
    cursor, now = _utc(cursor, "cursor"), _utc(now, "now")
    horizon = now - timedelta(seconds=max(0.0, grace_s))
    newest_missed = previous_firing(schedule, horizon) if horizon > cursor else None
    if newest_missed is not None and newest_missed <= cursor:
        newest_missed = None
    on_time = firings_between(schedule, max(cursor, newest_missed or cursor), now)
    fire: tuple[datetime, ...] = on_time
    not_run: tuple[datetime, ...] = ()
    missed_to: datetime | None = None
    if newest_missed is not None:
        missed_all = firings_between(schedule, cursor, newest_missed, limit=MAX_FIRINGS_PER_CALL + 1)
        not_run, missed_to = missed_all, newest_missed
        if run_missed_once and not on_time:  # the catch-up is the most recent missed instant's run, late
            fire = (newest_missed,)
            not_run = tuple(t for t in missed_all if t != newest_missed)
            missed_to = previous_firing(schedule, newest_missed - timedelta(microseconds=1)) if not_run else None
    new_cursor = max([cursor, *fire, *([newest_missed] if newest_missed else [])])
    return FiringPlan(fire=fire, missed=min(len(not_run), MAX_FIRINGS_PER_CALL),
                      missed_from=not_run[0] if not_run else None, missed_to=missed_to, cursor=new_cursor,
                      catch_up=run_missed_once and newest_missed is not None)


def _field_values(field: str, low: int, high: int) -> set[int] | None:
    """The numbers a cron field without ``*`` names (``30``, ``0,30``, ``1-5``, ``0-30/10``, ``5/30``); None
    when it is not numbers alone (names, ``L``, ``#``) or has a ``*`` (real time: no wall-clock shift)."""
    values: set[int] = set()
    for item in field.split(","):
        head, _, step = item.partition("/")
        first, _, last = head.partition("-")
        if not first.isdigit() or (last and not last.isdigit()) or (step and not step.isdigit()) or step == "0":
            return None
        end = int(last) if last else (high if step else int(first))
        values.update(v for v in range(int(first), end + 1, int(step or 1)) if low <= v <= high)
    return values


def wall_clock_note(schedule: CronSchedule, at: datetime) -> str:
    """What a newcomer needs to read a firing ``at`` (an aware instant the schedule gives) that daylight saving
    moved (newuser40 n4: ``30 2 * * *`` in Europe/Berlin said ``next Mar 28 03:00 CEST`` and nothing else):
    ``"02:30 does not exist that day: clocks go forward"`` when the cron's time falls in that day's gap (cron
    fires at the first minute after it), ``"02:30 happens twice that day; it runs once, at the first"`` in the
    repeated hour; "" otherwise, and for a schedule with ``*`` in its minute or hour (real time: never moved).
    The words every surface puts in parentheses after the firing's clock (:func:`~..wording.definitions`)."""
    parts = schedule.expression.split()
    if len(parts) == 6 and "*" in parts[0]:
        return ""
    minute, hour = parts[-5], parts[-4]
    minutes, hours = _field_values(minute, 0, 59), _field_values(hour, 0, 23)
    if not minutes or not hours:
        return ""
    zone = schedule.zone
    local = _utc(at, "at").astimezone(zone)
    day = local.date()
    wall = local.replace(tzinfo=None)
    missing: list[datetime] = []
    for h, m in sorted((h, m) for h in hours for m in minutes):
        naive = datetime.combine(day, time(h, m))
        first, second = naive.replace(tzinfo=zone, fold=0), naive.replace(tzinfo=zone, fold=1)
        if first.utcoffset() == second.utcoffset():
            continue  # an ordinary time that day
        if first.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None) != naive:  # in the gap
            shift = abs((first.utcoffset() or timedelta()) - (second.utcoffset() or timedelta()))
            if naive < wall <= naive + shift:
                missing.append(naive)
        elif (h, m) == (wall.hour, wall.minute):
            return f"{naive:%H:%M} happens twice that day; it runs once, at the {'second' if local.fold else 'first'}"
    if not missing:
        return ""
    clocks = [f"{t:%H:%M}" for t in missing]
    named = clocks[0] if len(clocks) == 1 else ", ".join(clocks[:-1]) + " and " + clocks[-1]
    return f"{named} {'does' if len(clocks) == 1 else 'do'} not exist that day: clocks go forward"
