"""New user 30's nits (session 30), each with the words a newcomer met and what they read now."""

from __future__ import annotations

import io
from typing import Any

import pytest

from jupyter_sched.cli.cancel import cancel
from jupyter_sched.cli.main import EXIT_OK, EXIT_REFUSED, Streams, build_parser, main
from jupyter_sched.client._wire import NamedJob
from jupyter_sched.errors import NotFoundError


class _CancelClient:
    """Two jobs: r-2h running (cancelled: stopping) and gone (no such job)."""

    def job_named(self, ref: str) -> NamedJob:
        if ref == "gone":
            raise NotFoundError("no job has the id or name 'gone'", field="job_id", hint="jupyter-sched jobs lists yours")
        return NamedJob(ref)

    def job(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "name": "r-2h", "state": "running", "kind": "training", "resources": {"gpus": 1}}

    def cancel(self, job_id: str) -> dict[str, Any]:
        return {"id": job_id, "name": "r-2h", "state": "cancelling", "kind": "training", "resources": {"gpus": 1}}

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
