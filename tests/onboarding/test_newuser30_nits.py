"""New user 30's nits (session 30), each with the words a newcomer met and what they read now."""

from __future__ import annotations

import io
from typing import Any

import pytest

from jupyter_sched.cli.cancel import cancel
from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, Streams, build_parser, main
from jupyter_sched.client._wire import NamedJob
from jupyter_sched.errors import NotFoundError, ValidationError


class _CancelClient:
    """Two jobs: r-2h running (cancelled: stopping) and gone (no such job)."""

    def job_named(self, ref: str, command: str = "") -> NamedJob:
        if ref == "gone":
            raise NotFoundError("no job has the id or name 'gone'", field="job_id", hint="jupyter-sched jobs lists yours")
        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "name": "r-2h", "state": "running", "kind": "training", "resources": {"gpus": 1}}

    def cancel(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "name": "r-2h", "state": "cancelling", "kind": "training", "resources": {"gpus": 1}}

    def definitions(self) -> list[dict[str, Any]]:  # a name no job has is looked for among them (newuser42 N4)
        return []

    def config(self) -> dict[str, Any]:
        return {}


def test_newuser30_n5_cancel_takes_q_and_prints_nothing_but_errors(capsys: pytest.CaptureFixture[str]) -> None:
    # was: "-q: not an option of jupyter-sched cancel" (only submit had -q; scripts quieting submit try it on cancel)
    args = build_parser().parse_args(["cancel", "-q", "r-2h"])
    assert args.quiet is True
    out, err = io.StringIO(), io.StringIO()
    assert cancel(_CancelClient(), args, Streams(out=out, err=err, stdin=io.StringIO())) == EXIT_OK
    assert out.getvalue() == "" and err.getvalue() == "", (out.getvalue(), err.getvalue())
    # an error still says so on stderr, with its exit status
    args = build_parser().parse_args(["cancel", "--quiet", "r-2h", "gone"])
    out, err = io.StringIO(), io.StringIO()
    assert cancel(_CancelClient(), args, Streams(out=out, err=err, stdin=io.StringIO())) == EXIT_REFUSED
    assert out.getvalue() == "" and "gone" in err.getvalue(), (out.getvalue(), err.getvalue())
    # without -q, as before
    out = io.StringIO()
    cancel(_CancelClient(), build_parser().parse_args(["cancel", "r-2h"]), Streams(out=out, err=io.StringIO(), stdin=io.StringIO()))
    assert out.getvalue() == "cancel of r-2h: it is cancelling\n", out.getvalue()
    try:
        main(["cancel", "--help"])
    except SystemExit:
        pass
    helped = capsys.readouterr().out
    assert "[--yes] [-q]" in helped and "-q, --quiet" in helped, helped


class _QuotasClient:
    def __init__(self, source: dict[str, Any]) -> None:
        self.source = source

    def call(self, req: Any) -> dict[str, Any]:
        return {"quotas": [], "source": self.source}


def test_newuser30_n9_quotas_says_who_set_them_once_with_the_clock_renderer() -> None:
    # was: "set by PUT quotas by root at 2026-12-06 09:09 UTC" (by … by, and a raw date-time where the CLI says "Dec 6 09:09 UTC")
    from datetime import datetime, timezone

    from jupyter_sched.cli.admin_views import quotas
    from jupyter_sched.services.quota_config import source_text
    from jupyter_sched.store.quota_source import QuotaSource

    at = datetime(2026, 12, 6, 9, 9, 41, tzinfo=timezone.utc)
    text = source_text(QuotaSource(set_by="root", set_at=at))
    assert text == "root with PUT quotas at Dec 6 09:09 UTC", text
    assert source_text(QuotaSource(set_by="config", set_at=at)) == "the config file (c.SchedApp.quotas) at Dec 6 09:09 UTC"
    out = io.StringIO()
    args = build_parser().parse_args(["quotas"])
    source = {"set_by": "root", "set_at": "2026-12-06T09:09:41Z", "config": False, "text": text}
    assert quotas(_QuotasClient(source), args, Streams(out=out, err=io.StringIO(), stdin=io.StringIO())) == 0
    last = out.getvalue().splitlines()[-1]
    assert last.startswith("set by root with PUT quotas at ") and last.count(" by ") == 1, last
    assert "2026-12-06" not in last and last.endswith(("09:09 UTC", "Dec 6 09:09 UTC")), last


class _EndedClient:
    def __init__(self, state: str) -> None:
        self.state = state

    def job_named(self, ref: str, command: str = "") -> NamedJob:
        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "name": "train", "state": self.state, "kind": "training", "resources": {"gpus": 1},
                "exit_code": 1 if self.state == "failed" else 0, "finished_at": "2026-12-06T09:00:00Z"}


def test_newuser30_n6_schedule_wait_of_a_failed_job_raises_so_run_all_stops(capsys: pytest.CaptureFixture[str]) -> None:
    # was: the cell ended [ok] and Run All went on after a failed job, while `jupyter-sched wait` exits 4
    from jupyter_sched.magics.core import MagicError, SchedMagics

    failed = SchedMagics(None, client_factory=lambda: _EndedClient("failed"))  # type: ignore[arg-type,return-value]
    with pytest.raises(MagicError) as raised:
        failed.schedule("wait j-9")
    said = str(raised.value)
    assert said.startswith("j-9 ended failed, not succeeded (said above): the cells after this one do not run"), said
    assert "`%schedule wait j-9 --no-raise-error` only says it" in said, said
    assert "j-9" in capsys.readouterr().out  # its line first, as before
    failed.schedule("wait j-9 --no-raise-error")  # says it, raises nothing
    assert "failed" in capsys.readouterr().out
    with pytest.raises(MagicError):
        SchedMagics(None, client_factory=lambda: _EndedClient("cancelled")).schedule("wait j-9")  # type: ignore[arg-type,return-value]
    SchedMagics(None, client_factory=lambda: _EndedClient("succeeded")).schedule("wait j-9")  # type: ignore[arg-type,return-value]


class _BigLogClient:
    """A 50,000,000-byte log of 100-byte lines."""

    SIZE = 50_000_000

    def logs(self, job_id: str, *, offset: int = 0, limit: int = 0, tail: int | None = None, **_: Any) -> dict[str, Any]:
        if tail is not None:  # read back from the end by the server (newuser35 N2): whole lines, at most limit bytes
            text = ("x" * 99 + "\n") * min(tail, limit // 100)
            return {"text": text, "offset": self.SIZE - len(text), "next_offset": self.SIZE, "size": self.SIZE}
        count = min(limit, self.SIZE - offset)
        text = ("x" * 99 + "\n") * (count // 100 + 1)
        return {"text": text[len(text) - count:], "next_offset": offset + count}


def test_newuser30_n7_a_cut_log_says_what_is_shown_not_the_first_50_mb_of_50_mb(capsys: pytest.CaptureFixture[str]) -> None:
    # was: "[… the first 50 MB of the log are not shown here …" of a 50 MB log (rounding: all of it, read literally)
    from jupyter_sched.magics.core import LOG_TAIL_BYTES, SchedMagics

    magics = SchedMagics(None, client_factory=lambda: _BigLogClient())  # type: ignore[arg-type,return-value]
    kept, end = magics._log_tail("j-1", {"text": "x", "next_offset": LOG_TAIL_BYTES, "size": _BigLogClient.SIZE})
    said = capsys.readouterr().out
    assert end == _BigLogClient.SIZE
    assert said.startswith(f"[… only the last {len(kept.encode()) / 1e3:.0f} KB of the 50 MB log are shown here: "), said
    assert "the first" not in said, said


def test_newuser30_n12_cron_steps_in_plain_words() -> None:
    # was: --cron "*/15 * * * *" → "Every 15th minute of every hour"
    from jupyter_sched.definitions.schedule import parse_schedule

    assert parse_schedule("*/15 * * * *", "UTC").description == "Every 15 minutes"
    assert parse_schedule("*/2 * * * *", "UTC").description == "Every 2 minutes"
    assert parse_schedule("0 */2 * * *", "UTC").description == "At minute 0 past every 2 hours"
    assert parse_schedule("*/10 9-17 * * 1-5", "UTC").description.startswith("Every 10 minutes from 09:00 through 17:59")
    # a step that does not divide the hour keeps cronsim's words: its gaps are not all equal (…, 49, 56, then 0)
    assert parse_schedule("*/7 * * * *", "UTC").description == "Every seventh minute of every hour"


def test_newuser30_n17_queue_summary_says_no_borrowing_where_no_quota_line_guarantees_anything() -> None:
    """``queue --summary`` with no quota lines said ``BORROWED 4`` — every running GPU "borrowed" where nothing is
    guaranteed and nobody lends; a newcomer read it as a debt. A team without a line says ``-``, as GUARANTEE and
    LIMIT do; a team with a line still says what runs over its guarantee."""
    import argparse
    import io as _io
    from types import SimpleNamespace

    from jupyter_sched.cli.queue_summary import summary

    rows = [{"id": "j1", "team": "cv", "user": "ana", "state": "running", "gpus": 4},
            {"id": "j2", "team": "nlp", "user": "bo", "state": "running", "gpus": 3}]
    quotas = {"quotas": [{"team": "nlp", "guaranteed": 2, "borrowing_limit": 2}]}
    client = SimpleNamespace(queue_all=lambda: rows, call=lambda req: quotas)
    out = _io.StringIO()
    assert summary(client, argparse.Namespace(json=False), SimpleNamespace(out=out, err=_io.StringIO()), None) == 0
    table = {line.split()[0]: line.split() for line in out.getvalue().splitlines()[1:3]}
    assert table["cv"][1:5] == ["4", "-", "-", "-"], out.getvalue()
    assert table["nlp"][1:5] == ["3", "2", "+2", "1"], out.getvalue()


def test_newuser30_n11_a_daily_budget_said_in_another_zone_is_this_utc_day() -> None:
    """With TZ=America/Los_Angeles ``status`` said "0.26 of 1 GPU-hour used today, resets 16:00 PST": the day is
    the UTC day, which began at 16:00 the day before there. Said in another zone it is "this UTC day"; to a reader
    on UTC "today" as before; the other periods unchanged."""
    from datetime import datetime, timezone

    from jupyter_sched.model.periods import this_period_text
    from jupyter_sched.model.units import shown_in
    from jupyter_sched.wording.status import budget_lines

    me = {"budgets": [{"team": "default", "user": None, "period": "day", "used_gpu_hours": 0.26, "gpu_hours": 1,
                       "resets_at": "2026-12-07T00:00:00Z"}]}
    now = datetime(2026, 12, 6, 18, 0, tzinfo=timezone.utc)
    with shown_in("America/Los_Angeles"):
        (line,) = budget_lines(me, now)
        assert line == "team default: 0.26 of 1 GPU-hour used this UTC day, resets 16:00 PST", line
        assert this_period_text("month") == "this month"
    with shown_in(None):  # a reader on UTC (session 31: outside any reader, the server's "this UTC day")
        (line,) = budget_lines(me, now)
    assert line == "team default: 0.26 of 1 GPU-hour used today, resets Dec 7 00:00 UTC", line
    with shown_in("UTC"):
        assert this_period_text("day") == "today"


@pytest.mark.parametrize("typed, meant", [("5 mins", "5m"), ("2 hours", "2h"), ("1 day", "1d"), ("30 secs", "30s"),
                                          ("1.5 hrs", "1.5h")])
def test_newuser30_n15_a_duration_in_words_is_told_the_form_that_says_it(typed: str, meant: str) -> None:
    """The panel's submit form (the server's words) said "Time limit: cannot parse duration '5 mins' — use a number
    of seconds or units d/h/m/s"; the CLI said "write 5m". The server's refusal names the form now, on every
    surface that shows it (REST, panel, magics)."""
    from jupyter_sched.model.validation import spec_from_request

    with pytest.raises(ValidationError) as refused:
        spec_from_request({"command": ["x"], "time_limit": typed}, user="a", default_team="d")
    assert refused.value.field == "time_limit" and refused.value.hint == f"write {meant} (units d, h, m, s)", \
        refused.value.hint
