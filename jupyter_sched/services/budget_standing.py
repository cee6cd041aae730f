"""Where each GPU-hour budget stands now, in words an admin and a user can act on (hubadmin24 B8).

:func:`standings` reads this period's allocated GPU-hours from the store (summed by the database,
as ``GET me``'s ``used_gpu_hours``) for every budget of a quota set: used, limit,
period and when the period resets (00:00 UTC; weeks on Monday). :func:`spent_warnings` turns the
spent ones into the warnings GET/PUT quotas give (and the PUT's audit keeps): "budget of nlp already
spent: 0.48 of 0.3 GPU-hours this month — its 9 pending GPU jobs wait until Jan 1 00:00 UTC (when
the month's budget resets) or until an admin raises it; running work runs on". ``GET me`` says each
of the caller's budgets' ``resets_at`` (:func:`period_reset`); ``status`` words it
(:func:`~jupyter_sched.wording.status.budget_lines`).

The numbers are GPU-hours said with two decimals at most (:func:`~..model.units.gpu_hours_text`).
No budget here ever stops running work, nor holds a 0-GPU job (it uses no GPU-hours: B11).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..accounting import period_start
from ..accounting.usage import gpu_figures
from ..model import GPU_MILLI, Budget, Job, QuotaSet
from ..model.periods import next_period_start, this_period_text
from ..model.units import clock_text, format_duration, gpu_hours_phrase, gpu_hours_text, gpus_phrase
from ..queues.limits import TimeLimitRule
from ..scheduling.budget_fit import (
    LEASE_BUDGET_S,
    budget_fit,
    held_clause,
    running_holds,
    spending_lease,
    unbounded_holder,
)

__all__ = ["BudgetStanding", "admin_view", "period_reset", "spent_on_submit", "spent_warnings", "standings"]


@dataclass(frozen=True, slots=True)
class BudgetStanding:
    """One budget now.

    Attributes:
        budget: the budget (team, user or None for the whole team, GPU-hours, period).
        used_gpu_hours: GPU-hours allocated in the current period (>= 0).
        resets_at: the start of the next period (UTC).
    """

    budget: Budget
    used_gpu_hours: float
    resets_at: datetime

    @property
    def spent(self) -> bool:
        """True when the period's GPU-hours are used up (the scheduler holds new GPU work)."""
        return self.used_gpu_hours >= self.budget.gpu_hours

    @property
    def who(self) -> str:
        """``nlp`` or ``user ann in nlp``."""
        b = self.budget
        return b.team if b.user is None else f"user {b.user} in {b.team}"

    @property
    def numbers(self) -> str:
        """``0.48 of 0.3 GPU-hours this month``."""
        return (f"{gpu_hours_text(self.used_gpu_hours)} of {gpu_hours_phrase(self.budget.gpu_hours)} "
                f"{this_period_text(self.budget.period)}")


def period_reset(now: datetime, period: str) -> datetime:
    """Start of the period after the one holding ``now`` (``"day"``, ``"week"`` from Monday,
    ``"month"``, ``"quarter"``), 00:00 UTC. Raises ValueError for an unknown period (as ``period_start``)."""
    return next_period_start(now, period)


def standings(store: object, budgets: Iterable[Budget], *, now: datetime) -> list[BudgetStanding]:
    """Every budget of ``budgets`` now, in their order. ``store``: has ``gpu_seconds(since=, until=,
    team=, user=)`` (:meth:`~jupyter_sched.store.Store.gpu_seconds`: summed by the database, one query
    per budget — the rows never leave it; the same figure as ``GET me``'s ``used_gpu_hours``)."""
    out = []
    for b in budgets:
        seconds = store.gpu_seconds(since=period_start(now, b.period), until=now,  # type: ignore[attr-defined]
                                    team=b.team, user=b.user)
        out.append(BudgetStanding(budget=b, used_gpu_hours=gpu_figures(float(seconds))[1],
                                  resets_at=period_reset(now, b.period)))
    return out


def spent_warnings(quotas: QuotaSet, spent: Iterable[BudgetStanding], pending: Mapping[tuple[str, str], int]) -> list[str]:
    """One warning per spent budget of ``quotas``: the numbers, what waits and until when.

    Args:
        spent: the standings (only the spent ones are said).
        pending: pending GPU jobs per ``(team, user)`` (0-GPU jobs not counted: a budget never holds them).
    """
    out = []
    for s in spent:
        if not s.spent or s.budget not in quotas.budgets:
            continue
        b = s.budget
        waiting = sum(n for (team, user), n in pending.items() if team == b.team and b.user in (None, user))
        jobs = (f"its {waiting} pending GPU {'job waits' if waiting == 1 else 'jobs wait'}" if waiting  # newuser38 n26
                else "new GPU jobs wait")
        if b.user is not None:
            jobs = jobs.replace("its ", f"{b.user}'s ", 1)
        out.append(f"budgets: {s.who} has already spent its GPU-hour budget ({s.numbers}): {jobs} until "
                   f"{clock_text(s.resets_at, None)} (when the {b.period}'s budget resets) or until an admin raises it; "
                   "running work runs on, CPU-only jobs are not held")
    return out


def spent_on_submit(store: object, quotas: QuotaSet, team: str, user: str, gpu_milli: int, *, now: datetime,
                    teams: Sequence[str] = ()) -> list[str]:
    """The submit answer's warning for GPU work (``gpu_milli`` > 0) charged to a team (or user) whose
    budget is spent now: ``team nlp has spent its GPU-hour budget (0.48 of 0.3 GPU-hours this month):
    this job waits until Jan 1 00:00 UTC (when the month's budget resets) or until an admin raises it``
    (hubadmin24 B8: such a submit said only "waiting for the next scheduling cycle"). No store read
    without a budget that governs it. ``teams``: the user's teams — the first other one no spent budget holds
    (and that has a quota line where lines exist) is named, as a class refusal names a team allowing the class
    (newuser36 n9: a member of nlp and vision was told to wait 19 h, never that vision had room)."""
    mine = [b for b in quotas.budgets if b.team == team and b.user in (None, user)]
    if gpu_milli <= 0 or not mine:
        return []
    said = [f"{'team ' if s.budget.user is None else ''}{s.who} has spent its GPU-hour budget ({s.numbers}): this job "
            f"waits until {clock_text(s.resets_at, None)} (when the {s.budget.period}'s budget resets) or until an "
            "admin raises it" for s in standings(store, mine, now=now) if s.spent][:1]
    if said:
        for other in teams:
            if other == team or quotas.unlisted([other]):
                continue
            theirs = [b for b in quotas.budgets if b.team == other and b.user in (None, user)]
            if not any(s.spent for s in standings(store, theirs, now=now)):
                said[0] += f", or submit it with --team {other}, which no spent budget holds"
                break
    return said



def overrun_on_submit(store: object, quotas: QuotaSet, team: str, user: str, gpu_milli: int, limit_s: float | None,
                      *, now: datetime, safe: bool = False, running: Callable[[], Iterable[Job]] | None = None,
                      rules: Sequence[TimeLimitRule] = (), lease_s: float = LEASE_BUDGET_S) -> list[str]:
    """The submit answer's warning for GPU work that may use more GPU-hours than its budget has left —
    ``gpu_milli`` times its time limit (``limit_s``; None: no limit bounds it) — while the budget is not
    spent yet (:func:`spent_on_submit` says a spent one): ``this job may use up to 3 GPU-hours (1 GPU for
    its 3h time limit) but team vision has 0.34 GPU-hours of its budget left (4.56 of 4.9 GPU-hours
    this month): it starts, and a budget never stops running work, so it may overrun it — …``
    (hubadmin25 B22: Slurm's ``AccountingStorageEnforce=safe`` holds such a job, ``AssocGrpGRESMinutes``);
    ``safe``: ``budget_admission`` is ``"safe"``, so it waits instead — decided as the scheduling gate decides
    it (:func:`~..scheduling.budget_fit.budget_fit`), the GPU-hours left less what the budget's running work
    (``running()``: the unfinished jobs, read only then; ``rules``: the queues' time limits they are stopped
    at; ``lease_s``: the lease horizon a running kernel lease holds, red30 R5) may still spend by its limits (red28 R3: the warning compared with the GPU-hours spent only, so a job
    the gate held got no word at submit). No store read without a budget that governs it."""
    mine = [b for b in quotas.budgets if b.team == team and b.user in (None, user)]
    if gpu_milli <= 0 or not mine:
        return []
    gpus = gpu_milli / GPU_MILLI
    holds: dict[tuple[str, str | None], float] | None = None
    jobs: list[Job] = []
    for s in standings(store, mine, now=now):
        left = s.budget.gpu_hours - s.used_gpu_hours
        if s.spent:
            continue
        hold = 0.0
        if safe and running is not None:
            if holds is None:
                jobs = list(running())
                holds = running_holds(jobs, rules, now, lease_s)
            hold = holds.get((team, s.budget.user), 0.0)
        short = budget_fit(left, hold, gpus, limit_s)
        if short is None:
            continue
        holder = unbounded_holder(jobs, rules, team, s.budget.user) if hold == float("inf") else None
        lease = spending_lease(jobs, team, s.budget.user) if holder is None and hold > 0 else None
        whose = f"{'team ' if s.budget.user is None else ''}{s.who} has {gpu_hours_phrase(left)} of its " \
                f"budget left ({s.numbers}){held_clause(left, hold, holder, lease)}"
        bound = (f"this job has no time limit, so its GPU-hours are not bounded, but {whose}" if short.most is None
                 else f"this job may use up to {gpu_hours_phrase(short.most)} ({gpus_phrase(gpus)} for its "
                 f"{format_duration(limit_s or 0)} time limit) but {whose}")
        then = ("it starts, and a budget never stops running work, so it may overrun it" if not safe else
                "it waits until the budget resets (c.SchedApp.budget_admission is safe)" if hold <= 0 else
                "it waits until running work leaves enough of it or the budget resets (c.SchedApp.budget_admission "
                "is safe)")
        fix = (f"give it a time limit of at most {format_duration(short.fits_s)} to stay within, or ask an admin to "
               "raise the budget" if short.fits_s >= 60 else "ask an admin to raise the budget if it cannot wait")
        return [f"{bound}: {then} — {fix}"]
    return []


def admin_view(store: object, quotas: QuotaSet, live: Iterable[Any], *, now: datetime,
               limit_of: Callable[[Any], float | None]) -> list[dict[str, object]]:
    """Every budget's standing for an admin (hubadmin25 B16: the admin read a member's ``status`` or
    summed ``usage`` to learn it): GET quotas' ``budget_standings``, in the set's order.

    Args:
        store: as :func:`standings` reads it.
        live: the unfinished job records (``.job``: :class:`~..model.Job`).
        now: the standings' instant (UTC).
        limit_of: a job's time limit in seconds (None: none), as the engine applies it.

    Returns:
        dicts of ``team``, ``user`` (None: the whole team), ``gpu_hours``, ``period``, ``used_gpu_hours``,
        ``left_gpu_hours`` (>= 0), ``resets_at`` (ISO 8601 UTC), ``running_may_use_gpu_hours`` — GPU-hours
        the budget's admitted and running work may still use up to its time limits or the reset, whichever
        comes first (None: some of it has no time limit) —, ``pending_gpu_jobs`` and ``text``, in words:
        ``nlp: 240 of 300 GPU-hours used this month (80 %), 60 left until Jan 1 00:00 UTC; running work may
        use 12 more by its time limits; a new job fits while its GPUs times time limit is at most 60 GPU-hours
        (e.g. 1 GPU for 60h00m, 8 GPUs for 7h30m)`` — the rule ``c.SchedApp.budget_admission = "safe"`` admits by.
    """
    from ..model import JobState
    from ..wording.budgets import standing_text

    jobs: list[Any] = [getattr(r, "job", r) for r in live]
    out: list[dict[str, object]] = []
    for s in standings(store, quotas.budgets, now=now):
        b = s.budget
        mine = [j for j in jobs if j.spec.team == b.team and b.user in (None, j.spec.user)]
        may: float | None = 0.0
        for job in mine:
            if job.state not in (JobState.ADMITTED, JobState.RUNNING) or job.allocation is None:
                continue
            gpus = len(job.allocation.all_gpu_uuids()) * job.allocation.gpu_milli / GPU_MILLI
            limit_s = limit_of(job)
            began = job.started_at or job.admitted_at or now
            if limit_s is None:
                may = None
                continue
            end = min(began + timedelta(seconds=limit_s), s.resets_at)
            if may is not None:
                may += gpus * max(0.0, (end - now).total_seconds()) / 3600
        pending = sum(1 for j in mine if j.state is JobState.PENDING and j.spec.resources.total_milli > 0)
        left = max(0.0, b.gpu_hours - s.used_gpu_hours)
        view: dict[str, object] = {
            "team": b.team, "user": b.user, "gpu_hours": b.gpu_hours, "period": b.period,
            "used_gpu_hours": round(s.used_gpu_hours, 4), "left_gpu_hours": round(left, 4),
            "resets_at": s.resets_at.isoformat().replace("+00:00", "Z"),
            "running_may_use_gpu_hours": None if may is None else round(may, 4), "pending_gpu_jobs": pending}
        # the one sentence, which the CLI says again from these numbers in its reader's zone (newuser30 n11)
        view["text"] = standing_text(view, now)
        out.append(view)
    return out
