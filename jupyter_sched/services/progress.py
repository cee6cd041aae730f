"""Progress reports of running jobs (issue 16 item 4): ``POST jobs/{id}/progress``, shown in ``GET jobs/{id}``.

A training loop knows its steps done and to do; it reports them (``jupyter_sched.report_progress(done,
total)`` from inside the job, with its owner's token) and the ETAs of the jobs waiting on it read its
end from them (:mod:`jupyter_sched.backfill.progress`). A report is its owner's claim and nobody checks
it, so it is read for ETAs only, never for a scheduling decision: a job that lies gains nothing.

Who may report: the job's owner only (their job's own process runs with their identity). Another
user's job answers 404, as the jobs API answers for others' jobs, and the refusal is audited; an admin
reading it is still not its owner (403, audited). Only a running job reports (409 otherwise: a queued
job has no run to report on, an ended one no longer runs).

Reports that contradict themselves within one run (progress going backwards, a jump far past the run's
own rate: :func:`~jupyter_sched.store.progress.contradiction`) get that run ignored for ETAs — the
engine's read leaves it out, the answer and ``GET jobs/{id}`` say why in ``progress.ignored`` — and
are audited once per run (``progress_ignored``, in the reporter's name): one user's lies can no longer
flip other users' ETAs (red team 21, R2; :data:`~jupyter_sched.scheduling.eta.ETA_MOVE_MIN_INTERVAL_S`
bounds the ``eta_moved`` records any cause writes per waiting job).

Each stored report is published as a ``progress`` event (the owner's panel folds it into My work,
whose job list is re-read on events only).

A report whose pace says the job's time limit stops it unfinished (:func:`~jupyter_sched.wording.reported.pace_needs_s`)
gets its owner's log readers told once per run (new user 21, N7): one ``progress_over_limit`` record (actor
``scheduler``, the words and numbers in it), which ``GET jobs/{id}/logs`` carries as ``notes``
(:func:`log_notes`) and ``jupyter-sched logs`` prints on stderr. Not a line in ``output.log``: that
file is created and owned by the job's account (executors/wrapper.py), and the service writes into no
file another account controls; a Kubernetes job's log is its pod's, which nothing else can write.

Rate: one stored report per job per :data:`MIN_INTERVAL_S`; a report that comes sooner is answered
200 with ``stored: false`` (coalesced into the stored one) rather than 429: a loop that reports every
step then needs no backoff and never fails for reporting too often, and the store writes at most one
row per job per interval — but for the report that completes the run (``done == total``, once per
run: new user 21, N3), which is stored whenever it comes, so a job saving or evaluating after its last
step is shown 100 % done. The last stored report of each job is kept here too, so a coalesced report
costs no store write (the store checks the interval again: two servers on one store).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from ..admission import Caller
from ..errors import AuthorizationError, ConflictError
from ..model import Job, JobKind
from ..store import JobRecord, StoreTx
from ..store.codec import ts
from ..store.progress import StoredProgress, completes, contradiction, read_progress, record_report
from ..wording.reported import over_limit_note, over_limit_said, pace_needs_s, progress_text
from .context import Context
from .models import JobLogNote, JobProgress, ReportProgressRequest, ReportProgressResponse

__all__ = ["LOG_NOTES_MAX", "MIN_INTERVAL_S", "OVER_LIMIT", "ProgressService", "log_notes", "progress_event",
           "progress_view", "reports_of", "with_progress"]

MIN_INTERVAL_S = 10.0
"""Seconds between two stored progress reports of one job (sooner ones are coalesced)."""
_KEPT = 10_000
"""Jobs whose last stored report is kept in memory (the map is cleared beyond it)."""
OVER_LIMIT = "progress_over_limit"
"""The audit action of the once-per-run note that a job's pace outruns its time limit (module doc)."""
LOG_NOTES_MAX = 20
"""Most notes one log answer carries (the newest; one per run, so only a job requeued this often has more)."""


def log_notes(tx: StoreTx, job_id: str, *, ended: bool = False, now: datetime | None = None) -> list[JobLogNote]:
    """The scheduler's notes for ``job_id``'s log readers (``GET jobs/{id}/logs`` ``notes``), oldest
    first: its ``progress_over_limit`` records, at most :data:`LOG_NOTES_MAX` (the newest). One
    indexed read (events by job). No authorization: the caller decided already.

    A note of a run that is over — ``ended`` (the job is), or its stop time is before ``now`` (an earlier
    run of a requeued job) — reads in the past tense with when it was said (:func:`over_limit_said`,
    newuser31 n12); ``at`` stays the same, so a reader that showed it live does not show it twice."""
    found = tx.list_events(job_id=job_id, action=OVER_LIMIT, limit=LOG_NOTES_MAX, newest_first=True)
    return [JobLogNote(at=ts(e.at) or "", text=_said_then(e.message, e.at, e.details or {}, ended, now))
            for e in reversed(found)]


def _said_then(text: str, at: datetime, details: Mapping[str, Any], ended: bool, now: datetime | None) -> str:
    """``text`` (a note as said at ``at``), or its past-tense form once its run is over (:func:`log_notes`)."""
    try:
        stops = datetime.fromisoformat(str(details["stops_at"]).replace("Z", "+00:00"))
        numbers = {k: float(details[k]) for k in ("fraction", "ran_s", "needs_s", "time_limit_s")}
    except (KeyError, TypeError, ValueError):  # a record without its numbers keeps its words
        return text
    if not ended and (now is None or stops > now):
        return text
    return over_limit_said(fraction=numbers["fraction"], ran_s=numbers["ran_s"], needs_s=numbers["needs_s"],
                           limit_s=numbers["time_limit_s"], stops_at=stops, at=at, now=now)


def progress_view(stored: StoredProgress) -> JobProgress:
    """The wire shape of a job's stored progress (``Job.progress``)."""
    report = stored.report
    return JobProgress(fraction=round(min(max(report.fraction, 0.0), 1.0), 6), done=stored.done, total=stored.total,
                       at=ts(report.at) or "", run_started_at=ts(stored.run_started_at) or "", ran_s=round(report.ran_s, 3),
                       reports=report.fit.n, ignored=stored.ignored)


def with_progress(data: dict[str, Any], stored: StoredProgress | None) -> None:
    """Put ``stored``, the latest report of the job ``data`` (REST shape), in it as ``progress``
    with its words (``progress.text``: :func:`~jupyter_sched.wording.reported.progress_text` without
    a clock, "" when the report is not of the job's current run or it no longer runs). Nothing when
    the job never reported."""
    if stored is None:
        return
    view = progress_view(stored).model_dump(mode="json")
    view["text"] = progress_text({**data, "progress": view}, None)
    data["progress"] = view


def progress_event(job: Job, stored: StoredProgress) -> dict[str, Any]:
    """The ``progress`` event's data of a report just stored: the job (``id``, ``user`` — its owner
    and admins receive it, :func:`~jupyter_sched.services.visibility.event_for` — ``kind``,
    ``state``, when its run started) and its ``progress`` as the job answers carry it, words included
    (:func:`with_progress`). Published at most once per job per :data:`MIN_INTERVAL_S` (coalesced
    reports store nothing and say nothing)."""
    data: dict[str, Any] = {"id": job.id, "user": job.spec.user, "kind": job.spec.kind.value, "state": job.state.value,
                            "admitted_at": ts(job.admitted_at), "started_at": ts(job.started_at)}
    with_progress(data, stored)
    return data


def reports_of(tx: StoreTx, records: Iterable[JobRecord], *, user: str | None = None) -> dict[str, StoredProgress]:
    """The stored reports of the jobs among ``records`` that run (``user``'s only, when given): one
    read for a whole page of a list (:func:`~jupyter_sched.store.progress.read_progress`, by primary
    key), none when no job of it runs — a page of waiting or ended work, or of leases, costs nothing
    more (issue 17's status_bench)."""
    ids = [r.job.id for r in records if r.job.state.holds_gpus and not r.job.is_lease
           and (r.job.started_at or r.job.admitted_at) is not None and user in (None, r.job.spec.user)]
    return read_progress(tx, ids) if ids else {}


class ProgressService:
    """Stores running jobs' progress reports and reads them back (module doc).

    Args:
        ctx: the services' shared context.
        min_interval_s: seconds between two stored reports of one job.
    """

    def __init__(self, ctx: Context, *, min_interval_s: float = MIN_INTERVAL_S) -> None:
        self.ctx = ctx
        self.min_interval_s = min_interval_s
        self._last: dict[str, StoredProgress] = {}
        self._noted: set[tuple[str, datetime]] = set()
        """Runs (job id, start) whose over-limit note is written (:meth:`_note_over_limit`)."""

    def report(self, caller: Caller, job_id: str, request: ReportProgressRequest) -> ReportProgressResponse:
        """Store ``request.done`` of ``request.total`` steps as the running job's progress now.

        Raises:
            ValidationError: an empty job id (field ``job_id``).
            NotFoundError: no such job, or another user's (audited).
            AuthorizationError: an admin's report on another user's job (audited): only its owner reports.
            ConflictError: the job is not running (field ``job_id``), or is a lease.
        """
        what = "report progress of job"
        record = self.ctx.visible(caller, job_id, request=what)
        job = record.job
        if job.spec.user != caller.user:
            self.ctx.admission.refuse(caller, AuthorizationError(
                f"only its owner {job.spec.user!r} reports the progress of job {job_id[:80]!r}", field="job_id",
                hint="report_progress runs inside the job, as its owner"), request=what, job_id=job_id)
        if job.spec.kind is JobKind.LEASE:
            raise ConflictError(f"lease {job_id[:80]!r} has no steps to report; only jobs report progress",
                                field="job_id", hint="call report_progress inside a batch job")
        start = job.started_at or job.admitted_at
        if not job.state.holds_gpus or start is None:
            raise ConflictError(f"job {job_id[:80]!r} is {job.state.value}, not running: only a running job "
                                f"reports progress", field="job_id",
                                hint="report from inside the job while it runs")
        now = self.ctx.clock.now()
        kept = self._last.get(job_id)
        if kept is not None and kept.run_started_at == start and \
                (now - kept.report.at).total_seconds() < self.min_interval_s and \
                not completes(kept, request.done, request.total) and \
                (kept.ignored or not contradiction(kept, request.done, request.total, (now - start).total_seconds())):
            return self._answer(job_id, kept, stored=False)
        with self.ctx.store.transaction() as tx:
            stored, fresh, ignored = record_report(tx, job_id, run_started_at=start, at=now, done=request.done,
                                                   total=request.total, min_interval_s=self.min_interval_s)
            if fresh and not stored.ignored:  # a lying run's pace is not read for this either
                self._note_over_limit(tx, job, stored)
            if ignored:  # once per run: later reports of it are stored as ignored, not audited again
                tx.add_event(actor=caller.user, action="progress_ignored", job_id=job_id, user=job.spec.user,
                             message=f"the progress reports of job {job_id[:80]}'s run are not read for ETAs: {ignored}",
                             details={"run_started_at": ts(start), "done": request.done, "total": request.total,
                                      "reason": ignored})
        if len(self._last) >= _KEPT:
            self._last.clear()
        self._last[job_id] = stored
        if fresh:  # the panel's My work reads jobs on events only while its stream is up (session 21)
            self.ctx.publish({"type": "progress", "data": progress_event(job, stored)})
        return self._answer(job_id, stored, stored=fresh)

    def _note_over_limit(self, tx: StoreTx, job: Job, stored: StoredProgress) -> None:
        """Record, once per run of ``job``, that its pace (``stored``, the report just stored) says its
        time limit stops it unfinished (module doc; new user 21, N7). Once: a run already noted here
        is remembered (:attr:`_noted`), and one noted by another server on the store is found in its
        records (two servers may both write it in the same instant: bounded, never per report)."""
        report, start = stored.report, stored.run_started_at
        needs = pace_needs_s(job.spec.time_limit_s, report.fraction, report.ran_s)
        if needs is None or job.spec.time_limit_s is None or (job.id, start) in self._noted:
            return
        said = ts(start)
        if any((e.details or {}).get("run_started_at") == said
               for e in tx.list_events(job_id=job.id, action=OVER_LIMIT, limit=LOG_NOTES_MAX, newest_first=True)):
            self._remember(job.id, start)
            return
        limit = float(job.spec.time_limit_s)
        stops = start + timedelta(seconds=limit)
        text = over_limit_note(fraction=report.fraction, ran_s=report.ran_s, needs_s=needs, limit_s=limit,
                               stops_at=stops, at=report.at)
        tx.add_event(actor="scheduler", action=OVER_LIMIT, job_id=job.id, user=job.spec.user, message=text,
                     at=report.at, details={"run_started_at": said, "fraction": round(report.fraction, 6),
                                            "ran_s": round(report.ran_s, 3), "needs_s": round(min(needs, 1e12), 3),
                                            "time_limit_s": limit, "stops_at": ts(stops)})
        self._remember(job.id, start)

    def _remember(self, job_id: str, start: datetime) -> None:
        if len(self._noted) >= _KEPT:
            self._noted.clear()
        self._noted.add((job_id, start))

    def _answer(self, job_id: str, progress: StoredProgress, *, stored: bool) -> ReportProgressResponse:
        return ReportProgressResponse(job_id=job_id, stored=stored, min_interval_s=self.min_interval_s,
                                      progress=progress_view(progress))

    def of(self, job_id: str) -> JobProgress | None:
        """The stored progress of ``job_id`` in its wire shape (None: it never reported). No
        authorization: the caller decided already (``GET jobs/{id}``)."""
        with self.ctx.store.transaction(write=False) as tx:
            found = read_progress(tx, [job_id]).get(job_id)
        return None if found is None else progress_view(found)

