"""newuser41 n9: dates typed on the CLI were read in UTC while everything said back is in the reader's
zone — ``TZ=America/Los_Angeles jupyter-sched usage --since 2026-12-07`` said "Dec 6 16:00 PST → now",
and ``--since "2026-12-07 00:00"`` was refused "has no UTC offset". Now a bare date is its midnight and an
offset-less time that time in the reader's zone (``--utc``: UTC), for every ``--since``/``--until``
(usage, audit, jobs, quotas what-if); ``Z`` and offsets are kept exact. In-process: the parser, then
:func:`jupyter_sched.cli.local_when.resolve_local_times` as ``main`` runs it once the zone is known."""

from __future__ import annotations

import argparse

import pytest

from jupyter_sched.cli.local_when import LocalWhen, resolve_local_times
from jupyter_sched.cli.main import build_parser

LA = "America/Los_Angeles"


def _read(argv: list[str], zone: str | None) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    resolve_local_times(args, zone)
    return args


@pytest.mark.parametrize("command", [["usage"], ["audit"], ["jobs"], ["quotas", "what-if"]])
def test_newuser41_n9_a_bare_date_is_the_readers_midnight(command: list[str]) -> None:
    args = _read([*command, "--since", "2026-12-07", "--until", "2026-12-08 09:30"], LA)
    assert (args.since, args.until) == ("2026-12-07T00:00:00-08:00", "2026-12-08T09:30:00-08:00"), vars(args)
    summer = _read([*command, "--since", "2026-07-01"], LA)
    assert summer.since == "2026-07-01T00:00:00-07:00", summer.since  # the zone's offset on that day
    utc = _read([*command, "--since", "2026-12-07"], None)  # --utc, or a reader in UTC
    assert utc.since == "2026-12-07T00:00:00Z", utc.since


@pytest.mark.parametrize("typed", ["2026-12-07T00:00:00Z", "2026-12-07T09:00:00+02:00", "2026-12-07 09:00-05:00"])
def test_newuser41_n9_z_and_offsets_stay_exact(typed: str) -> None:
    args = _read(["usage", "--since", typed], LA)
    assert args.since == typed and not isinstance(args.since, LocalWhen), args.since


def test_newuser41_n9_nothing_is_left_unread_before_the_zone_is_known() -> None:
    args = build_parser().parse_args(["usage", "--since", "2026-12-07"])
    assert isinstance(args.since, LocalWhen)  # main resolves it with the zone (TZ, or --utc after it)
    resolve_local_times(args, "Asia/Tokyo")
    assert args.since == "2026-12-07T00:00:00+09:00" and type(args.since) is str, args.since


def test_newuser41_n9_the_help_says_the_readers_zone() -> None:
    from jupyter_sched.cli.admin_views import WHEN_HELP

    assert "midnight in your time zone" in WHEN_HELP and "UTC)" in WHEN_HELP and "midnight UTC" not in WHEN_HELP
