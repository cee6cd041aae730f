"""Dates and times typed on the command line without an offset are the reader's (newuser41 n9).

``usage --since 2026-12-07`` was read as midnight UTC — ``Dec 6 16:00 PST → now`` for a reader in Los
Angeles, whose every other time the CLI says in their zone — and ``--since "2026-12-07 00:00"`` was
refused "has no UTC offset". One rule for every ``--since``/``--until`` (``usage``, ``audit``, ``jobs``,
``quotas what-if``): a bare date is its midnight and an offset-less time that time *in the reader's zone*
(``TZ``, as ``definitions create``'s ``--tz`` default; ``--utc``: UTC), said back with its zone; a ``Z``
or an offset is kept exact. argparse reads the option before the zone is known (``--utc`` may follow),
so :func:`local_when` marks the text and :func:`resolve_local_times` fixes it once the zone is.
"""

from __future__ import annotations

import argparse
from datetime import datetime

from ..client.when import in_zone  # one reading with the Python client's since/until (newuser42 N1)

__all__ = ["LocalWhen", "local_when", "resolve_local_times", "in_zone"]


class LocalWhen(str):
    """An option's date or time with no offset (``2026-12-07T00:00:00``), read in the reader's zone
    when :func:`resolve_local_times` runs."""

    __slots__ = ()


def local_when(naive: datetime) -> LocalWhen:
    """``naive`` marked to be read in the reader's zone."""
    return LocalWhen(naive.replace(tzinfo=None, microsecond=0).isoformat())


def resolve_local_times(args: argparse.Namespace, zone: str | None) -> None:
    """Every :class:`LocalWhen` option of ``args`` (``since``, ``until``) as a time in ``zone`` (None: UTC)."""
    for name, value in vars(args).items():
        if isinstance(value, LocalWhen):
            setattr(args, name, in_zone(value, zone))
