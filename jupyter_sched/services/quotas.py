"""``QuotasService``: the quota set (lines, budgets, team policies, user → teams) and the profiles.

Reading is open to everyone (users plan against quotas); changing needs an admin and is audited
with old → new (``quotas_changed``; a change of team memberships also as ``team_members_changed``,
naming each user's teams before and after). Guarantees are checked against the GPUs that exist when an
admin changes them, never when a user is identified (a drained node must not lock users out).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..admission import Caller
from ..admission.policy import parse_user_teams
from ..admission.rules import check_team_name
from ..errors import SchedError, ValidationError
from ..model import GPU_MILLI, Budget, Inventory, Job, JobKind, JobState, Quota, QuotaSet, TeamPolicy
from ..model.codec import budget_to_dict, quota_to_dict, team_policy_to_dict
from ..model.quota import ANY_MODEL, validate_quota_lines
from ..model.units import said_time
from ..model.validation import asked_models, models_absent
from ..quota.capacity import shortfall_text, shortfalls
from ..quota.ceiling import Stranded, scope_warnings, unlisted_warning
from ..quota.changes import quota_changes
from ..quota.held_whole import HeldAway
from ..quota.lowered import over_limit_warnings
from ..quota.user_lines import non_member_warnings, user_line_warnings
from ..scheduling import SchedulingProfile
from ..scheduling.ledger import CycleLedger
from ..scheduling.preempt.cooldown import dropped_until
from ..scheduling.snapshot import Preempt, Snapshot
from ..store.codec import ts
from ..store.quota_source import CONFIG_ACTOR, MEMBERS, QUOTAS
from ..wording.definitions import retired_model_warning
from ..wording.quota import unreadable_row_text
from ..wording.quota_change import deferred_reclaim_warning, quota_change_blame, reclaim_warning
from .budget_standing import spent_warnings, standings
from .context import Context
from .hub_teams import HubGroups, no_group_warnings
from .models import GetQuotasResponse, ListProfilesResponse, SetQuotasRequest, SetQuotasResponse
from .team_cooldown import StoredCooldowns, cooldown_views

__all__ = ["QuotasService", "quota_set_to_dict"]


def quota_set_to_dict(qs: QuotaSet) -> dict[str, object]:
    """The wire shape of a quota set (``GetQuotasResponse``; ``user_teams`` as ``{user: [team, ...]}``)."""
    return {"quotas": [quota_to_dict(q) for q in qs.quotas], "budgets": [budget_to_dict(b) for b in qs.budgets],
            "teams": [team_policy_to_dict(t) for t in qs.teams],
            "user_teams": {user: list(teams) for user, teams in sorted(qs.user_teams.items())}}


def _own_memberships(body: dict[str, Any], user: str) -> dict[str, Any]:
    """GET quotas' ``body`` as a non-admin ``user`` reads it: ``user_teams`` holds their own entry
    alone, each team policy's ``members`` at most ``user`` (red team 23, R1)."""
    mine = body.get("user_teams", {}).get(user)
    teams = [{**policy, "members": [m for m in policy.get("members", ()) if m == user]} for policy in body.get("teams", ())]
    return {**body, "user_teams": {} if mine is None else {user: mine}, "teams": teams}


class QuotasService:
    """Quotas and profiles (see module docstring)."""

    def __init__(self, ctx: Context, *, on_change: Callable[[str], object] | None = None) -> None:
        self.ctx = ctx
        self.on_change = on_change
        """Called with the admin's name after each change (embedded team holds: :mod:`.membership`)."""
        self.cooldowns = StoredCooldowns(ctx.store, lambda: getattr(ctx.engine.profile, "reclaim_cooldown_s", 0.0))
        """Each team's reclaim cool-down, from the store (one shared with ``GET me`` by :class:`~.root.Services`)."""
        self.teams_from_hub = False
        """Hub mode (set by the hub's central service): a user's teams are their hub groups alone, so
        ``PUT quotas`` refuses memberships (``user_teams``, ``teams[i].members``) and GET quotas says
        the hub's groups decide (red team 21, R6: a stored membership outlived the hub group)."""
        self.hub_groups: HubGroups | None = None
        """Hub mode: the hub's groups as the hub poll last read them (None: not read yet); GET quotas'
        ``user_teams`` (read-only) and the checks of lines against the groups (hubadmin22 H7)."""

    def get(self, caller: Caller | None = None) -> GetQuotasResponse:
        """The quota set in force. An admin also reads ``warnings``: guarantees above the GPUs
        that exist now (a drained or failed node) — a warning to the admin, never an error to
        users, whose requests and identity keep working (issue 15 item 6).

        Memberships are the admins': a user reads only their own (``user_teams`` and each team's
        ``members`` cut to the caller). In hub mode the service reads every hub user's groups with its
        own broad token, and GET quotas passed them — the hub's whole roster, admins and groups that
        are no scheduler team included — to users the hub itself refuses them (red team 23, R1).
        ``caller`` None: the service's own callers (the facade, the config check), the whole set."""
        quotas = self.ctx.store.quota_set()
        body = self._body(quotas)
        # every team's reclaim cool-down; who ended the work only to its members and admins (newuser38 n21)
        now = self.ctx.clock.now()
        cooling = cooldown_views(self.cooldowns(now), now, named=lambda team: caller is None or
                                 caller.admin or team in caller.teams, reader=caller.user if caller else "")
        if cooling:
            body["reclaim_cooldowns"] = cooling
        if caller is not None and caller.admin:
            body["warnings"] = self._warnings(quotas, caller)
            if quotas.budgets:
                body["budget_standings"] = self._standings(quotas)
        elif caller is not None:
            body = _own_memberships(body, caller.user)
        return GetQuotasResponse.model_validate(body)

    def _standings(self, quotas: QuotaSet) -> list[dict[str, object]]:
        """Every budget's standing now (:func:`~.budget_standing.admin_view`; hubadmin25 B16)."""
        from ..queues.limits import effective_limit
        from .budget_standing import admin_view

        rules = getattr(self.ctx.engine.profile, "time_limits", ())
        return admin_view(self.ctx.store, quotas, self.ctx.store.live_jobs(), now=self.ctx.clock.now(),
                          limit_of=lambda job: effective_limit(job.spec, rules)[0])

    def unlisted_warnings(self, quotas: QuotaSet, first: Iterable[str] = (), *, reader: str | None = None) -> list[str]:
        """The teams that have live jobs or members (``user_teams``, team policies, the default team)
        but no quota line while other lines exist, what they get (red team 19, R3) and the work that
        strands — pending jobs and lease requests above the limit (they can never start), GPUs
        held above it (new user 20, N4) — ``first`` (the admin's own teams) named first; empty when
        every such team has a line, or there are no lines (:func:`~..quota.ceiling.unlisted_warning`);
        then the scopes of teams with lines that none covers — GPU models present, members without a
        line of their own (red team 20, R2: :func:`~..quota.ceiling.scope_warnings`). ``reader``: the
        admin asking, never told "you included" of a scope their own line governs (verify 21, V7)."""
        live = self.ctx.store.live_jobs()
        seen = {self.ctx.admission.policy.default_team, *(t for teams in quotas.user_teams.values() for t in teams),
                *(p.team for p in quotas.teams if p.members), *(j.job.spec.team for j in live)}
        teams = quotas.unlisted(seen)
        limit = self.ctx.store.unlisted_borrowing_limit
        scoped = scope_warnings(quotas, self._models(), limit, first=first, reader=reader)  # red team 20, R2
        # per-user lines below pending work of their user (new user 21, N9)
        scoped += user_line_warnings(quotas, (record.job for record in live))
        if self.teams_from_hub and self.hub_groups is not None:  # a renamed hub group: no line to add (B10)
            from .team_move import vanished_team_warnings

            gone = vanished_team_warnings(teams, live, self.hub_groups, self.ctx.admission.policy.default_team)
            teams = [t for t in teams if t not in gone]
            scoped = list(gone.values()) + scoped
        if not teams or limit is None:
            return unlisted_warning(teams, limit, first=first) + scoped
        ceiling, work = round(limit * GPU_MILLI), {t: Stranded(team=t) for t in teams}
        for record in live:
            job = record.job
            was, milli = work.get(job.spec.team), job.spec.resources.total_milli
            if was is None or milli <= 0:
                continue
            if job.state.holds_gpus:
                work[was.team] = replace(was, holding=was.holding + milli / GPU_MILLI)
            elif milli > ceiling and job.spec.kind is JobKind.LEASE:
                work[was.team] = replace(was, leases=was.leases + 1)
            elif milli > ceiling:
                work[was.team] = replace(was, pending=was.pending + 1)
        return unlisted_warning(teams, limit, stranded=work.values(), first=first) + scoped

    def budget_warnings(self, quotas: QuotaSet) -> list[str]:
        """One warning per budget of ``quotas`` already spent this period — set below what its team
        (or user) used, or used up — naming its pending GPU jobs and when they may start
        (:func:`.budget_standing.spent_warnings`; hubadmin24 B8); empty without budgets."""
        if not quotas.budgets:
            return []
        now = self.ctx.clock.now()
        pending: dict[tuple[str, str], int] = {}
        for record in self.ctx.store.live_jobs():
            spec = record.job.spec
            if record.job.state is JobState.PENDING and spec.resources.total_milli > 0:
                pending[(spec.team, spec.user)] = pending.get((spec.team, spec.user), 0) + 1
        return spent_warnings(quotas, standings(self.ctx.store, quotas.budgets, now=now), pending)

    def retired_model_warnings(self) -> list[str]:
        """The scheduled, unpaused definitions and the pending jobs that ask only for GPU models no GPU
        of the inventory has now — a model retired with its node (hubadmin26 B8: nothing told owner or
        admin that they can never run): :func:`~..wording.definitions.retired_model_warning`; [] when
        none, or the inventory cannot be read now."""
        from ..store.definitions import list_definitions

        try:
            known = frozenset(self.ctx.inventory().models())
        except SchedError:
            return []
        with self.ctx.store.transaction(write=False) as tx:
            definitions = list_definitions(tx, active_only=True)
        stuck = [(d.id, d.user, d.name, absent) for d in reversed(definitions)
                 if (absent := models_absent(asked_models(d.job), known))]
        jobs = [(r.job.id, r.job.spec.user, absent) for r in self.ctx.store.live_jobs()
                if r.job.state is JobState.PENDING and r.job.spec.resources.total_milli > 0
                and (absent := models_absent(r.job.spec.resources.gpu_models, known))]
        return retired_model_warning(stuck, jobs)

    def _models(self) -> list[str]:
        """The GPU models of the inventory (none when it cannot be read now)."""
        try:
            return sorted(self.ctx.inventory().healthy_models())
        except SchedError:
            return []

    def capacity_warnings(self, quotas: QuotaSet, *, inventory: Inventory | None = None) -> list[str]:
        """Why the quota set no longer fits ``inventory`` (default: the current one; empty when it fits):
        one warning per GPU model whose team guarantees pass the GPUs that may get work now, naming
        the GPUs out and why (:func:`~..quota.capacity.shortfalls`; hubadmin25 B12/B5: the first model only)."""
        try:
            found = shortfalls(quotas.quotas, inventory or self.ctx.inventory())  # case 018: GPUs that may get work
        except SchedError:  # the inventory cannot be read now: nothing to compare with
            return []
        return [f"{shortfall_text(s)}: until the GPUs are back, guarantees cannot all be honoured "
                f"(lower them with PUT quotas, or bring the node back)" for s in found]

    def _check_capacity(self, before: Sequence[Quota], lines: Sequence[Quota]) -> None:
        """PUT quotas' check of ``lines`` (replacing ``before``) against the inventory: each line on its
        own (a model a line in force names stays valid while its GPUs are gone), then the sums of
        guarantees — refused only where the change *raises* a model's total above the GPUs that may
        get work (case 018: no new promise of a withdrawn GPU). A total already in force stays
        changeable while a GPU is out (hubadmin25 B12: every edit was refused during an RMA);
        GET and PUT quotas warn of it (:meth:`capacity_warnings`).

        Raises:
            ValidationError: a line's number or model (``quotas[i].…``), or a raised total (``guaranteed``).
        """
        inventory = self.ctx.inventory()
        known = {**{q.gpu_model: 0 for q in before if q.gpu_model != ANY_MODEL}, **inventory.models()}
        validate_quota_lines(lines, known, listed="quotas")
        for short in shortfalls(lines, inventory, before):
            if short.raised:
                keep = "the GPUs that may get work" if short.before <= short.usable else \
                    f"{short.before:g} (the total in force) until the GPUs are back"
                raise ValidationError(shortfall_text(short), field="guaranteed",
                                      hint=f"lower the guarantees of {_model_words(short.model)} so that their sum "
                                           f"is at most {keep}")

    def set(self, caller: Caller, request: SetQuotasRequest, *, config_digest: str | None = None,
            message: str | None = None) -> GetQuotasResponse:
        """Replace parts of the quota set (admins); keys left out keep their current value.

        The set outlives restarts: the config file's lines replace it at a start only when they
        changed since last applied (:mod:`.quota_config`, new user 20, N26); ``config_digest`` and
        ``message`` (the audit row's sentence) are that start's.

        Returns:
            the quota set now in force, with ``warnings`` as GET quotas answers an admin; with
            ``request.dry_run``, the set that would be in force and its warnings, nothing stored
            or audited (new user 20, N4/N5: what a change strands, before it is made).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: duplicate lines, a line's number or model, or a change that raises a
                model's total guarantee above the GPUs that may get work (names the field); totals
                already in force above them (a GPU out for an RMA) are kept with a warning, so a
                drained node never blocks other edits (:meth:`_check_capacity`).
        """
        self.ctx.admission.require_admin(caller, "changing quotas")  # also who is in which team (N21)
        _check_team_names(request)
        if self.teams_from_hub:
            _refuse_members_in_hub_mode(request)
        wanted_members = None if request.user_teams is None else parse_user_teams(request.user_teams)
        current = self.ctx.store.quota_set()
        lines = current.quotas if request.quotas is None else tuple(Quota(**q.model_dump()) for q in request.quotas)
        seen: dict[tuple[str, str | None, str], int] = {}
        for i, q in enumerate(lines):
            if q.key in seen:  # the line as the request names it, in words (new user 19, N8: "user None")
                who = f"user {q.user!r}" if q.user is not None else "the whole team"
                model = f"model {q.gpu_model!r}" if q.gpu_model != ANY_MODEL else "any model"
                raise ValidationError(f"duplicate quota line: quotas[{i}] repeats quotas[{seen[q.key]}] (team "
                                      f"{q.team!r}, {who}, {model})", field=f"quotas[{i}]",
                                      hint="give each (team, user, gpu_model) once")
            seen[q.key] = i
        if request.quotas is not None:
            self._check_capacity(current.quotas, lines)
        budgets = current.budgets if request.budgets is None else tuple(Budget(**b.model_dump()) for b in request.budgets)
        teams = current.teams if request.teams is None else tuple(
            TeamPolicy(team=t.team, weight=t.weight, allowed_priorities=tuple(t.allowed_priorities),
                       members=tuple(t.members), reclaim=t.reclaim) for t in request.teams)
        user_teams = current.user_teams if wanted_members is None else wanted_members
        # a row that does not read stays (holding its scope, verify27 V6) unless this change replaces its part
        left = {"quotas": request.quotas is None, "budgets": request.budgets is None, "team_policies": request.teams is None}
        new = QuotaSet(quotas=lines, budgets=budgets, teams=teams, user_teams=user_teams,
                       unlisted_borrowing_limit=self.ctx.store.unlisted_borrowing_limit,
                       unreadable=tuple(u for u in current.unreadable if left[u.table]))
        old_dict, new_dict = quota_set_to_dict(current), quota_set_to_dict(new)
        changes = quota_changes(current, new)  # what changed, line by line (hubadmin25 B2)
        reclaimed = self.would_reclaim(new)  # running work the change preempts at once (hubadmin25 B17)
        now = self.ctx.clock.now()
        preempts = [reclaim_warning(victim, p, by, now) for victim, p, by in reclaimed]
        # ... and once a team's reclaim cool-down ends (newuser38 n13: the preview said nothing of it)
        deferred = self.deferred_reclaims(new, reclaimed)
        preempts += [deferred_reclaim_warning(victim, p, by, now, until, team)
                     for victim, p, by, until, team in deferred]
        # what is over the new limits besides the preemptions just listed (newuser40 N4: one answer said both
        # "preempts … half4 … half3" and "it runs on (nothing is stopped)")
        victims = [victim for victim, _, _ in reclaimed] + [victim for victim, *_ in deferred]
        over = self.over_limit(current, new, victims) if request.quotas is not None else []
        if request.dry_run:
            return self._answer(new, caller, [*preempts, *over], dry_run=True, preempts=preempts)
        said = message or (f"quotas changed by {caller.user}: {'; '.join(changes)}" if changes else
                           f"quotas changed by {caller.user}: nothing changed")
        spent = self.budget_warnings(new)  # a budget set below what was used: kept in the audit (hubadmin24 B8)
        with self.ctx.store.transaction() as tx:
            tx.replace_quota_set(new)
            tx.note_quota_source(caller.user, digest=config_digest)
            tx.add_event(actor=caller.user, action="quotas_changed",
                         message="; ".join([said, *preempts, *over, *spent]),
                         details={"changes": changes, "old": old_dict, "new": new_dict,
                                  **({"would_preempt": [victim.id for victim, _, _ in reclaimed]} if reclaimed else {}),
                                  **({"over_limit": over} if over else {}), **({"warnings": spent} if spent else {})})
            _note_members(tx, caller.user, current.user_teams, new.user_teams)
        # the victims' words name the admin's act, not the reclaiming team's user (hubadmin25 B17)
        blame = quota_change_blame(caller.user, now, changes)
        self.ctx.engine.applier.blame = {victim.id: blame for victim, _, _ in reclaimed}
        if self.on_change is not None:  # a member removed: their queued jobs there are held (red team 18, R4)
            self.on_change(caller.user)
        self.ctx.kick()
        return self._answer(new, caller, [*preempts, *over], dry_run=False, preempts=preempts)

    def would_reclaim(self, new: QuotaSet) -> list[tuple[Job, Preempt, Job | None]]:
        """The running work a change to ``new`` preempts at the next cycle that the set in force does not:
        the scheduling cycle itself (the pure core, the engine's profile) run on the engine's snapshot
        once with the set in force and once with ``new`` — no second set of rules (hubadmin25 B17: a
        lowered guarantee turned a 14-minute job into borrowed work that another team reclaimed 1 s
        after the dry run said nothing). Returns (victim, the core's preemption, the job it is for)
        per victim, in the cycle's order; none when the inventory or the snapshot cannot be read."""
        engine = self.ctx.engine
        try:
            base = replace(engine.snapshot(), inventory=self.ctx.inventory())
        except SchedError:
            return []

        def preempted(quotas: QuotaSet) -> dict[str, Preempt]:
            result = engine._cycle(replace(base, quotas=quotas), engine.profile)
            return {p.job_id: p for p in result.preemptions}

        jobs = {job.id: job for job in base.jobs}
        before, after = preempted(base.quotas), preempted(new)
        return [(jobs[job_id], p, jobs.get(p.for_job)) for job_id, p in after.items()
                if job_id not in before and job_id in jobs and jobs[job_id].state.holds_gpus]

    def deferred_reclaims(self, new: QuotaSet, now_reclaimed: Sequence[tuple[Job, Preempt, Job | None]]
                          ) -> list[tuple[Job, Preempt, Job | None, datetime, str]]:
        """The running work a change to ``new`` preempts once a team's reclaim cool-down ends, not at the next
        cycle (newuser38 n13): the cycle run on ``new`` again with the cool-downs lifted (the snapshot's
        ``reclaims`` left out), less what it preempts now or the set in force would anyway; each with when the
        reclaiming team's cool-down ends and that team. None without a cool-down in force."""
        engine = self.ctx.engine
        try:
            base = replace(engine.snapshot(), inventory=self.ctx.inventory())
        except SchedError:
            return []
        cool = (engine.profile or SchedulingProfile()).reclaim_cooldown_s  # None: the core's default profile
        ends: dict[str, datetime] = {}
        for took in base.reclaims:
            until = dropped_until(took, cool)
            if until is not None and until > base.now and (took.team not in ends or until > ends[took.team]):
                ends[took.team] = until
        if not ends:
            return []
        lifted = replace(base, quotas=new, reclaims=())
        after = {p.job_id: p for p in engine._cycle(lifted, engine.profile).preemptions}
        kept = {p.job_id for p in engine._cycle(replace(base, reclaims=()), engine.profile).preemptions}
        kept |= {victim.id for victim, _, _ in now_reclaimed}
        jobs = {job.id: job for job in base.jobs}
        found = []
        for job_id, p in after.items():
            by = jobs.get(p.for_job)
            team = by.spec.team if by is not None else None
            if job_id in kept or job_id not in jobs or not jobs[job_id].state.holds_gpus or team not in ends:
                continue
            found.append((jobs[job_id], p, by, ends[team], team))
        return found

    def over_limit(self, old: QuotaSet, new: QuotaSet, preempted: Sequence[Job] = ()) -> list[str]:
        """The lines of ``new`` set below what their team's (or user's) running work holds, where
        ``old`` had them higher (hubadmin24 B4): :func:`~..quota.lowered.over_limit_warnings` over the
        ledger of ``new`` charged with the live work as the scheduling cycle charges it (work on GPUs
        gone from the inventory included, hubadmin24 B3; what a team's shares hold away counted as every
        quota check counts it, :class:`~..quota.held_whole.HeldAway`: newuser40 N4) — less ``preempted`` (the running work this change
        preempts, said apart: what remains over the limit is what runs on; requeued, they wait with the
        pending work); none when the inventory cannot be read."""
        if not new.quotas:
            return []
        try:
            inventory = self.ctx.inventory()
        except SchedError:
            return []
        live = [record.job for record in self.ctx.store.live_jobs()]
        gone = {victim.id for victim in preempted}
        on_line: dict[tuple[str, str | None, str], int] = {}
        if gone:  # the lines each preempted job is charged to, as the cycle charges it
            charges = CycleLedger(Snapshot(now=self.ctx.clock.now(), inventory=inventory, jobs=tuple(live),
                                           quotas=new)).quota.charges
            for job_id in gone:
                for key in charges.get(job_id, ((), 0))[0]:
                    on_line[key] = on_line.get(key, 0) + 1
        kept = tuple(j for j in live if j.id not in gone)
        cycle = CycleLedger(Snapshot(now=self.ctx.clock.now(), inventory=inventory, jobs=kept, quotas=new))
        ledger = cycle.quota
        shares = frozenset(j.id for j in kept if j.state.holds_gpus and j.allocation is not None
                           and j.allocation.gpu_milli < GPU_MILLI)
        if shares:  # every quota check counts what a team's shares hold away (CycleContext.count_shares)
            ledger.held = HeldAway(cycle.state, shares, {}, ledger.charges)
        waiting = [j.spec for j in live if j.state is JobState.PENDING or j.id in gone]
        return over_limit_warnings(ledger, old, waiting, preempted=on_line)

    def set_members(self, actor: str, members: Mapping[str, tuple[str, ...]], *, config_digest: str | None = None,
                    message: str | None = None, notify: bool = True) -> None:
        """Replace the team memberships alone (``user_teams``), as ``actor``: the config file's
        ``c.SchedApp.user_teams`` at a start (:mod:`.members_config`); audited ``team_members_changed``
        with ``message`` (default: the changes, user by user) when they change. Admins change them
        with :meth:`set` (PUT quotas), which checks that they are one.

        Args:
            members: ``{user: (team, ...)}`` as :func:`~..admission.policy.parse_user_teams` returns.
            config_digest: the config's memberships just applied (remembered in the ``user_teams``
                source row: a later start applies them again only when they change).
            notify: recompute the holds of queued jobs and ask for a cycle now (False at a start:
                the services' start recomputes them).
        """
        current = self.ctx.store.quota_set()
        with self.ctx.store.transaction() as tx:
            tx.replace_quota_set(replace(current, user_teams=dict(members)))
            _note_members(tx, actor, current.user_teams, members, digest=config_digest, message=message)
        if not notify:
            return
        if self.on_change is not None:  # a member removed: their queued jobs there are held (red team 18, R4)
            self.on_change(actor)
        self.ctx.kick()

    def _answer(self, quotas: QuotaSet, caller: Caller, over: Sequence[str] = (), *, dry_run: bool,
                preempts: Sequence[str]) -> SetQuotasResponse:
        """``quotas`` as PUT quotas answers an admin: the set, with ``over`` (lines the change set
        below their running work, :meth:`over_limit`) and then the warnings GET quotas says; whether it was a
        dry run and what the change preempts, now or after a cool-down (newuser38 n13: the answer said neither)."""
        return SetQuotasResponse.model_validate({**self._body(quotas), "dry_run": dry_run, "preempts": list(preempts),
                                                 "warnings": [*over, *self._warnings(quotas, caller)]})

    def _warnings(self, quotas: QuotaSet, caller: Caller) -> list[str]:
        """The warnings GET and PUT quotas give an admin; in hub mode the memberships checked are the
        hub's groups (hubadmin22 H7: the case-twin check read the stored ``user_teams``, unused there),
        and each line whose team no hub user is in is named."""
        members, hub = quotas, None
        if self.teams_from_hub:
            hub = self.hub_groups
            members = replace(quotas, user_teams=dict(hub.members) if hub else {})
        said = ([unreadable_row_text(u.error, u.table, u.team, u.user, u.gpu_model) for u in quotas.unreadable]
                + self.capacity_warnings(quotas) + self.unlisted_warnings(members, caller.teams, reader=caller.user)
                + self._unused_members(quotas) + case_twin_warnings(members) + self.budget_warnings(quotas)
                + self.retired_model_warnings())
        if not self.teams_from_hub or hub is not None:  # a line for a user not in its team (new user 23, N12)
            said += non_member_warnings(quotas, self.ctx.admission.policy.default_team,
                                        members=None if hub is None else hub.members)
        if hub is not None:
            said += no_group_warnings(quotas, hub, self.ctx.admission.policy.default_team,  # budgets, grants: B10
                                      grants=self.ctx.admission.policy.grants.teams,
                                      live=self.ctx.store.live_jobs())  # a dissolved team's running work (B3)
        return said

    def _body(self, quotas: QuotaSet) -> dict[str, Any]:
        """GET quotas' body less ``warnings``; in hub mode ``user_teams`` is the hub's groups as last read
        (read-only; ``{}`` before the first read) and ``user_teams_source`` says the hub's groups decide
        and when they were read (red team 21, R6; hubadmin22 H7)."""
        body = {**quota_set_to_dict(quotas), "source": self._source(), "user_teams_source": self._source(MEMBERS)}
        if self.teams_from_hub:
            hub = self.hub_groups
            body["user_teams"] = {user: list(teams) for user, teams in hub.members.items()} if hub else {}
            read = (f"; read-only here, as the hub listed them at {said_time(hub.read_at)}" if hub else
                    "; not read from the hub yet (read at its next poll, c.HubSchedApp.hub_poll_interval_s)")
            body["user_teams_source"] = {"set_by": "hub", "set_at": ts(hub.read_at if hub else self.ctx.clock.now()),
                                         "config": False, "text": HUB_MEMBERS_TEXT + read}
        return body

    def _unused_members(self, quotas: QuotaSet) -> list[str]:
        """Hub mode: the memberships stored before (by ``PUT quotas`` or team policies' ``members``),
        which are not read there — one warning naming them and how to clear them; else none."""
        if not self.teams_from_hub:
            return []
        stored = sorted(quotas.user_teams) + [f"{user} (teams[{i}].members)" for i, policy in enumerate(quotas.teams)
                                              for user in policy.members]
        if not stored:
            return []
        shown = ", ".join(stored[:5]) + (f" and {len(stored) - 5} more" if len(stored) > 5 else "")
        return [f"user_teams: memberships stored for {shown} are not used — in hub mode a user's teams are "
                f"their hub groups; PUT quotas with \"user_teams\": {{}} (and teams without members) clears them"]

    def _source(self, name: str = QUOTAS) -> dict[str, object] | None:
        """``GetQuotasResponse.source`` (``name`` :data:`QUOTAS`) or ``user_teams_source`` (:data:`MEMBERS`):
        who set the lines or the memberships in force (None: nobody since version 14, or 15)."""
        from .quota_config import source_text

        source = self.ctx.store.quota_source(name)
        if source is None:
            return None
        setting = "c.SchedApp.user_teams" if name == MEMBERS else "c.SchedApp.quotas"
        return {"set_by": source.set_by, "set_at": ts(source.set_at), "config": source.set_by == CONFIG_ACTOR,
                "text": source_text(source, setting)}

    def profiles(self) -> ListProfilesResponse:
        """Admin request templates, sorted by name."""
        return ListProfilesResponse.model_validate(
            [{"name": p.name, "description": p.description, "defaults": dict(p.defaults)}
             for p in sorted(self.ctx.profiles.values(), key=lambda p: p.name)])


def _model_words(model: str) -> str:
    return "any model" if model == ANY_MODEL else model


def case_twin_warnings(quotas: QuotaSet) -> list[str]:
    """One warning per team a membership names that has no quota line while a team spelt the same
    but for letter case has (verify21 V10: ``user_teams {"root": ["Vision"]}`` with a line for
    ``vision`` was stored with only the generic "teams Vision, … have no quota line")."""
    from ..model.case_names import case_twin

    lined = {q.team for q in quotas.quotas}
    named = sorted({t for teams in quotas.user_teams.values() for t in teams}
                   | {p.team for p in quotas.teams if p.members})
    said = []
    for team in named:
        twin = None if team in lined else case_twin(team, lined)
        if twin:
            who = sorted(u for u, teams in quotas.user_teams.items() if team in teams)
            said.append(f"team {team} has no quota line but team {twin} has — did you mean {twin}? Team names are "
                        f"case-sensitive" + (f" ({', '.join(who[:5])} {'is' if len(who) == 1 else 'are'} in {team})"
                                             if who else ""))
    return said


def _check_team_names(request: SetQuotasRequest) -> None:
    """Team names follow the rule of a job's ``team`` (:func:`~..admission.rules.visible_text`):
    every user reads them in the queue, the panel and the reasons, so none may hold control or
    bidirectional characters or run past ``MAX_TEAM_CHARS`` — a job could not charge it anyway
    (new user 8, N10: ``"a\u202e"`` and a 5,000-character team were stored).

    Raises:
        ValidationError: naming the place, e.g. ``quotas[0].team`` or ``user_teams.ana``.
    """
    named = [(f"quotas[{i}].team", line.team) for i, line in enumerate(request.quotas or ())]
    named += [(f"budgets[{i}].team", line.team) for i, line in enumerate(request.budgets or ())]
    named += [(f"teams[{i}].team", line.team) for i, line in enumerate(request.teams or ())]
    for field, team in named:  # user_teams: parse_user_teams, the config's rule (new user 20, N21)
        check_team_name(team, field)


HUB_MEMBERS_TEXT = ("the hub's groups (hub mode): a user's teams are their hub groups, changed on the hub "
                    "(its admin page or /hub/api/groups/<team>/users); PUT quotas sets no memberships here")


def _refuse_members_in_hub_mode(request: SetQuotasRequest) -> None:
    """Hub mode: memberships come from hub groups alone; a request that sets any is refused naming
    the field, so that a stored membership never outlives the hub group (red team 21, R6). ``{}`` and
    members ``[]`` are taken (they clear what an earlier version stored).

    Raises:
        ValidationError: naming ``user_teams`` or ``teams[i].members``.
    """
    hint = ("add or remove the user in the hub group named like the team (JupyterHub's admin page, or "
            "POST/DELETE /hub/api/groups/<team>/users); send \"user_teams\": {} or leave it out")
    if request.user_teams:
        users = ", ".join(sorted(request.user_teams)[:3]) + (" …" if len(request.user_teams) > 3 else "")
        raise ValidationError(f"user_teams cannot be set in hub mode: a user's teams are their hub groups "
                              f"(got memberships for {users})", field="user_teams", hint=hint)
    for i, policy in enumerate(request.teams or ()):
        if policy.members:
            raise ValidationError(f"teams[{i}].members cannot be set in hub mode: a user's teams are their hub "
                                  f"groups (got {', '.join(policy.members[:3])})", field=f"teams[{i}].members",
                                  hint=hint.replace('send "user_teams": {} or leave it out', "send members []"))


def _note_members(tx: Any, actor: str, old: Mapping[str, tuple[str, ...]], new: Mapping[str, tuple[str, ...]], *,
                  digest: str | None = None, message: str | None = None) -> None:
    """In ``tx``: when the memberships changed, ``actor`` set them (the ``user_teams`` source row; with
    the config's ``digest``) and one audit row ``team_members_changed`` per user changed says how (its
    ``user``; ``details`` ``old``/``new``: that user's teams before and after, ``[]`` for none); with a
    ``digest`` and no change, the config is remembered and who set them kept."""
    from .members_config import member_changes

    changes = member_changes(old, new)
    if not changes:
        if digest is not None:
            was = tx.quota_source(MEMBERS)
            tx.note_quota_source(was.set_by if was is not None else actor, digest=digest,
                                 at=was.set_at if was is not None else None, name=MEMBERS)
        return
    tx.note_quota_source(actor, digest=digest, name=MEMBERS)
    for user in sorted(u for u in {*old, *new} if tuple(old.get(u, ())) != tuple(new.get(u, ()))):
        # one row per user changed, carrying the user: GET audit?user=ana finds her joining or leaving
        # a team (red team 21, R6: the rows had no user)
        was, now = {user: old[user]} if user in old else {}, {user: new[user]} if user in new else {}
        said = member_changes(was, now)
        tx.add_event(actor=actor, action="team_members_changed", user=user,
                     message=message or f"team memberships changed by {actor}: {'; '.join(said)}",
                     details={"old": list(old.get(user, ())), "new": list(new.get(user, ())), "changes": said})
