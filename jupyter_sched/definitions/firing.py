"""The firing loop: due firings of every active definition become runs (engine side).

Started by the leading engine's hook and run on its own thread, one pass at a time
(:meth:`DefinitionFiring.fire_due`; :meth:`~jupyter_sched.services.definitions.DefinitionsService.on_leader_tick`):
building a run reads and checks its notebook and admits its job, ~43-128 ms a firing, and 100
definitions of one user due in one minute held every other user's scheduling for 6-13 s when that
ran on the engine's thread (red36). The engine only sees the new pending jobs, as it sees any
submit. Due definitions are taken owner by owner in turn (:mod:`.turns`). For each active
definition it plans the firings in ``(cursor, now]`` (:func:`.schedule.plan_firings`: at most one
run, the newest due firing — on time, or late as the one catch-up of the ``run_once`` policy; every
older firing is counted as missed and the run says so: ``catch_up``, ``missed``, first and last)
and then, in ONE transaction:

1. re-reads the definition and gives up if it changed meanwhile (edited, paused, deleted, or
   fired by another server): the next tick plans again from the fresh row;
2. inserts each firing's run and its job (:func:`jupyter_sched.store.definitions.insert_run`);
   the unique key ``(definition, trigger, scheduled instant)`` refuses a firing that already has
   a run, so a restart, a leader change or two servers racing never make a second run;
3. audits missed firings, and moves the definition's cursor past everything planned
   (compare-and-set on its version).

A firing whose job cannot be built (the notebook was removed, the profile no longer exists, the
request can no longer fit) still gets its one run: a job recorded as ``rejected`` whose message
says why, so the definition's run list shows the failure instead of a silent gap. One refused because its
owner may no longer charge the definition's team (a hub group left, renamed or emptied) would be refused at every
firing until the definition is changed — a rejected run a minute for a minutely one (newuser37 n8) — so that
firing also pauses the definition, in the same transaction, audited (``definition_updated``, why
``team_refused``) with the way out: change its team, then resume it.

A firing while the definition's previous run has not finished is decided by the definition's overlap
policy (:func:`.overlap.overlap_decision`, pure; new user 34, n1: a minutely definition behind a long
queue stacked one pending run a minute and nothing said so): by default it is skipped while that run
still waits to start — no run, no job, the skip kept on the definition (``skipped``: how many since
the last run, first, last, why; ``definitions show`` says it) and audited as below. A previous run
pending on a spent GPU-hour budget (code ``BudgetExhausted``) skips it whatever the policy
(hubadmin24 B11: a minutely definition piled up one held run a minute, heading for the pending cap).
The next firing after the previous run starts (or ends) runs again.

A firing over its owner's rate (``max_per_user_hour`` scheduled firings of all their definitions in
the last hour; red team 15, R2: 100 definitions of one user started 107 jobs in one minute, every
minute, with nobody logged in) is skipped *without* a run or a job: one ``definition_skipped``
audit record per definition per hour says so and how many (``definition 'd1': 58 firing(s)
skipped since 13:25 UTC …``; red team 17, R4: a rejected job, a run and an audit row per skipped
firing made a job flood a row flood, 6,000 rows an hour from one user). The firings counted are
read from the store's runs at a user's first firing after a (re)start; the skip counts between two
records are kept by the leading engine (:class:`.skip_log.SkipLog`; a restart starts them afresh). Once the pass has
written a definition's row, its next firings over the rate are told from memory, with no read, and written together,
one transaction a pass (:mod:`.rate_skips`; session 38: four store round-trips a skipped firing before).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Protocol

from ..errors import BusyError, ConflictError, NotFoundError, SchedError
from ..model import Job, JobSpec, JobState
from ..model.units import zone_label
from .model import DefinitionRun, JobDefinition, MissedPolicy, RunTrigger
from .overlap import FIRE, OverlapDecision, PreviousRun, overlap_decision, skipped_after
from .rate_skips import RateSkip, RateSkips, over_rate
from .schedule import CronSchedule, FiringPlan, next_firing, parse_schedule, plan_firings
from .skip_log import SkipLog
from .turns import in_turn
from .validation import run_body

__all__ = ["SKIPPED_PREFIX", "DefinitionFiring", "FiringReport", "RunJobs", "link_run", "run_catch_up_text", "run_name"]

log = logging.getLogger(__name__)

SKIPPED_PREFIX = "skipped:"
"""How the message of a run skipped over its owner's firing rate began (before red team 17, R4:
skipped firings write no run now); kept for readers of older rows."""

_HOUR = timedelta(hours=1)

_CACHE_PER_DEFINITION_LIMIT = 10_000
"""Cached next firings kept before the cache is cleared (stale versions accumulate otherwise)."""


class RunJobs(Protocol):
    """How the definitions reach the jobs service (validation, admission, ids, the engine)."""

    def check(self, body: Mapping[str, Any], *, user: str) -> JobSpec:
        """Validate a run's body as a submission by ``user``; the spec it would get.

        Raises:
            SchedError: the submission's own errors (validation, team, quota, never fits).
        """
        ...

    def build(self, body: Mapping[str, Any], *, user: str) -> Job:
        """A new pending job for ``body`` (validated, admitted, checked that it can ever fit).

        Raises:
            BusyError: who the owner is cannot be told now (e.g. the hub did not answer); the
                firing is retried at the next tick, no run is written.
            SchedError: it cannot be submitted; the message says why (a rejected run).
        """
        ...

    def rejected(self, body: Mapping[str, Any], *, user: str, error: SchedError) -> Job:
        """A job recorded as rejected with ``error``'s message (a firing that could not submit)."""
        ...

    def submitted(self, jobs: list[Job]) -> None:
        """The jobs were committed: wake the engine, publish them."""
        ...


def _catch_up_fields(plan: FiringPlan) -> dict[str, Any]:
    """A run's catch-up fields when it is the one run standing for ``plan``'s missed firings."""
    if not plan.catch_up:
        return {}
    return {"catch_up": True, "missed": plan.missed, "missed_from": plan.missed_from, "missed_to": plan.missed_to}


def run_catch_up_text(run: DefinitionRun, zone: str) -> str:
    """:func:`~jupyter_sched.wording.definitions.catch_up_text` of a stored run (its audit record's words)."""
    from ..wording.definitions import catch_up_text

    def wire(at: datetime | None) -> str | None:
        return None if at is None else at.isoformat()

    return catch_up_text({"catch_up": run.catch_up, "late_s": run.late_s, "missed": run.missed,
                          "missed_from": wire(run.missed_from), "missed_to": wire(run.missed_to)}, zone, None)


def run_name(definition: JobDefinition, scheduled_for: datetime, trigger: RunTrigger) -> str:
    """``daily-report @ 2025-06-02 12:00 CEST`` (scheduled runs) / ``daily-report, run now`` (no
    brackets of its own: every line writes a job as ``j-7 (name)``, and "j-7 (daily-report (run
    now))" was quoted apart as ``j-7 'daily-report (run now)'`` — two styles, new user 12, N1). The
    zone's name as every clock says it (:func:`~jupyter_sched.model.units.zone_label`: ``UTC+4`` where
    the tz database has no letters, not its ``+04``; session 22)."""
    if trigger is RunTrigger.MANUAL:
        from ..wording.definitions import TRIGGER_WORDS

        return f"{definition.name}, {TRIGGER_WORDS[trigger.value]}"[:200]  # the words every surface says (N7)
    from zoneinfo import ZoneInfo

    local = scheduled_for.astimezone(ZoneInfo(definition.timezone))
    clock = f"{local:%H:%M:%S}" if local.second else f"{local:%H:%M}"
    return f"{definition.name} @ {local:%Y-%m-%d} {clock} {zone_label(local)}"[:200]


@dataclass
class FiringReport:
    """What one pass did: runs created (job ids), firings refused as duplicates, missed counts."""

    created: list[str] = field(default_factory=list)
    duplicates: int = 0
    missed: int = 0
    conflicts: int = 0
    next_due: datetime | None = None
    """The earliest next firing of the definitions read, as known after the pass (None: none)."""
    skipped: int = 0
    """Firings skipped over their owner's rate (no run written; see the module docstring)."""


class DefinitionFiring:
    """Turns due firings into runs (see module docstring).

    Args:
        store: the :class:`~jupyter_sched.store.Store`.
        jobs: the jobs side (:class:`RunJobs`).
        now: the clock (UTC aware).
        misfire_grace_s: seconds a firing may be late and still run on time (the admin's
            ``definition_misfire_grace_s``).
        publish: called with ``{"type": "definition_run", "data": {...}}`` per run created.
        max_per_user_hour: most scheduled firings of one user's definitions in any hour (the admin's
            ``definition_max_firings_per_user_hour``; 0: no limit); more are skipped (module doc).
    """

    max_due_per_pass = 100
    """Due definitions fired in one pass at most (each builds and admits its run's job); more wait
    for the next passes, taken in turn (red29 R3: a pass's work is bounded, so a definition written
    meanwhile is read within one pass)."""

    def __init__(self, store: Any, jobs: RunJobs, *, now: Callable[[], datetime], misfire_grace_s: float = 60.0,
                 publish: Callable[[dict[str, Any]], None] | None = None, max_per_user_hour: int = 0) -> None:
        self.store = store
        self.jobs = jobs
        self.now = now
        self.misfire_grace_s = misfire_grace_s
        self.max_per_user_hour = max_per_user_hour
        self._fired: dict[str, deque[tuple[datetime, str]]] = {}  # per user, (instant, definition) fired in the last hour
        self._skip_log = SkipLog(max_per_user_hour)  # skips not recorded yet, per definition (red team 17, R4)
        self._rate_skips = RateSkips(max_per_user_hour, misfire_grace_s)  # over the rate, told from memory (s38)
        self._busy_said: dict[str, str] = {}  # per definition id: the last "not fired now" logged
        self._publish = publish or (lambda event: None)
        self._turn = 0  # where the next pass's order of owners starts (:func:`.turns.in_turn`)
        self._turns: dict[str, int] = {}  # per owner, where the next pass's order of their due definitions starts
        self._one_pass = threading.Lock()  # passes never overlap: the caches and counts above are the pass's
        self._schedules: dict[tuple[str, str], CronSchedule] = {}
        self._next_due: dict[tuple[str, int], datetime | None] = {}
        """(definition id, version) → its first firing after the stored cursor (None: never again).
        A definition's row changes version whenever its cursor or schedule does, so an entry is
        valid while its key matches; most ticks then cost a dict lookup per definition instead of
        a cron computation (~0.1 ms each)."""

    def _schedule(self, d: JobDefinition) -> CronSchedule | None:
        if d.schedule is None:
            return None
        key = (d.schedule, d.timezone)
        if key not in self._schedules:
            # stored schedules were validated when saved; the admin's interval rule applied then
            self._schedules[key] = parse_schedule(d.schedule, d.timezone, min_interval_s=0)
        return self._schedules[key]

    def fire_due(self, stop: Callable[[], bool] | None = None) -> FiringReport:
        """One pass over every active definition (see module docstring).

        The pass decides what is due from the definitions' columns alone (schedule, zone, cursor,
        version: :func:`~jupyter_sched.store.definitions.list_firing_heads`); the whole row, spec
        included, is read only for a definition that is due (red29 R3: every spec decoded every 5 s
        took ~1.2 s of the engine's thread at 1,500 definitions). At most :attr:`max_due_per_pass`
        due definitions are fired in one pass, their owners in turn (:func:`.turns.in_turn`); the rest
        are taken by the next passes (``report.next_due`` is then ``now``).

        One pass at a time (a lock): the service runs passes on their own thread
        (:meth:`~jupyter_sched.services.definitions.DefinitionsService.on_leader_tick`), tests and
        scripts call this directly. ``stop()`` is asked before each firing; True ends the pass there
        (the rest stay due: ``report.next_due`` is ``now``)."""
        with self._one_pass:
            return self._pass(stop)

    def _pass(self, stop: Callable[[], bool] | None) -> FiringReport:
        from ..store.definitions import definition_owners, get_definition, list_firing_heads

        report = FiringReport()
        now = self.now()
        with self.store.transaction(write=False) as tx:
            heads = list_firing_heads(tx)
        due: list[JobDefinition] = []
        for head in heads:
            try:
                self._schedule(head)
            except SchedError as exc:  # a stored schedule that no longer parses never fires: paused, said once
                self._pause_unreadable(head, exc, now)
                continue
            at = self._due(head)
            if at is not None and now >= at:
                due.append(head)
        owners: dict[str, str] = {}
        if len(due) > 1:  # owners in turn: one user's many never hold another's few back (s37-defs, red36)
            with self.store.transaction(write=False) as tx:
                owners = definition_owners(tx, [head.id for head in due])  # the owner column alone
            if len(due) > self.max_due_per_pass:
                report.next_due = now  # the rest at the next pass
            due, self._turns = in_turn(due, lambda head: owners.get(head.id, ""), self.max_due_per_pass,
                                       self._turns, self._turn)
            self._turn += 1
        rate_skips: list[RateSkip] = []
        for head in due:
            if stop is not None and stop():  # no longer leading, or shutting down: the next leader fires the rest
                report.next_due = now
                break
            schedule = self._schedule(head)
            skip = None if schedule is None else self._rate_skips.decide(head, schedule, now, self._fired)
            if skip is not None and owners.get(head.id, skip.definition.user) == skip.definition.user:
                rate_skips.append(skip)  # no row read: written with the pass's other skips (session 38)
                continue
            try:
                with self.store.transaction(write=False) as tx:
                    definition = get_definition(tx, head.id)  # the whole row: only of a due definition
                if definition.version != head.version:
                    raise ConflictError(f"definition {head.id} changed while firing", field="definition_id")
                self._fire(definition, now, report)
            except NotFoundError:
                report.conflicts += 1  # deleted meanwhile
            except ConflictError:
                report.conflicts += 1  # changed meanwhile: the next pass plans from the fresh row
            except BusyError as exc:  # the owner cannot be told now (the hub down, or refusing the service's token)
                if self._busy_said.get(head.id) != str(exc):  # said once, not a traceback a tick (hub admin 22)
                    self._busy_said[head.id] = str(exc)
                    log.warning("definition %s: not fired now: %s; retried at every tick", head.id, exc)
            except SchedError as exc:
                if self._busy_said.get(head.id) != str(exc):  # a traceback once per cause, not every
                    self._busy_said[head.id] = str(exc)      # 5 s for ever (hubadmin26 B17)
                    log.exception("definition %s: firing failed; retried at every tick (said again only when "
                                  "the cause changes)", head.id)
            else:
                self._busy_said.pop(head.id, None)
        self._write_rate_skips(rate_skips, now, report)
        dues = [at for d in heads if (at := self._next_due.get((d.id, d.version))) is not None]
        if report.next_due is None:
            report.next_due = min(dues, default=None)
        return report

    def _due(self, definition: JobDefinition) -> datetime | None:
        """``definition``'s first firing after its stored cursor (None: never), cached per
        (id, version): a definition's version changes whenever its cursor or schedule does."""
        schedule = self._schedule(definition)
        if schedule is None or definition.cursor is None:
            return None
        key = (definition.id, definition.version)
        if key not in self._next_due:
            if len(self._next_due) > 4 * _CACHE_PER_DEFINITION_LIMIT:
                self._next_due.clear()
            self._next_due[key] = next_firing(schedule, definition.cursor)
        return self._next_due[key]

    def _pause_unreadable(self, definition: JobDefinition, exc: SchedError, now: datetime) -> None:
        """Pause ``definition``, whose stored schedule no longer parses (a hand edit of the store, a row of
        another version: hubadmin26 B17 — a 12-line traceback every 5.5 s for ever, "retried" though it
        never could be), with one WARNING and one ``definition_updated`` record naming it, its owner and the
        fix. Another server pausing it first (a conflict) is the same outcome."""
        from ..store.definitions import get_definition, update_definition

        try:
            with self.store.transaction(now=now) as tx:
                current = get_definition(tx, definition.id)  # its name and owner: the pass read only its schedule
                if current.paused:
                    return
                definition = current
                fix = (f"fix it with `jupyter-sched definitions edit {definition.id} --cron '…'` (the owner or an "
                       "admin), then resume it")
                said = (f"definition {definition.id} ({definition.name!r}, {definition.user}) paused: its stored "
                        f"schedule {definition.schedule!r} no longer parses ({exc.message}); {fix}")
                update_definition(tx, replace(current, paused=True, updated_at=now))
                tx.add_event(actor="scheduler", action="definition_updated", job_id=None, user=definition.user,
                             message=said, details={"definition_id": definition.id, "fields": ["paused"],
                                                    "why": "schedule_unreadable", "schedule": definition.schedule})
        except (ConflictError, NotFoundError):
            return
        log.warning("jupyter_sched: %s", said)

    def _fire(self, definition: JobDefinition, now: datetime, report: FiringReport) -> None:
        from ..store.codec import JobRecord
        from ..store.definitions import get_definition, insert_run, update_definition

        schedule = self._schedule(definition)
        due = self._due(definition)
        if schedule is None or definition.cursor is None or due is None or now < due:
            return
        plan = plan_firings(schedule, cursor=definition.cursor, now=now, grace_s=self.misfire_grace_s,
                            run_missed_once=definition.missed is MissedPolicy.RUN_ONCE)
        if plan.cursor <= definition.cursor and not plan.fire:
            return
        fire: list[datetime] = []
        skips: list[tuple[datetime, int]] = []
        held = self._overlap(definition) if plan.fire else FIRE
        for at in plan.fire:
            over = -1 if held.skip else self._over_rate(definition, at)
            (fire.append(at) if over is None else skips.append((at, over)))
        built = [self._job(definition, at) for at in fire]
        runs = [job for job, _ in built]
        refused = next((error for _, error in built if error is not None), None)  # for its team: pauses it
        skipped, records = self._skip_log.records(definition, skips, fired_again=fire[-1] if fire else None, now=now,
                                              why=held.why, cause=held.cause)
        if fire:
            kept = None  # a run again: the skips before it are over (their audit records stay)
        elif held.skip:
            kept = skipped_after(definition.skipped, [at for at, _ in skips], cause=held.cause, why=held.why,
                                 job_id=held.job_id)
        else:
            kept = skipped_after(definition.skipped, [at for at, _ in skips], cause="rate", job_id=None,
                                 why=self._skip_log.rate_text(definition, skips[-1][1]) if skips else "")
        created: list[Job] = []
        with self.store.transaction(now=now) as tx:
            current = get_definition(tx, definition.id)
            if current.version != definition.version:
                raise ConflictError(f"definition {definition.id} changed while firing", field="definition_id")
            for at, job in zip(fire, runs, strict=True):
                run = DefinitionRun(definition_id=definition.id, job_id=job.id, trigger=RunTrigger.SCHEDULE,
                                    scheduled_for=at, parameters=dict(job.spec.parameters), created_at=now,
                                    **_catch_up_fields(plan) if at == fire[0] else {})
                if not insert_run(tx, run, JobRecord(job=job)):
                    report.duplicates += 1
                    continue
                created.append(job)
                late = f" — {run_catch_up_text(run, definition.timezone)}" if run.catch_up else ""
                tx.add_event(actor="scheduler", action="definition_fired", job_id=job.id, user=definition.user,
                             message=f"definition {definition.name!r} fired for {at.isoformat()}{late}",
                             details={"definition_id": definition.id, "scheduled_for": at.isoformat(),
                                      "state": job.state.value, "catch_up": run.catch_up, "missed": run.missed,
                                      "late_s": round(run.late_s or 0.0, 3)})
            for message, details in records:
                tx.add_event(actor="scheduler", action="definition_skipped", job_id=None, user=definition.user,
                             message=message, details=details)
            if plan.missed:
                assert plan.missed_from is not None and plan.missed_to is not None
                policy = (f"one catch-up run, for {fire[0].isoformat()}" if plan.catch_up and fire else
                          "no catch-up run")
                tx.add_event(actor="scheduler", action="definition_missed", job_id=None, user=definition.user,
                             message=f"definition {definition.name!r} missed {plan.missed} firing(s) from "
                                     f"{plan.missed_from.isoformat()} to {plan.missed_to.isoformat()} while no "
                                     f"server was running ({definition.missed.value}: {policy})",
                             details={"definition_id": definition.id, "missed": plan.missed,
                                      "from": plan.missed_from.isoformat(), "to": plan.missed_to.isoformat()})
                report.missed += plan.missed
            paused = refused is not None and not current.paused
            if paused:
                assert refused is not None
                said = (f"definition {definition.id} ({definition.name!r}, {definition.user}) paused: its runs are "
                        f"refused — {refused.message}; then resume it with jupyter-sched definitions resume "
                        f"{definition.id}")
                tx.add_event(actor="scheduler", action="definition_updated", job_id=None, user=definition.user,
                             message=said, details={"definition_id": definition.id, "fields": ["paused"],
                                                    "why": "team_refused", "team": definition.team})
            written = update_definition(tx, replace(current, cursor=plan.cursor, skipped=kept,
                                                    paused=current.paused or paused))
        self._rate_skips.wrote(written, version=written.version, skipped=kept)
        if paused:
            log.warning("jupyter_sched: %s", said)
        self._skip_log.keep(definition.id, skipped)
        report.skipped += len(skips)
        report.created.extend(job.id for job in created)
        if created:
            self.jobs.submitted(created)
            for job in created:
                self._publish({"type": "definition_run", "data": {"definition_id": definition.id, "job_id": job.id,
                                                                  "user": definition.user}})  # owner's eyes only

    def _over_rate(self, definition: JobDefinition, at: datetime) -> int | None:
        """None when ``definition``'s owner may fire it at ``at`` (then counted: a firing planned
        again after a conflict is counted once), else the firings counted in the hour before it."""
        limit = self.max_per_user_hour
        if not limit:
            return None
        if definition.user not in self._fired:
            self._fired[definition.user] = self._fired_before(definition.user, at)
        fired = self._fired[definition.user]
        counted = over_rate(fired, at, definition.id, limit)
        if counted is None and (at, definition.id) not in fired:
            fired.append((at, definition.id))
        return counted

    def _write_rate_skips(self, skips: list[RateSkip], now: datetime, report: FiringReport) -> None:
        """Write the firings the pass skipped over their owners' rate from memory (:mod:`.rate_skips`): ONE
        transaction for them all — each definition's cursor, version and ``skipped`` by compare-and-set, its
        ``definition_skipped`` record when one is due — as :meth:`_fire` writes a rate skip, without its reads.
        A definition changed meanwhile is left as it is (a conflict: its next firing takes the full path)."""
        from ..store.definitions import record_skips

        if not skips:
            return
        planned = []
        for skip in skips:
            d, instants = skip.definition, list(skip.instants)
            state, records = self._skip_log.records(d, instants, fired_again=None, now=now)
            kept = skipped_after(d.skipped, [at for at, _ in instants], cause="rate", job_id=None,
                                 why=self._skip_log.rate_text(d, instants[-1][1]))
            assert kept is not None
            planned.append((skip, state, records, kept))
        written = []
        with self.store.transaction(now=now) as tx:
            for skip, state, records, kept in planned:
                d = skip.definition
                if not record_skips(tx, d.id, version=d.version, cursor=skip.cursor, skipped=kept):
                    continue
                written.append((skip, state, kept))
                for message, details in records:
                    tx.add_event(actor="scheduler", action="definition_skipped", job_id=None, user=d.user,
                                 message=message, details=details)
        done = {skip.definition.id for skip, _, _ in written}
        for skip, state, kept in written:
            self._skip_log.keep(skip.definition.id, state)
            self._rate_skips.wrote(skip.definition, version=skip.definition.version + 1, skipped=kept)
            report.skipped += len(skip.instants)
        for skip in skips:
            if skip.definition.id not in done:
                report.conflicts += 1
                self._rate_skips.forget(skip.definition.id)

    def _overlap(self, definition: JobDefinition) -> OverlapDecision:
        """Whether ``definition``'s firing runs beside its newest scheduled run (:func:`.overlap.overlap_decision`
        over that run's job as stored now; a run whose job retention removed holds nothing). A "run now"
        holds no firing: the owner asked for it besides the schedule (as a Job made from a CronJob by hand
        is none of the CronJob's active jobs)."""
        from ..store.definitions import list_runs

        with self.store.transaction(write=False) as tx:
            runs = list_runs(tx, [definition.id], limit=1, trigger=RunTrigger.SCHEDULE)
        if not runs or not runs[0].job_id:
            return overlap_decision(definition.overlap, None)
        try:
            job = self.store.get_job(runs[0].job_id).job
        except SchedError:  # removed by retention: nothing holds the next firing
            return overlap_decision(definition.overlap, None)
        reason = job.reason if job.state is JobState.PENDING else None
        previous = PreviousRun(job_id=job.id, state=job.state, reason_code=None if reason is None else reason.code,
                               reason="" if reason is None else reason.message)
        return overlap_decision(definition.overlap, previous)

    def _fired_before(self, user: str, at: datetime) -> deque[tuple[datetime, str]]:
        """The scheduled runs of ``user``'s definitions in the hour before ``at``, from the store: a
        restart of the engine does not grant another hour's firings at once (red team 17, R4)."""
        from ..store.definitions import list_definition_ids, list_runs

        with self.store.transaction(write=False) as tx:
            ids = list_definition_ids(tx, user=user)  # ids only, no spec decoded (red29 R3)
            runs = list_runs(tx, ids, limit=self.max_per_user_hour + len(ids) + 1) if ids else []
        recent = sorted((r.scheduled_for, r.definition_id) for r in runs
                        if r.trigger is RunTrigger.SCHEDULE and at - _HOUR < r.scheduled_for <= at)
        return deque(recent[-self.max_per_user_hour:])

    def _job(self, definition: JobDefinition, at: datetime) -> tuple[Job, SchedError | None]:
        """The run's job for the firing at ``at``, and the refusal that pauses the definition (one for its team,
        :func:`_team_left`; None otherwise: built, or refused for another cause, said on the rejected run)."""
        body = run_body(name=run_name(definition, at, RunTrigger.SCHEDULE), notebook=definition.notebook,
                        script=definition.script, args=definition.args, job=definition.job,
                        parameters=definition.parameters, team=definition.team)
        try:
            job = self.jobs.build(body, user=definition.user)
        except BusyError:
            raise  # who the owner is cannot be told now (the hub did not answer): retried next tick
        except SchedError as exc:
            error = _team_left(exc, definition)
            job = self.jobs.rejected(body, user=definition.user, error=error)
            return link_run(job, definition.id), error if error.field == "team" else None
        return link_run(job, definition.id), None


def _team_left(error: SchedError, definition: JobDefinition) -> SchedError:
    """A firing refused for its team (field ``team``: its owner is no longer a member — a hub group
    renamed or deleted, hubadmin23 A9) said with the definition's way out: the owner's teams now and
    ``jupyter-sched definitions edit <id> --team <one of them>``; any other refusal as it was."""
    if error.field != "team":
        return error
    teams = [str(t) for t in (error.details or {}).get("teams", ()) if isinstance(t, str)]
    if teams:
        pick = teams[0] if len(teams) == 1 else "<one of them>"
        fix = (f"{definition.user}'s team{'s are' if len(teams) > 1 else ' is'} now {', '.join(teams)}: change the "
               f"definition's team with jupyter-sched definitions edit {definition.id} --team {pick}")
    else:
        fix = f"{definition.user} is in no team now: an admin adds them to one, or the definition is deleted"
    return SchedError(f"{error.message.rstrip('.')}: {definition.user} is no longer a member of team {definition.team}, "
                      f"which this definition charges — {fix}",
                      field="team", hint=error.hint, details=error.details)


def link_run(job: Job, definition_id: str) -> Job:
    """``job`` marked as a run of ``definition_id`` (its spec says so wherever the job is shown)."""
    return replace(job, spec=replace(job.spec, definition_id=definition_id))
