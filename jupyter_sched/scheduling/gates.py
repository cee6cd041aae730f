"""Gates before placement: a held owner or job (team left), class grant, requeue backoff, the per-user cap on running
CPU-only jobs, admit windows, GPU-hour budgets.

A gate that is closed pends the job with one primary reason (``Held``, ``OwnerRemoved``, ``TeamMembership``, ``Priority``, ``Backoff``,
``CpuJobLimit``, ``OutsideTimeWindow``, ``BudgetExhausted``) and its numbers; budgets follow DESIGN.md — new work
pends, running work is never killed. Windows are evaluated in the profile's zone (case 010).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import GPU_MILLI, Job, PendingReason, PriorityClass
from ..model.periods import this_period_text
from ..model.units import format_duration, gpu_hours_phrase, gpu_hours_text, gpus_phrase, said_time
from ..queues.limits import effective_limit
from ..queues.windows import applies, is_open, next_open
from ..wording.quota import DOCTOR_FIX, unreadable_row_text
from ..wording.reinstall import REINSTALLED, reinstalled_text
from .budget_fit import (
    budget_fit,
    budget_limit,
    held_clause,
    running_holds,
    spending_lease,
    spent_by,
    unbounded_holder,
)
from .ports import gate as port_gate
from .share_charge import charged_gpus, placed_charge

if TYPE_CHECKING:
    from .context import CycleContext
    from .snapshot import JobHold, Reinstall

__all__ = ["CPU_JOB_LIMIT", "CPU_JOB_SETTING", "HELD", "HELD_CODES", "OWNER_REMOVED", "OWNER_UNCONFIRMED",
           "QUOTA_ROW_UNREADABLE", "REINSTALLED", "TEAM_MEMBERSHIP",
           "UNCONFIRMED_WHY", "borrow_window_closed", "gate", "gate_unheld", "held_gate", "held_reason",
           "reinstalled_reason"]

CPU_JOB_LIMIT = "CpuJobLimit"
"""Code of a 0-GPU job pended by :attr:`~.profile.SchedulingProfile.max_running_cpu_jobs_per_user`."""
OWNER_REMOVED = "OwnerRemoved"
"""Code of a job whose owner is in ``Snapshot.held_users`` (hub mode: no longer a hub user)."""
TEAM_MEMBERSHIP = "TeamMembership"
"""Code of a job in ``Snapshot.held_jobs``: its owner left its team, or lost its class there (red team 18, R4)."""
OWNER_UNCONFIRMED = "OwnerUnconfirmed"
"""Code of a job whose owner is held with :data:`UNCONFIRMED_WHY`: the service has just started and the hub has
not yet said whether its owner is still a user (hubadmin23 A5)."""
UNCONFIRMED_WHY = "not yet confirmed by the hub as a current user since the service started"
"""The ``Snapshot.held_users`` sentence of an owner the hub has not yet confirmed (pended ``OwnerUnconfirmed``)."""
HELD = "Held"
"""Code of a job a person held (:attr:`Job.held`: ``jupyter-sched hold``; hubadmin25 B18): it waits for a release."""
QUOTA_ROW_UNREADABLE = "QuotaRowUnreadable"
"""Code of a GPU job held by a quota, budget or team policy row that does not read (verify27 V6: fail closed)."""
HELD_CODES = frozenset({HELD, OWNER_REMOVED, TEAM_MEMBERSHIP, OWNER_UNCONFIRMED, QUOTA_ROW_UNREADABLE, REINSTALLED})
"""Codes of jobs held until someone acts (an admin, or the owner cancels): no ETA from GPUs (``.eta``)."""
CPU_JOB_SETTING = "c.SchedApp.max_running_cpu_jobs_per_user"
"""The server setting the reason names (the core reads the value from its profile)."""


_NORMAL = PriorityClass.NORMAL  # read per job: a member looked up on an Enum class is slow
_NAMES = {p: p.value for p in PriorityClass}  # Enum's .value is a Python-level descriptor: read once here


def held_gate(ctx: CycleContext, job: Job) -> PendingReason | None:
    """``Held``, ``OwnerRemoved``, ``OwnerUnconfirmed`` or ``TeamMembership`` when ``job`` is held, else None.

    A person's hold (:attr:`Job.held`) comes first: whoever put it must release it before anything
    else can let the job start (hubadmin25 B18; Slurm's ``JobHeldUser``/``JobHeldAdmin``).

    Checked before any quota words (:func:`~.cycle._visit`): a job charged to a team its owner left
    is held for that, whatever the quota now says of the team (hubadmin23 A9: after a hub group was
    renamed, the hold's words were replaced by "team vision has no quota line … ETA never", which
    named neither the owner's new team nor the way out)."""
    spec = job.spec
    if job.held is not None:
        return held_reason(job)
    if ctx.snap.reinstalled is not None and not job.is_lease:  # a lease launches nothing (newuser31 N10)
        return reinstalled_reason(ctx.snap.reinstalled)
    held = ctx.snap.held_users.get(spec.user) if ctx.snap.held_users else None
    if held is not None:
        return _owner_unconfirmed(spec.user) if held == UNCONFIRMED_WHY else _owner_removed(
            spec.user, held, job.id, ctx.snap.removed_groups.get(spec.user, ()))
    hold = ctx.snap.held_jobs.get(job.id) if ctx.snap.held_jobs else None
    # not when an admin moved it to another team since (s24: teams move), nor when its class was changed
    # since to another than the one no longer granted (hubadmin25 B18: jupyter-sched update J --priority normal)
    if hold is not None and hold.team == spec.team and hold.priority in (None, _NAMES[spec.priority]):
        return _team_membership(spec.user, hold, job.id)
    if ctx.snap.quotas.unreadable and spec.resources.total_milli:
        return _unreadable_row(ctx, job)
    return None


def _unreadable_row(ctx: CycleContext, job: Job) -> PendingReason | None:
    """``QuotaRowUnreadable`` when a quota line, budget or team policy row of ``job``'s scope does not
    read (verify27 V6): the row fails closed — its team's (user's, GPU model's) new GPU work waits,
    named, until an admin repairs or removes it; before, the limit was dropped and the team unbounded."""
    spec = job.spec
    for row in ctx.snap.quotas.unreadable:
        if row.holds(spec.team, spec.user, spec.resources.gpu_models):
            return PendingReason(
                code=QUOTA_ROW_UNREADABLE,
                message=unreadable_row_text(row.error, row.table, row.team, row.user, row.gpu_model),
                details={"table": row.table, "row": row.key, "team": row.team, "user": row.user,
                         "model": row.gpu_model},
                unblock=f"starts when {DOCTOR_FIX}",
                eta_reason="held until an admin repairs or removes the row that does not read")
    return None


def gate(ctx: CycleContext, job: Job) -> PendingReason | None:
    """The closed gate that keeps ``job`` pending (held, class grant, backoff, admit window, budget), or None."""
    if (held := held_gate(ctx, job)) is not None:
        return held
    return gate_unheld(ctx, job)


def gate_unheld(ctx: CycleContext, job: Job) -> PendingReason | None:
    """:func:`gate` for a job :func:`held_gate` lets through (the cycle asks that first, then the quota
    ceilings, then this): the class grant, backoff, ports, the CPU-job cap, admit windows, budgets."""
    spec = job.spec
    policy = ctx.policies.get(spec.team)
    if policy is not None and spec.priority is not _NORMAL and \
            _NAMES[spec.priority] not in policy.allowed_priorities:
        return PendingReason(
            code="Priority", message=f"team {spec.team} may not use priority {spec.priority.value} "
            f"(allowed: {', '.join(policy.allowed_priorities)})",
            details={"priority": spec.priority.value, "allowed": list(policy.allowed_priorities)},
            unblock="ask an admin to allow this class for the team, or resubmit as normal",
            eta_reason="waits until an admin allows the class")
    if job.not_before is not None and job.not_before > ctx.now:
        # Why it was requeued stays visible: a failed start's cause (issue 17), else preemption.
        prior = job.reason
        cause = (str(prior.details.get("cause", "")) if prior is not None and prior.code == "Backoff"
                 else prior.message if prior is not None and prior.code != "Preempted" else "")
        clause, said = ctx.preempted_clause(job)  # by name and why (new user 11, N11/N16)
        why = cause or clause or "requeued after preemption"
        by = said if not cause else {}
        return PendingReason(code="Backoff", message=f"{why}; retries from {said_time(job.not_before)}",
                             details={"not_before": job.not_before.isoformat(), **({"cause": cause} if cause else {}),
                                      **by},
                             eta=job.not_before, unblock="wait for the backoff to pass")
    if (ctx.ports or ctx.snap.ports_bound_outside) and (taken := port_gate(ctx, job)) is not None:  # .ports
        return taken
    cap = ctx.profile.max_running_cpu_jobs_per_user
    if cap and not spec.resources.total_milli:
        running = ctx.cpu_jobs.get(spec.user, 0)
        if running >= cap:
            return _cpu_job_limit(spec.user, running, cap)
    if not ctx.profile.windows:
        return _budget(ctx, job) if ctx.snap.quotas.budgets else None
    windows = [w for w in ctx.profile.windows if applies(w, spec.team, spec.priority.value, "admit")]
    if windows and not any(is_open(w, ctx.now, ctx.profile.timezone) for w in windows):
        opens = [t for w in windows if (t := next_open(w, ctx.now, ctx.profile.timezone)) is not None]
        eta = min(opens) if opens else None
        names = ", ".join(w.name for w in windows)
        return PendingReason(
            code="OutsideTimeWindow",
            message=f"{spec.priority.value} work of {spec.team} runs only inside window {names}"
            + (f"; next opening {said_time(eta)}" if eta else ""),
            details={"windows": [w.name for w in windows], "next_open": eta.isoformat() if eta else None},
            eta=eta, eta_reason="" if eta else "no opening within 8 days",
            unblock="wait for the window to open, or resubmit with another priority class")
    return _budget(ctx, job)


def held_reason(job: Job) -> PendingReason:
    """``held by ana at 2026-12-05T18:40:00Z`` (code ``Held``, hubadmin25 B18): a person held the pending
    job; it is never admitted nor nominated GPUs and takes no reservation; its ETA is unknown ("held").
    The release command is said once, by ``unblock`` (``release it: jupyter-sched release j-…``; newuser27
    n2: the line said it twice, in the message and the unblock). An admin's hold on it (``details.admin``)
    is released by an admin only (Slurm's admin hold); its owner's line offers what they may run instead
    (``details.job``: ``wording.reasons.held_by_admin_unblock``, newuser28 N5). ``job.held`` must be set."""
    hold = job.held
    assert hold is not None
    step = f"jupyter-sched release {job.id}"
    who = f"{hold.by} (an admin)" if hold.admin and hold.by != job.spec.user else hold.by
    return PendingReason(
        code=HELD, message=f"held by {who} at {said_time(hold.at)}",
        details={"by": hold.by, "at": said_time(hold.at), "admin": hold.admin, "job": job.id},
        unblock=(f"an admin releases it: {step} (an admin's hold)" if hold.admin
                 else f"release it: {step}"),
        eta_reason="held")


def reinstalled_reason(change: Reinstall) -> PendingReason:
    """``jupyter_sched was reinstalled under this running server (old → new): restart jupyter lab (jobs stay
    pending)`` (code ``Reinstalled``, newuser31 N10): the wrapper the server would launch moved or is
    another version's, so nothing is launched — the job waits, instead of failing "exit code 2", until the
    server is restarted (then it starts from its place in the queue)."""
    return PendingReason(
        code=REINSTALLED,
        message=reinstalled_text(change.running, change.installed, service=change.service,
                                 wrapper_gone=change.wrapper_gone),
        details={"running": change.running, "installed": change.installed, "wrapper_gone": change.wrapper_gone,
                 "service": change.service},
        eta_reason="held until the restart")


def _owner_removed(user: str, why: str, job_id: str, groups: tuple[str, ...] = ()) -> PendingReason:
    """``held: owner no longer a user of this hub`` (red team 15, R9): the job of a user the hub no
    longer lists is never started as their account; it waits for an admin, and both its ``unblock``
    and its ``eta_reason`` name the two acts (hubadmin22 H8): re-add the user on the hub and to the hub
    ``groups`` they were in (JupyterHub drops a deleted user's memberships with the user, newuser38 n18:
    re-added alone, their jobs were held again as "no longer a member of team vision") — the job then starts
    as before, from its place in the queue — or cancel it (``jupyter-sched cancel <id>``; admins)."""
    again = (f"re-add {user} on the hub and to its group{'s' if len(groups) > 1 else ''} {', '.join(groups)}"
             if groups else f"re-add {user} on the hub")
    acts = f"{again} (it then starts as before) or cancel it: jupyter-sched cancel {job_id} (admins)"
    return PendingReason(code=OWNER_REMOVED, message=f"held: {why}",
                         details={"user": user, "groups": list(groups)},
                         unblock=f"an admin: {acts}",
                         eta_reason=f"held until an admin acts: {acts}")


def _owner_unconfirmed(user: str) -> PendingReason:
    """``held: owner not yet confirmed …`` (hubadmin23 A5): after a start, work queued before it waits
    until the hub has said its owner is still a user — a user deleted meanwhile must never have it
    started as their account. Nobody needs to act: it goes on once the hub answers."""
    return PendingReason(code=OWNER_UNCONFIRMED, message=f"held: owner {UNCONFIRMED_WHY}", details={"user": user},
                         unblock=f"nothing to do: it goes on once the hub confirms {user} (if this lasts, the hub is "
                                 "not answering the scheduler: an admin reads the service log)",
                         eta_reason="waits for the hub to confirm its owner (the scheduler service just started)")


def _team_membership(user: str, hold: JobHold, job_id: str) -> PendingReason:
    """``held: red18c is no longer a member of team teama (found …)`` (red team 18, R4): admission
    checked the team and class at submit; a job queued before its owner left the team never starts
    charged to it. Its owner cancels it and resubmits, or an admin restores the membership or grant;
    nothing is cancelled for them (an admin who removed the wrong user adds them back).

    A team that is no hub group any more (``hold.vanished``: JupyterHub renames a group by creating
    the new one and deleting the old, hubadmin23 A9) cannot be rejoined: the reason says so, names the
    owner's team(s) now, and the one way out — cancel and submit again charged to that team (to one
    of them, chosen with ``--team``, when there are several)."""
    team, found = hold.team, said_time(hold.since)
    teams = ", ".join(hold.teams) or "none"
    details: dict[str, Any] = {"user": user, "team": team, "since": hold.since.isoformat(), "teams": list(hold.teams)}
    if hold.priority is None and hold.vanished:
        details["vanished"] = True
        now_in = (f"{user} is now in team {hold.teams[0]}" if len(hold.teams) == 1
                  else f"{user} is now in teams {teams}" if hold.teams else f"{user} is in no team now")
        to = (f"charged to {hold.teams[0]}" if len(hold.teams) == 1
              else f"charged to one of {teams} (choose it with --team)" if hold.teams else "once an admin adds "
              f"{user} to a team")
        step = f"cancel it (jupyter-sched cancel {job_id}) and submit it again {to}"
        if len(hold.teams) == 1:  # or an admin moves the team's work (hubadmin24 B12)
            step += f", or ask an admin to move {team}'s work (jupyter-sched teams move {team} --to {hold.teams[0]})"
        return PendingReason(
            code=TEAM_MEMBERSHIP,
            message=f"held: team {team} is no hub group any more (found {found}) and {now_in}; it never starts "
                    f"charged to {team}", details=details,
            unblock=step, eta_reason=f"never starts charged to {team}, which is no hub group any more: {step}")
    if hold.priority is None:
        return PendingReason(
            code=TEAM_MEMBERSHIP,
            message=f"held: {user} is no longer a member of team {team} (found {found}); it never starts "
                    f"charged to {team}", details=details,
            unblock=f"cancel it and resubmit to one of {user}'s teams ({teams}), or an admin adds {user} "
                    f"back to {team}",
            eta_reason=f"held until {user} is a member of {team} again")
    details["priority"] = hold.priority
    return PendingReason(
        code=TEAM_MEMBERSHIP,
        message=f"held: priority {hold.priority} is no longer granted to {user} in team {team} (found {found})",
        details=details,
        unblock=f"cancel it and resubmit with a class granted in {team} (or an admin changes its class: jupyter-sched "
                f"update {job_id} --priority normal), or an admin grants {hold.priority} "
                f"to {user} in {team}",
        eta_reason=f"held until {hold.priority} is granted to {user} in {team} again")


def _cpu_job_limit(user: str, running: int, cap: int) -> PendingReason:
    """``nu15b runs 8 CPU-only jobs; at most 8 per user (c.SchedApp.max_running_cpu_jobs_per_user)``:
    0-GPU work is charged to no quota, so this cap is what keeps one user from filling the host with
    processes (red-team 15 R2, new user 15 N9). It pends (never refuses): it starts when one ends."""
    jobs = f"{running} CPU-only job{'s' if running != 1 else ''}"
    return PendingReason(
        code=CPU_JOB_LIMIT, message=f"{user} runs {jobs}; at most {cap} per user ({CPU_JOB_SETTING})",
        details={"user": user, "running": running, "limit": cap, "setting": CPU_JOB_SETTING},
        unblock=f"starts when one of {user}'s running CPU-only jobs ends",
        eta_reason="it starts when one of them ends")


def _budget(ctx: CycleContext, job: Job) -> PendingReason | None:
    """``nlp has spent its GPU-hour budget: 0.48 of 0.3 GPU-hours this month`` (code ``BudgetExhausted``):
    a team's (or user's) budget for the current period is used up. Only GPU work is held — a 0-GPU job
    uses no GPU-hours (hubadmin24 B11). Its ETA is the period's reset (:mod:`.eta`, ``_gate_opens``),
    never a job's end; the numbers are GPU-hours said with two decimals at most (hubadmin24 B8)."""
    spec = job.spec
    if not spec.resources.total_milli:
        return None
    used_map = ctx.snap.usage.gpu_hours_this_period
    for budget in ctx.snap.quotas.budgets:
        if budget.team != spec.team or budget.user not in (None, spec.user):
            continue
        used = used_map.get((spec.team, budget.user), 0.0)
        if used >= budget.gpu_hours:
            who = f"{spec.team} has spent its" if budget.user is None else f"user {budget.user} in {spec.team} has spent their"
            period = budget.period
            # what still spends it: a running lease until it is released (red30 R5: teammates were not told)
            lease = spending_lease(ctx.snap.jobs, spec.team, budget.user, releasing=True)
            spends = "" if lease is None else f"; {spent_by(lease, ctx.profile.budget_admission == 'safe')}"
            return PendingReason(
                code="BudgetExhausted",
                message=f"{who} GPU-hour budget: {gpu_hours_text(used)} of "
                        f"{gpu_hours_phrase(budget.gpu_hours)} {this_period_text(period)}{spends}",
                details={"team": spec.team, "user": budget.user, "used_gpu_hours": round(used, 4),
                         "budget_gpu_hours": budget.gpu_hours, "period": period,
                         **({"held_by_lease": lease.id} if lease is not None else {})},
                unblock="ask an admin to raise the budget if it cannot wait",
                eta_reason=f"when the {period}'s budget resets")
        if ctx.profile.budget_admission == "safe":
            held = _budget_left_short(ctx, job, budget.gpu_hours - used, used, budget.gpu_hours,
                                      who=spec.team if budget.user is None else f"user {budget.user} in {spec.team}",
                                      period=budget.period, user=budget.user,
                                      hold=budget_hold(ctx, spec.team, budget.user))
            if held is not None:
                return held
    return None


def budget_hold(ctx: CycleContext, team: str, user: str | None) -> float:
    """GPU-hours a budget's running work may still spend (red28 R3, Slurm's safe ``GrpTRESMins``, which
    counts running jobs' remaining TRES-minutes): over ``team``'s GPU jobs (``user``'s only, for a user
    budget) that hold GPUs and are not being stopped, GPUs x the rest of the time limit (limit - seconds
    run since the start), plus GPUs x the whole limit of each admitted earlier this cycle. ``inf`` when one
    has no limit (nothing bounds what it spends). The running part is worked out once a cycle, and only
    when a ``"safe"`` budget is asked about (a budget-less profile never comes here)."""
    holds = ctx.budget_holds
    if holds is None:  # the one rule the submit's warning reads too (.budget_fit.running_holds)
        holds = ctx.budget_holds = running_holds(ctx.snap.jobs, ctx.profile.time_limits, ctx.now,
                                                 ctx.profile.lease_budget_s)
    hold = holds.get((team, user), 0.0)
    if ctx.fresh:
        rules = ctx.profile.time_limits
        for job_id in ctx.fresh:
            spec = ctx.admitted[job_id].spec
            if spec.team != team or (user is not None and spec.user != user) or not spec.resources.total_milli:
                continue
            limit_s = budget_limit(ctx.admitted[job_id], rules, ctx.profile.lease_budget_s)  # a lease: its horizon
            gpus = spec.resources.total_milli / GPU_MILLI if spec.resources.gpu_milli >= GPU_MILLI else \
                charged_gpus(ctx, ctx.admitted[job_id], ctx.fresh[job_id].holding)  # a share: as placed (verify40 V3)
            hold += float("inf") if limit_s is None else gpus * limit_s / 3600
    return hold


def _budget_left_short(ctx: CycleContext, job: Job, left: float, used: float, allowed: float, *, who: str,
                       period: str, user: str | None, hold: float = 0.0) -> PendingReason | None:
    """``budget_admission = "safe"`` (hubadmin25 B22, Slurm's ``AssocGrpGRESMinutes``): ``job`` pends while
    its GPUs times its time limit pass the GPU-hours ``left`` of a budget less the ``hold`` of its running
    work (:func:`budget_hold`; ``who``'s: ``vision has 2 GPU-hours of its budget left this month (0 of 2),
    1.5 of them held by running jobs' limits; this job may use up to 1 GPU-hour (1 GPU for its 1h00m time
    limit)``), naming the longest limit that fits; a job with no limit pends too (nothing bounds it: code
    ``BudgetUnbounded``, no reset lets it in). Code ``BudgetExhausted``: its ETA is the period's reset.
    None: it fits."""
    spec = job.spec
    gpus = spec.resources.total_milli / GPU_MILLI
    if job.is_lease:  # a kernel's lease: bounded by the lease horizon it must find left (red30 R5)
        return _lease_short(ctx, job, left, used, allowed, who=who, period=period, user=user, hold=hold)
    limit_s = effective_limit(spec, ctx.profile.time_limits)[0]
    asked = gpus
    if 0 < spec.resources.gpu_milli < GPU_MILLI:  # a share: what it will be charged where it lands (verify40 V3)
        gpus = placed_charge(ctx, job)
    short = budget_fit(left, hold, gpus, limit_s)  # the submit's warning asks the same (red28 R3)
    if short is None:
        return None
    holder = unbounded_holder(ctx.snap.jobs, ctx.profile.time_limits, spec.team, user) if hold == float("inf") \
        else None
    lease = spending_lease(ctx.snap.jobs, spec.team, user) if holder is None else None
    most, fits = short.most, short.fits_s
    may = ("this job has no time limit, so its GPU-hours are not bounded" if most is None else
           f"this job may use up to {gpu_hours_phrase(most)} ({_WHOLE if gpus > asked else ''}{gpus_phrase(gpus)} "
           f"for its {format_duration(limit_s)} time limit)")
    return PendingReason(
        code="BudgetExhausted" if most is not None else "BudgetUnbounded",  # no reset lets an unbounded job in
        message=f"{who} has {gpu_hours_phrase(max(0.0, left))} of its budget left {this_period_text(period)} "
                f"({gpu_hours_text(used)} of {gpu_hours_text(allowed)}){held_clause(left, hold, holder, lease)}; {may} "
                f"({BUDGET_SETTING} is safe)",
        details={"team": spec.team, "user": user, "used_gpu_hours": round(used, 4), "budget_gpu_hours": allowed,
                 "period": period, "job_gpu_hours": None if most is None else round(most, 4),
                 "fits_time_limit_s": round(fits),
                 **({"held_by_running_gpu_hours": None if hold == float("inf") else round(hold, 4)} if hold else {}),
                 **({"held_by_lease": lease.id} if lease is not None else {})},
        unblock=f"resubmit with a time limit of at most {format_duration(fits)}, or ask an admin to raise the budget",
        eta_reason=f"when the {period}'s budget resets" if most is not None else "not until it has a time limit")


def _lease_short(ctx: CycleContext, job: Job, left: float, used: float, allowed: float, *, who: str,
                 period: str, user: str | None, hold: float) -> PendingReason | None:
    """A kernel's lease under a safe budget (red30 R5): it pends while its GPUs x the lease horizon
    (``profile.lease_budget_s``, :data:`LEASE_SETTING`) pass what is left less the running hold — ``vision has
    0.04 GPU-hours of its budget left this month (0.06 of 0.1); this lease needs 2 GPU-hours left to start
    (2 GPUs for the 1h00m lease horizon, c.SchedApp.lease_budget_hours) …``, code ``BudgetExhausted`` (ETA:
    the reset). None: it fits."""
    spec = job.spec
    gpus = spec.resources.total_milli / GPU_MILLI
    horizon = ctx.profile.lease_budget_s
    short = budget_fit(left, hold, gpus, horizon)
    if short is None:
        return None
    holder = unbounded_holder(ctx.snap.jobs, ctx.profile.time_limits, spec.team, user) if hold == float("inf") \
        else None
    lease = spending_lease(ctx.snap.jobs, spec.team, user) if holder is None else None
    most = gpus * horizon / 3600
    fit_gpus = int(max(0.0, short.free) / (horizon / 3600))
    fewer = f"ask for at most {fit_gpus} GPU{'' if fit_gpus == 1 else 's'}, or " if 0 < fit_gpus < gpus else ""
    return PendingReason(
        code="BudgetExhausted",
        message=f"{who} has {gpu_hours_phrase(max(0.0, left))} of its budget left {this_period_text(period)} "
                f"({gpu_hours_text(used)} of {gpu_hours_text(allowed)}){held_clause(left, hold, holder, lease)}; "
                f"this lease needs {gpu_hours_phrase(most)} left to start ({gpus_phrase(gpus)} for the "
                f"{format_duration(horizon)} lease horizon, {LEASE_SETTING}): a lease has no time limit, so it holds "
                f"that much ahead while it runs and is released once the budget is spent ({BUDGET_SETTING} is safe)",
        details={"team": spec.team, "user": user, "used_gpu_hours": round(used, 4), "budget_gpu_hours": allowed,
                 "period": period, "job_gpu_hours": round(most, 4), "lease_budget_s": horizon,
                 "fits_gpus": fit_gpus,
                 **({"held_by_running_gpu_hours": None if hold == float("inf") else round(hold, 4)} if hold else {}),
                 **({"held_by_lease": lease.id} if lease is not None else {})},
        unblock=f"{fewer}ask an admin to raise the budget or lower {LEASE_SETTING}",
        eta_reason=f"when the {period}'s budget resets")


_WHOLE = "a GPU only its team's shares would hold counts whole: "
"""Said before a share's charged GPUs where it is charged more than it asks (verify40 V3)."""

BUDGET_SETTING = "c.SchedApp.budget_admission"
"""The setting that makes a budget hold a job its remainder cannot cover (hubadmin25 B22)."""

LEASE_SETTING = "c.SchedApp.lease_budget_hours"
"""The lease horizon a kernel's lease must find left in a safe budget (red30 R5)."""


def borrow_window_closed(ctx: CycleContext, job: Job) -> tuple[str, str, dict[str, Any]] | None:
    """``(code, sentence, details)`` when ``job`` would borrow outside its team's borrow window, else None."""
    spec = job.spec
    windows = [w for w in ctx.profile.windows if applies(w, spec.team, spec.priority.value, "borrow")]
    if not windows or any(is_open(w, ctx.now, ctx.profile.timezone) for w in windows):
        return None
    opens = [t for w in windows if (t := next_open(w, ctx.now, ctx.profile.timezone)) is not None]
    eta = min(opens) if opens else None
    return ("OutsideTimeWindow",
            f"{spec.team} may borrow only inside window {', '.join(w.name for w in windows)}"
            + (f"; next opening {said_time(eta)}" if eta else ""),
            {"windows": [w.name for w in windows], "next_open": eta.isoformat() if eta else None})
