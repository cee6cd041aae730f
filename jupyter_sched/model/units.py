"""Parsing of the units users type: durations, memory sizes and UTC timestamps.

All parsers raise :class:`~jupyter_sched.errors.ValidationError` naming the field and the fix;
none of them reads the clock.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Iterator
from contextvars import ContextVar
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..errors import TimestampError, ValidationError, shown

__all__ = ["YEAR_SHOWN_AFTER_DAYS", "DURATION_FORMS", "UTC_NAMES", "clock_pair", "clock_text", "clocks_said", "dated_from", "duration_hint", "duration_written", "format_duration", "gpu_hours_text", "gpus_phrase", "iana_zone", "unknown_zone", "zone_meant", "parse_duration", "relative_text", "ago_text", "parse_memory_mib", "parse_utc", "parse_window", "reader_day_is_utc", "reader_zone", "said_time", "shown_in", "to_iso", "zone_label", "zone_labels", "ZONE_LABELS_SPAN_DAYS"]

def gpu_hours_text(hours: float) -> str:
    """GPU-hours as people read them: two decimals at most, trailing zeros dropped (``0.48``, ``0.3``,
    ``100``); a small non-zero amount that would read ``0`` is ``<0.01`` (hubadmin24 B8: budget
    reasons printed ``0.481896``). ``hours``: GPU-hours (float, >= 0 expected)."""
    if 0 < hours < 0.005:
        return "<0.01"
    return f"{hours:.2f}".rstrip("0").rstrip(".")


def gpu_hours_phrase(hours: float, text: str | None = None) -> str:
    """GPU-hours with their unit, the unit agreeing with the number as shown: ``"1 GPU-hour"``,
    ``"0.5 GPU-hours"``, ``"2 GPU-hours"``, ``"<0.01 GPU-hours"`` (singular only for a number that
    reads exactly 1, as English says "0.5 hours"; issue 20: "1 GPU-hours" in budget words).

    Args:
        hours: GPU-hours (float, >= 0 expected), said by :func:`gpu_hours_text` unless ``text`` is given.
        text: the number already said another way (e.g. ``"1.00"``, ``"1,000.0"``); its unit agrees with it.
    """
    shown = gpu_hours_text(hours) if text is None else text
    try:
        one = float(shown.replace(",", "")) == 1
    except ValueError:
        one = False
    return f"{shown} GPU-hour{'' if one else 's'}"


def gpus_phrase(count: object, model: str = "") -> str:
    """``"1 GPU"``, ``"2 A100 GPUs"``, ``"0.5 GPU"``: a GPU count as people write it (never "1 GPUs");
    ``"2 Simulated GPU 80GB"``: a model whose name already says GPU gets no second one (new-user 4
    finding 3: "needs 2 Simulated GPU 80GB GPUs").

    Args:
        count: GPUs (int, float, or a value shown as given).
        model: an optional model name put before "GPU".
    """
    if isinstance(count, float):
        count = round(count, 3)  # GPUs are counted in milli-GPUs: a float sum's 0.9999999999999999 is 1 (new user 17, N22)
    shown = f"{count:g}" if isinstance(count, float) else str(count)
    if model and "GPU" in model.split():
        return f"{shown} {model}"
    plural = not (isinstance(count, (int, float)) and not isinstance(count, bool) and count <= 1 and count > 0)
    return f"{shown}{' ' + model if model else ''} GPU{'s' if plural else ''}"


MAX_DURATION_S = 366 * 86400.0
"""Longest duration accepted (seconds): one leap year."""

_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(d|h|m|s)")  # ASCII digits (new user 15, N3)
_DURATION_SECONDS = {"d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}

_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e[-+]?\d{1,3})?)\s*([KMGTPE]i?B?|B)?\s*$", re.IGNORECASE)
_MEMORY_MIB = {"": 1.0, "b": 1 / (1024 * 1024)}
# Kubernetes' quantities (new user 14, N17: "20G" was binary but "20GB" decimal): K, M, G, T, P, E (also
# written KB, GB, …) are powers of 1000; Ki, Mi, Gi, … (also KiB, GiB, …) powers of 1024. P and E parse so
# that a size too big is refused for its size, not its spelling (new user 7, F3).
for _power, _letter in enumerate("kmgtpe", start=1):
    _MEMORY_MIB[_letter] = _MEMORY_MIB[_letter + "b"] = 1000**_power / 1024**2
    _MEMORY_MIB[_letter + "i"] = _MEMORY_MIB[_letter + "ib"] = 1024**_power / 1024**2
MEMORY_FORMS = "e.g. 20GiB or 20Gi (20480 MiB), 20G or 20GB (10^9 bytes each: 19073 MiB), or 40960 (MiB)"
"""What a memory size may be, said in every refusal of one."""


def parse_duration(value: str | float | int | None, *, field: str, hint: str | None = None) -> float | None:
    """Parse a duration such as ``90``, ``"45s"``, ``"10m"``, ``"2h30m"`` or ``"1d"`` into seconds.

    Args:
        value: seconds as a number, or a string of ``<number><unit>`` parts (units d, h, m, s);
            ``None`` or ``""`` means "no duration".
        field: the input field, for the error message.
        hint: the field's own advice for a value out of range (zero, negative, over 366 days) —
            what to give and what leaving it out means, e.g. ``"give how long to watch, e.g. 30 or
            2m (default 30 s)"``. None: a neutral example. New user 20, N24: every duration field
            was told the time limit's "… or leave it out for none", and ``%gpu watch --seconds``
            left out means 30 s.

    Returns:
        Seconds (float, > 0) or ``None``.

    Raises:
        ValidationError: unparseable (``"2hh"``), zero or negative.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a duration (got {shown(value)})", field=field,
                              hint="use e.g. 90, '45s', '10m', '2h30m' or '1d'")
    if isinstance(value, (int, float)):
        seconds = float(value)
    else:
        text = _squeezed(value)
        if re.fullmatch(r"[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?", text):  # 1e9 is a number of seconds (new user 15, N10)
            seconds = float(text)
        elif re.fullmatch(r"-[0-9.]+(e[-+]?[0-9]+)?[dhms]?", text):  # parses fine; it is negative (new user 4: "cannot parse '-5'")
            seconds = -1.0
        else:
            pos = 0
            seconds = 0.0
            for match in _DURATION_PART.finditer(text):
                if match.start() != pos:
                    break
                seconds += float(match.group(1)) * _DURATION_SECONDS[match.group(2)]
                pos = match.end()
            if pos != len(text) or pos == 0:
                raise ValidationError(f"{field}: cannot parse duration {value!r}", field=field,
                                      hint=duration_hint(text))
    if not seconds > 0 or seconds != seconds:  # NaN fails both
        raise ValidationError(f"{field} must be a positive duration (got {shown(value)})", field=field,
                              hint=hint or "give a duration above zero, e.g. '10m'")
    if seconds > MAX_DURATION_S:  # also catches inf: date arithmetic overflows past this
        raise ValidationError(f"{field} must be at most 366 days (got {shown(value)})", field=field,
                              hint=hint or "give a shorter duration, e.g. '7d'")
    return seconds


_UNIT_LETTERS = {"s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
                 "m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
                 "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h", "d": "d", "day": "d", "days": "d"}
"""A unit as people write it (``mins``, ``hrs``, ``days``) → its letter in a duration."""
_NEXT_UNIT = {"d": "h", "h": "m", "m": "s"}
"""The unit a bare number after a part means (``1h30`` is 1h30m, ``2d4`` 2d4h); none after seconds."""
_WORDED_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(" + "|".join(sorted(_UNIT_LETTERS, key=len, reverse=True)) + r")?")
_ISO_8601 = re.compile(r"p(?:([0-9]+)d)?(?:t(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?)?")
DURATION_FORMS = "use a number of seconds or units d/h/m/s, e.g. '45s', '10m', '2h30m'"
"""The hint of a duration that is no near miss of one (:func:`duration_hint`)."""


def _squeezed(value: object) -> str:
    """A typed duration in lower case without its spaces (``2 h 30 m`` → ``2h30m``), but numbers parted by
    spaces kept apart (``1 30`` → ``1_30``, which reads as no duration): they were read as one number,
    ``1 30`` as 130 seconds and ``1 30m`` as 130 minutes (verify30 V2)."""
    return re.sub(r"(?<=[0-9]) +(?=[0-9])", "_", str(value).strip().lower()).replace(" ", "")


def duration_written(text: str) -> str | None:
    """The duration ``text`` means, written as :func:`parse_duration` reads it, where it is one or a near
    miss of one: ``1h30`` → ``1h30m``, ``1:30:00`` → ``1h30m``, ``90 min`` → ``90m``, ``2 hrs`` → ``2h``,
    ``1 hour 30 minutes`` and ``1h, 30m`` → ``1h30m``, ``1,5h`` → ``1.5h``, ``PT1H30M`` (ISO 8601) →
    ``1h30m``, ``2h30m`` → itself; None for anything else, a bare number (seconds, or a word of its own
    for the CLI) and ``1:30`` (two readings: :func:`duration_hint`) included."""
    text = _squeezed(text)
    if (clock := re.fullmatch(r"([0-9]+):([0-5][0-9]):([0-5][0-9])", text)) is not None:  # H:MM:SS
        parts = list(zip(clock.groups(), "hms", strict=True))
    elif (iso := _ISO_8601.fullmatch(text)) is not None and any(iso.groups()):
        parts = list(zip(iso.groups(), "dhms", strict=True))
    else:
        joined = re.sub(r"(?<=[0-9]),(?=[0-9])", ".", text)  # 1,5h: a decimal comma
        joined = re.sub(r"(?<=[a-z])(?:,|and|&|\+)(?=[0-9])", "", joined)  # 1h,30m · 1hourand30minutes · 1h+30m
        parts, pos, unit = [], 0, ""
        for match in _WORDED_PART.finditer(joined):
            if match.start() != pos:
                return None
            number, word = match.groups()
            if word is None:  # a bare number ends it, in the unit after the last one (1h30: minutes)
                if match.end() != len(joined) or unit not in _NEXT_UNIT:
                    return None
                word = _NEXT_UNIT[unit]
            unit = _UNIT_LETTERS[word]
            parts.append((number, unit))
            pos = match.end()
        if pos != len(joined) or not parts:
            return None
    return _written(parts) or None


def _written(parts: list[tuple[str | None, str]]) -> str:
    """``[("1", "h"), ("30", "m")]`` → ``1h30m``: the parts that are not zero, as :func:`parse_duration` reads them."""
    return "".join(f"{float(number):g}{unit}" for number, unit in parts if number and float(number))


def duration_hint(text: str) -> str:
    """The hint of a duration :func:`parse_duration` cannot read: how to write the one it nearly is
    (``write 1h30m (units d, h, m, s)`` for ``1h30``; newuser30 n15, verify30 V2: ``5 mins`` and
    ``1h30`` got only the syntax), both readings of ``M:SS``-or-``H:MM`` (``1:30``: ``write 1h30m for 1
    hour 30 minutes, or 1m30s``), else :data:`DURATION_FORMS`."""
    text = _squeezed(text)
    if (clock := re.fullmatch(r"([0-9]+):([0-5][0-9])", text)) is not None and (text.strip("0:") != ""):
        first, second = clock.groups()
        said = " ".join(f"{int(n)} {word}{'s' * (int(n) != 1)}" for n, word in ((first, "hour"), (second, "minute")) if int(n))
        return (f"write {_written([(first, 'h'), (second, 'm')])} for {said}, or "
                f"{_written([(first, 'm'), (second, 's')])} (units d, h, m, s)")
    near = duration_written(text)
    return f"write {near} (units d, h, m, s)" if near and near != text else DURATION_FORMS


def format_duration(seconds: float | None) -> str:
    """Render seconds compactly (``"2h05m"``, ``"45s"``); ``None`` renders as ``"unknown"``."""
    if seconds is None:
        return "unknown"
    total = round(seconds)
    if total < 60:
        return f"{total}s"
    minutes, sec = divmod(total, 60)
    if minutes < 60:
        return f"{minutes}m{sec:02d}s" if sec else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 48:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h" if hours else f"{days}d"  # "366d", as --time-limit 366d was typed


def relative_text(seconds: float) -> str:
    """A moment from now as every Python surface says it beside its clock time: ``in 19m55s``
    (:func:`format_duration`), ``now`` when under a second away or past. The one relative-time
    style of the CLI, the magics and the panel (``relativeText`` in labextension/src/format.ts
    mirrors it; new user 16, N8: the CLI said "in 19m55s" where the panel said "in 19 min" for
    the same ETA)."""
    return f"in {format_duration(seconds)}" if seconds >= 1 else "now"


def ago_text(seconds: float) -> str:
    """A moment ``seconds`` before now, as :func:`relative_text` says one after it: ``3m ago``
    (:func:`format_duration`), ``just now`` when under a second ago or ahead (a clock a little
    ahead of the reader's). ``agoText`` in labextension/src/format.ts mirrors it."""
    return f"{format_duration(seconds)} ago" if seconds >= 1 else "just now"


YEAR_SHOWN_AFTER_DAYS = 182
"""A clock more than this many days from now carries its year (``ls -l``'s six months)."""


_DATED_FROM: ContextVar[datetime | None] = ContextVar("jupyter_sched_dated_from", default=None)
"""The moment a clock-less :func:`clock_text` (a server's answer: ``ETA Dec 6 17:47 UTC`` stays true
while shown) measures "a year away" from; None: never the year (:func:`dated_from`)."""


_SHOWN_IN: ContextVar[str | None] = ContextVar("jupyter_sched_shown_in", default=None)
"""The IANA zone the reader's clocks are said in (:func:`shown_in`); None: UTC, every server answer's."""

_READER: ContextVar[bool] = ContextVar("jupyter_sched_reader", default=False)
"""True within :func:`shown_in`: a reader whose zone is known (the CLI's, the magics'); False: the server's
own words, read by anyone anywhere (:func:`reader_day_is_utc`)."""


@contextlib.contextmanager
def shown_in(zone: str | None) -> Iterator[None]:
    """Within it, :func:`clock_text` without a ``zone`` says its moments in ``zone`` (an IANA name, with
    its abbreviation: ``ends by 20:47 CET``), "today" being that zone's — the CLI and the magics say the
    caller's zone (newuser26 n14: every time read UTC whatever TZ said; a Berlin user converted every
    ETA). None (or a name that is no zone): UTC, as the server's own words and the JSON always are."""
    token = _SHOWN_IN.set(zone if zone and iana_zone(zone) is not None else None)
    known = _READER.set(True)
    try:
        yield
    finally:
        _READER.reset(known)
        _SHOWN_IN.reset(token)


def reader_zone() -> str | None:
    """The IANA zone :func:`shown_in` says clocks in now; None: UTC (a server's own words)."""
    return _SHOWN_IN.get()


UTC_NAMES = frozenset({"UTC", "UCT", "Zulu", "Universal", "GMT", "GMT0", "GMT+0", "GMT-0", "Greenwich",
                       "Etc/UTC", "Etc/UCT", "Etc/Zulu", "Etc/Universal", "Etc/GMT", "Etc/GMT0", "Etc/GMT+0",
                       "Etc/GMT-0", "Etc/Greenwich"})
"""The IANA names of UTC itself (the panel's ``UTC_ZONES`` in labextension/src/format.ts lists the same)."""


def reader_day_is_utc() -> bool:
    """True where the reader is known (:func:`shown_in`: the CLI, the magics) and their zone is UTC, so their
    "today" is the UTC day budgets count (newuser30 n11). False for the server's own words — a reason, a
    warning, GET quotas' ``text`` —, which readers in every zone read: there the day is "this UTC day"."""
    return _READER.get() and (_SHOWN_IN.get() or "UTC") in UTC_NAMES


@contextlib.contextmanager
def dated_from(now: datetime) -> Iterator[None]:
    """Within it, a clock-less :func:`clock_text` (``now`` None) adds the year to a moment more than
    :data:`YEAR_SHOWN_AFTER_DAYS` days from ``now`` (UTC), as the clocked form does: a service renders
    its answers' sentences inside it with its own clock's time (new user 25, N11: a dry run's
    ``text.eta`` said ``ETA Dec 6 17:47 UTC`` for 2027-12-06 — read as tomorrow — where the CLI's
    said ``Dec 6 2027 17:47 UTC``). No clock is read here."""
    token = _DATED_FROM.set(now if now.tzinfo else now.replace(tzinfo=timezone.utc))
    try:
        yield
    finally:
        _DATED_FROM.reset(token)


def clock_text(when: datetime, now: datetime | None, *, seconds: bool = False, zone: str | None = None) -> str:
    """A moment as every surface writes it, in UTC: ``09:58 UTC`` on ``now``'s day, else ``Dec 3
    09:58 UTC``, and ``Dec 4 2027 23:58 UTC`` more than :data:`YEAR_SHOWN_AFTER_DAYS` days from
    ``now`` (new user 14, N18: a 366-day time limit's end read "Dec 4 23:58" — tomorrow — beside a
    1-day one's). ``now`` None (a sentence rendered without a clock, or kept, as an audit record's):
    the date, never "today"'s form. ``seconds``: ``Dec 4 13:51:35 UTC`` — for a record and for two
    times of one sentence in the same minute (:func:`clock_pair`; new user 17, N6). The one
    formatter of the ETA, a stop's end, idle reclaim, an idle warning's times and the audit's.

    ``zone``: an IANA name — the moment in that zone with its abbreviation, "today" being that
    zone's: ``Dec 7 12:00 CET`` — a job definition's firings, as its schedule reads, in the CLI, the
    magics and the panel alike (new user 20, N27: ``2026-12-07 12:00 CET`` in %schedule define,
    ``Dec 5 03:00 UTC`` in the CLI). A name that is no zone (:func:`iana_zone`): UTC. None: the
    reader's zone where :func:`shown_in` set one (the CLI, the magics: newuser26 n14), else UTC."""
    shown = zone or _SHOWN_IN.get()
    tz = (iana_zone(shown) if shown else None) or timezone.utc
    when = (when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when).astimezone(tz)
    hhmm = f"{when:%H:%M:%S}" if seconds else f"{when:%H:%M}"
    label = zone_label(when)
    if now is None:
        ref = _DATED_FROM.get()  # a server's answer: "today" unsaid, the year said when far (new user 25, N11)
        far = ref is not None and abs((when - ref).total_seconds()) > YEAR_SHOWN_AFTER_DAYS * 86400
        return f"{when:%b} {when.day} {when.year} {hhmm} {label}" if far else f"{when:%b} {when.day} {hhmm} {label}"
    now = (now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now).astimezone(tz)
    if when.date() == now.date():
        return f"{hhmm} {label}"
    if abs((when - now).total_seconds()) > YEAR_SHOWN_AFTER_DAYS * 86400:
        return f"{when:%b} {when.day} {when.year} {hhmm} {label}"
    return f"{when:%b} {when.day} {hhmm} {label}"


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_CLOCKS = re.compile(
    r"(?P<iso>\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2}))"
    rf"|\b(?:(?P<month>{'|'.join(_MONTHS)}) (?P<day>\d{{1,2}}) (?:(?P<year>\d{{4}}) )?)?"
    r"(?P<hh>\d{2}):(?P<mm>\d{2})(?::(?P<ss>\d{2}))? UTC(?![+\-\u2212\w])")
"""An ISO 8601 time with its offset, or a clock as a server's sentence says one (:func:`clock_text` with no
reader: ``Dec 7 11:02:00 UTC``, ``Dec 4 2027 23:58 UTC``, today's ``11:02 UTC``) — never one with an offset after
``UTC`` (``12:00 UTC+4``: a zone's own name, said as meant). The panel's ``CLOCKS`` (format.ts) reads the same."""


def clocks_said(text: str, now: datetime | None, *, ref: datetime | None = None, iso: bool = True) -> str:
    """``text`` — a server's sentence: an audit row's message, a refusal, a notice, a job's message — with each
    clock in it said as :func:`clock_text` says the reader's own, so no line says two zones (newuser38 n30: an audit
    row at ``03:01:30 PST`` said "reported as idle at Dec 7 11:02:00 UTC"). The server writes its sentences in UTC
    (every reader reads them, in every zone); each reader says them in its own: the CLI and the magics here, in the
    zone :func:`shown_in` set (the process's ``TZ``), the panel by ``clocksAsOf`` (the browser's). Without a known
    reader (the server's own words) a UTC clock is left as written. An ISO time (``held by root since
    2026-12-05T22:14:15Z``) is said as a clock (newuser27 n3) — unless ``iso`` is False: in a refusal's hint
    (``e.g. 2025-03-30T06:30:00Z``) it is what to type.

    ``now``: the reader's now (today's clocks without their date), None: every clock with its date. ``ref``: when
    the sentence was written (an audit row's ``at``; default ``now``, else the clock): a clock without its date is
    of ``ref``'s UTC day, as the server wrote it, one without its year of the year nearest ``ref``."""
    reader = _READER.get()
    written = ref or now or datetime.now(timezone.utc)
    written = written.replace(tzinfo=timezone.utc) if written.tzinfo is None else written.astimezone(timezone.utc)

    def say(match: re.Match[str]) -> str:
        if match.group("iso"):
            if not iso:
                return match.group(0)
            try:
                at = datetime.fromisoformat(match.group("iso").replace("Z", "+00:00"))
            except ValueError:
                return match.group(0)
            return clock_text(at, now)
        if not reader:
            return match.group(0)
        when = _server_clock(match, written)
        return clock_text(when, now, seconds=match.group("ss") is not None) if when else match.group(0)

    if now is not None:
        return _CLOCKS.sub(say, text)
    with dated_from(written):  # the year said where far from when it was written (``Dec 4 2027 23:58``)
        return _CLOCKS.sub(say, text)


def _server_clock(match: re.Match[str], ref: datetime) -> datetime | None:
    """The moment of a server clock (:data:`_CLOCKS`) written at ``ref`` (UTC); None for no such time (``Feb 30``)."""
    hh, mm, ss = int(match.group("hh")), int(match.group("mm")), int(match.group("ss") or 0)
    if match.group("month") is None:  # today's form: the UTC day it was written on
        day = ref.date()
        try:
            return datetime(day.year, day.month, day.day, hh, mm, ss, tzinfo=timezone.utc)
        except ValueError:
            return None
    month, date = _MONTHS.index(match.group("month")) + 1, int(match.group("day"))
    years = [int(match.group("year"))] if match.group("year") else [ref.year, ref.year - 1, ref.year + 1]
    found: list[datetime] = []
    for year in years:
        try:
            found.append(datetime(year, month, date, hh, mm, ss, tzinfo=timezone.utc))
        except ValueError:
            continue
    return min(found, key=lambda at: abs((at - ref).total_seconds())) if found else None


def zone_label(when: datetime, zone: str | None = None) -> str:
    """The time zone's name at ``when`` as every surface writes a clock — the one rule (session 22,
    issue 20: the panel said the browser's ``GMT+5:30`` where the CLI said ``IST``): the IANA tz
    database's abbreviation where it has letters (``CET``, ``EST``, ``IST``, ``JST``, ``UTC``), which is
    what people in zones the browser knows no abbreviation for (most of Asia, Africa, Australia)
    say; where it has only a number (``+04``, ``-03``, ``+0545``), the offset as ``UTC+4``,
    ``UTC-3``, ``UTC+5:45`` (the rest of the product writes ``UTC``). The server sends this label
    with each zoned time (job definitions' ``next_run_zone``, ``upcoming_zones``, ``scheduled_zone``,
    ``next_zones``): the panel shows it as given (labextension/src/format.ts ``zoneText``).

    ``zone``: an IANA name to read ``when`` in (a name that is no zone: UTC); None: ``when``'s own
    zone (naive: UTC)."""
    if zone is not None:
        when = (when.replace(tzinfo=timezone.utc) if when.tzinfo is None else when).astimezone(
            iana_zone(zone) or timezone.utc)
    name = when.tzname() or ""
    if name[:1].isalpha():
        return name
    offset = when.utcoffset()
    minutes = round(offset.total_seconds() / 60) if offset is not None else 0
    if minutes == 0:
        return "UTC"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{'+' if minutes > 0 else '-'}{hours}{f':{rest:02d}' if rest else ''}"


ZONE_LABELS_SPAN_DAYS = 400
"""How far either side of now :func:`zone_labels` reads a zone (a year and a month: both of a DST zone's names)."""


def zone_labels(zone: str, now: datetime) -> dict[int, str]:
    """``zone``'s :func:`zone_label` for each UTC offset it has within :data:`ZONE_LABELS_SPAN_DAYS` of ``now``,
    by offset in minutes: ``{60: "CET", 120: "CEST"}`` for Europe/Berlin. What the panel names its own clocks'
    zone with (``GET zone-labels``; newuser35 n12: the panel said ``03:00 UTC+1`` where the CLI said
    ``03:00 CET``). One read a day (a zone changes its offset at most a few times a year); a day's first
    change wins where two offsets share a name. ``zone``: a name :func:`iana_zone` takes (else UTC)."""
    tz = iana_zone(zone) or timezone.utc
    start = (now.replace(tzinfo=timezone.utc) if now.tzinfo is None else now).astimezone(timezone.utc)
    labels: dict[int, str] = {}
    for day in range(-ZONE_LABELS_SPAN_DAYS, ZONE_LABELS_SPAN_DAYS + 1):
        when = (start + timedelta(days=day)).astimezone(tz)
        offset = when.utcoffset()
        labels.setdefault(round(offset.total_seconds() / 60) if offset is not None else 0, zone_label(when))
    return labels


def clock_pair(first: datetime, second: datetime, now: datetime | None) -> tuple[str, str]:
    """Two moments of one sentence by :func:`clock_text`, with their seconds when they fall in the
    same minute: ``warning at 13:51:01 UTC, its GPUs are released at 13:51:31 UTC`` (new user 17,
    N6: a 1-min idle window read "warning at 13:51 UTC, … released at 13:51 UTC", one moment to
    the reader)."""
    def minute(at: datetime) -> datetime:
        at = at.replace(tzinfo=timezone.utc) if at.tzinfo is None else at.astimezone(timezone.utc)
        return at.replace(second=0, microsecond=0)

    seconds = minute(first) == minute(second) and first != second
    return clock_text(first, now, seconds=seconds), clock_text(second, now, seconds=seconds)


def moved_text(first: datetime | str | None, second: datetime | str | None) -> tuple[str, str]:
    """The two ETAs of an ``eta_moved`` record's message by :func:`clock_pair` with no clock (the
    record is kept: the date is always said), e.g. ``Dec 5 09:57 UTC`` → ``Dec 5 09:37 UTC`` — not
    ``2026-12-05T09:57:08.832159+00:00`` (hubadmin23 A15: the admin's audit was mostly such rows).
    ISO text is read first; None or text that is no time reads ``unknown``."""
    def read(value: datetime | str | None) -> datetime | None:
        if isinstance(value, str):
            try:
                value = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                return None
        return value

    a, b = read(first), read(second)
    if a is not None and b is not None:
        return clock_pair(a, b, None)
    return (clock_text(a, None) if a is not None else "unknown", clock_text(b, None) if b is not None else "unknown")


def parse_memory_mib(value: str | int | float | None, *, field: str) -> int:
    """Parse a memory size (``20GiB``, ``40G``, ``81920``, ``512Mi``, ``1e3``) into MiB.

    A bare number is MiB. As Kubernetes' quantities: ``Gi``/``GiB`` are binary (1024 MiB), ``G``/``GB``
    decimal (10^9 bytes); likewise K, M, T, P, E.

    Raises:
        ValidationError: unparseable or negative.
    """
    if value is None or value == "":
        return 0
    if isinstance(value, bool):
        raise ValidationError(f"{field} must be a memory size (got {shown(value)})", field=field,
                              hint=f"use {MEMORY_FORMS}")
    if isinstance(value, (int, float)):
        if math.isfinite(value) and value < 0:  # as time_limit and gpus say it (new user 17, N2)
            raise ValidationError(f"{field} must not be negative (got {value:g})", field=field,
                                  hint="use a size in MiB or with a unit, e.g. 20GiB, or leave it out")
        if not math.isfinite(value):
            raise ValidationError(f"{field} must be a finite size >= 0 (got {value})", field=field,
                                  hint="use a size in MiB or with a unit, e.g. 20GiB")
        return int(value)
    match = _MEMORY.match(str(value))
    if not match and _MEMORY.match(str(value).strip().removeprefix("-")) and str(value).strip().startswith("-"):
        # '-5GiB' is a size with a sign, not an unparseable one (new user 17, N2: "cannot parse '-5GiB'")
        raise ValidationError(f"{field} must not be negative (got {shown(value)})", field=field,
                              hint=f"use {MEMORY_FORMS}, or leave it out")
    if not match:
        raise ValidationError(f"{field}: cannot parse memory size {shown(value)}", field=field,
                              hint=f"use {MEMORY_FORMS}")
    number = float(match.group(1))
    unit = (match.group(2) or "").lower()
    mib = number * _MEMORY_MIB[unit]
    if not math.isfinite(mib):  # 1e999
        raise ValidationError(f"{field} must be a finite size >= 0 (got {shown(value)})", field=field,
                              hint=f"use {MEMORY_FORMS}")
    return round(mib)


def parse_utc(value: str | datetime, *, field: str) -> datetime:
    """Parse an ISO 8601 timestamp that carries a UTC offset and return it in UTC.

    Naive timestamps are rejected rather than guessed in the host's zone (case 010).

    Raises:
        TimestampError: no offset, not ISO 8601, or outside :data:`EARLIEST_UTC` to :data:`LATEST_UTC`.
    """
    if isinstance(value, datetime):
        parsed = value
    else:
        text = str(value).strip()
        try:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise TimestampError(
                f"{field}: {value!r} is not an ISO 8601 timestamp", field=field,
                hint="use e.g. 2025-03-30T06:30:00Z") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        # the hint writes the user's own time in full: "append Z" to a date made 2027-01-01Z, which
        # is not a timestamp (new user 18, N14)
        full = f"{parsed.replace(microsecond=0).isoformat()}Z"
        if isinstance(value, str) and "T" not in value.upper() and " " not in value.strip():
            raise TimestampError(
                f"{field} {str(value).strip()[:40]!r} is a date without a time and a UTC offset", field=field,
                hint=f"for midnight UTC write {full}, or give another time and offset such as +02:00")
        raise TimestampError(
            f"{field} must include a UTC offset (e.g. 2025-03-30T06:30:00Z)", field=field,
            hint=f"write {full} for UTC, or add an offset such as +02:00")
    try:
        utc = parsed.astimezone(timezone.utc)
    except OverflowError:  # 0001-01-01T00:00:00+14:00 is before year 1 in UTC (red team 20, R5: a 500)
        utc = None
    if utc is None or not EARLIEST_UTC <= utc < LATEST_UTC:
        # the windows built from it (since - 1 min, until - 1 h) must not overflow either (R5: a 500 each)
        raise TimestampError(f"{field} {str(value).strip()[:40]!r} is out of range: this server takes times from "
                             f"{EARLIEST_UTC:%Y-%m-%d} to {LATEST_UTC.year - 1}-12-31 UTC", field=field,
                             hint="e.g. 2025-03-30T06:30:00Z")
    return utc


EARLIEST_UTC = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST_UTC = datetime(9000, 1, 1, tzinfo=timezone.utc)
"""The range :func:`parse_utc` accepts (the epoch to year 8999): nothing the scheduler records is
outside it, and the windows computed from an accepted time stay inside Python's years 1 to 9999."""


def parse_window(since: str | datetime | None, until: str | datetime | None) -> tuple[datetime | None, datetime | None]:
    """``since`` and ``until`` (either may be absent) parsed as :func:`parse_utc`, in order.

    Raises:
        TimestampError: either is not an ISO 8601 time with an offset (naming it).
        ValidationError: ``until`` is before ``since`` (naming ``until``: a swapped pair answered an
            empty list as if nothing had happened, new user 5 #7).
    """
    start = parse_utc(since, field="since") if since else None
    end = parse_utc(until, field="until") if until else None
    if start is not None and end is not None and end < start:
        raise ValidationError(f"until ({to_iso(end)}) is before since ({to_iso(start)})", field="until",
                              hint="give until after since — were the two swapped?")
    return start, end


def said_time(value: datetime) -> str:
    """An instant as a reason's message says it: ISO 8601 UTC to the second (``2026-12-04T05:50:54Z``),
    not ``isoformat()``'s ``2026-12-04T05:50:54.496979+00:00`` (new user 15, N6: the REST message
    the panel showed). Renderers turn it into a clock time as any other (``wording.reasons``)."""
    return value.astimezone(timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")


def to_iso(value: datetime | None) -> str | None:
    """Render an aware datetime as ISO 8601 UTC with ``Z``; ``None`` stays ``None``."""
    if value is None:
        return None
    if value.tzinfo is None:
        raise TimestampError("internal timestamp without offset", field="timestamp")
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def seconds_between(start: datetime, end: datetime) -> float:
    """Seconds from ``start`` to ``end`` (negative when end is earlier)."""
    return (end - start) / timedelta(seconds=1)


_NOT_ZONES = frozenset({"localtime", "posixrules", "Factory"})
"""Files of the zone database that are no IANA zone names (this host's zone, a template, a placeholder)."""


@functools.cache
def _zone_names() -> frozenset[str]:
    from zoneinfo import available_timezones

    return frozenset(z for z in available_timezones() if z not in _NOT_ZONES and not z.startswith(("posix/", "right/")))


def _zone_file(name: str) -> bool:
    """Whether ``name`` is a zone :func:`_zone_names` lists, told by its one file: a ``TZif`` file under the
    first folder of ``zoneinfo.TZPATH`` that has it, named by plain parts — what ``available_timezones()``
    lists from those folders, without walking all ~600 of them (0.14-0.16 s of every CLI command that prints a
    time said it; newuser31's measurement). False: not told so (the full list decides)."""
    import os
    import zoneinfo

    parts = name.split("/")
    if name in _NOT_ZONES or parts[0] in ("posix", "right") or any(p in ("", ".", "..") for p in parts) \
            or not all(p.replace("-", "").replace("_", "").replace("+", "").isalnum() for p in parts):
        return False
    for base in zoneinfo.TZPATH:
        path = os.path.join(base, *parts)
        if os.path.isfile(path):
            try:
                with open(path, "rb") as file:
                    return file.read(4) == b"TZif"
            except OSError:
                return False
    return False


def iana_zone(name: object) -> ZoneInfo | None:
    """The time zone of an IANA zone name (``Europe/Berlin``, ``UTC``), or None for anything else —
    THE check of every time zone a user or an admin names (definitions, time windows, the server's
    ``time_zone``). ``ZoneInfo`` alone opens whatever file the name reaches: a folder of the zone
    database (``Europe``) or of the tzdata package (``__pycache__``) raised IsADirectoryError, a long
    name OSError "File name too long" — a 500 with a traceback (red team 19, R4) — and it took
    ``localtime``, ``posixrules``, ``Factory`` and the ``posix/`` and ``right/`` trees (leap-second
    zones: firings drift 27 s). Only names of ``zoneinfo.available_timezones()`` (less those) are
    zones; where that list is empty (no zone database listed), a name ``ZoneInfo`` opens is taken."""
    if not isinstance(name, str) or not name or len(name) > 255:
        return None
    if not _zone_file(name):  # the walk of the whole database only where one file does not say it (newuser31)
        names = _zone_names()
        if names and name not in names:
            return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None


_OFFSET_ZONE = re.compile(r"(?:UTC|GMT)\s*([+-])\s*(\d{1,2})(?::?00)?", re.IGNORECASE)
_MEANT_CHARS = 64
"""Longest name :func:`zone_meant` compares (difflib's cost grows with it; no zone name is longer than ~32)."""


def zone_meant(name: object) -> str:
    """The IANA zone an unknown time zone ``name`` likely means, for "did you mean …?" — THE one for every place a
    zone is named (a definition's, a time window's): the same name in other case (``utc`` → ``UTC``; new user 17,
    N7), a fixed offset as its zone (``UTC+2`` → ``Etc/GMT-2``: the tz database's sign is the other way round), a
    name one slip away (``Europe/Berln`` → ``Europe/Berlin``; newuser33 n8), or its place alone misspelled
    (``Europe/Berlni``); "" when none is near (a long name is not compared)."""
    import difflib

    if not isinstance(name, str) or not name.strip() or len(name) > _MEANT_CHARS:
        return ""
    names = sorted(_zone_names())
    typed = name.strip()
    folded = typed.casefold()
    same = next((zone for zone in names if zone.casefold() == folded), "")
    if same:
        return same
    if (offset := _OFFSET_ZONE.fullmatch(typed)) is not None:
        hours = int(offset.group(2))
        zone = "Etc/GMT" if hours == 0 else f"Etc/GMT{'-' if offset.group(1) == '+' else '+'}{hours}"
        return zone if zone in names else ""
    by_case = {zone.casefold(): zone for zone in names}
    close = difflib.get_close_matches(folded, list(by_case), n=1, cutoff=0.85)
    if close:
        return by_case[close[0]]
    # the place alone, in its region when one was typed ("Europe/Berlni"; "Berlni")
    region, _, place = folded.rpartition("/")
    places: dict[str, str] = {}
    for zone in names:
        zone_region, _, zone_place = zone.casefold().rpartition("/")
        if not region or zone_region == region:
            places.setdefault(zone_place, zone)
    close = difflib.get_close_matches(place, list(places), n=1, cutoff=0.8)
    return places[close[0]] if close else ""


def unknown_zone(name: object) -> str:
    """The refusal's words for a time zone ``name`` that is none (:func:`iana_zone`), with :func:`zone_meant`'s guess:
    ``unknown time zone 'Europe/Berln' — did you mean 'Europe/Berlin'?``; a fixed offset says why its zone's sign is
    the other way round. The one sentence of every place a zone is named (a definition's, a time window's)."""
    meant = zone_meant(name)
    said = f"unknown time zone {shown(name)}" + (f" — did you mean {meant!r}?" if meant else "")
    if meant.startswith("Etc/GMT") and isinstance(name, str) and _OFFSET_ZONE.fullmatch(name.strip()):
        said += " (that offset all year: the zone database writes its sign the other way round)"
    return said
