"""``since``/``until`` as a person writes them, read one way by the CLI's options and the Python client.

A plain date (``2026-12-01``) is its midnight and a time with no offset (``2026-12-01 09:30``) that
time, both in the reader's zone (newuser41 n9: the CLI's ``usage --since``); a ``Z`` or an offset is kept
exact; how long ago (``7d``, ``12h``, ``1h30m``, ``2 days ago``) is that long before now (hubadmin25 B19).
The client's ``usage(since="2026-12-01")`` refused what the CLI took (newuser42 N1): both read it here.
Standard library and :mod:`jupyter_sched.model.units` only (the CLI's start-up cost).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from ..errors import ValidationError

__all__ = ["in_zone", "read_when", "when_filters", "when_param"]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_AGO = re.compile(r"(\d{1,6})\s*(w|d|h|m|s|weeks?|days?|hours?|hrs?|minutes?|mins?|seconds?|secs?)(?:\s+ago)?")
"""How long ago: ``7d``, ``12h``, and as journalctl/kubectl users write it, ``1h ago``, ``2 days ago`` (newuser26 n10)."""
_AGO_SECONDS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}
NOT_A_TIME = ("write a date, e.g. 2026-12-01, a time with its offset, e.g. 2026-12-05T12:30:00Z, or how long ago, "
              "e.g. 7d, 12h, 1h30m or '1h ago'")


def in_zone(text: str, zone: str | None) -> str:
    """``text`` (an offset-less ISO time) in ``zone`` (an IANA name; None: UTC) as ISO 8601 with its offset
    (``2026-12-07T00:00:00-08:00``; UTC: ``…Z``), as the server takes it."""
    naive = datetime.fromisoformat(text)
    tz = ZoneInfo(zone) if zone else timezone.utc
    aware = naive.replace(tzinfo=tz)
    # a wall time skipped by a summer-time change (02:30 on the spring night) is read as the zone's fold=0 one
    return aware.isoformat().replace("+00:00", "Z") if aware.utcoffset() else f"{naive.isoformat()}Z"


def read_when(value: str) -> str | datetime:
    """``value`` as the server takes it (ISO 8601 with an offset: a duration ago, a time with its offset as
    typed), or a naive :class:`datetime` to be read in the reader's zone (a date's midnight, a time with no
    offset). A date that is no calendar day (``2026-02-30``) is refused.

    Raises:
        ValueError: no date, time or duration; its words say what to write.
    """
    from ..model.units import parse_duration

    text = value.strip()
    ago = _AGO.fullmatch(text.lower())
    seconds: float | None = int(ago.group(1)) * _AGO_SECONDS[ago.group(2)[0]] if ago else None
    bare = re.sub(r"\s+ago$", "", text.lower()).strip()
    # no unit: a year, a date, a time (newuser35 N3); with one, every duration field's reading (1h30m, 1.5h)
    if seconds is None and re.fullmatch(r"[0-9][0-9.]*\s*[a-z][0-9a-z. ]*", bare):
        try:
            seconds = parse_duration(bare, field="how long ago")
        except ValidationError as exc:
            raise ValueError(f"{text!r} is no date or time — as how long ago, "
                             f"{exc.hint or 'write e.g. 7d, 12h or 1h30m'}") from None
    if seconds is not None:
        then = datetime.now(timezone.utc) - timedelta(seconds=seconds)
        return then.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    if not _DATE.fullmatch(text):
        try:  # one the server reads goes as typed
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:  # named with the option (new user 24 nit: "'12:30' is not an ISO 8601 timestamp")
            raise ValueError(f"{text!r} is no date or time — {NOT_A_TIME}") from None
        return parsed.replace(microsecond=0) if parsed.utcoffset() is None else text
    try:
        date.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{text!r} is no calendar date — write YYYY-MM-DD, e.g. 2026-12-01, "
                         f"or a time with its offset, e.g. 2026-12-01T00:00:00+02:00") from None
    return datetime.fromisoformat(f"{text}T00:00:00")  # its midnight in the reader's zone (n9)


def when_param(value: object, field: str) -> str | None:
    """A client's ``since``/``until`` argument as the server takes it: text as :func:`read_when` reads it, a
    :class:`datetime` (an aware one exact, a naive one in the reader's zone), a :class:`date` (its midnight in
    the reader's zone); None: not sent. The reader's zone is the caller's ``TZ`` / ``/etc/localtime``
    (:func:`~.local_zone.caller_zone`, as the CLI's).

    Raises:
        TypeError: neither (a number, a list), naming ``field``; ValidationError: text that is no time.
    """
    from .local_zone import caller_zone

    if value is None:
        return None
    if isinstance(value, datetime):
        read: str | datetime = value if value.utcoffset() is None else value.isoformat().replace("+00:00", "Z")
    elif isinstance(value, date):
        read = datetime(value.year, value.month, value.day)
    elif isinstance(value, str):
        try:
            read = read_when(value)
        except ValueError as exc:  # its fix once, as the hint (verify42 v1: said twice, in the message and after it)
            said, _, fix = str(exc).partition(" — ")
            raise ValidationError(f"{field}: {said}", field=field, hint=fix or NOT_A_TIME) from None
    else:
        raise TypeError(f"{field} must be a date or time: text such as '2026-12-01' or '7d', a datetime or a date "
                        f"(got {type(value).__name__} {value!r})")
    return in_zone(read.replace(tzinfo=None).isoformat(), caller_zone()) if isinstance(read, datetime) else read


def when_filters(filters: dict[str, object]) -> dict[str, object]:
    """``filters`` with its ``since``/``until`` read as :func:`when_param` reads them (the client's ``usage``,
    ``audit``, ``waste``: what the CLI's options take)."""
    return {key: when_param(value, key) if key in ("since", "until") else value for key, value in filters.items()}
