"""The caller's time zone, as its shell or kernel has it (newuser27 N7): a definition's cron given in
the CLI or the magic without ``--tz`` was read in UTC while ``TZ=Europe/Berlin`` said otherwise (and
the panel's form defaults to the browser's zone) — "0 9 * * *" ran at 10:00 Berlin time, silently.
cron, systemd timers and jupyter-scheduler read a schedule in local time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping

__all__ = ["caller_zone", "local_zone", "posix_zone", "zone_unread", "zone_note"]

_POSIX_FIXED = re.compile(r"(?:[A-Za-z]{3,}|<[A-Za-z0-9+-]{1,}>)([+-]?)(\d{1,2})(?::(\d{1,2})(?::(\d{1,2}))?)?")
"""A POSIX ``TZ`` rule with no summer time: ``std offset`` (``UTC+3``, ``<+03>-3``, ``EST5``)."""

_WARNED: set[str] = set()
"""``TZ`` values :func:`caller_zone` has said it does not read (once each per process)."""


def posix_zone(tz: str) -> str | None:
    """The IANA zone libc's reading of the POSIX rule ``tz`` amounts to where it has no summer time and a
    whole-hour offset (newuser39 n14: ``TZ=UTC+3``, ``TZ='<+03>-3'`` were read as UTC while ``date`` said local
    time): ``Etc/GMT+3`` for ``UTC+3`` — POSIX and the ``Etc/GMT`` names both count hours *west* of UTC —,
    ``Etc/GMT-3`` for ``<+03>-3``, ``UTC`` for ``UTC0``; None for anything else (a summer-time rule such as
    ``CET-1CEST,M3.5.0,M10.5.0/3``, ``UTC+5:30``: no IANA name holds it)."""
    found = _POSIX_FIXED.fullmatch(tz)
    if found is None or int(found[3] or 0) or int(found[4] or 0):
        return None
    west = int(found[2]) * (-1 if found[1] == "-" else 1)
    if west == 0:
        return "UTC"
    return f"Etc/GMT{'+' if west > 0 else '-'}{abs(west)}" if -14 <= west <= 12 else None


def _tz_zone(tz: str) -> str | None:
    """``TZ``'s IANA zone: the name itself where it is one, else :func:`posix_zone`'s."""
    from ..model.units import iana_zone

    return tz if iana_zone(tz) is not None else posix_zone(tz)


def zone_unread(environ: Mapping[str, str]) -> str | None:
    """The sentence for a ``TZ`` that neither names an IANA zone nor is a fixed POSIX offset
    (:func:`posix_zone`), so times are said in UTC (newuser39 n14: ``Mars/Base``, ``UTC+5:30`` fell back to
    UTC without a word); None where ``TZ`` is unset or read."""
    tz = environ.get("TZ", "").strip()
    if not tz or _tz_zone(tz.removeprefix(":")) is not None:
        return None
    return (f"TZ={tz!r} is neither an IANA zone name nor a whole-hour POSIX offset this reads: times are said in "
            "UTC — set an IANA name such as TZ=America/Sao_Paulo or TZ=Asia/Kolkata (or TZ=Etc/GMT-3 for a fixed "
            "UTC+3), or give --utc")

_LOCALTIME = "/etc/localtime"


def local_zone(environ: Mapping[str, str], localtime: str = _LOCALTIME) -> tuple[str, str] | None:
    """``(IANA zone name, where it was read)`` of the caller: ``TZ`` when it names a zone (a leading
    ``:`` as libc takes it; ``("Europe/Berlin", "TZ")``), else the zone ``/etc/localtime`` links to
    (``(…, "/etc/localtime")``); a fixed POSIX offset as libc reads it (:func:`posix_zone`: ``UTC+3`` →
    ``Etc/GMT+3``); None when neither names one (a summer-time rule such as ``CET-1CEST,M3.5.0,M10.5.0/3``,
    an unlinked copy: :func:`zone_unread` says so) or names UTC itself (:data:`~..model.units.UTC_NAMES`): the
    server's default (UTC) then."""
    from ..model.units import UTC_NAMES as _UTC_NAMES
    from ..model.units import iana_zone

    tz = environ.get("TZ", "").strip().removeprefix(":")
    if tz:
        zone = _tz_zone(tz)
        return (zone, "TZ") if zone is not None and zone not in _UTC_NAMES else None
    try:
        target = os.path.realpath(localtime)
    except OSError:
        return None
    _, found, name = target.partition("/zoneinfo/")
    return (name, localtime) if found and iana_zone(name) is not None and name not in _UTC_NAMES else None


def zone_note(zone: tuple[str, str]) -> str:
    """``the schedule is read in your time zone, Europe/Berlin (from TZ): --tz UTC reads it in UTC``."""
    name, source = zone
    return f"the schedule is read in your time zone, {name} (from {source}): --tz UTC reads it in UTC"


def caller_zone(warn: Callable[[str], None] | None = None) -> str | None:
    """The IANA zone the CLI and the magics say their times in: the caller's (:func:`local_zone` of this
    process's environment), None for UTC (newuser26 n14: every time read UTC whatever TZ said). ``warn``
    gets :func:`zone_unread`'s sentence, once per ``TZ`` value in this process (the CLI's stderr)."""
    unread = zone_unread(os.environ)
    if warn is not None and unread is not None and unread not in _WARNED:
        _WARNED.add(unread)
        warn(unread)
    found = local_zone(os.environ)
    return found[0] if found else None
