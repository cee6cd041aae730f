"""``jupyter-sched quotas what-if --team cv --guaranteed 4 [--limit 2] [--model M] [--quarter 2026Q4]``: a past
period's usage of a team against a proposed quota line (hubadmin26 B7; ``GET quotas/what-if``,
:mod:`jupyter_sched.services.quota_what_if`). Standard library only (the CLI's start-up cost: :mod:`.main`)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from ..client._wire import Req

__all__ = ["add_arguments", "said_here", "what_if"]

_OPTIONS = ("team", "guaranteed", "limit", "model")


def add_arguments(parser: argparse.ArgumentParser, *, when: Any, month: Any, quarter: Any) -> None:
    """``quotas [what-if …]``: the optional action and its options (``when``, ``month``, ``quarter``: the
    ``usage`` command's argument types)."""
    parser.add_argument("action", nargs="?", choices=("what-if",), metavar="what-if",
                        help="what-if: replay a past period's usage of --team against a proposed line (admins): "
                             "GPU-hours within its guarantee, borrowed, over its limit (would have waited); the "
                             "last full quarter unless --quarter/--month/--since say")
    parser.add_argument("--team", metavar="TEAM", help="what-if: the team")
    parser.add_argument("--guaranteed", type=_gpus, metavar="GPUS", help="what-if: the proposed guarantee")
    parser.add_argument("--limit", type=_gpus, metavar="GPUS",
                        help="what-if: the proposed borrowing limit above the guarantee (default: none)")
    parser.add_argument("--model", metavar="MODEL", help="what-if: the line's GPU model (default: any model)")
    parser.add_argument("--since", metavar="WHEN", type=when, help="what-if: from this time")
    parser.add_argument("--until", metavar="WHEN", type=when, help="what-if: up to this time, not included")
    parser.add_argument("--month", metavar="YYYY-MM", type=month, help="what-if: one calendar month in UTC")
    parser.add_argument("--quarter", metavar="YYYYQN", type=quarter, help="what-if: one calendar quarter in UTC")


def misused(args: argparse.Namespace) -> str | None:
    """The usage error of ``quotas`` with what-if options but no ``what-if`` (or ``what-if`` without its two
    options); None when fine."""
    given = [f"--{name}" for name in (*_OPTIONS, "since", "until", "month", "quarter")
             if getattr(args, name, None) is not None]
    if getattr(args, "action", None) != "what-if":
        return (f"{given[0]} goes with what-if, e.g. jupyter-sched quotas what-if --team cv --guaranteed 4 "
                "[usage_error]" if given else None)
    missing = [f"--{name}" for name in ("team", "guaranteed") if getattr(args, name, None) is None]
    return f"what-if needs {' and '.join(missing)}, e.g. --team cv --guaranteed 4 [usage_error]" if missing else None


def what_if(client: Any, args: argparse.Namespace, io: Any, window: tuple[str | None, str | None]) -> int:
    """``quotas what-if``: the two lines replayed, as a table and the server's words (``--json``: the answer)."""
    params = {"team": args.team, "guaranteed": f"{args.guaranteed:g}"}
    if args.limit is not None:
        params["borrowing_limit"] = f"{args.limit:g}"
    if args.model:
        params["gpu_model"] = args.model
    if window[0]:
        params["since"] = window[0]
    if window[1]:
        params["until"] = window[1]
    answer = client.call(Req("GET", "quotas/what-if", params=params))
    if getattr(args, "json", False):
        print(json.dumps(answer, indent=2), file=io.out)
        return 0
    rows = [["LINE", "GUARANTEED", "LIMIT", "WITHIN", "BORROWED", "OVER LIMIT", "H ABOVE LIMIT"]]
    for name in ("proposed", "in_force"):
        line = answer.get(name)
        if isinstance(line, Mapping):
            limit = line.get("borrowing_limit")
            rows.append([name.replace("_", " "), f"{float(line['guaranteed']):g}",
                         "none" if limit is None else f"+{float(limit):g}",
                         f"{float(line['within_guarantee_gpu_hours']):.1f}", f"{float(line['borrowed_gpu_hours']):.1f}",
                         f"{float(line['over_limit_gpu_hours']):.1f}", f"{float(line['hours_above_limit']):.1f}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip(), file=io.out)
    print(said_here(answer, datetime.now(timezone.utc)), file=io.out)
    return 0


def said_here(answer: Mapping[str, Any], now: datetime) -> str:
    """The answer's words with its period in this reader's zone, as every CLI time (newuser35 n3: the server's
    ``text`` said ``from 2026-10-01T00:00:00Z to 2026-12-07T00:52:28.870475Z``): :func:`what_if_text` again here,
    and the server's closing note on a team that used nothing and has no line (its close names are the server's
    to know), taken from its ``text``. An answer without the figures: its ``text`` as sent."""
    from ..wording.quota_what_if import no_line_note, what_if_text

    text, team = str(answer.get("text") or ""), str(answer.get("team") or "")
    if not isinstance(answer.get("proposed"), Mapping):
        return text
    try:
        here = what_if_text(answer, now)
    except (KeyError, TypeError, ValueError):  # a server of another version: its own words
        return text
    mark = no_line_note(team, "").removeprefix("Team ")
    at = text.find(mark)
    return here + (" " + no_line_note(team, text[at + len(mark):]) if at >= 0 and team else "")


def _gpus(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of GPUs, e.g. 4") from None
    if not number >= 0 or number == float("inf"):
        raise argparse.ArgumentTypeError(f"{value!r}: give 0 or more GPUs, e.g. 4")
    return number
