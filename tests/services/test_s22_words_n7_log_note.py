"""New user 21, N7 (session 22): a job whose own progress says its time limit stops it unfinished
gets its log's readers told once per run — ``GET jobs/{id}/logs`` carries the scheduler's note
(``notes``), never a line written into ``output.log`` (the job's account owns that file).

Real parts: the application services on a SQLite store with a manual clock (the run's pace needs
30 s of run time: no test waits for it), the job rows as the engine stores them.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest

from jupyter_sched.admission import Caller
from jupyter_sched.errors import AuthorizationError
from jupyter_sched.model import Allocation, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetJobLogsRequest
from jupyter_sched.services.models.jobs import ReportProgressRequest
from jupyter_sched.services.progress import OVER_LIMIT, ProgressService
from jupyter_sched.store import JobRecord
from jupyter_sched.wording.reported import over_limit_note, pace_needs_s
from tests.runtime.builders import T0, make_job

ANA = Caller(user="ana", teams=("default",))
BO = Caller(user="bo", teams=("default",))
NOTE = ("jupyter_sched: at this pace (10 % done after 40s) the job needs ~6m40s in all; its 2m time limit stops it "
        "at 12:02 UTC")


def _running(services: Services, job_id: str, *, limit_s: float | None) -> None:
    job = make_job(job_id, state=JobState.RUNNING, allocation=Allocation(node="vm", gpu_uuids=("GPU-vm-0",)),
                   time_limit_s=limit_s)
    services.store.insert_job(JobRecord(job=replace(job, started_at=T0)))


def _report(services: Services, job_id: str, at_s: float, done: float, progress: ProgressService | None = None) -> None:
    services.ctx.clock.set(T0 + timedelta(seconds=at_s))  # type: ignore[attr-defined]
    (progress or services.progress).report(ANA, job_id, ReportProgressRequest(done=done, total=100))


def _notes(services: Services, job_id: str) -> list[str]:
    return [n.text for n in services.jobs.logs(ANA, job_id, GetJobLogsRequest()).notes]


def test_s22_words_n7_the_pace_note_is_said_once_per_run_in_the_log_answer(services: Services) -> None:
    # before: GET jobs/{id}/logs had no notes, and nothing told the log's reader (only jobs/queue/panel lines)
    _running(services, "j-slow", limit_s=120)
    _report(services, "j-slow", 40, 10)  # 10 % in 40 s: 400 s in all, over its 2m limit
    assert _notes(services, "j-slow") == [NOTE]
    _report(services, "j-slow", 52, 12)  # a later report of the same run: not said again
    other_server = ProgressService(services.ctx)  # another server on the store, with no memory of it
    _report(services, "j-slow", 64, 14, other_server)
    assert _notes(services, "j-slow") == [NOTE]
    records = services.store.list_events(job_id="j-slow", action=OVER_LIMIT)
    assert [(e.actor, e.user) for e in records] == [("scheduler", "ana")], records
    assert records[0].details["needs_s"] == 400 and records[0].details["time_limit_s"] == 120, records[0].details
    # a new run (requeued and started again) is told afresh, its own clock in its words
    with services.store.transaction() as tx:
        row = tx.get_job("j-slow")
        assert row is not None
        tx.update_job(replace(row, job=replace(row.job, started_at=T0 + timedelta(minutes=10))))
    _report(services, "j-slow", 640, 20)  # 20 % in 40 s: 200 s in all
    # the first run's note is of a run that is over: said in the past tense (newuser31 n12)
    assert _notes(services, "j-slow") == [
        "jupyter_sched: at 12:00:40 UTC its pace (10 % done after 40s) said the job needed ~6m40s in all; its 2m "
        "time limit was to stop it at 12:02 UTC",
        "jupyter_sched: at this pace (20 % done after 40s) the job needs ~3m20s in all; its 2m time limit stops it "
        "at 12:12 UTC"]


@pytest.mark.parametrize("limit_s, at_s, done", [
    (600, 40, 10),   # 400 s in all fits its 10m limit
    (None, 40, 10),  # no limit: nothing stops it
    (120, 20, 10),   # 20 s into the run: start-up, not pace (as the ETAs read it)
], ids=["a pace that fits", "no time limit", "too early to read a pace"])
def test_s22_words_n7_no_note_where_the_pace_says_nothing_of_the_limit(
        services: Services, limit_s: float | None, at_s: float, done: float) -> None:
    _running(services, "j-ok", limit_s=limit_s)
    _report(services, "j-ok", at_s, done)
    assert _notes(services, "j-ok") == []


def test_s22_words_n7_the_note_is_the_owners_and_its_words_are_bounded(services: Services) -> None:
    _running(services, "j-slow", limit_s=120)
    _report(services, "j-slow", 40, 10)
    with pytest.raises(AuthorizationError):  # another user's job's log (and its notes): refused (403, newuser29 n5)
        services.jobs.logs(BO, "j-slow", GetJobLogsRequest())
    # a crawl of 1 % in a day: the need is said in days, not an unbounded figure
    assert pace_needs_s(120, 0.01, 86_400) == pytest.approx(8_640_000)
    said = over_limit_note(fraction=0.01, ran_s=86_400, needs_s=8_640_000, limit_s=120, stops_at=T0, at=T0)
    assert said.startswith("jupyter_sched: at this pace (1 % done after 24h00m) the job needs ~100d in all") and len(said) < 160
    assert pace_needs_s(float("nan"), 0.1, 40) is None and pace_needs_s(True, 0.1, 40) is None


def test_newuser41_nu41_the_log_notes_the_cli_and_magics_print_say_clocks_in_the_readers_zone(
        services: Services) -> None:
    """nu41's left-over: ``jupyter-sched logs`` printed the answer's notes on stderr (``%schedule logs`` in brackets)
    as the server wrote them, "… stops it at 12:02 UTC", beside a log and ``jobs`` said in the reader's ``TZ``.
    Both now print :func:`log_note_said` of the real answer's note (its wire form): its clocks in that zone, of the
    day it was said."""
    from jupyter_sched.model.units import shown_in
    from jupyter_sched.wording.log_clocks import log_note_said

    _running(services, "j-slow41", limit_s=120)
    _report(services, "j-slow41", 40, 10)
    (wire,) = [n.model_dump(mode="json") for n in services.jobs.logs(ANA, "j-slow41", GetJobLogsRequest()).notes]
    assert wire["text"] == NOTE and "12:02 UTC" in NOTE, wire
    with shown_in("America/Los_Angeles"):
        said = log_note_said(wire, T0 + timedelta(minutes=5))
    assert said == NOTE.replace("12:02 UTC", "04:02 PST"), said  # T0 is 12:00 UTC, 04:00 PST
    assert log_note_said(wire) == NOTE  # no reader known (the server's own words): as written
