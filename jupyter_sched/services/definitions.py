"""``DefinitionsService``: job definitions (create, list, read, edit, pause, resume, delete, run
now, schedule preview), their firings on the leading engine, and the executed notebooks of runs.

Every method takes the request's :class:`~jupyter_sched.admission.Caller` (never looked up again)
and a typed request (:mod:`.models.definitions`), and returns a typed response. Users see and
change only their own definitions (another user's answers 404, and that refusal is audited
through the admission step); admins see and change all. A definition's runs are ordinary jobs
prepared by :meth:`JobsService.prepare <.jobs.JobsService.prepare>` for the definition's owner:
the same validation, team and priority rules, quotas and "can this ever fit" check as
``POST jobs`` — checked when the definition is saved (refused then, not at 12:00) and again at
each firing (a firing that can no longer submit gets one *rejected* run saying why:
:mod:`jupyter_sched.definitions.firing`).

Who the owner is when no request is being served (a firing; an admin editing or running
another user's definition) is :attr:`DefinitionsService.owner_caller`: by default the admission
step's own resolution (the quota set's ``user_teams``); in hub mode the central service sets it to
a hub lookup (:meth:`~jupyter_sched.hub.central.HubSchedApp.owner_caller`), so a run is charged to
the owner's hub groups with their ceilings exactly as ``POST jobs`` from them would be — never to
a fallback team. If the hub does not answer, the firing is retried at the next tick (a
:class:`~jupyter_sched.errors.BusyError`), not turned into a rejected run.
"""

from __future__ import annotations

import builtins
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from ..admission import Caller
from ..definitions.firing import DefinitionFiring, FiringReport, link_run, run_name
from ..definitions.model import DefinitionRun, JobDefinition, MissedPolicy, OverlapPolicy, RunTrigger
from ..definitions.parameters import validate_parameters
from ..definitions.schedule import next_firing, parse_schedule
from ..definitions.validation import definition_fields, notebook_args_text, run_body
from ..engine.faults import FaultLog
from ..errors import BusyError, ConflictError, NotFoundError, QuotaError, SchedError, ValidationError
from ..executors.jobdirs import JobDirs
from ..executors.safeopen import open_untrusted
from ..model import Job, JobKind, JobSpec, JobState
from ..model.codec import job_to_dict
from ..model.units import to_iso, zone_label
from ..model.validation import asked_models, kept_spellings, models_absent, spec_from_request
from ..store import JobRecord
from ..wording.definitions import no_model_text, trigger_text
from ..wording.executed import executed_copy_name
from .cancelling import cancel_jobs
from .context import Context
from .executed_copy import copy_without_overwrite
from .jobs import JobsService, decode_cursor, encode_cursor, page_of
from .models import CancelJobsRequest, SubmitJobRequest, parse
from .models import Job as JobView
from .models.cancel import MAX_CANCEL_IDS
from .models.definitions import (
    CreateDefinitionRequest,
    Definition,
    DefinitionDetail,
    DefinitionsPage,
    DeleteDefinitionRequest,
    DeleteDefinitionResponse,
    GetDefinitionRequest,
    ListDefinitionRunsRequest,
    ListDefinitionRunsResponse,
    ListDefinitionsRequest,
    ListDefinitionsResponse,
    OpenExecutedNotebookResponse,
    PreviewScheduleRequest,
    PreviewScheduleResponse,
    RunDefinitionRequest,
    UpdateDefinitionRequest,
    WaitingRun,
)
from .models.definitions import DefinitionRun as DefinitionRunView

__all__ = ["DefinitionSettings", "DefinitionsService", "ExecutedNotebook", "definition_settings"]

log = logging.getLogger(__name__)

_RETRIES = 5
_CHANGING = "changing job definitions"
"""What a definition change refused at the submit rate says the caller was doing (red team 20, R4)."""
_WAITING_LISTED = 50
"""Most waiting runs a delete's answer lists (``waiting_total`` counts them all)."""
_SWEEP_EVERY_S = 3600.0
_SWEEP_FAULTS = FaultLog(log)
"""The executed-notebook sweep's faults, each said once an hour at most (red team 25, R4)."""
_FIRING_FAULTS = FaultLog(log)
"""The firing passes' faults (their thread's), each said once an hour at most."""
_UPCOMING = 5
_READ_BATCH = 50
"""Definitions a list reads from the store at a time (each row may hold ~250 KB: red28 R6)."""
MAX_NOTEBOOK_BYTES = 64 << 20
"""Largest executed notebook the API serves (bounded memory per request)."""


@dataclass(frozen=True, slots=True)
class DefinitionSettings:
    """The admin's definition settings (``c.SchedApp.definition_*``, ``executed_notebook*``).

    Attributes:
        min_interval_s: shortest time between two firings a schedule may ask for, seconds.
        misfire_grace_s: seconds a firing may be late and still run as scheduled.
        retention_days: days an executed notebook is kept after its run ended (0 = forever).
        open_dir: folder under the server's root where "open" copies an executed notebook.
        limit_per_user: most definitions one user may keep (0 = no limit).
        max_firings_per_user_hour: most scheduled firings of one user's definitions in any hour;
            a firing over it is skipped (0 = no limit).
    """

    min_interval_s: float = 60.0
    misfire_grace_s: float = 60.0
    retention_days: float = 30.0
    open_dir: str = "scheduled-runs"
    limit_per_user: int = 100
    max_firings_per_user_hour: int = 60


def definition_settings(settings: Mapping[str, Any]) -> DefinitionSettings:
    """From the extension's plain settings (keys ``definition_min_interval_s``,
    ``definition_misfire_grace_s``, ``executed_notebook_retention_days``, ``executed_notebooks_dir``,
    ``definition_limit_per_user``, ``definition_max_firings_per_user_hour``)."""
    default = DefinitionSettings()
    return DefinitionSettings(
        min_interval_s=float(settings.get("definition_min_interval_s", default.min_interval_s)),
        misfire_grace_s=float(settings.get("definition_misfire_grace_s", default.misfire_grace_s)),
        retention_days=float(settings.get("executed_notebook_retention_days", default.retention_days)),
        open_dir=str(settings.get("executed_notebooks_dir") or default.open_dir),
        limit_per_user=int(settings.get("definition_limit_per_user", default.limit_per_user)),
        max_firings_per_user_hour=int(settings.get("definition_max_firings_per_user_hour",
                                                   default.max_firings_per_user_hour)))


@dataclass(frozen=True, slots=True)
class ExecutedNotebook:
    """A run's executed notebook opened for the API, never read whole (red team 24, R5).

    ``file`` is the open file (binary, at offset 0; whoever takes this closes it), ``size`` its
    length in bytes when opened (at most :data:`MAX_NOTEBOOK_BYTES`; the answer sends no more than
    that, read in :data:`NOTEBOOK_CHUNK_BYTES` pieces), ``filename`` the download name.
    """

    file: BinaryIO
    size: int
    filename: str

    def chunks(self) -> Generator[bytes, None, None]:
        """The file's bytes in pieces of at most :data:`NOTEBOOK_CHUNK_BYTES`, ``size`` bytes in all
        (fewer when the file shrank since it was opened); closes the file at the end."""
        left = self.size
        try:
            while left > 0 and (chunk := self.file.read(min(NOTEBOOK_CHUNK_BYTES, left))):
                left -= len(chunk)
                yield chunk
        finally:
            self.file.close()


NOTEBOOK_CHUNK_BYTES = 64 << 10
"""The bytes of an executed notebook read and written at a time (red team 24, R5)."""


_RUN_FIELDS = frozenset({"name", "notebook", "script"})
"""Fields of a run's body that say which run it is: never dropped to read the rest (:meth:`_OwnerRuns.asked`)."""


class _OwnerRuns:
    """The firing loop's jobs side (:class:`~jupyter_sched.definitions.firing.RunJobs`): a
    scheduled run is prepared for the definition's owner, who is not the caller of any request."""

    def __init__(self, ctx: Context, jobs: JobsService) -> None:
        self.ctx = ctx
        self.jobs = jobs
        self.owner_caller: Callable[[str], Caller] = lambda user: ctx.admission.caller(user, admin=False)

    def owner(self, user: str) -> Caller:
        return self.owner_caller(user)

    def check(self, body: Mapping[str, Any], *, user: str) -> JobSpec:
        return self.prepare(self.owner(user), body, what="run a definition").spec  # no pending cap: a check

    def build(self, body: Mapping[str, Any], *, user: str) -> Job:
        caller = self.owner(user)
        job = self.prepare(caller, body, what="run a definition")
        # its notebook or script may have changed since the create: a FIFO or a file past the bound is a rejected
        # run saying so, before the job waits for or takes a GPU (red39 R4)
        self.jobs.refuse_unrunnable_files(job.spec)
        try:
            self.limit_pending(caller, request="run a definition")
        except BusyError as err:  # a rejected run saying why, not retried at every tick (a BusyError is):
            # at most definition_max_firings_per_user_hour of them an hour (new user 17, N11)
            raise SchedError(f"{err.message} — {err.hint}", field=err.field, details=err.details) from None
        return job

    def limit_pending(self, caller: Caller, *, request: str) -> None:
        """Refuse a run of ``caller``'s at ``max_pending_jobs_per_user`` (audited).

        Raises:
            BusyError: see :meth:`~jupyter_sched.admission.Admission.limit_pending`.
        """
        if self.ctx.admission.policy.max_pending_per_user > 0:
            pending = self.ctx.store.count_jobs(user=caller.user, states=[JobState.PENDING])
            self.ctx.admission.limit_pending(caller, pending, request=request)

    def prepare(self, caller: Caller, body: Mapping[str, Any], *, what: str) -> Job:
        request = parse(SubmitJobRequest, dict(body))
        return self.jobs.prepare(caller, request, kind=JobKind.TRAINING, what=what)

    def rejected(self, body: Mapping[str, Any], *, user: str, error: SchedError) -> Job:
        now = self.ctx.clock.now()
        return Job(id=self.ctx.ids("j"), spec=self.asked(body, user=user), state=JobState.REJECTED, submitted_at=now,
                   finished_at=now, message=f"could not submit this run: {error.message}")

    def asked(self, body: Mapping[str, Any], *, user: str) -> JobSpec:
        """The job a refused firing asked for (``body``: its run's submission body), so its rejected
        run shows what was refused — priority, GPUs, model, workers, time limit — whatever refused it
        (red team 22, R1: a low-priority 0-GPU definition's run refused for being low read "priority
        normal, gpus 1", the defaults). Read by the jobs' own parser with no admission check (which
        is what refused it) and no inventory (a GPU model gone is still what it asked for); a field
        that no longer parses is left out and the rest kept, and a body nothing of which parses
        gives the run's name, team and notebook or script alone."""
        tried = dict(body)
        default_team = self.ctx.admission.policy.default_team
        for _ in range(len(body) + 1):
            try:
                return spec_from_request(tried, user=user, default_team=default_team, profiles=self.ctx.profiles,
                                         default_kind=JobKind.TRAINING)
            except ValidationError as err:  # that field falls back to its default, the others stay
                key = re.split(r"[.\[]", err.field or "", maxsplit=1)[0]
                if key not in tried or key in _RUN_FIELDS:
                    break
                del tried[key]
        return JobSpec(name=str(body.get("name") or "run")[:200], user=user, team=str(body.get("team") or default_team),
                       notebook=body.get("notebook"), script=body.get("script"))

    def submitted(self, jobs: list[Job]) -> None:
        for job in jobs:  # as any submit: decided at once when it fits (issue 17), the live ledger kept for
            if job.state is JobState.PENDING:  # everyone else's submits while a burst fires (s37-defs)
                self.ctx.kick("submit", job.id)  # its row read when decided (the firing wrote it)
        simulated = self.ctx.simulated()
        for job in jobs:
            self.ctx.publish({"type": "job", "data": job_to_dict(job, simulated=simulated)})


class DefinitionsService:
    """Job definitions (see module docstring).

    Args:
        ctx: the shared context (store, clock, ids, admission, executor, event bus).
        jobs: the jobs service (prepares each run like a submission).
        settings: the admin's definition settings.
    """

    def __init__(self, ctx: Context, jobs: JobsService, settings: DefinitionSettings | None = None) -> None:
        self.ctx = ctx
        self.settings = settings or DefinitionSettings()
        self._runs = _OwnerRuns(ctx, jobs)
        self.firing = DefinitionFiring(ctx.store, self._runs, now=ctx.clock.now,
                                       misfire_grace_s=self.settings.misfire_grace_s, publish=ctx.publish,
                                       max_per_user_hour=self.settings.max_firings_per_user_hour)
        self._last_sweep: float | None = None
        self._sweeping: threading.Thread | None = None
        """The sweep in progress (its own thread), if any."""
        self._read_again_at: datetime | None = None  # clock time the next firing pass reads the store
        self._written = True  # a definition was written here since the last pass
        self.firing_thread: threading.Thread | None = None
        """The firing pass in progress or last run (its own thread, :meth:`on_leader_tick`), if any."""
        self._stopping = False

    recheck_s = 5.0
    """Longest clock seconds between two firing passes while nothing is due and no definition was
    written through this service: the bound on noticing one written by another server sharing the
    store (a firing is late by at most this much; ``definition_misfire_grace_s`` is 60 s)."""

    @property
    def owner_caller(self) -> Callable[[str], Caller]:
        """``user -> Caller`` for a definition's owner outside their own request (see module
        docstring). Raises what the admission step raises; ``BusyError`` when it cannot tell now."""
        return self._runs.owner_caller

    @owner_caller.setter
    def owner_caller(self, resolve: Callable[[str], Caller]) -> None:
        self._runs.owner_caller = resolve

    # ---- engine side -------------------------------------------------------------------------
    def fire_due(self) -> FiringReport:
        """Create the runs of every due firing (one run per scheduled instant; see
        :mod:`jupyter_sched.definitions.firing`)."""
        return self.firing.fire_due()

    def on_leader_tick(self) -> None:
        """The leading engine's hook: start a firing pass on its own thread when one is due; once an
        hour, start a sweep of old executed notebooks in its own thread (never on the engine's: red
        team 19, R6). Returns at once: neither ever holds the engine's tick.

        A pass builds each due firing's run — reads and checks its notebook, asks the hub who the
        owner is, admits the job: 43-128 ms a firing, 6-13 s for one user's 100 minutely
        definitions, in which nothing was scheduled for anyone when it ran on the engine's thread
        (red36). On :attr:`firing_thread` the engine keeps deciding; the runs' jobs reach it as
        submits do (:meth:`_OwnerRuns.submitted`). One pass at a time: a tick while one runs starts
        none.

        A pass reads every active definition (a store transaction, ~1 ms), and the engine ticks
        once per submit: a pass starts only when a firing is due, a definition was written here,
        or :attr:`recheck_s` passed (issue 17: a fifth of a submit's tick went to it)."""
        now = self.ctx.clock.now()
        if not self.firing_running and (self._written or self._read_again_at is None or now >= self._read_again_at):
            self._written = False  # before the read: a write during the pass is read by the next one
            thread = threading.Thread(target=self._firing_pass, args=(now,), name="definition-firing", daemon=True)
            try:
                thread.start()
            except RuntimeError as exc:  # no thread to be had now: the next tick tries again
                self._written = True
                _FIRING_FAULTS.warn("job definitions: could not start a firing pass", exc)
            else:
                self.firing_thread = thread
        if (self._last_sweep is None or time.monotonic() - self._last_sweep >= _SWEEP_EVERY_S) and not (
                self._sweeping is not None and self._sweeping.is_alive()):
            self._last_sweep = time.monotonic()
            # off the engine thread: it walks folders users can plant (red team 19, R6: 20,000 of them
            # froze admissions, exits and preemption for 60 s); one sweep at a time
            self._sweeping = threading.Thread(target=self._sweep_quietly, name="executed-notebook-sweep", daemon=True)
            self._sweeping.start()

    @property
    def firing_running(self) -> bool:
        """Whether a firing pass runs on :attr:`firing_thread` now."""
        return self.firing_thread is not None and self.firing_thread.is_alive()

    def wait_firing(self, timeout_s: float | None = None) -> bool:
        """Wait for the running firing pass to end (tests; a shutdown); whether none runs now."""
        thread = self.firing_thread
        if thread is not None:
            thread.join(timeout_s)
        return not self.firing_running

    def stop_firing(self, timeout_s: float = 10.0) -> None:
        """Shutting down: the running pass ends after its current firing (each firing is one
        transaction: done or not at all); waited for at most ``timeout_s`` seconds."""
        self._stopping = True
        self.wait_firing(timeout_s)

    def _firing_pass(self, started: datetime) -> None:
        """One firing pass, on :attr:`firing_thread`: stops between two firings once the engine's lease
        term changed since the pass started (this server no longer leads: the next leader fires the
        rest) or the server shuts down; never raises (a failure is said once per cause)."""
        term = getattr(self.ctx.engine, "term", None)  # the lease term this pass was started under

        def stop() -> bool:
            return self._stopping or getattr(self.ctx.engine, "term", None) != term

        recheck = started + timedelta(seconds=self.recheck_s)
        try:
            report = self.firing.fire_due(stop=stop)
        except Exception as exc:  # the store failed: the next pass is at the recheck, as after a quiet pass
            self._read_again_at = recheck
            _FIRING_FAULTS.warn("job definitions: a firing pass failed; the next one reads them again", exc)
            return
        self._read_again_at = min(recheck, report.next_due) if report.next_due is not None else recheck
        if report.created or report.conflicts:
            self._written = True  # cursors moved: plan from the fresh rows at the next tick

    def _sweep_quietly(self) -> None:
        """:meth:`sweep_executed_notebooks` in its worker thread: a failure is logged, never raised."""
        try:
            self.sweep_executed_notebooks()
        except Exception:
            log.exception("the executed-notebook sweep failed")

    # ---- reads -------------------------------------------------------------------------------
    def _visible(self, caller: Caller, definition_id: str, *, request: str) -> JobDefinition:
        """The definition if ``caller`` may see it (their own; any for an admin).

        Raises:
            ValidationError: an empty id.
            NotFoundError: none, or another user's (that refusal is audited).
        """
        from ..store.definitions import get_definition

        if not isinstance(definition_id, str) or not definition_id:
            raise ValidationError("definition id must be a non-empty string", field="definition_id",
                                  hint="e.g. d-01hf3k2m9-x7q4za")
        try:
            with self.ctx.store.transaction(write=False) as tx:
                definition: JobDefinition | None = get_definition(tx, definition_id)
        except NotFoundError:
            definition = None
        hidden = NotFoundError(f"no definition {definition_id[:80]!r} visible to you", field="definition_id",
                               hint="list your definitions to see their ids")
        if definition is None:
            raise hidden
        if not caller.admin and definition.user != caller.user:
            self.ctx.admission.refuse(caller, hidden, request=request)
        return definition

    def list(self, caller: Caller, request: ListDefinitionsRequest) -> DefinitionsPage:
        """One page of the caller's definitions (admins: another ``user``'s, or ``all``: everyone's),
        newest first, each with its last run; ``next_cursor`` continues after it (None: last page).

        A page holds at most ``request.limit`` definitions and ends early once its rows pass
        :data:`~.models.base.PAGE_BYTES` (at least one row a page: :func:`~.jobs.page_of`): the rows are
        read :data:`_READ_BATCH` at a time, the newest run of each by one query
        (:func:`~..store.definitions.latest_runs`) and their jobs by one more — red28 R6: 1,570 definitions of one user made each list 272 MiB and 120 s.

        Raises:
            AuthorizationError: a non-admin asked for another user's or everyone's (audited).
            ValidationError: a cursor this server did not write (field ``cursor``).
        """
        from ..store.definitions import latest_runs, list_definitions

        if request.all or (request.user is not None and request.user != caller.user):
            self.ctx.admission.require_admin(caller, "listing other users' definitions",
                                             field="all" if request.all else "user",
                                             hint="leave out user and all to list your own")
        user = request.user if request.user is not None else (None if request.all else caller.user)
        after = decode_cursor(request.cursor) if request.cursor else None
        with self.ctx.store.transaction(write=False) as tx:
            page, more = page_of(lambda limit, after_row: list_definitions(
                tx, user=user, name=request.name, after=after_row, limit=limit), request.limit, after,
                size=_row_bytes, key=lambda d: (_created(d), d.id), batch=_READ_BATCH)
            latest = latest_runs(tx, [d.id for d in page])
            records = tx.get_jobs([run.job_id for run in latest.values()])
        now, known = self.ctx.clock.now(), self._models_here()
        out = []
        for d in page:
            last = latest.get(d.id)
            last_run = self._run(caller, last, d, records.get(last.job_id)) if last else None
            out.append(Definition.model_validate({**_definition_dict(d, now), "last_run": last_run,
                                                  **_model_note(d, known)}))
        next_cursor = encode_cursor(to_iso(_created(page[-1])) or "", page[-1].id) if more else None
        return DefinitionsPage(definitions=ListDefinitionsResponse(out), next_cursor=next_cursor)

    def _models_here(self) -> frozenset[str] | None:
        """The GPU models of the inventory now (as a submit checks ``model``); None when it cannot be read."""
        try:
            return frozenset(self.ctx.inventory().models())
        except SchedError:
            return None

    def get(self, caller: Caller, definition_id: str, request: GetDefinitionRequest) -> DefinitionDetail:
        """One definition with its newest ``request.runs`` runs and its next firings.

        Raises:
            NotFoundError: none, or another user's (audited).
        """
        d = self._visible(caller, definition_id, request="read definition")
        runs = self._list_runs(caller, d, request.runs)
        upcoming = self._upcoming(d)
        return DefinitionDetail.model_validate({**_definition_dict(d, self.ctx.clock.now()), "runs": runs,
                                                **_model_note(d, self._models_here()),
                                                "upcoming": [to_iso(at) or "" for at in upcoming],
                                                "upcoming_zones": [zone_label(at, d.timezone) for at in upcoming]})

    def runs(self, caller: Caller, definition_id: str, request: ListDefinitionRunsRequest) -> ListDefinitionRunsResponse:
        """Runs of one definition, newest first.

        Raises:
            NotFoundError: none, or another user's (audited).
        """
        d = self._visible(caller, definition_id, request="list definition runs")
        return ListDefinitionRunsResponse(self._list_runs(caller, d, request.limit))

    def _list_runs(self, caller: Caller, d: JobDefinition, limit: int) -> builtins.list[DefinitionRunView]:
        from ..store.definitions import list_runs

        with self.ctx.store.transaction(write=False) as tx:
            found = list_runs(tx, [d.id], limit=limit)
        return [self._run(caller, run, d) for run in found]

    def _run(self, caller: Caller, run: DefinitionRun, d: JobDefinition, record: JobRecord | None = None,
             ) -> DefinitionRunView:
        """One run on the wire as ``caller`` reads it (a waiting run's reason says other users' private
        state to those who may see it: red team 22, R2); ``d``: its definition (``scheduled_zone`` is named
        in its time zone); ``record``: its job row when already read (else read here). A script run that
        failed on an option its parameters gave says which and how to fix the definition (newuser42 n4)."""
        zone = d.timezone
        try:
            stored = record if record is not None else self.ctx.store.get_job(run.job_id)
            job: JobView | None = JobView.model_validate(
                job_to_dict(self.ctx.live(stored.job), simulated=self.ctx.simulated()),
                context={"viewer": caller.user, "admin": caller.admin})
        except NotFoundError:
            job = None
        if job is not None and d.script and job.state == "failed" and job.message and run.parameters:
            from ..definitions.script_options import unknown_option_hint

            if hint := unknown_option_hint(job.message, run.parameters, d.name):
                job = job.model_copy(update={"message": f"{job.message} — {hint}"})
        return DefinitionRunView(definition_id=run.definition_id, job_id=run.job_id, trigger=run.trigger.value,
                                 trigger_text=trigger_text({"trigger": run.trigger.value, "catch_up": run.catch_up}),
                                 scheduled_for=to_iso(run.scheduled_for) or "",
                                 scheduled_zone=zone_label(run.scheduled_for, zone), parameters=dict(run.parameters),
                                 created_at=to_iso(run.created_at), catch_up=run.catch_up,
                                 late_s=None if run.late_s is None else round(run.late_s, 3), missed=run.missed,
                                 missed_from=to_iso(run.missed_from), missed_to=to_iso(run.missed_to), job=job)

    def _upcoming(self, d: JobDefinition) -> builtins.list[datetime]:
        if not d.schedule or d.paused:
            return []
        schedule = parse_schedule(d.schedule, d.timezone, min_interval_s=0)
        at = max(self.ctx.clock.now(), d.cursor or self.ctx.clock.now())
        out: builtins.list[datetime] = []
        for _ in range(_UPCOMING):
            nxt = next_firing(schedule, at)
            if nxt is None:
                break
            out.append(nxt)
            at = nxt
        return out

    def preview(self, caller: Caller, request: PreviewScheduleRequest) -> PreviewScheduleResponse:
        """The next five firings of a schedule and the schedule in words; nothing is saved.

        Raises:
            ValidationError: a bad schedule or time zone, or one firing more often than the admin allows.
        """
        body = {"schedule": request.schedule, "timezone": request.timezone}
        schedule = definition_fields(body, partial=True, min_interval_s=self.settings.min_interval_s)["schedule"]
        at, out = self.ctx.clock.now(), []
        for _ in range(_UPCOMING):
            nxt = next_firing(schedule, at)
            if nxt is None:
                break
            out.append(nxt)
            at = nxt
        return PreviewScheduleResponse(schedule=schedule.expression, timezone=schedule.timezone,
                                       description=schedule.description, next=[to_iso(t) or "" for t in out],
                                       next_zones=[zone_label(t, schedule.timezone) for t in out])

    # ---- writes ------------------------------------------------------------------------------
    def create(self, caller: Caller, request: CreateDefinitionRequest) -> Definition:
        """Save a definition owned by the caller; its schedule fires from now on.

        Raises:
            ValidationError: a bad field (named), including the run's job fields.
            AuthorizationError / QuotaError / UnschedulableError: a run could never be submitted
                by the caller (the admission step's refusals, audited as ``create definition``).
            QuotaError: the caller already keeps ``limit_per_user`` definitions (audited): every
                definition is work the firing loop does and runs in the queue, so one user cannot
                make thousands (red-team finding 2).
            BusyError: the caller changes definitions and submits faster than
                ``max_submits_per_user_minute`` (one bucket; audited; red team 20, R4).
        """
        from ..store.definitions import count_definitions, insert_definition

        self.ctx.admission.limit_rate(caller, request="create definition", doing=_CHANGING)  # red team 20, R4
        fields = definition_fields(request.body(), partial=False, min_interval_s=self.settings.min_interval_s)
        now = self.ctx.clock.now()
        definition = JobDefinition(
            id=self.ctx.ids("d"), name=fields["name"], user=caller.user, team="", notebook=fields.get("notebook"),
            script=fields.get("script"), args=fields.get("args", ()), parameters=fields.get("parameters", {}),
            job=fields["job"], schedule=fields["schedule"].expression if fields["schedule"] else None,
            timezone=fields["timezone"], paused=fields.get("paused", False),
            missed=fields.get("missed", MissedPolicy.RUN_ONCE), created_at=now, updated_at=now, cursor=now,
            compute_type=fields.get("compute_type"), overlap=fields.get("overlap", OverlapPolicy.SKIP_WAITING))
        spec = self._check_runs(caller, definition, what="create definition")
        definition = replace(definition, team=spec.team)
        notes = self._refuse_unusable(caller, definition, spec)
        limit = self.settings.limit_per_user
        if limit > 0:  # a bound, not an exact count: two creates at the same instant may both pass
            with self.ctx.store.transaction(write=False) as tx:
                kept = count_definitions(tx, user=caller.user)  # a count, no row read (red28 R6)
            if kept >= limit:
                self.ctx.admission.refuse(caller, QuotaError(
                    f"{caller.user} already keeps {limit} job definition{'' if limit == 1 else 's'}, the most this "
                    "server allows per user",  # the count is at fault, no field of the request (newuser29 n11)
                    hint="delete definitions you no longer need, or ask an admin to raise "
                         "c.SchedApp.definition_limit_per_user"), request="create definition")
        with self.ctx.store.transaction(now=now) as tx:
            stored = insert_definition(tx, definition)
            tx.add_event(actor=caller.user, action="definition_created", job_id=None, user=caller.user,
                         message=f"definition {stored.name!r} created ({stored.schedule or 'no schedule'}, "
                                 f"{stored.timezone})", details={"definition_id": stored.id})
        return self._noted(self._changed(stored), spec, notes)

    def _refuse_unusable(self, caller: Caller, d: JobDefinition, spec: JobSpec, *,
                         saved: bool = True) -> builtins.list[str]:
        """A definition whose runs could only fail, or which its owner could not name, is refused
        when saved (new user 5 #6: a mistyped notebook was 201 and found out at the first firing;
        a second "d1" made ``d1`` ambiguous for the CLI):

        Returns:
            The notes on its notebook as read (:meth:`JobsService.refuse_missing_paths`: a parameter its
            parameters cell does not set, newuser39 n3; a parameter its script declares no option for, and with
            ``saved`` that its script's options cannot be read: newuser42 n4), for the answer's ``warnings``.

        Raises:
            ValidationError: its notebook, script or working_dir does not exist where its runs
                would start (embedded servers, as ``POST jobs``).
            UnschedulableError: ``cpu`` or ``memory`` above this host's, where local runs run (as ``POST jobs``).
            ConflictError: the owner keeps another definition of that name (field ``name``).
        """
        from ..store.definitions import list_definitions

        notes = self._runs.jobs.refuse_missing_paths(spec, carried=False, saved=saved)  # no notebook_json (N8)
        # cpu or memory above this host, where its runs would run: refused when saved, as a submit is, not at each
        # firing (session 40: {"cpu": 99} / {"memory": "64TiB"} were 201, and every run refused)
        self._runs.jobs.refuse_memory_over_host(spec, d.job, self.ctx.inventory())
        with self.ctx.store.transaction(write=False) as tx:
            same = [o for o in list_definitions(tx, user=d.user, name=d.name, limit=2) if o.id != d.id]
        if same:
            whose = "you keep" if caller.user == d.user else f"{d.user} keeps"
            raise ConflictError(f"{whose} a definition named {d.name[:100]!r} already ({same[0].id})", field="name",
                                hint=f"choose another name, or change that one: PATCH definitions/{same[0].id}")
        return notes

    def _check_runs(self, caller: Caller, d: JobDefinition, *, what: str) -> JobSpec:
        """A run of ``d`` must be submittable by its owner now; the spec it would get (its team
        is the definition's). The caller's own admission when they own it; an admin editing
        another user's definition checks it as that owner. ``what``: the request its refusals are
        audited as (``create definition``, ``edit definition``: the web layer's names, new user 15, N8)."""
        owner = caller if caller.user == d.user else self._runs.owner(d.user)
        body = run_body(name=d.name, notebook=d.notebook, script=d.script, args=d.args, job=d.job,
                        parameters=d.parameters, team=d.team)
        return self._runs.prepare(owner, body, what=what).spec

    def update(self, caller: Caller, definition_id: str, request: UpdateDefinitionRequest) -> Definition:
        """Change the fields given. A new schedule or time zone, or a resume, fires only from now
        on (firings from before are not replayed).

        Raises:
            ValidationError, NotFoundError (audited for another user's), ConflictError (it kept
            changing), BusyError (the submit rate, as :meth:`create`), and the run checks of :meth:`create`.
        """
        from ..store.definitions import update_definition

        body = request.body()
        self.ctx.admission.limit_rate(caller, request="edit definition", doing=_CHANGING)  # red team 20, R4
        for _ in range(_RETRIES):
            current = self._visible(caller, definition_id, request="edit definition")
            fields = definition_fields(body, partial=True, min_interval_s=self.settings.min_interval_s,
                                       current_timezone=current.timezone, current_schedule=current.schedule,
                                       current_notebook=current.notebook, current_args=current.args)
            now = self.ctx.clock.now()
            changes: dict[str, Any] = {k: v for k, v in fields.items() if k not in ("schedule", "job")}
            if "schedule" in fields:
                changes["schedule"] = fields["schedule"].expression if fields["schedule"] else None
            if "job" in fields:
                changes["job"] = {**kept_spellings(current.job, fields["job"]), **fields["job"]}
            restart = (changes.get("schedule", current.schedule) != current.schedule
                       or changes.get("timezone", current.timezone) != current.timezone
                       or (current.paused and changes.get("paused") is False))
            new = replace(current, **changes, updated_at=now,
                          cursor=max(now, current.cursor or now) if restart else current.cursor)
            spec: JobSpec | None = None
            notes: builtins.list[str] = []
            if not _only_a_pause(fields):
                # a pause changes nothing a run does: it never runs the owner's admission, so an admin
                # (or offboarding) pauses a removed owner's definition (red team 17, R5)
                spec = self._check_runs(caller, replace(new, team=""), what="edit definition")
                new = replace(new, team=spec.team)
                # what is kept unchanged was checked before; new parameters are read against the notebook (newuser39 n3)
                if {"name", "notebook", "script", "job", "parameters"} & set(fields):
                    # "its options cannot be read" said once: when its script or parameters change (newuser42 n4)
                    notes = self._refuse_unusable(caller, new, spec, saved=bool({"script", "parameters"} & set(fields)))
            # the fields whose value changed: a new schedule alone was audited "schedule, timezone" because
            # the schedule is checked in its (unchanged) time zone (new user 6, F7 remainder)
            changed = [k for k in sorted(fields) if getattr(new, k, None) != getattr(current, k, None)]
            try:
                with self.ctx.store.transaction(now=now) as tx:
                    stored = update_definition(tx, new)
                    tx.add_event(actor=caller.user, action="definition_updated", job_id=None, user=current.user,
                                 message=f"definition {current.name!r} updated: " + (", ".join(
                                     # a resume said "paused" like the pause itself (new user 6, F7)
                                     ("paused" if fields[k] else "resumed") if k == "paused" else k
                                     for k in changed) or "nothing changed"),
                                 details={"definition_id": current.id, "fields": changed})
            except ConflictError:
                continue  # the firing loop moved its cursor meanwhile: re-read and apply again
            return self._noted(self._changed(stored), spec if "job" in fields else None, notes)
        raise ConflictError(f"definition {definition_id} kept changing; not updated", field="definition_id",
                            hint="retry")

    def pause(self, caller: Caller, definition_id: str) -> Definition:
        """Stop firing (runs already created go on). The owner's admission is not run: their own,
        an admin or offboarding pauses it even when the owner is no longer a user (red team 17, R5)."""
        return self.update(caller, definition_id, UpdateDefinitionRequest(paused=True))

    def resume(self, caller: Caller, definition_id: str) -> Definition:
        """Fire again from now on (firings while paused are not replayed)."""
        return self.update(caller, definition_id, UpdateDefinitionRequest(paused=False))

    def delete(self, caller: Caller, definition_id: str,
               request: DeleteDefinitionRequest | None = None) -> DeleteDefinitionResponse:
        """Delete a definition: it never fires again; its runs (jobs) stay, running ones go on.

        Its runs still waiting to start are listed in the answer (``waiting_runs``) and, with
        ``cancel_runs``, cancelled (new user 8, N3: a queued firing ran two minutes after the
        delete, which said only "its runs stay in the job history"). Keeping them is the default,
        as ``kubectl delete cronjob --cascade=orphan`` keeps a CronJob's Jobs and Airflow's
        "delete DAG" leaves running task instances alone: a delete of the *schedule* must not
        silently throw away work the user may still want — but it says what stays and how to
        cancel it, and one flag does that in the same request (``--cascade=background`` there).

        Raises:
            NotFoundError: none, or another user's (audited).
            BusyError: the submit rate, as :meth:`create` (audited).
        """
        from ..store.definitions import delete_definition

        self.ctx.admission.limit_rate(caller, request="delete definition", doing=_CHANGING)  # red team 20, R4
        for _ in range(_RETRIES):
            current = self._visible(caller, definition_id, request="delete definition")
            try:
                with self.ctx.store.transaction() as tx:
                    delete_definition(tx, current, at=tx.now)
                    tx.add_event(actor=caller.user, action="definition_deleted", job_id=None, user=current.user,
                                 message=f"definition {current.name!r} deleted", details={"definition_id": current.id})
            except ConflictError:
                continue
            # the owner rides along so the fan-out shows it to the owner and admins only
            self.ctx.publish({"type": "definition", "data": {"id": current.id, "user": current.user, "deleted": True}})
            waiting = self._waiting_runs(current.id)
            if waiting and request is not None and request.cancel_runs:
                ids = [record.job.id for record in waiting]
                for start in range(0, len(ids), MAX_CANCEL_IDS):
                    cancel_jobs(self.ctx, caller, CancelJobsRequest(ids=ids[start:start + MAX_CANCEL_IDS],
                                                                    states=["pending", "preempted"]))
                with self.ctx.store.transaction(write=False) as tx:
                    after = tx.get_jobs(ids)
                waiting = [after.get(record.job.id, record) for record in waiting]
            return DeleteDefinitionResponse(
                id=current.id, deleted=True, waiting_total=len(waiting),
                waiting_runs=[WaitingRun(id=r.job.id, name=r.job.spec.name, state=r.job.state.value)
                              for r in waiting[:_WAITING_LISTED]])
        raise ConflictError(f"definition {definition_id} kept changing; not deleted", field="definition_id",
                            hint="retry")

    def _waiting_runs(self, definition_id: str) -> builtins.list[JobRecord]:
        """The job rows of the definition's runs that have not started (pending or requeued), oldest first."""
        from ..store.definitions import list_runs

        with self.ctx.store.transaction(write=False) as tx:
            runs = list_runs(tx, [definition_id])
            records = tx.get_jobs([run.job_id for run in runs])
        waiting = [records[run.job_id] for run in reversed(runs) if run.job_id in records
                   and records[run.job_id].job.state in (JobState.PENDING, JobState.PREEMPTED)]
        return waiting

    def run_now(self, caller: Caller, definition_id: str, request: RunDefinitionRequest) -> DefinitionRunView:
        """Create one run now (a "manual" run), optionally with other ``parameters`` for this run.

        Raises:
            ValidationError: bad parameters; NotFoundError (audited for another user's); and the
                admission step's refusals (this run is refused, not recorded, when it could never
                be submitted).
        """
        from ..store.definitions import insert_run

        self.ctx.admission.limit_rate(caller, request="run definition")  # a submit (new user 17, N11)
        d = self._visible(caller, definition_id, request="run definition")
        parameters = {**d.parameters, **validate_parameters(request.parameters)}
        now = self.ctx.clock.now()
        owner = caller if caller.user == d.user else self._runs.owner(d.user)
        self._runs.limit_pending(owner, request="run definition")
        body = run_body(name=run_name(d, now, RunTrigger.MANUAL), notebook=d.notebook, script=d.script, args=d.args,
                        job=d.job, parameters=parameters, team=d.team)
        job = link_run(self._runs.prepare(owner, body, what="run a definition"), d.id)
        self._runs.jobs.refuse_unrunnable_files(job.spec)  # a FIFO or a file past the bound now (red39 R4)
        run = DefinitionRun(definition_id=d.id, job_id=job.id, trigger=RunTrigger.MANUAL, scheduled_for=now,
                            parameters=parameters, created_at=now)
        with self.ctx.store.transaction(now=now) as tx:
            if not insert_run(tx, run, JobRecord(job=job)):
                raise ConflictError("a run was requested for this definition at the same instant",
                                    field="definition_id", hint="retry")
            tx.add_event(actor=caller.user, action="definition_run_now", job_id=job.id, user=d.user,
                         message=f"definition {d.name!r} run now", details={"definition_id": d.id})
        self._runs.submitted([job])
        return self._run(caller, run, d)

    def _noted(self, answer: Definition, spec: JobSpec | None, notes: Sequence[str] = ()) -> Definition:
        """``answer`` with the notes each run of ``spec`` is given at submit — a preemptible class's
        (:func:`~..wording.preemption.preemptible_note`: its runs are jobs; verify21 V9, after new
        user 21 N5: ``definitions create --priority low`` said nothing) — and ``notes`` (its notebook's
        parameters, as read at the save: newuser39 n3), or unchanged when there is nothing to say (spec
        None: the edit left the run's request as it was)."""
        from ..scheduling.profile import SchedulingProfile
        from ..wording.preemption import preemptible_note

        said: builtins.list[str | None] = [*notes]
        if spec is not None and spec.resources.total_milli:  # no GPUs: never a victim (preemption frees GPUs)
            profile = getattr(self.ctx.engine, "profile", None) or SchedulingProfile()
            said.insert(0, preemptible_note(spec.priority.value, preemption=bool(profile.preemption),
                                            preemptible_classes=profile.preemptible_classes,
                                            min_runtime_s=profile.min_runtime_s))
        told = [note for note in said if note]
        wire = answer.to_wire()
        # after the read model's own (a GPU model none has now): one list
        return Definition.model_validate({**wire, "warnings": [*(wire.get("warnings") or ()), *told]}) if told else answer

    def _changed(self, d: JobDefinition) -> Definition:
        self._written = True  # the engine's next firing pass reads it (:meth:`on_leader_tick`)
        data = _definition_dict(d, self.ctx.clock.now())
        self.ctx.publish({"type": "definition", "data": data})
        return Definition.model_validate(data)

    # ---- executed notebooks ------------------------------------------------------------------
    def _executed_path(self, record: JobRecord) -> Path | None:
        """``<job dir>/executed.ipynb`` (None: no job directory here, e.g. a Kubernetes run)."""
        handle = record.handle or {}
        if handle.get("job_dir"):
            return Path(str(handle["job_dir"])) / "executed.ipynb"
        job_dir = getattr(self.ctx.executor, "job_dir", None)
        return Path(job_dir(record.job.id)) / "executed.ipynb" if callable(job_dir) else None

    def _open_executed(self, caller: Caller, job_id: str) -> tuple[JobRecord, int]:
        """A file descriptor of the executed notebook of a job the caller may see.

        Opened without following any link and, for a run under another account (hub mode), only
        when that account owns it: a run's owner cannot make the service read another file.

        Raises:
            NotFoundError: no such job, another user's (audited), or no executed notebook (kept).
        """
        record = self.ctx.visible(caller, job_id, request="read executed notebook")
        uid = _run_as_uid(record)
        path = self._executed_path(record)
        missing = NotFoundError(f"job {job_id} has no executed notebook", field="job_id",
                                hint="only notebook runs keep one, from their start until the retention ends")
        try:
            if path is None:
                raise FileNotFoundError(job_id)
            return record, open_untrusted(path, owner_uid=uid)
        except FileNotFoundError:
            raise missing from None
        except OSError as exc:  # a link, a FIFO, another account's file: planted, refused and audited
            log.warning("refusing to serve %s of job %s: %s", path, job_id, exc)
            self.ctx.admission.refuse(caller, missing, request="read executed notebook", job_id=job_id)

    def executed_notebook(self, caller: Caller, job_id: str) -> ExecutedNotebook:
        """The executed notebook of a notebook run (outputs and errors) opened, not read: its bytes
        are the file's as written (never decoded here), sent in pieces by the handler; and a file
        name for downloads. The caller closes :attr:`ExecutedNotebook.file` (or reads
        :meth:`ExecutedNotebook.chunks` to the end).

        Raises:
            NotFoundError: see :meth:`_open_executed`.
            ValidationError: larger than the API serves (64 MiB).
        """
        record, fd = self._open_executed(caller, job_id)
        fh = os.fdopen(fd, "rb")
        size = os.fstat(fd).st_size
        if size > MAX_NOTEBOOK_BYTES:
            fh.close()
            raise ValidationError(f"the executed notebook of {job_id} is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB",
                                  field="job_id", hint="open it from the run's job directory on the server")
        return ExecutedNotebook(file=fh, size=size, filename=executed_copy_name(record.job.spec.notebook, job_id))

    def open_executed_notebook(self, caller: Caller, job_id: str, root: str | None) -> OpenExecutedNotebookResponse:
        """Copy the executed notebook to ``<root>/<open_dir>/<name (executed JOB).ipynb>``
        (:func:`~..wording.executed.executed_copy_name`; a file of the caller's own from then on) and say
        where, relative to ``root``; an earlier copy with other bytes (edited since) is kept and this one
        goes to ``<stem>-2.ipynb``, …
        (:func:`~.executed_copy.copy_without_overwrite`).

        Only where the run's files are this server's own (embedded mode): a run under another
        account (hub mode) is refused, since the copy would be the service's file, in the
        service's folder, not the user's — the panel fetches it and saves it through the user's
        own server instead.

        Raises:
            NotFoundError: see :meth:`_open_executed`.
            ValidationError: this server has no root directory, or the run is another account's.
        """
        if not root:
            raise ValidationError("this server has no root directory to open files from", field="job_id",
                                  hint="download the notebook instead (GET jobs/{id}/notebook?download=true)")
        record = self.ctx.visible(caller, job_id, request="open executed notebook")
        if _run_as_uid(record) is not None:
            raise ValidationError(f"job {job_id} ran under {record.job.spec.user}'s own account: this service does "
                                  "not copy it into its own folder", field="job_id",
                                  hint="download it (GET jobs/{id}/notebook?download=true) and save it in your "
                                       "server; the panel's Open does that")
        record, fd = self._open_executed(caller, job_id)
        name = executed_copy_name(record.job.spec.notebook, job_id)  # the panel's and the CLI's name (newuser40 N1)
        folder = Path(self.settings.open_dir)  # the name says whose run it is: one folder, as the panel's
        with os.fdopen(fd, "rb") as source:
            data = source.read()
        try:
            (Path(root) / folder).mkdir(parents=True, exist_ok=True)
            # never over a copy of the user's: an edited one is kept, this one goes beside it (new user 22, N13's kind)
            target = copy_without_overwrite(Path(root) / folder, name, data)
        except OSError as exc:  # newuser41 N4: a 500 and a traceback, never a word of which file
            raise ConflictError(f"cannot write {(folder / name).as_posix()} in the server's root: "
                                f"{exc.strerror or exc}", field="job_id",
                                hint="download it instead (GET jobs/{id}/notebook?download=true), or free or "
                                     f"make writable the folder {folder.as_posix()}") from None
        return OpenExecutedNotebookResponse(path=(folder / target.name).as_posix(), job_id=job_id)

    def sweep_executed_notebooks(self, *, now: float | None = None) -> int:
        """Delete the executed notebooks of runs that ended more than ``retention_days`` ago; how many.

        Embedded runs keep theirs in ``<root>/<job id>/``, a hub's in the account's own
        ``<root>/users/<account>/<job id>/`` (red team 17, R7: only the first were swept). Those
        are the users' folders: nothing in them is followed, and only a regular file owned by the
        folder's owner — for a hub run, the account the run was recorded under — is removed
        (:meth:`~jupyter_sched.executors.jobdirs.JobDirs.remove_old`).
        Copies a user opened (under their root) are theirs and never touched.
        """
        days = self.settings.retention_days
        dirs = getattr(self.ctx.executor, "dirs", None)
        if days <= 0 or not isinstance(dirs, JobDirs) or not dirs.root.is_dir():
            return 0
        cutoff = (now if now is not None else time.time()) - days * 86400

        def ended_before_cutoff(found: builtins.list[tuple[str, os.stat_result]]) -> set[str]:
            try:
                with self.ctx.store.transaction(write=False) as tx:  # one read per batch (red team 19, R6)
                    records = tx.get_jobs([job_id for job_id, _ in found])
            except Exception as exc:  # this batch is kept, the others still go (red team 25, R4)
                _SWEEP_FAULTS.warn(f"executed notebooks: the store could not be asked about {len(found)} job "
                                   f"folders under {dirs.root}; they are kept", exc)
                return set()
            chosen = set()
            for job_id, info in found:
                record = records.get(job_id)
                if record is None:  # a planted folder, or a run the store no longer keeps
                    continue
                uid = _run_as_uid(record)
                finished = record.job.finished_at
                if (record.job.state.terminal and finished is not None and finished.timestamp() < cutoff
                        and (uid is None or uid == info.st_uid)):
                    chosen.add(job_id)
            return chosen

        try:
            return dirs.remove_old("executed.ipynb", cutoff, ended_before_cutoff)
        except OSError as exc:
            _SWEEP_FAULTS.warn(f"could not sweep executed notebooks under {dirs.root}", exc)
            return 0


def _run_as_uid(record: JobRecord) -> int | None:
    """The uid of the account a job ran under when it was not the service's own (hub mode), as
    the executor recorded it; None for the service's own runs."""
    run_as = (record.handle or {}).get("run_as")
    uid = run_as.get("uid") if isinstance(run_as, dict) and run_as.get("account") else None
    return uid if isinstance(uid, int) else None


def _model_note(d: JobDefinition, known: frozenset[str] | None) -> dict[str, Any]:
    """``{"warnings": ["L40S: no such GPU model here now — edit --model"]}`` for a definition that asks
    only for GPU models no GPU has now (``known``: the inventory's; hubadmin26 B8: its firings would all
    be refused runs while ``show`` listed them as due), else ``{}`` (None: the inventory is unread).
    A notebook definition stored with arguments (saved before session 38 refused them) is told that its runs
    leave them out and how to drop them: it keeps firing as it always did (its runs never had them)."""
    absent = models_absent(asked_models(d.job), known) if known is not None else ()
    warnings = [no_model_text(absent)] if absent else []
    if d.notebook and d.args:
        warnings.append(f"{notebook_args_text(d.args)}: its runs leave them out — drop them (jupyter-sched definitions "
                        f"edit {d.id} --args ''; REST: args []) and give the values as parameters (-p NAME=VALUE)")
    return {"warnings": warnings} if warnings else {}


def _definition_dict(d: JobDefinition, now: datetime) -> dict[str, Any]:
    """Wire fields of a definition (:class:`~.models.definitions.Definition`)."""
    unreadable = ""
    try:
        schedule = parse_schedule(d.schedule, d.timezone, min_interval_s=0) if d.schedule else None
    except SchedError as exc:  # a stored row that no longer parses is shown, never a failed list (hubadmin26 B17)
        schedule, unreadable = None, f"this schedule no longer parses ({exc.message}): edit it with --cron"
    upcoming = next_firing(schedule, max(now, d.cursor or now)) if schedule is not None and not d.paused else None
    return {
        "id": d.id, "name": d.name, "user": d.user, "team": d.team,
        "notebook": d.notebook, "script": d.script, "args": list(d.args), "parameters": dict(d.parameters),
        "job": dict(d.job), "schedule": d.schedule, "timezone": d.timezone,
        "schedule_description": schedule.description if schedule else unreadable,
        "paused": d.paused, "missed": d.missed.value, "overlap": d.overlap.value, "skipped": _skipped_dict(d),
        "compute_type": d.compute_type,
        "created_at": to_iso(d.created_at), "updated_at": to_iso(d.updated_at),
        "next_run_at": to_iso(upcoming), "next_run_zone": zone_label(upcoming, d.timezone) if upcoming else None,
        "version": d.version,
    }


def _skipped_dict(d: JobDefinition) -> dict[str, Any] | None:
    """Wire fields of ``d``'s skipped firings (:class:`~.models.definitions.SkippedFirings`; None: none)."""
    s = d.skipped
    if s is None:
        return None
    return {"count": s.count, "first": to_iso(s.first), "last": to_iso(s.last), "why": s.why,
            "cause": s.cause if s.cause in ("waiting", "unfinished", "budget", "rate") else "waiting",
            "job_id": s.job_id}


def _created(d: JobDefinition) -> datetime:
    """When ``d`` was created (every stored row has it): a list page's keyset position."""
    assert d.created_at is not None
    return d.created_at


def _row_bytes(d: JobDefinition) -> int:
    """About how many bytes ``d`` takes in a list's answer: its args, parameters and run request
    (env included) as JSON, plus 1 KiB for the rest and its last run (:data:`~.models.base.PAGE_BYTES`)."""
    import json

    return len(json.dumps([d.args, d.parameters, d.job, d.notebook, d.script], default=str)) + 1024


def _only_a_pause(fields: Mapping[str, Any]) -> bool:
    """The change is ``paused: true`` and nothing else (no run check needed; red team 17, R5)."""
    return set(fields) == {"paused"} and fields["paused"] is True
