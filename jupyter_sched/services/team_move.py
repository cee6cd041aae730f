"""Moving a team's work to another team: the admin's act after a hub group rename (hubadmin23 A9, hubadmin24 B12).

JupyterHub renames a group by creating the new one and deleting the old, so the renamed team's
pending and running jobs and its definitions stay charged to the old name: pending jobs are held
("submit it again charged to cv"), running ones count against no line (borrowed: any team's reclaim
takes them, and a reclaimed job is then held for good), definitions refuse at firing. ``POST
teams/{team}/move {"to": "cv"}`` re-charges to ``to`` every live job (pending, preempted, admitted,
running; leases too) and definition of ``team`` whose owner is a member of ``to`` now (hub mode: their
hub groups as last read; embedded: the quota set's and config's memberships); the others are listed
and left, with why. ``dry_run`` answers the same plan and changes nothing.

Rules:

* Admins only (403, audited); ``team`` and ``to`` are team names (400 naming the field); ``to`` must
  differ from ``team`` and be a team someone is in (or has a quota line); ``team`` must have live
  work, definitions or a quota line (400 naming the field, with the close names).
* Jobs are written through the store with compare-and-set (a row the engine changed meanwhile is
  read again), so the engine reads the new team at its next cycle: the quota ledger, reclaim and
  fair share count the work to ``to`` from then on. A hold on the old team no longer applies to
  the moved job (:func:`~jupyter_sched.scheduling.gates.held_gate` compares teams).
* Usage history keeps the team each interval was charged at the time: the usage table has one row
  per (job, run, GPU), so a running job's current run stays in ``team``'s GPU-hours until it ends;
  a later run (a requeue) is charged to ``to``. The ``team_moved`` audit record says what moved.
* ``with_quota`` also moves ``team``'s quota lines (team and per-user) to ``to``, refused when
  ``to`` has a line already.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from ..admission import Caller
from ..admission.rules import check_team_name
from ..definitions.model import JobDefinition
from ..errors import ConflictError, NotFoundError, SchedError, ValidationError
from ..model import ANY_MODEL, JobState, QuotaSet
from ..model.kept_share import kept_charges
from ..model.units import gpus_phrase
from ..store import JobRecord, StoreTx
from ..store.definitions import get_definition, list_definitions, update_definition
from .context import Context
from .models.teams import MoveTeamRequest, MoveTeamResponse

__all__ = ["TEAM_MOVED_ACTION", "TeamMoveService", "moved_notes", "near_hint", "team_move_service",
           "vanished_team_warnings"]

TEAM_MOVED_ACTION = "team_moved"
"""Audit action of a move (details: team, to, moved and left ids, the quota lines moved)."""

_LIVE = (JobState.PENDING, JobState.PREEMPTED, JobState.ADMITTED, JobState.RUNNING)
_TRIES = 5

TeamsOf = Callable[[str], "tuple[str, ...] | None"]
"""``user -> their teams now`` (None: not known, e.g. the hub's listing does not say their groups)."""


def _gpus_held(record: JobRecord) -> float:
    alloc = record.job.allocation
    if alloc is None or not record.job.state.holds_gpus:
        return 0.0
    return len(alloc.all_gpu_uuids()) * alloc.gpu_milli / 1000


def _gpus(record: JobRecord) -> float:
    held = _gpus_held(record)
    return held if held else float(record.job.spec.resources.requested_gpus * max(1, record.job.spec.resources.workers))


def _lines(quotas: QuotaSet, team: str) -> tuple[float | None, float | None]:
    """``(guaranteed, ceiling)`` of ``team``'s team-level lines summed over GPU models (None, limit of
    an unlisted team when it has none; ceiling None: no limit)."""
    lines = quotas.for_team(team)
    if not lines:
        if not quotas.quotas:
            return None, None
        return None, quotas.unlisted_borrowing_limit
    ceilings = [q.ceiling for q in lines]
    ceiling = None if any(c is None for c in ceilings) else sum(c for c in ceilings if c is not None)
    return sum(q.guaranteed for q in lines), ceiling


Charges = Mapping[tuple[str, str], float]
"""``{(job id, GPU uuid): GPUs charged}`` (:func:`_charges`)."""


def _charges(live: list[JobRecord], team_of: Callable[[JobRecord], str]) -> dict[tuple[str, str], float]:
    """What each running job of ``live`` is charged on each of its GPUs when each job counts against
    ``team_of(job)``: what it keeps from others (:func:`~jupyter_sched.model.kept_share.kept_charges`) — a GPU one
    team's shares alone hold counts whole against it, as quota counts it (red41 R1: a lone 0.1 share moved was
    said as 0.1 after the move while quota counted 1)."""
    on: dict[str, list[tuple[str, str, float]]] = {}
    for record in live:
        alloc = record.job.allocation
        if alloc is None or not record.job.state.holds_gpus:
            continue
        for uuid in alloc.all_gpu_uuids():
            on.setdefault(uuid, []).append((record.job.id, team_of(record), alloc.gpu_milli / 1000))
    out: dict[tuple[str, str], float] = {}
    for uuid, holders in on.items():
        for (job_id, _, _), charge in zip(holders, kept_charges([(t, f) for _, t, f in holders]), strict=True):
            out[(job_id, uuid)] = charge
    return out


def _held_by_model(records: list[JobRecord], models: Mapping[str, str], charges: Charges | None = None,
                   ) -> tuple[dict[str, float], dict[str, list[str]]]:
    """GPUs the running ``records`` hold per GPU model (``models``: GPU uuid → model), and ``{job id: [GPU
    uuids]}`` of those on GPUs gone from the inventory: no model's line counts them (hubadmin26 B11: they were
    said as model "unknown" against a limit of 0)."""
    held: dict[str, float] = {}
    gone: dict[str, list[str]] = {}
    for record in records:
        alloc = record.job.allocation
        if alloc is None or not record.job.state.holds_gpus:
            continue
        for uuid in alloc.all_gpu_uuids():
            model = models.get(uuid)
            if model is None:
                gone.setdefault(record.job.id, []).append(uuid)
                continue
            charge = alloc.gpu_milli / 1000 if charges is None else charges.get((record.job.id, uuid), 0.0)
            held[model] = held.get(model, 0.0) + charge
    return held, gone


def gone_text(to: str, gone: Mapping[str, list[str]]) -> str:
    """``1 job on GPU-b0, no longer in the inventory: not counted against cv's lines`` (empty: none)."""
    if not gone:
        return ""
    uuids = sorted({u for us in gone.values() for u in us})
    jobs = f"{len(gone)} job{'s' if len(gone) != 1 else ''}"
    return f"{jobs} on {', '.join(uuids)}, no longer in the inventory: not counted against {to}'s lines"


def model_holding_texts(quotas: QuotaSet, to: str, now: Mapping[str, float], moved: Mapping[str, float]) -> list[str]:
    """Where ``to``'s team lines are per GPU model: one :func:`holding_text` per model the moved work
    holds, against that model's line (``nlp on L40S holds 1 GPU now, 3 after the move: …; above its
    limit of 2 by 1: …``) — a sum over models hid going over one model's limit (hubadmin25 B20). A model
    with no line of ``to`` is held to the unlisted limit (the ledger's rule). Empty: ``to`` has one line
    for any model, or none (the summed sentence says it)."""
    lines = {q.gpu_model: q for q in quotas.for_team(to)}
    if not lines or ANY_MODEL in lines:
        return []
    said = []
    for model in sorted(m for m, gpus in moved.items() if gpus > 0):
        line = lines.get(model)
        before = now.get(model, 0.0)
        guaranteed, ceiling = (line.guaranteed, line.ceiling) if line else (0.0, quotas.unlisted_borrowing_limit)
        said.append(holding_text(to, before, before + moved[model], guaranteed, ceiling, model=model))
    return said


def holding_text(team: str, now: float, after: float, guaranteed: float | None, ceiling: float | None, *,
                 model: str = "") -> str:
    """One sentence: what ``team`` holds now and after, against its guarantee and limit, e.g.
    ``cv holds 0 GPUs now, 2 after the move: within its guarantee of 3``; with ``model``, of that
    GPU model against its line (``nlp on L40S holds …``)."""
    on = f" on {model}" if model else ""
    head = f"{team}{on} holds {gpus_phrase(now)} now, {after:g} after the move"
    guarantee = guaranteed or 0.0
    if guaranteed is None and ceiling is None:
        return head + (": no quota applies to it" if after == now else
                       ": it has no quota line, so all of it is borrowed work that another team's reclaim can take")
    said = [head]
    if after > guarantee:
        said.append(f"{gpus_phrase(after - guarantee)} above its guarantee of {guarantee:g}: borrowed work, which another "
                    f"team's reclaim of its guaranteed GPUs can take (a reclaimed job waits in the queue again)")
    else:
        said.append(f"within its guarantee of {guarantee:g}")
    if ceiling is not None and after > ceiling:
        until = (f"while it holds any (its limit{' there' if model else ''} is 0)" if ceiling == 0 else
                 f"until it holds less than {ceiling:g}")
        said.append(f"above its limit of {ceiling:g} by {after - ceiling:g}: nothing is stopped, but no new {team} "
                    f"work{on} starts {until}")
    return "; ".join(said[:1]) + ": " + "; ".join(said[1:])


class TeamMoveService:
    """``POST teams/{team}/move`` (module docstring).

    Args:
        ctx: the services' context (store, admission, clock, kick).
        teams_of: ``user -> their teams now`` (None when not known).
        known_teams: the teams someone is in now (hub groups, or the configured memberships).
        on_moved: called with the actor after a move (embedded mode recomputes its team holds).
    """

    def __init__(self, ctx: Context, teams_of: TeamsOf, known_teams: Callable[[], set[str]],
                 on_moved: Callable[[str], Any] | None = None,
                 groups_read_at: Callable[[], datetime | None] | None = None) -> None:
        self.ctx = ctx
        self.teams_of = teams_of
        self.known_teams = known_teams
        self.on_moved = on_moved
        self.groups_read_at = groups_read_at

    def move(self, caller: Caller, team: str, request: MoveTeamRequest) -> MoveTeamResponse:
        """Move (or, ``dry_run``, plan moving) ``team``'s work to ``request.to``.

        Returns:
            each job and definition with its outcome and why; what ``to`` holds now and after the
            move against its guarantee and limit; what happens to usage; one ``team_moved`` audit
            record (not for a dry run).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a bad team name (``team`` / ``to``), ``to`` equal to ``team`` or unknown,
                ``team`` with nothing to move, ``with_quota`` while ``to`` has a line already.
        """
        self.ctx.admission.require_admin(caller, "moving a team's work to another team", field="team")
        check_team_name(team, "team")
        to = request.to
        check_team_name(to, "to")
        if to == team:
            raise ValidationError(f"to is the team itself ({team!r})", field="to",
                                  hint="name the team its work moves to, e.g. the hub group it was renamed to")
        quotas = self.ctx.store.quota_set()
        known = self.known_teams() | {q.team for q in quotas.quotas}
        if to not in known:
            read = self.groups_read_at() if self.groups_read_at is not None else None
            if read is not None:  # hub mode: the hub's groups as the poll last read them, not as a user's login
                # reads them (red41 R1 nit: GET me said the new group while this said "no team" for ~40 s)
                raise ValidationError(
                    f"to: no team {to!r} in the hub's groups as last read, at {read:%H:%M:%S} UTC (no user is in it "
                    "and it has no quota line)", field="to",
                    hint="a hub group made or joined since that read is known at the next one (every "
                         "c.HubSchedApp.hub_poll_interval_s): retry then" + (f"; or {close}" if (close := near_hint(
                             to, known, "")) else ""))
            raise ValidationError(f"to: no team {to!r} (no user is in it and it has no quota line)", field="to",
                                  hint=near_hint(to, known, "add its members first (a hub group or user_teams)"))
        with self.ctx.store.transaction(write=False) as tx:
            records = [r for r in tx.list_jobs(states=_LIVE) if r.job.spec.team == team]
            definitions = [d for d in list_definitions(tx) if d.team == team]
        if not records and not definitions and not quotas.listed(team):
            raise ValidationError(f"team {team!r} has no pending or running work, definitions or quota line to move",
                                  field="team", hint=near_hint(team, known | _live_teams(self.ctx), "check the name"))
        quota_said = self._quota_plan(quotas, team, to) if request.with_quota else None
        members: dict[str, tuple[str, ...] | None] = {}
        for user in {r.job.spec.user for r in records} | {d.user for d in definitions}:
            members[user] = self.teams_of(user)
        items = [_item(r.job.id, "lease" if r.job.is_lease else "job", r.job.spec.user, r.job.state.value,
                       _gpus(r), team, to, members[r.job.spec.user], running=r.job.state.holds_gpus)
                 for r in records]
        items += [_item(d.id, "definition", d.user, None, 0.0, team, to, members[d.user], running=False)
                  for d in definitions]
        moving = {i["id"] for i in items if i["outcome"] == "moved"}
        if not request.dry_run and (moving or quota_said):
            moving = self._write(caller, team, to, moving, items, quota_said)
            for item in items:
                if item["outcome"] == "moved" and item["id"] not in moving:
                    item.update(outcome="left", why="it changed while being moved (ended, or edited): run the "
                                                    "move again to see it")
        with self.ctx.store.transaction(write=False) as tx:
            live = list(tx.list_jobs(states=_LIVE))

        def now_team(r: JobRecord) -> str:  # "now" is before the move (a moved job's row says ``to`` already)
            return team if r.job.id in moving else r.job.spec.team

        def after_team(r: JobRecord) -> str:
            return to if r.job.id in moving else r.job.spec.team

        now_of, after_of = _charges(live, now_team), _charges(live, after_team)  # whole GPUs as quota counts
        by_id = {r.job.id: r for r in live}
        in_use = sum(c for (j, _), c in now_of.items() if now_team(by_id[j]) == to)
        after = sum(c for (j, _), c in after_of.items() if after_team(by_id[j]) == to)
        lines_of = quotas
        if quota_said:
            lines_of = replace(quotas, quotas=tuple(replace(q, team=to) if q.team == team else q for q in quotas.quotas))
        guaranteed, ceiling = _lines(lines_of, to)
        per_model, gone = self._per_model(lines_of, to, records, moving, (live, now_team, after_team))  # not summed over models (hubadmin25 B20)
        holding = {"team": to, "in_use": in_use, "in_use_after": after, "guaranteed": guaranteed, "ceiling": ceiling,
                   "borrowed_after": max(0.0, after - (guaranteed or 0.0)),
                   "text": "; ".join([*(per_model or [holding_text(to, in_use, after, guaranteed, ceiling)]),
                                      *([gone] if gone else [])])}
        moved = sum(1 for i in items if i["outcome"] == "moved")
        verb = "would move" if request.dry_run else "moved"
        text = (f"{verb} {moved} of {len(items)} job(s)/definition(s) of team {team} to {to}"
                + (f"; {len(items) - moved} left (their owners are not in {to})" if moved < len(items) else "")
                + (f"; {quota_said}" if quota_said else "") + f". {holding['text']}")
        usage = (f"GPU-hours already used stay charged to {team} in usage reports (a running job's current run "
                 f"too, until it ends); runs started after the move are charged to {to}")
        return MoveTeamResponse.model_validate({
            "team": team, "to": to, "dry_run": request.dry_run, "moved": moved, "left": len(items) - moved,
            "items": items, "holding": holding, "quota": quota_said, "usage": usage, "text": text})

    def _per_model(self, quotas: QuotaSet, to: str, records: list[JobRecord], moving: set[str],
                   teams: tuple[list[JobRecord], Callable[[JobRecord], str], Callable[[JobRecord], str]],
                   ) -> tuple[list[str], str]:
        """:func:`model_holding_texts` for this move: ``to``'s running work now and the moved work's GPUs,
        per model of the inventory (none when it cannot be read); and :func:`gone_text` of the moved work."""
        try:
            models = {uuid: gpu.model for uuid, gpu in self.ctx.inventory().gpu_by_uuid().items()}
        except SchedError:
            return [], ""
        live, now_team, after_team = teams  # ``to``'s holdings charged as quota counts them, before and after
        now = _held_by_model([r for r in live if now_team(r) == to], models, _charges(live, now_team))[0]
        after = _held_by_model([r for r in live if after_team(r) == to], models, _charges(live, after_team))[0]
        moved = {m: after.get(m, 0.0) - now.get(m, 0.0) for m in after}
        gone = _held_by_model([r for r in records if r.job.id in moving], models)[1]
        return model_holding_texts(quotas, to, now, moved), gone_text(to, gone)

    def _quota_plan(self, quotas: QuotaSet, team: str, to: str) -> str:
        """The words for moving ``team``'s quota lines to ``to``.

        Raises:
            ValidationError: ``to`` has a line already, or ``team`` has none (field ``with_quota``).
        """
        if quotas.listed(to):
            raise ValidationError(f"with_quota: team {to} has a quota line already", field="with_quota",
                                  hint=f"leave with_quota out, and change {to}'s line with PUT quotas if it must grow")
        if not quotas.listed(team):
            raise ValidationError(f"with_quota: team {team} has no quota line to move", field="with_quota",
                                  hint="leave with_quota out")
        n = sum(1 for q in quotas.quotas if q.team == team)
        return f"{n} quota line(s) of {team} moved to {to}"

    def _write(self, caller: Caller, team: str, to: str, moving: set[str], items: list[dict[str, Any]],
               quota_said: str | None) -> set[str]:
        """Re-charge the jobs and definitions in ``moving`` (compare-and-set, read again when changed)
        and move the quota lines; one ``team_moved`` audit record. Returns the ids moved."""
        done: set[str] = set()
        todo = sorted(moving)
        gpus: set[str] = set()
        with self.ctx.store.transaction() as tx:
            for _ in range(_TRIES):
                again = [i for i in todo if not self._move_one(tx, i, team, to, gpus)]
                done.update(i for i in todo if i not in again)
                todo = again
                if not todo:
                    break
            # what the moved shares' GPUs keep, charged once from the move on, after every job moved (red41 R1;
            # red42: charged per job, two moved shares of one GPU were billed 0.1 + 0.1 between their recharges)
            tx.recharge(gpus, self.ctx.clock.now())
            if quota_said:
                qs = tx.quota_set()
                tx.replace_quota_set(replace(qs, quotas=tuple(replace(q, team=to) if q.team == team else q
                                                              for q in qs.quotas)))
                tx.note_quota_source(caller.user)
            left = [{"id": i["id"], "user": i["user"], "why": i["why"]} for i in items if i["outcome"] == "left"]
            tx.add_event(actor=caller.user, action=TEAM_MOVED_ACTION, job_id=None, user=None,
                         message=f"team {team}'s work moved to {to} by {caller.user}: {len(done)} job(s)/definition(s)"
                                 + (f", {len(left)} left" if left else "") + (f"; {quota_said}" if quota_said else ""),
                         details={"team": team, "to": to, "moved": sorted(done), "left": left, "quota": quota_said},
                         at=self.ctx.clock.now())  # the clock usage intervals are dated by (the report's notes)
        self.ctx.kick("team_moved")
        if self.on_moved is not None:
            self.on_moved(caller.user)
        return done

    def _move_one(self, tx: StoreTx, item_id: str, team: str, to: str, gpus: set[str]) -> bool:
        """Charge one job or definition to ``to``; False when its row changed meanwhile (read again).
        An item that ended or left ``team`` meanwhile counts as done-not-moved (True, not in the store).
        The GPUs a moved job holds are added to ``gpus`` (charged anew once every job moved)."""
        if item_id.startswith("d-"):
            try:
                definition: JobDefinition = get_definition(tx, item_id)
            except NotFoundError:  # deleted meanwhile
                return True
            if definition.team != team:
                return True
            request = dict(definition.job)
            if request.get("team") == team:  # the saved request's team wins over the definition's at firing
                request["team"] = to
            try:
                update_definition(tx, replace(definition, team=to, job=request))
            except ConflictError:  # edited meanwhile: read again
                return False
            return True
        record = tx.get_jobs([item_id]).get(item_id)
        if record is None or record.job.state.terminal or record.job.spec.team != team:
            return True
        job = record.job
        moved = replace(job, spec=replace(job.spec, team=to))
        if tx.try_update_job(replace(record, job=moved)) is None:
            return False
        if job.allocation is not None and job.state.holds_gpus:  # what its GPUs' shares keep, from the move on
            gpus.update(job.allocation.all_gpu_uuids())
        return True


def moved_notes(store: Any, since: datetime | None, until: datetime | None) -> dict[str, str]:
    """``{team: one line}`` for the usage report grouped by team (hubadmin23 A9: a renamed team's month
    split into two rows with nothing linking them): each move recorded in ``[since, until)`` (``team_moved``)
    says, on the old team's row and the new team's, when the work moved — so the two rows add up."""
    from ..model.units import clock_text

    notes: dict[str, list[str]] = {}
    for event in store.list_events(action=TEAM_MOVED_ACTION, since=since, until=until, limit=100):
        details = event.details or {}
        team, to = details.get("team"), details.get("to")
        if not isinstance(team, str) or not isinstance(to, str):
            continue
        when = clock_text(event.at, None)
        notes.setdefault(team, []).append(f"{team}'s work was moved to {to} at {when} by {event.actor}: its GPU-hours "
                                          f"before stay on this row, runs started after are {to}'s")
        notes.setdefault(to, []).append(f"work of {team} was moved to {to} at {when} by {event.actor}: "
                                        f"{team}'s row holds its GPU-hours before")
    return {team: "; ".join(lines) for team, lines in notes.items()}


def vanished_team_warnings(teams: list[str], live: list[JobRecord], hub: Any, default_team: str) -> dict[str, str]:
    """``{team: warning}`` for the teams of ``teams`` (those without a quota line) that are no hub group
    any more but still have live work (a renamed group, hubadmin24 B10: the warning told the admin to
    give the vanished team a line, which would let its held work run charged to a team nobody is in),
    e.g. ``team vision is no hub group any more (its members are now in cv): its 2 pending jobs are held
    and its running work (2 GPUs) runs on charged to vision as borrowed work … — move it with
    jupyter-sched teams move vision --to cv``. ``hub``: :class:`~.hub_teams.HubGroups`."""
    from collections import Counter

    groups = hub.groups | hub.empty  # an emptied group still exists: no rename to move from (verify24 V4)
    said: dict[str, str] = {}
    for team in teams:
        if team in groups or team == default_team:
            continue
        work = [r for r in live if r.job.spec.team == team]
        if not work:
            continue
        now_in = Counter(t for r in work for t in hub.members.get(r.job.spec.user, ()))
        pending = sum(1 for r in work if not r.job.state.holds_gpus)
        holding = sum(_gpus_held(r) for r in work)
        parts = []
        if pending:
            parts.append(f"its {pending} pending job{'s' if pending != 1 else ''} {'are' if pending != 1 else 'is'} "
                         f"held")
        if holding:
            parts.append(f"its running work ({holding:g} GPUs) runs on charged to {team} as borrowed work, which "
                         f"another team's reclaim can take (a reclaimed job is then held too)")
        to = now_in.most_common(1)[0][0] if now_in else None
        members = f" (its members are now in {', '.join(sorted(now_in))})" if now_in else ""
        step = (f"move it with jupyter-sched teams move {team} --to {to}" if to else
                f"move it with jupyter-sched teams move {team} --to TEAM once its owners are in a team")
        said[team] = (f"team {team} is no hub group any more{members}: " + " and ".join(parts)
                      + f" — {step}; a quota line for {team} is not the fix (nobody is in it)")
    return said


def _item(item_id: str, kind: str, user: str, state: str | None, gpus: float, team: str, to: str,
          teams: tuple[str, ...] | None, *, running: bool) -> dict[str, Any]:
    if teams is None:
        return {"id": item_id, "kind": kind, "user": user, "state": state, "gpus": gpus, "outcome": "left",
                "why": f"{user}'s teams are not known now (the hub's listing does not say their groups): left "
                       f"charged to {team}"}
    if to not in teams:
        return {"id": item_id, "kind": kind, "user": user, "state": state, "gpus": gpus, "outcome": "left",
                "why": f"{user} is not a member of {to} (their teams: {', '.join(teams) or 'none'}): left charged to "
                       f"{team}; they cancel it and submit it again to one of their teams"}
    if kind == "definition":
        why = f"its next runs are charged to {to}"
    elif running:
        # its current run stays billed to the old team to its end: the usage rows keep it (hubadmin25 B20)
        why = f"counts against {to}'s quota from now on ({gpus_phrase(gpus)}); its current run stays billed to {team} " \
              f"until it ends, a later run (a requeue) is {to}'s"
    else:
        why = f"waits charged to {to}: it may start under {to}'s quota (a hold on {team} no longer applies)"
    return {"id": item_id, "kind": kind, "user": user, "state": state, "gpus": gpus, "outcome": "moved", "why": why}


def near_hint(name: str, names: set[str], otherwise: str) -> str:
    """``did you mean a or b?`` of the names of ``names`` close to ``name``; ``otherwise`` when none is."""
    close = difflib.get_close_matches(name, sorted(n for n in names if n), n=3)
    return f"did you mean {' or '.join(close)}?" if close else otherwise


def _live_teams(ctx: Context) -> set[str]:
    with ctx.store.transaction(write=False) as tx:
        return {r.job.spec.team for r in tx.list_jobs(states=_LIVE)}


def team_move_service(services: Any) -> TeamMoveService:
    """The :class:`TeamMoveService` of :class:`~.root.Services`: a user's teams as a request of theirs
    would be resolved now — hub mode (``services.quotas.teams_from_hub``): their hub groups as the
    last poll read them (unknown before it, or when the listing does not say them); embedded: the
    stored memberships (``user_teams``, team policies' ``members``)."""
    quotas, admission = services.quotas, services.admission

    def teams_of(user: str) -> tuple[str, ...] | None:
        if quotas.teams_from_hub:
            hub = quotas.hub_groups
            if hub is None or user not in hub.members:
                return None
            teams: tuple[str, ...] = admission.caller(user, admin=False, groups=list(hub.members[user])).teams
            return teams
        embedded: tuple[str, ...] = admission.caller(user, admin=False).teams
        return embedded

    def known_teams() -> set[str]:
        if quotas.teams_from_hub:
            return set(quotas.hub_groups.groups) if quotas.hub_groups is not None else set()
        qs = services.store.quota_set()
        return ({t for teams in qs.user_teams.values() for t in teams} | {p.team for p in qs.teams if p.members}
                | {admission.policy.default_team})

    def groups_read_at() -> datetime | None:
        return quotas.hub_groups.read_at if quotas.teams_from_hub and quotas.hub_groups is not None else None

    return TeamMoveService(services.ctx, teams_of, known_teams, on_moved=services.membership.check,
                           groups_read_at=groups_read_at)
