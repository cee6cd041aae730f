"""New user 21, N7 (session 22): ``jupyter-sched logs -f`` tells the job's owner once that the job's own
progress says its time limit stops it unfinished — the scheduler's note from ``GET jobs/{id}/logs``
(``notes``), printed on stderr, so stdout stays the job's own output; ``%schedule logs`` says it too.

Real parts: a jupyter_server with jupyter_sched, a real job process (``sleep``) on a simulated GPU,
the CLI's ``main`` over HTTP (in a thread: the server runs on this test's loop). The run's start is
moved 40 s back in the store, so its pace can be read (after 30 s of run time) without waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from jupyter_sched.cli.main import EXIT_JOB_FAILED, main
from jupyter_sched.client import connect
from jupyter_sched.magics.core import SchedMagics

from .conftest import IVAN_TOKEN, running_job, wait_for

WORDS = "time limit stops it at"
NOTE = re.compile(r"jupyter_sched: at this pace \(10 % done after 4\ds\) the job needs ~\dm\d\ds in all; its 2m time "
                  r"limit stops it at \d\d:\d\d UTC")
"""The note (the run had run 40 s and some when it reported: ~6m40s or a few seconds more)."""
PAST = "time limit was to stop it at"
"""The same note read after the job's end: when it was said, in the past tense (newuser31 n12)."""


async def test_s22_words_n7_logs_follow_says_the_pace_note_once_on_stderr(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: `logs -f` printed nothing of it (the note existed nowhere but jobs/queue/panel lines)
    job_id = await running_job(api, time_limit="2m", name="slowlim")
    with sched_app.services.ctx.store.transaction() as tx:
        record = tx.get_job(job_id)
        start = record.job.started_at - timedelta(seconds=40)
        tx.update_job(replace(record, job=replace(record.job, started_at=start, admitted_at=start)))
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", IVAN_TOKEN)
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # each report stored
    out, err = io.StringIO(), io.StringIO()
    loop = asyncio.get_running_loop()
    following = loop.run_in_executor(None, lambda: main(["logs", "-f", "slowlim"], out=out, err=err))
    try:
        status, _ = await api("POST", f"jobs/{job_id}/progress", {"done": 10, "total": 100})
        assert status == 200
        try:
            await wait_for(lambda: _said(err, WORDS))
        except AssertionError as exc:  # s31-flake: once under load the CLI thread sent no request in 30 s; say why
            raise AssertionError(f"{exc}; the CLI's stderr so far {err.getvalue()!r}, stdout {out.getvalue()!r}; "
                                 f"{_where(following)}") from None
        status, _ = await api("POST", f"jobs/{job_id}/progress", {"done": 11, "total": 100})  # the same run again
        assert status == 200
        status, _ = await api("DELETE", f"jobs/{job_id}")
        assert status in (200, 202), status
        code = await asyncio.wait_for(following, timeout=60)
    finally:
        await api("DELETE", f"jobs/{job_id}")
    lines = err.getvalue().splitlines()
    said = [line for line in lines if WORDS in line]
    assert len(said) == 1 and NOTE.fullmatch(said[0]), lines
    assert code == EXIT_JOB_FAILED and WORDS not in out.getvalue(), (code, out.getvalue())
    # without -f, after the end: the note after the log, once, in the past tense (newuser31 n12)
    err2 = io.StringIO()
    again = await loop.run_in_executor(None, lambda: main(["logs", job_id], out=io.StringIO(), err=err2))
    assert again == 0 and sum(PAST in line for line in err2.getvalue().splitlines()) == 1, err2.getvalue()
    assert WORDS not in err2.getvalue(), err2.getvalue()
    # %schedule logs in a notebook: the same note once, in the magic's brackets
    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}"

    def magic_logs() -> str:
        shown = io.StringIO()
        with contextlib.redirect_stdout(shown):
            SchedMagics(None, client_factory=lambda: connect(url, IVAN_TOKEN)).schedule(f"logs {job_id}")
        return shown.getvalue()

    printed = await loop.run_in_executor(None, magic_logs)
    noted = [line for line in printed.splitlines() if PAST in line]
    assert len(noted) == 1 and re.match(r"\[jupyter_sched: at (\w+ \d+ )?\d\d:\d\d:\d\d UTC its pace \(10 % done after 4", noted[0]), \
        printed


async def _said(err: io.StringIO, words: str) -> bool:
    return words in err.getvalue()


def _where(following: Any) -> str:
    """Whether the CLI's ``main`` ended (with what) and, if not, where every thread of this process is."""
    import sys
    import traceback

    if following.done():
        return f"the CLI ended: {following.exception() or following.result()!r}"
    stacks = "".join(f"\n-- thread {ident}:\n" + "".join(traceback.format_stack(frame, limit=12))
                     for ident, frame in sys._current_frames().items())
    return f"the CLI still runs; threads:{stacks}"
