"""The caller's time zone, as its shell or kernel has it (newuser27 N7): a definition's cron given in
the CLI or the magic without ``--tz`` was read in UTC while ``TZ=Europe/Berlin`` said otherwise (and
the panel's form defaults to the browser's zone) — "0 9 * * *" ran at 10:00 Berlin time, silently.
cron, systemd timers and jupyter-scheduler read a schedule in local time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["caller_zone", "local_zone", "zone_note"]

_LOCALTIME = "/etc/localtime"


def local_zone(environ: Mapping[str, str], localtime: str = _LOCALTIME) -> tuple[str, str] | None:
    """``(IANA zone name, where it was read)`` of the caller: ``TZ`` when it names a zone (a leading
    ``:`` as libc takes it; ``("Europe/Berlin", "TZ")``), else the zone ``/etc/localtime`` links to
    (``(…, "/etc/localtime")``); None when neither names one (a POSIX rule such as ``CET-1CEST``, an
    unlinked copy) or names UTC itself (:data:`~..model.units.UTC_NAMES`): the server's default (UTC) then."""
    from ..model.units import UTC_NAMES as _UTC_NAMES
    from ..model.units import iana_zone

    tz = environ.get("TZ", "").strip().removeprefix(":")
    if tz:
        return (tz, "TZ") if iana_zone(tz) is not None and tz not in _UTC_NAMES else None
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


def caller_zone() -> str | None:
    """The IANA zone the CLI and the magics say their times in: the caller's (:func:`local_zone` of this
    process's environment), None for UTC (newuser26 n14: every time read UTC whatever TZ said)."""
    found = local_zone(os.environ)
    return found[0] if found else None
