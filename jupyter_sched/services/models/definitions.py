"""Request and response models of job definitions and kept notebooks (``definitions``, ``jobs/{id}/notebook``).

A definition request is flat like a job submission: the definition's own fields (name, notebook
or script, parameters, schedule, time zone, missed and overlap policies) plus each run's job fields
(:class:`~.jobs.RunJobFields`, which :class:`~.jobs.SubmitJobRequest` shares: one definition of
each). These models check JSON types and refuse unknown fields; what the values mean (a cron expression, a zone name, "exactly one of
notebook or script", a GPU request that fits) is checked by
:func:`jupyter_sched.definitions.validation.definition_fields` and the admission step.

Times on the wire are ISO 8601 UTC strings (``2025-06-02T10:00:00Z``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, RootModel, WithJsonSchema

from .base import QueryModel, RequestModel, ResponseModel
from .jobs import Job, RunJobFields

__all__ = [
    "CreateDefinitionRequest",
    "DeleteDefinitionRequest",
    "DeleteDefinitionResponse",
    "Definition",
    "DefinitionDetail",
    "DefinitionRun",
    "DefinitionsPage",
    "GetDefinitionRequest",
    "GetExecutedNotebookRequest",
    "ListDefinitionRunsRequest",
    "ListDefinitionRunsResponse",
    "ListDefinitionsRequest",
    "ListDefinitionsResponse",
    "MissedPolicyName",
    "OverlapPolicyName",
    "SkippedFirings",
    "OpenExecutedNotebookResponse",
    "PreviewScheduleRequest",
    "PreviewScheduleResponse",
    "RunDefinitionRequest",
    "UpdateDefinitionRequest",
    "WaitingRun",
]

MissedPolicyName = Literal["run_once", "skip"]
OverlapPolicyName = Literal["skip_waiting", "skip_unfinished", "allow"]
DateTime = Annotated[str, WithJsonSchema({"type": "string", "format": "date-time"})]
"""An ISO 8601 UTC time as the API writes it (``2025-06-02T10:00:00Z``)."""
MAX_RUNS_LISTED = 500
"""Most runs one answer lists."""
MAX_DEFINITIONS_LISTED = 500
"""Most definitions one ``GET definitions`` page lists (red28 R6: the list was unpaginated)."""



class _DefinitionFields(RunJobFields):
    """A definition's own fields besides its name."""

    notebook: str | None = Field(default=None, examples=["reports/daily.ipynb"], description="a .ipynb path")
    script: str | None = Field(default=None, examples=["train.py"])
    args: list[str] | None = Field(default=None, examples=[["--epochs", "3"]], description=(
        "a script's arguments; a notebook takes none (refused, 400 field args: give its values as parameters)"))
    parameters: dict[str, Any] | None = Field(
        default=None, examples=[{"region": "eu"}],
        description="injected after the notebook's 'parameters' cell (papermill's convention); a script gets --name value")
    schedule: str | None = Field(default=None, examples=["0 12 * * 1-5"],
                                 description="cron, 5 fields (6 with seconds where the admin allows); null: run only when asked")
    timezone: str | None = Field(default=None, examples=["Europe/Berlin"], description="IANA time zone (default UTC)")
    paused: bool | None = Field(default=None, examples=[False])
    missed: MissedPolicyName | None = Field(
        default=None, examples=["run_once"],
        description="firings missed while no server ran: one catch-up run for the latest (run_once) or none "
                    "(skip); after an outage at most one run, never one per missed firing")
    overlap: OverlapPolicyName | None = Field(
        default=None, examples=["skip_waiting"],
        description="a firing while the previous run has not finished: skipped while it still waits to start "
                    "(skip_waiting, the default), skipped while it waits or runs (skip_unfinished), or queued as "
                    "another run (allow); a skipped firing gets no run and is said in skipped")
    compute_type: str | None = Field(default=None, description="the GPU profile jupyter-scheduler's UI chose")


class CreateDefinitionRequest(_DefinitionFields):
    """``POST definitions``: a name, exactly one of ``notebook`` or ``script``, and optionally a
    schedule with its time zone, parameters and each run's job fields."""

    name: str = Field(examples=["daily-report"], description="1-200 characters")


class UpdateDefinitionRequest(_DefinitionFields):
    """``PATCH definitions/{id}``: only the fields given change; ``schedule: null`` makes it run
    only when asked. A new schedule or time zone, or ``paused: false``, fires from now on. ``parameters``
    given is the whole new set (``{}`` removes them all); the CLI's and ``%schedule define edit``'s ``-p`` and
    ``--unset-parameter`` change the named ones over the stored set and send the result (newuser38 N1)."""

    name: str | None = Field(default=None, examples=["daily-report"], description="1-200 characters")


class ListDefinitionsRequest(QueryModel):
    """``GET definitions``: the caller's (admins: another ``user``'s, or ``all=true`` for everyone's)."""

    user: str | None = Field(default=None, description="admins only: another user's definitions")
    all: bool = Field(default=False, description="admins only: everyone's definitions")
    name: str | None = Field(default=None, max_length=200, examples=["daily"],
                             description="only definitions of this name (how the CLI finds one by name)")
    limit: int = Field(default=100, ge=1, le=MAX_DEFINITIONS_LISTED, examples=[100], description=(
        "newest first, at most this many; a page also ends before it passes 4 MiB of answer (a Link: rel=next "
        "header gives the next page)"))
    cursor: str | None = Field(default=None, max_length=400,
                               description="the cursor of the next page (from the Link header)")


class GetDefinitionRequest(QueryModel):
    """``GET definitions/{id}``: how many of its runs to include."""

    runs: int = Field(default=20, ge=1, le=MAX_RUNS_LISTED, examples=[20], description="newest first")


class ListDefinitionRunsRequest(QueryModel):
    """``GET definitions/{id}/runs``."""

    limit: int = Field(default=50, ge=1, le=MAX_RUNS_LISTED, examples=[50], description="newest first, at most this many")


class RunDefinitionRequest(RequestModel):
    """``POST definitions/{id}/runs`` (run now): other parameters for this run only (merged over the definition's)."""

    parameters: dict[str, Any] | None = Field(default=None, examples=[{"region": "eu"}])


class PreviewScheduleRequest(RequestModel):
    """``POST definitions/preview``: a schedule to try (nothing is saved)."""

    schedule: str = Field(examples=["0 12 * * 1-5"])
    timezone: str | None = Field(default=None, examples=["Europe/Berlin"], description="IANA time zone (default UTC)")


class GetExecutedNotebookRequest(QueryModel):
    """``GET jobs/{id}/notebook``."""

    download: bool = Field(default=False, description="send it as a file (Content-Disposition: attachment)")


class _Answer(ResponseModel):
    """An answer whose optional parts appear only where they were filled in."""

    def to_wire(self) -> Any:
        return self.model_dump(mode="json", exclude_unset=True)


class DefinitionRun(_Answer):
    """One run of a definition: the link to its job, and the job as ``GET jobs/{id}`` shows it."""

    definition_id: str
    job_id: str
    trigger: Literal["schedule", "manual"]
    trigger_text: str = Field(default="", examples=["run now"], description=(
        "why the run exists as every surface says it (the CLI, the magics and the panel show this): 'scheduled', "
        "'run now', or 'catch-up' for the one run after an outage"))
    scheduled_for: DateTime = Field(description="the scheduled instant (schedule runs) or the request time (manual)")
    scheduled_zone: str = Field(default="UTC", examples=["CET"], description=(
        "the definition's time zone's name at scheduled_for, as every surface writes it (the tz database's letters, e.g. CET, IST; UTC+4 where it has none)"))
    parameters: dict[str, Any] = Field(description="the values this run was given")
    created_at: DateTime | None
    catch_up: bool = Field(default=False, description=(
        "the run came after firings missed while no server was running: its own instant was older than the "
        "admin's grace (definition_misfire_grace_s) and the definition's missed policy is run_once, or "
        "earlier firings got no run of their own; one run per outage, never one per missed firing"))
    late_s: float | None = Field(default=None, ge=0, description="seconds between scheduled_for and the run's "
                                 "creation (null for older runs)")
    missed: int = Field(default=0, ge=0, le=1000, description=(
        "scheduled firings before this run that got no run of their own while no server was running (a catch-up "
        "run's; at most 1000 counted)"))
    missed_from: DateTime | None = Field(default=None, description="the first of those firings (null when none)")
    missed_to: DateTime | None = Field(default=None, description="the last of those firings (null when none)")
    job: Job | None = Field(description="null when the job row is gone")


class SkippedFirings(_Answer):
    """The firings skipped since the definition's last scheduled run (new user 34, n1)."""

    count: int = Field(ge=1, examples=[2], description="how many firings got no run")
    first: DateTime = Field(description="the first of them")
    last: DateTime = Field(description="the last of them")
    why: str = Field(examples=["its run j-01hf3k2m9-x7q4za still waits: waiting for 1 GPU …"],
                     description="the last one's reason")
    cause: Literal["waiting", "unfinished", "budget", "rate"] = Field(description=(
        "waiting / unfinished: the previous run still waits / has not finished (the overlap policy); budget: it "
        "waits on a spent GPU-hour budget; rate: the owner's definitions fired the most runs an hour allowed"))
    job_id: str | None = Field(default=None, description="the previous run that held them (null for rate)")


class Definition(_Answer):
    """A saved, possibly recurring notebook or script job."""

    id: str = Field(examples=["d-01hf3k2m9-x7q4za"])
    name: str
    user: str
    team: str
    notebook: str | None
    script: str | None
    args: list[str]
    parameters: dict[str, Any] = Field(description="injected after the notebook's 'parameters' cell")
    job: dict[str, Any] = Field(description="each run's request: gpus, model, time_limit, priority, profile, ...")
    schedule: str | None = Field(examples=["0 12 * * 1-5"])
    timezone: str = Field(examples=["Europe/Berlin"])
    schedule_description: str = Field(examples=["At 12:00 on Monday through Friday"])
    paused: bool
    missed: MissedPolicyName
    overlap: OverlapPolicyName = Field(default="skip_waiting", description=(
        "a firing while the previous run has not finished: skip_waiting (skipped while it waits to start), "
        "skip_unfinished (while it waits or runs) or allow (every firing queues a run)"))
    skipped: SkippedFirings | None = Field(default=None, description=(
        "the firings skipped since the last scheduled run, and why (null: none)"))
    compute_type: str | None
    created_at: DateTime | None
    updated_at: DateTime | None
    next_run_at: DateTime | None = Field(description="null when paused or unscheduled")
    next_run_zone: str | None = Field(default=None, examples=["IST"], description=(
        "the time zone's name at next_run_at, as every surface writes it (the tz database's letters, e.g. CET, IST; UTC+4 where it has none); null with next_run_at"))
    version: int
    last_run: DefinitionRun | None = Field(default=None, description="in lists only: the newest run")
    warnings: list[str] | None = Field(default=None, description=(
        "create and edit: what each run will be told at submit, e.g. that priority low may be "
        "preempted at any moment (verify21 V9); get and list: that it asks only for a GPU model no GPU "
        "has now, e.g. 'L40S: no such GPU model here now — edit --model' (hubadmin26 B8); create and edit: a "
        "parameter its notebook's parameters cell does not set, e.g. \"parameter 'regoin' is not in r.ipynb's "
        "parameters cell (region, days) — did you mean 'region'? …\", or a value of another type (newuser39 n3)"))


class DefinitionDetail(Definition):
    """One definition with its newest runs and its next firings."""

    runs: list[DefinitionRun]
    upcoming: list[DateTime] = Field(description="the next firings (UTC), at most five")
    upcoming_zones: list[str] = Field(default_factory=list, examples=[["CET", "CEST"]], description=(
        "the time zone's name at each of upcoming, in its order, as every surface writes it (the tz database's letters, e.g. CET, IST; UTC+4 where it has none)"))


class ListDefinitionsResponse(RootModel[list[Definition]]):
    """Definitions, newest first, each with its ``last_run``."""

    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return [d.to_wire() for d in self.root]


class DefinitionsPage(ResponseModel):
    """One page of definitions and the cursor of the next (None on the last page)."""

    definitions: ListDefinitionsResponse
    next_cursor: str | None = None


class ListDefinitionRunsResponse(RootModel[list[DefinitionRun]]):
    """Runs, newest first."""

    model_config = ConfigDict(frozen=True)

    def to_wire(self) -> Any:
        return [r.to_wire() for r in self.root]


class DeleteDefinitionRequest(QueryModel):
    """``DELETE definitions/{id}``: whether its runs still waiting to start go with it."""

    cancel_runs: bool = Field(default=False, description=(
        "also cancel its runs that are still waiting (pending or requeued); running ones go on. Default: they "
        "stay queued and the answer lists them (waiting_runs)"))


class WaitingRun(ResponseModel):
    """A run of a deleted definition that had not started."""

    id: str = Field(description="its job id")
    name: str
    state: str = Field(description="pending or preempted (still waiting), or cancelled (by cancel_runs)")


class DeleteDefinitionResponse(ResponseModel):
    """The definition is gone and never fires again; its runs stay as jobs. A run that was still
    waiting to start will run unless cancelled: listed in ``waiting_runs`` (new user 8, N3: a queued
    firing ran after the delete, said nowhere)."""

    id: str
    deleted: bool
    waiting_runs: list[WaitingRun] = Field(default=[], description=(
        "its runs still waiting when it was deleted (at most 50): state pending/preempted — they will run; "
        "cancel each with DELETE jobs/{id}, or delete with cancel_runs=true — or cancelled by cancel_runs"))
    waiting_total: int = Field(default=0, description="how many runs were waiting in all (waiting_runs lists 50)")


class PreviewScheduleResponse(ResponseModel):
    """The schedule, in words, and its next firings."""

    schedule: str
    timezone: str
    description: str = Field(examples=["At 12:00 on Monday through Friday"])
    next: list[DateTime] = Field(description="the next firings (UTC)")
    next_zones: list[str] = Field(default_factory=list, examples=[["UTC+4"]], description=(
        "the time zone's name at each of next, in its order, as every surface writes it (the tz database's letters, e.g. CET, IST; UTC+4 where it has none)"))


class OpenExecutedNotebookResponse(ResponseModel):
    """Where the copy of the executed notebook is."""

    path: str = Field(description="relative to the server's root directory")
    job_id: str
