"""``DefinitionsService``: create, list, edit, pause, resume, delete and run job definitions.

The application service behind ``api/sched/definitions`` (and through it ``%schedule define``,
``jupyter-sched definitions``, the panel and jupyter-scheduler's job definitions). It knows no
HTTP: methods take the caller (``user``, ``is_admin``) and untrusted bodies, and raise the
classes of :mod:`jupyter_sched.errors`. Users see and change only their own definitions; admins
see all. A definition's runs are ordinary jobs created through :class:`.firing.RunJobs` — the
same validation, admission, quotas, queue and accounting as any submission.

Wire shapes (:func:`definition_to_dict`, :func:`run_to_dict`) use ISO 8601 UTC times.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..errors import ConflictError, NotFoundError, SchedError, ValidationError
from ..model import Job, JobSpec
from ..model.units import to_iso
from .firing import DefinitionFiring, FiringReport, RunJobs, link_run, run_name
from .model import DefinitionRun, JobDefinition, MissedPolicy, RunTrigger
from .parameters import validate_parameters
from .schedule import firings_between, next_firing, parse_schedule
from .validation import definition_fields, run_body

__all__ = ["DefinitionsService", "definition_to_dict", "run_to_dict"]

_RETRIES = 5
_MAX_RUNS_LISTED = 500


def definition_to_dict(d: JobDefinition, *, now: datetime | None = None) -> dict[str, Any]:
    """JSON shape of a definition; ``next_run_at`` (UTC) when ``now`` is given and it is active."""
    schedule = parse_schedule(d.schedule, d.timezone, min_interval_s=0) if d.schedule else None
    upcoming = None
    if schedule is not None and not d.paused and now is not None:
        upcoming = next_firing(schedule, max(now, d.cursor or now))
    return {
        "id": d.id, "name": d.name, "user": d.user, "team": d.team,
        "notebook": d.notebook, "script": d.script, "args": list(d.args), "parameters": dict(d.parameters),
        "job": dict(d.job), "schedule": d.schedule, "timezone": d.timezone,
        "schedule_description": schedule.description if schedule else "",
        "paused": d.paused, "missed": d.missed.value, "compute_type": d.compute_type,
        "created_at": to_iso(d.created_at), "updated_at": to_iso(d.updated_at),
        "next_run_at": to_iso(upcoming), "version": d.version,
    }


def run_to_dict(run: DefinitionRun, job: Mapping[str, Any] | None) -> dict[str, Any]:
    """JSON shape of a run: the link plus its job (state, message/reason, times) when it still exists."""
    return {"definition_id": run.definition_id, "job_id": run.job_id, "trigger": run.trigger.value,
            "scheduled_for": to_iso(run.scheduled_for), "parameters": dict(run.parameters),
            "created_at": to_iso(run.created_at), "job": dict(job) if job is not None else None}


class DefinitionsService:
    """See the module docstring.

    Args:
        store: the :class:`~jupyter_sched.store.Store`.
        jobs: the jobs side (validation, admission, ids, engine wake-up).
        now: the clock (UTC aware).
        ids: id generator (``ids("d")`` → ``d-...``).
        render_job: a job row as the jobs API shows it (live pending reason included).
        default_team: team of a definition whose request names none.
        min_interval_s: shortest time between two firings a schedule may ask for (seconds).
        misfire_grace_s: seconds a firing may be late and still run on time.
        publish: API event sink (``{"type": "definition", "data": ...}``).
    """

    def __init__(self, store: Any, jobs: RunJobs, *, now: Callable[[], datetime], ids: Callable[[str], str],
                 render_job: Callable[[Job], dict[str, Any]], default_team: str = "default",
                 min_interval_s: float = 60.0, misfire_grace_s: float = 60.0,
                 publish: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.store = store
        self.jobs = jobs
        self.now = now
        self.ids = ids
        self.render_job = render_job
        self.default_team = default_team
        self.min_interval_s = min_interval_s
        self._publish = publish or (lambda event: None)
        self.firing = DefinitionFiring(store, jobs, now=now, misfire_grace_s=misfire_grace_s, publish=self._publish)

    # -- engine side --------------------------------------------------------------------------

    def fire_due(self) -> FiringReport:
        """Create the runs of every due firing (the leading engine calls this each tick)."""
        return self.firing.fire_due()

    # -- reads --------------------------------------------------------------------------------

    def _visible(self, definition_id: Any, *, user: str, is_admin: bool) -> JobDefinition:
        from ..store.definitions import get_definition

        if not isinstance(definition_id, str) or not definition_id:
            raise ValidationError("definition id must be a non-empty string", field="definition_id",
                                  hint="e.g. d-01hf3k2m9-x7q4za")
        try:
            with self.store.transaction(write=False) as tx:
                definition = get_definition(tx, definition_id)
        except NotFoundError:
            definition = None
        if definition is None or (not is_admin and definition.user != user):
            raise NotFoundError(f"no definition {definition_id!r} visible to you", field="definition_id",
                                hint="list your definitions to see their ids")
        return definition

    def list_definitions(self, *, user: str, is_admin: bool = False,
                         all_users: bool = False) -> list[dict[str, Any]]:
        """The caller's definitions (everyone's for an admin asking ``all_users``), newest first,
        each with its latest run."""
        from ..store.definitions import list_definitions, list_runs

        with self.store.transaction(write=False) as tx:
            definitions = list_definitions(tx, user=None if (is_admin and all_users) else user)
            latest: dict[str, DefinitionRun] = {}
            for run in list_runs(tx, [d.id for d in definitions]):
                latest.setdefault(run.definition_id, run)
        now = self.now()
        out = []
        for d in definitions:
            data = definition_to_dict(d, now=now)
            last = latest.get(d.id)
            data["last_run"] = run_to_dict(last, self._job_view(last.job_id)) if last else None
            out.append(data)
        return out

    def get(self, definition_id: str, *, user: str, is_admin: bool = False, runs: int = 20) -> dict[str, Any]:
        """One definition with its ``runs`` (newest first, at most ``runs``) and next firings.

        Raises:
            NotFoundError: no such definition, or not yours.
        """
        d = self._visible(definition_id, user=user, is_admin=is_admin)
        data = definition_to_dict(d, now=self.now())
        data["runs"] = self.runs(definition_id, user=user, is_admin=is_admin, limit=runs)
        data["upcoming"] = self._upcoming(d)
        return data

    def _upcoming(self, d: JobDefinition, count: int = 5) -> list[str]:
        if not d.schedule or d.paused:
            return []
        schedule = parse_schedule(d.schedule, d.timezone, min_interval_s=0)
        start = max(self.now(), d.cursor or self.now())
        out: list[str] = []
        at = start
        for _ in range(count):
            nxt = next_firing(schedule, at)
            if nxt is None:
                break
            out.append(to_iso(nxt) or "")
            at = nxt
        return out

    def runs(self, definition_id: str, *, user: str, is_admin: bool = False, limit: int = 50) -> list[dict[str, Any]]:
        """Runs of one definition, newest first.

        Raises:
            ValidationError: ``limit`` outside 1..500.
            NotFoundError: no such definition, or not yours.
        """
        from ..store.definitions import list_runs

        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_RUNS_LISTED:
            raise ValidationError(f"limit must be 1..{_MAX_RUNS_LISTED} (got {limit!r})", field="limit", hint="e.g. 50")
        self._visible(definition_id, user=user, is_admin=is_admin)
        with self.store.transaction(write=False) as tx:
            found = list_runs(tx, [definition_id], limit=limit)
        return [run_to_dict(run, self._job_view(run.job_id)) for run in found]

    def _job_view(self, job_id: str) -> dict[str, Any] | None:
        try:
            return self.render_job(self.store.get_job(job_id).job)
        except NotFoundError:
            return None

    def preview(self, body: Any, *, count: int = 5) -> dict[str, Any]:
        """The next ``count`` firings of a schedule without saving anything (for forms)."""
        fields = definition_fields({k: v for k, v in dict(body or {}).items() if k in ("schedule", "timezone")},
                                   partial=True, min_interval_s=self.min_interval_s)
        schedule = fields.get("schedule")
        if schedule is None:
            raise ValidationError("give a schedule to preview", field="schedule", hint='e.g. "0 12 * * 1-5"')
        now = self.now()
        at, out = now, []
        for _ in range(max(1, min(count, 50))):
            nxt = next_firing(schedule, at)
            if nxt is None:
                break
            out.append(to_iso(nxt))
            at = nxt
        return {"schedule": schedule.expression, "timezone": schedule.timezone,
                "description": schedule.description, "next": out}

    # -- writes -------------------------------------------------------------------------------

    def create(self, body: Any, *, user: str) -> dict[str, Any]:
        """Validate and save a definition owned by ``user``; its schedule fires from now on.

        Raises:
            ValidationError: a bad field (named), including the run's job fields.
            AuthorizationError / QuotaError / UnschedulableError: a run could never be submitted
                by this user (the same checks as a job submission).
        """
        from ..store.definitions import insert_definition

        fields = definition_fields(body, partial=False, min_interval_s=self.min_interval_s)
        now = self.now()
        definition = JobDefinition(
            id=self.ids("d"), name=fields["name"], user=user, team="", notebook=fields.get("notebook"),
            script=fields.get("script"), args=fields.get("args", ()), parameters=fields.get("parameters", {}),
            job=fields["job"], schedule=fields["schedule"].expression if fields["schedule"] else None,
            timezone=fields["timezone"], paused=fields.get("paused", False),
            missed=fields.get("missed", MissedPolicy.RUN_ONCE), created_at=now, updated_at=now, cursor=now,
            compute_type=fields.get("compute_type"))
        definition = replace(definition, team=self._check_runs(definition).team)
        with self.store.transaction(now=now) as tx:
            stored = insert_definition(tx, definition)
            tx.add_event(actor=user, action="definition_created", job_id=None, user=user,
                         message=f"definition {stored.name!r} created ({stored.schedule or 'no schedule'}, "
                                 f"{stored.timezone})", details={"definition_id": stored.id})
        return self._changed(stored)

    def _check_runs(self, d: JobDefinition) -> JobSpec:
        """A run of ``d`` must be submittable by its owner now (refused at save, not at 12:00);
        returns the spec it would get (its team is the definition's)."""
        return self.jobs.check(run_body(name=d.name, notebook=d.notebook, script=d.script, args=d.args, job=d.job,
                                        parameters=d.parameters, team=d.team), user=d.user)

    def update(self, definition_id: str, body: Any, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Change some fields. A new schedule or time zone, or a resume, fires only from now on
        (firings from before are not replayed).

        Raises:
            ValidationError, NotFoundError, ConflictError (it kept changing), and the job checks.
        """
        from ..store.definitions import update_definition

        for _ in range(_RETRIES):
            current = self._visible(definition_id, user=user, is_admin=is_admin)
            fields = definition_fields(body, partial=True, min_interval_s=self.min_interval_s,
                                       current_timezone=current.timezone, current_schedule=current.schedule)
            now = self.now()
            changes: dict[str, Any] = {k: v for k, v in fields.items() if k not in ("schedule", "job")}
            if "schedule" in fields:
                changes["schedule"] = fields["schedule"].expression if fields["schedule"] else None
            if "job" in fields:
                changes["job"] = {**current.job, **fields["job"]}
            restart = (changes.get("schedule", current.schedule) != current.schedule
                       or changes.get("timezone", current.timezone) != current.timezone
                       or (current.paused and changes.get("paused") is False))
            new = replace(current, **changes, updated_at=now,
                          cursor=max(now, current.cursor or now) if restart else current.cursor)
            new = replace(new, team=self._check_runs(replace(new, team="")).team)
            try:
                with self.store.transaction(now=now) as tx:
                    stored = update_definition(tx, new)
                    tx.add_event(actor=user, action="definition_updated", job_id=None, user=current.user,
                                 message=f"definition {current.name!r} updated: " + ", ".join(sorted(fields)),
                                 details={"definition_id": current.id, "fields": sorted(fields)})
            except ConflictError:
                continue  # the firing loop moved its cursor meanwhile: re-read and apply again
            return self._changed(stored)
        raise ConflictError(f"definition {definition_id} kept changing; not updated", field="definition_id",
                            hint="retry")

    def pause(self, definition_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Stop firing (runs already created go on)."""
        return self.update(definition_id, {"paused": True}, user=user, is_admin=is_admin)

    def resume(self, definition_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Fire again from now on (firings while paused are not replayed)."""
        return self.update(definition_id, {"paused": False}, user=user, is_admin=is_admin)

    def delete(self, definition_id: str, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Delete a definition: it never fires again; its runs (jobs) stay, running ones go on.

        Raises:
            NotFoundError: no such definition, or not yours.
        """
        from ..store.definitions import delete_definition

        for _ in range(_RETRIES):
            current = self._visible(definition_id, user=user, is_admin=is_admin)
            try:
                with self.store.transaction() as tx:
                    delete_definition(tx, current, at=tx.now)
                    tx.add_event(actor=user, action="definition_deleted", job_id=None, user=current.user,
                                 message=f"definition {current.name!r} deleted", details={"definition_id": current.id})
            except ConflictError:
                continue
            self._publish({"type": "definition", "data": {"id": current.id, "deleted": True}})
            return {"id": current.id, "deleted": True}
        raise ConflictError(f"definition {definition_id} kept changing; not deleted", field="definition_id",
                            hint="retry")

    def run_now(self, definition_id: str, body: Any = None, *, user: str, is_admin: bool = False) -> dict[str, Any]:
        """Create one run now (a "manual" run), optionally with other ``parameters`` for this run.

        Raises:
            ValidationError: bad body or parameters; NotFoundError; and the job submission's errors
                (this run is refused, not recorded, when it could never be submitted).
        """
        from ..store.codec import JobRecord
        from ..store.definitions import insert_run

        d = self._visible(definition_id, user=user, is_admin=is_admin)
        body = {} if body is None else body
        if not isinstance(body, Mapping) or set(body) - {"parameters"}:
            raise ValidationError("a run-now body takes only parameters", field="body",
                                  hint='send {} or {"parameters": {"name": value}}')
        parameters = {**d.parameters, **validate_parameters(body.get("parameters"))}
        now = self.now()
        job = link_run(self.jobs.build(run_body(name=run_name(d, now, RunTrigger.MANUAL), notebook=d.notebook,
                                                script=d.script, args=d.args, job=d.job, parameters=parameters,
                                                team=d.team), user=d.user), d.id)
        run = DefinitionRun(definition_id=d.id, job_id=job.id, trigger=RunTrigger.MANUAL, scheduled_for=now,
                            parameters=parameters, created_at=now)
        with self.store.transaction(now=now) as tx:
            if not insert_run(tx, run, JobRecord(job=job)):
                raise ConflictError("a run was requested for this definition at the same instant", field="definition_id",
                                    hint="retry")
            tx.add_event(actor=user, action="definition_run_now", job_id=job.id, user=d.user,
                         message=f"definition {d.name!r} run now", details={"definition_id": d.id})
        self.jobs.submitted([job])
        return run_to_dict(run, self._job_view(job.id))

    def _changed(self, d: JobDefinition) -> dict[str, Any]:
        data = definition_to_dict(d, now=self.now())
        self._publish({"type": "definition", "data": data})
        return data

    # -- for integrations ------------------------------------------------------------------------

    def definition_for_job(self, job_id: str) -> str | None:
        """The id of the definition whose run ``job_id`` is (None when it is no run)."""
        from ..store.definitions import run_for_job

        found: DefinitionRun | None = None
        with contextlib.suppress(SchedError), self.store.transaction(write=False) as tx:
            found = run_for_job(tx, job_id)
        return found.definition_id if found else None

    def firings_between(self, definition_id: str, after: datetime, until: datetime, *, user: str,
                        is_admin: bool = False) -> list[datetime]:
        """Scheduled instants of a definition in ``(after, until]`` (UTC), for displays and tests."""
        d = self._visible(definition_id, user=user, is_admin=is_admin)
        if not d.schedule:
            return []
        return list(firings_between(parse_schedule(d.schedule, d.timezone, min_interval_s=0), after, until))
