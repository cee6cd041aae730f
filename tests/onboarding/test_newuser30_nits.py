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
