"""New user 24, N9: ``jupyter-sched usage --until`` said the wrong period. ``--until 2026-12-05T12:10Z``
printed "in the last 7 days (since Nov 28 12:10 UTC)" and no end; with no rows the start was another
(now - 7 days); ``--since 2026-12-01 --until <today>`` read "Dec 1 00:00 UTC → 00:00 UTC"; a start in
the future was "Dec 6 00:00 UTC → now". Now the CLI computes the period it asks for (the server's
rule: 7 days before ``--until``), sends it, and says that one period with both ends dated."""

from __future__ import annotations

import argparse
import io
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace
from typing import Any

import pytest

from jupyter_sched.cli.admin_views import period_text, usage

NOW = datetime.now(timezone.utc).replace(microsecond=0)
TODAY = NOW.replace(hour=0, minute=0, second=0)


def _iso(when: datetime) -> str:
    return f"{when:%Y-%m-%dT%H:%M:%S}Z"


def _said(when: datetime) -> str:
    return f"{when:%b} {when.day} {when:%H:%M} UTC"


class _Wire:
    """The server's JSON answers, as ``client.call`` returns them; keeps the report's query."""

    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows, self.asked = rows, {}

    def config(self) -> dict[str, Any]:
        return {"features": {"hub": True}}  # GET config as a hub answers it (the footer names its price setting)

    def pages(self, req: Any) -> Any:  # the report is one page here (SchedClient.pages follows Link: red30 R8)
        yield self.call(req)

    def call(self, req: Any) -> Any:
        if req.path == "me":
            return {"user": "boss", "is_admin": True, "gpu_hours_since": _iso(NOW - timedelta(days=7))}
        self.asked = dict(req.params or {})
        return self.rows


def _run(rows: list[dict[str, Any]], **options: Any) -> tuple[int, str, str, dict[str, str]]:
    out, err, wire = io.StringIO(), io.StringIO(), _Wire(rows)
    args = argparse.Namespace(by="user", csv=False, json=False, **{"since": None, "until": None, "month": None,
                                                                     **options})
    code = usage(wire, args, SimpleNamespace(out=out, err=err))
    return code, out.getvalue(), err.getvalue(), wire.asked


def test_newuser24_n9_until_alone_says_the_seven_days_before_it_with_both_ends() -> None:
    until = TODAY - timedelta(days=1) + timedelta(hours=12, minutes=10)  # yesterday 12:10
    start = until - timedelta(days=7)
    row = {"user": "ana", "allocated_gpu_hours": 0.327, "cost": None, "jobs": 17, "since": _iso(start),
           "until": _iso(until)}
    code, out, _, asked = _run([row], until=_iso(until))
    assert code == 0 and asked["since"] == _iso(start) and asked["until"] == _iso(until), asked
    footer = out.splitlines()[-1]
    assert footer.startswith(f"everyone's usage, {_said(start)} → {_said(until)} (not included);"), footer
    assert "last 7 days" not in out
    code, out, _, asked = _run([], until=_iso(until))  # no rows: the same period, not now - 7 days
    assert code == 0 and out == f"no usage recorded (everyone's usage, {_said(start)} → {_said(until)} (not included))\n"


def test_newuser24_n9_an_end_of_today_keeps_its_date_and_a_future_start_is_refused() -> None:
    start = TODAY - timedelta(days=4)
    assert period_text(_iso(start), _iso(TODAY), NOW) == f"{_said(start)} → {_said(TODAY)} (not included)"
    assert period_text(_iso(TODAY), _iso(NOW), NOW) == f"00:00 UTC → {NOW:%H:%M} UTC (not included)"  # both today
    assert period_text(_iso(start), _iso(NOW + timedelta(days=3)), NOW) == f"{_said(start)} → now"
    # today as the CLI reads it now: NOW was taken at collection, which a whole-suite run may put before a midnight
    today = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    for options, said in (({"since": _iso(today + timedelta(days=1))}, "is in the future"),
                          ({"since": _iso(today), "until": _iso(today - timedelta(days=1))}, "is not before --until")):
        code, out, err, asked = _run([], **options)
        assert code == 2 and said in err and "[usage_error]" in err and out == "" and not asked, (options, err)


@pytest.mark.parametrize("until", ["2026-12-05T12:10:00+02:00", "not a time"])
def test_newuser24_n9_an_until_with_an_offset_or_unreadable_goes_to_the_server(until: str) -> None:
    code, _, _, asked = _run([], until=until)
    assert code == 0 and asked["until"] == until
    if until.startswith("2026"):
        assert asked["since"] == "2026-11-28T10:10:00Z", asked
    else:
        assert "since" not in asked, asked  # the server's refusal names the field
