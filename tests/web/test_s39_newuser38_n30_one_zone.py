"""newuser38 n30: one zone per line — the server's sentences' clocks in the reader's zone, as the reader's own.

In a browser on America/Los_Angeles, Admin → Audit log read ``Dec 7 03:01:30 PST · scheduler / idle_warning A (j-…)
— idle warning: … GPUs will be reported as idle at Dec 7 11:02:00 UTC unless activity resumes``: one row, two zones,
8 h apart. ``jupyter-sched audit`` said the same (its TIME column in the caller's zone, the MESSAGE the server's UTC).
The rule, on every reader: the server writes its sentences in UTC (the JSON and every client read them, in every
zone); the reader says each clock in them in its own zone — the CLI's and the magics' from the process
(``TZ``; :func:`jupyter_sched.model.units.clocks_said`), the panel's from the browser (format.ts ``clocksAsOf``,
labextension/test/s39_newuser38_n30_one_zone.test.ts). The CLI's side runs against a real server (a real
``jupyter server`` subprocess, SQLite, the CLI as a subprocess with ``TZ`` set); the audit row is written through the
server's own store as the idle engine writes one (its reason by :func:`jupyter_sched.model.units.clock_text`, the
engine's formatter), since a real idle warning needs a GPU's idle samples over its window.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from jupyter_sched.magics.render import draining_line
from jupyter_sched.model.periods import said_to_reader
from jupyter_sched.model.units import clock_text, clocks_said, shown_in
from jupyter_sched.store import Store
from jupyter_sched.wording.cordons import drain_text
from jupyter_sched.wording.definitions import run_made_text
from jupyter_sched.wording.jobs import lease_end_words, unhealthy_text
from jupyter_sched.wording.reasons import refusal_text
from tests.cli_server import Run, server_for_module
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = shutil.which("jupyter-sched", path=str(Path(sys.executable).parent)) or "jupyter-sched"
BOSS_TOKEN = "s39-tz-boss-token"
USERS = {OWNER_TOKEN: "ivan", BOSS_TOKEN: "boss"}
LA = "America/Los_Angeles"
WRITTEN = datetime(2026, 12, 7, 11, 1, 30, tzinfo=timezone.utc)  # 03:01:30 PST


def test_newuser38_n30_a_server_sentence_says_its_clocks_in_the_readers_zone() -> None:
    said = ("idle warning: GPU < 5 % for 1 min: GPUs will be reported as idle at Dec 7 11:02:00 UTC unless activity "
            "resumes; held since 2026-12-07T10:01:00Z; warned at 11:05 UTC; fires 12:00 UTC+4; next Dec 4 2027 "
            "23:58 UTC")
    with shown_in(LA):
        dated = clocks_said(said, None, ref=WRITTEN)
        today = clocks_said(said, WRITTEN, ref=WRITTEN)
    assert "reported as idle at Dec 7 03:02:00 PST unless" in dated, dated  # seconds kept, as written
    assert "held since Dec 7 02:01 PST" in dated, dated  # an ISO time too
    assert "warned at Dec 7 03:05 PST" in dated, dated  # today's form: the day it was written (UTC)
    assert "fires 12:00 UTC+4" in dated, dated  # a zone's own name with its offset: said as meant
    assert "next Dec 4 2027 15:58 PST" in dated, dated  # its year kept
    assert " UTC " not in dated.replace("UTC+4", ""), dated
    assert "reported as idle at 03:02:00 PST unless" in today and "warned at 03:05 PST" in today, today
    # the day is the reader's: 23:30 UTC on Dec 6 is Dec 6 15:30 in Los Angeles, 00:30 Dec 7 in Berlin
    with shown_in("Europe/Berlin"):
        assert clocks_said("from 23:30 UTC", None, ref=datetime(2026, 12, 6, 12, tzinfo=timezone.utc)) \
            == "from Dec 7 00:30 CET"


def test_newuser38_n30_the_servers_own_words_stay_utc_and_a_no_time_is_left() -> None:
    said = "reported as idle at Dec 7 11:02:00 UTC; since 2026-12-07T10:01:00Z"
    # no reader known (the server rendering its answer): UTC as written, the ISO time said as a clock (newuser27 n3)
    assert clocks_said(said, None, ref=WRITTEN) == "reported as idle at Dec 7 11:02:00 UTC; since Dec 7 10:01 UTC"
    with shown_in(LA):
        assert clocks_said("due Feb 30 10:00 UTC", None, ref=WRITTEN) == "due Feb 30 10:00 UTC"  # no such day
        assert clocks_said(said, None, ref=WRITTEN, iso=False).endswith("since 2026-12-07T10:01:00Z")


def test_newuser38_n30_refusals_warnings_and_job_messages_in_the_readers_zone() -> None:
    with shown_in(LA):
        message, hint = refusal_text("team vision's reclaims wait until Dec 7 11:15 UTC", "use e.g. "
                                     "2025-03-30T06:30:00Z", None)
        warning = said_to_reader("budget spent this UTC day; resets Dec 8 00:00 UTC")
        ended = lease_end_words({"kind": "lease", "state": "cancelled", "user": "ivan", "mine": True,
                                 "finished_at": "2026-12-07T11:02:09Z",
                                 "message": "released by the server: kernel k-1 was asked to shut down at "
                                            "11:02:05 UTC"})
    assert message == "team vision's reclaims wait until Dec 7 03:15 PST", message
    assert hint == "use e.g. 2025-03-30T06:30:00Z", hint  # an example to type is not a clock to read
    assert warning == "budget spent this UTC day; resets Dec 7 16:00 PST", warning
    assert ended == "released by the server: kernel k-1 was asked to shut down at Dec 7 03:02:05 PST", ended


def test_newuser38_n30_run_now_says_its_reason_in_the_definitions_zone() -> None:
    """``definitions run`` / ``%schedule define run`` of a Berlin definition: its reason's clock in Berlin's zone, as
    the rest of a definition's output (newuser38 n20's rule); without the definition, the reader's."""
    run = {"job_id": "j-1", "job": {"state": "pending", "reason": {"message": "budget spent; resets Dec 8 00:00 UTC"}}}
    with shown_in(LA):
        assert run_made_text(run, {"timezone": "Europe/Berlin"}) == "queued run j-1 (pending: budget spent; resets " \
            "Dec 8 01:00 CET)"
        assert run_made_text(run) == "queued run j-1 (pending: budget spent; resets Dec 7 16:00 PST)"


def test_newuser38_n30_a_running_jobs_drain_and_unhealthy_lines_in_the_readers_zone() -> None:
    """``jobs`` / ``status JOB`` / the magics' job views: the server's drain and unhealthy-GPU sentences (the panel's
    drainLine / unhealthyLine say them in the browser's zone)."""
    job = {"state": "running",
           "drain": {"text": "node-a is being drained by boss: this job is stopped at Dec 7 18:37 UTC and requeued"},
           "unhealthy_gpus": [{"text": "GPU 0 (GPU-a) on node-a is unhealthy (Xid 94) since Dec 7 11:00 UTC"}]}
    with shown_in(LA):
        assert drain_text(job).endswith("stopped at Dec 7 10:37 PST and requeued"), drain_text(job)
        assert unhealthy_text(job).endswith("since Dec 7 03:00 PST"), unhealthy_text(job)
    assert drain_text(job).endswith("18:37 UTC and requeued")  # the server's own words: as written
    lease = {"id": "l-1", "state": "running", "stop_requested": {"intent": "release"},
             "message": "released by ivan; its kernel was asked to shut down at Dec 7 11:02:05 UTC"}
    with shown_in(LA):  # the magics' line of a released lease still draining
        assert draining_line(lease).endswith("asked to shut down at Dec 7 03:02:05 PST"), draining_line(lease)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server: ivan a user, boss an admin (the audit is an admin's)."""
    yield from server_for_module(tmp_path_factory, "s39tz", USERS, admin_users=["boss"])


def _cli(server: EmbeddedServer, *args: str, tz: str) -> Run:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": BOSS_TOKEN, "TZ": tz,
                "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")})
    done = subprocess.run([CLI, *args], env=env, capture_output=True, text=True, timeout=120)
    return Run(done.returncode, done.stdout, done.stderr)


def test_newuser38_n30_cli_audit_says_a_rows_message_in_the_time_columns_zone(server: EmbeddedServer) -> None:
    deadline = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(seconds=30)
    # the engine's audit record of an idle warning (engine/idle.py; its reason by reclaim/idle.py's formatter)
    Store(server.db_url).add_event(
        actor="scheduler", action="idle_warning", job_id="j-s39tz", user="ivan",
        message=f"idle warning: GPU < 5 % for 1 min: GPUs will be reported as idle at "
                f"{clock_text(deadline, None, seconds=True)} unless activity resumes (limit 1m)")
    run = _cli(server, "audit", "--action", "idle_warning", tz=LA)
    assert run.code == 0, run
    row = next(line for line in run.out.splitlines() if "j-s39tz" in line)
    with shown_in(LA):
        said = clock_text(deadline, datetime.now(timezone.utc), seconds=True)
    assert f"reported as idle at {said} unless" in row, row
    assert " UTC" not in row and ("PST" in row or "PDT" in row), row  # one zone on the row: the TIME column's too
    # a reader on UTC reads the server's words as written
    utc = next(line for line in _cli(server, "audit", "--action", "idle_warning", tz="UTC").out.splitlines()
               if "j-s39tz" in line)
    assert f"reported as idle at {clock_text(deadline, datetime.now(timezone.utc), seconds=True)} unless" in utc, utc


LOG = ("epoch 1 done at 20:24:21 UTC\n"  # the job's own line: never touched
       "[jupyter_sched] preempted at 20:24:21 UTC by higher-priority normal job j-1 (it waits in the queue again)\n"
       "[jupyter_sched] parameters injected: {\"since\": \"2026-12-07T20:24:21Z\"}\n")


def test_newuser41_n2_the_schedulers_log_lines_say_their_clocks_in_the_readers_zone() -> None:
    """newuser41 n2: a job log's own ``[jupyter_sched]`` lines kept UTC in ``logs`` while ``jobs`` said PST."""
    from jupyter_sched.wording.log_clocks import log_clocks_said

    with shown_in(LA):
        said = log_clocks_said(LOG, WRITTEN).splitlines()
        cut = log_clocks_said("ted at 20:24:21 UTC\n[jupyter_sched] at 20:25 UTC", WRITTEN, line_start=False)
    assert said[0] == "epoch 1 done at 20:24:21 UTC", said  # the job's words are its own
    assert said[1].startswith("[jupyter_sched] preempted at 12:24:21 PST by"), said  # was 20:24:21 UTC
    assert said[2] == LOG.splitlines()[2], said  # an ISO time in it is data (a parameter's value), left as written
    assert cut == "ted at 20:24:21 UTC\n[jupyter_sched] at 12:25 PST", cut  # a followed slice begun mid-line
    assert log_clocks_said(LOG, WRITTEN) == LOG  # no reader known: the server's words as written (the file: UTC)


def test_newuser41_n2_cli_and_magics_logs_say_the_schedulers_clocks_in_the_readers_zone(
        server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """End to end: a real job's log (the job prints a line as the scheduler's wrapper writes one into the same
    file — a real preemption needs a higher-priority job on full GPUs), read by ``jupyter-sched logs`` (and ``-f``,
    ``--raw``) with ``TZ`` set, and by ``%schedule logs`` in that zone."""
    from zoneinfo import ZoneInfo

    from jupyter_sched.client import connect
    from jupyter_sched.magics.core import SchedMagics

    code = "import sys; sys.stdout.write(" + repr(LOG) + ")"
    done = _cli(server, "submit", "--gpus", "0", "--name", "n41clk", "--wait", "--", sys.executable, "-c", code, tz=LA)
    assert done.code == 0, done
    today = datetime.now(timezone.utc).replace(hour=20, minute=24, second=21, microsecond=0)
    local = today.astimezone(ZoneInfo(LA)).strftime("%H:%M:%S")
    said = re.compile(rf"\[jupyter_sched\] preempted at (\w+ \d+ )?{local} P[SD]T by ")
    for follow in ((), ("-f",)):
        run = _cli(server, "logs", *follow, "n41clk", tz=LA)
        assert said.search(run.out) and "epoch 1 done at 20:24:21 UTC" in run.out, run
    raw = _cli(server, "logs", "--raw", "n41clk", tz=LA)
    assert "[jupyter_sched] preempted at 20:24:21 UTC by" in raw.out, raw  # --raw: as the file has it
    monkeypatch.setenv("TZ", LA)
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        SchedMagics(None, client_factory=lambda: connect(server.url, BOSS_TOKEN)).schedule("logs n41clk")
    assert said.search(shown.getvalue()), shown.getvalue()
