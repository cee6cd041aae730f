"""Job definitions: a notebook or script with its GPU request, parameters and a cron schedule.

A definition is a template (jupyter-scheduler's "job definition", with GPUs): each firing of its
schedule creates one *run*, which is an ordinary job (queued, placed, preempted, accounted like
any other) linked to the definition by a :class:`DefinitionRun` row. The store enforces one run
per ``(definition id, scheduled instant)`` with a unique key, so a restart or a second server on
the same store can never create a firing twice (case 028).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import Enum
from typing import Any

__all__ = ["DefinitionRun", "JobDefinition", "MissedPolicy", "OverlapPolicy", "RunTrigger", "SkippedFirings"]


class MissedPolicy(str, Enum):
    """What happens to firings missed while no server led the store (downtime).

    ``run_once``: the most recent missed firing gets one run when a server is back (the
    catch-up, marked late on the run); the others are recorded as missed. ``skip``: missed firings
    get no run; the next on-time firing runs. Either way one pass makes at most one run per
    definition: after an outage, never one run per missed firing nor a catch-up beside an on-time
    run (:func:`~.schedule.plan_firings`). Firings at most the admin's grace late
    (``definition_misfire_grace_s``) are never missed.
    """

    RUN_ONCE = "run_once"
    SKIP = "skip"


class OverlapPolicy(str, Enum):
    """What a firing does while the definition's previous scheduled run has not finished (a "run now"
    holds no firing; Kubernetes CronJob's
    ``concurrencyPolicy``; new user 34, n1: a minutely definition behind a 200-job queue stacked one
    pending run a minute, each charged when it ran, and nothing said so).

    ``skip_waiting`` (the default, the safe one on a shared GPU box): a firing while the previous run
    still waits to start (pending) is skipped — no run, no job; the skip is recorded on the definition
    and audited — while a run that has started does not hold the next one back (a daily report that runs
    long still gets tomorrow's run). ``skip_unfinished``: skipped while the previous run waits *or* runs
    (CronJob ``Forbid``). ``allow``: every firing queues a run (CronJob ``Allow``; before session 34 the
    only behaviour). Whatever the policy, a previous run held by a spent GPU-hour budget skips the firing
    (hubadmin24 B11). The decision is :func:`~.overlap.overlap_decision` (pure).
    """

    SKIP_WAITING = "skip_waiting"
    SKIP_UNFINISHED = "skip_unfinished"
    ALLOW = "allow"


@dataclass(frozen=True, slots=True)
class SkippedFirings:
    """The firings of a definition skipped since its last scheduled run was created.

    Attributes:
        count: how many (at least 1).
        first / last: the first and last skipped scheduled instants (UTC).
        why: the last skip's reason in words (``its run j-… still waits: …``).
        cause: ``waiting`` / ``unfinished`` (the overlap policy), ``budget`` (a spent GPU-hour budget)
            or ``rate`` (the owner's firings per hour).
        job_id: the previous run that held the firing (None for ``rate``).
    """

    count: int
    first: datetime
    last: datetime
    why: str
    cause: str
    job_id: str | None = None


class RunTrigger(str, Enum):
    """Why a run exists: its schedule fired, or a user asked for a run now."""

    SCHEDULE = "schedule"
    MANUAL = "manual"


@dataclass(frozen=True, slots=True)
class JobDefinition:
    """A saved, possibly recurring job.

    Attributes:
        id: ``d-...`` (made by the store's id generator).
        name: human name, 1-200 characters.
        user: owner (from authentication, never from the request body).
        team: team its runs are charged to.
        notebook / script: what each run executes (exactly one is set; a path relative to the
            server's root directory, or absolute).
        args: a script's arguments.
        parameters: values injected into the notebook's ``parameters`` cell (papermill's
            convention) or passed to a script as ``--name value``; JSON scalars, lists or objects.
        job: the rest of each run's request (gpus, model, mem_per_gpu, time_limit, priority,
            profile, cpu, memory, working_dir, env): validated like a job submission.
        schedule: a cron expression (None: runs only when asked, "run now").
        timezone: IANA time zone the schedule is read in.
        paused: True while the schedule does not fire.
        missed: the missed-firing policy.
        overlap: what a firing does while the previous run has not finished (:class:`OverlapPolicy`).
        skipped: the firings skipped since the last scheduled run (None: none).
        created_at / updated_at: UTC.
        cursor: every scheduled instant ``<= cursor`` has been dealt with (UTC); set to the
            creation, edit or resume time so that no firing from before is replayed.
        version: optimistic-locking counter (compare-and-set on every write).
        compute_type: the GPU profile name jupyter-scheduler's UI chose, when it created this.
    """

    id: str
    name: str
    user: str
    team: str
    notebook: str | None = None
    script: str | None = None
    args: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)
    job: Mapping[str, Any] = field(default_factory=dict)
    schedule: str | None = None
    timezone: str = "UTC"
    paused: bool = False
    missed: MissedPolicy = MissedPolicy.RUN_ONCE
    created_at: datetime | None = None
    updated_at: datetime | None = None
    cursor: datetime | None = None
    version: int = 1
    compute_type: str | None = None
    overlap: OverlapPolicy = OverlapPolicy.SKIP_WAITING
    skipped: SkippedFirings | None = None

    @property
    def target(self) -> str:
        """The notebook or script path."""
        return self.notebook or self.script or ""


@dataclass(frozen=True, slots=True)
class DefinitionRun:
    """One run of a definition: the link from a definition to the job that ran it.

    Attributes:
        definition_id: the definition.
        job_id: the run's job.
        trigger: schedule or manual.
        scheduled_for: the scheduled instant (UTC) for schedule runs; the request time for
            manual runs. Unique per definition for schedule runs (the store's key).
        parameters: the values this run was given (definition's, overridden per run).
        created_at: when the run (and its job) was created (UTC).
        catch_up: the run came after firings missed while no server led the store: its own
            instant was older than the grace (``run_once``), or earlier instants got no run.
        missed: how many scheduled instants before this run got no run of their own (capped at
            1000), the first and last in ``missed_from`` / ``missed_to`` (None when none).
    """

    definition_id: str
    job_id: str
    trigger: RunTrigger
    scheduled_for: datetime
    parameters: Mapping[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    catch_up: bool = False
    missed: int = 0
    missed_from: datetime | None = None
    missed_to: datetime | None = None

    @property
    def late_s(self) -> float | None:
        """Seconds between the scheduled instant and the run's creation (None: not known)."""
        return None if self.created_at is None else max(0.0, (self.created_at - self.scheduled_for).total_seconds())
