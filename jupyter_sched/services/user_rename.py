"""Carrying a renamed user's work over to the new name: the admin's act after a hub user rename (hubadmin26 B10).

JupyterHub renames a user in place (``PATCH /hub/api/users/OLD {"name": "NEW"}``; the OS account with
``usermod -l``): the person keeps their token, groups and servers, but the scheduler keys everything by
name — so OLD became a removed user (:mod:`jupyter_sched.hub.offboard`: pending jobs held, definitions
paused) and NEW a stranger with no jobs, budget or history. ``POST users/{user}/rename {"to": "NEW"}``
moves to NEW, in one transaction:

* every job record of OLD (live and finished: the person's own history — ``jobs``, ``status``,
  ``logs`` find them under NEW). A held pending job is held no more for OLD's removal (the hold is
  by owner); it starts under NEW's run-as account, resolved at its start as for any job. A
  **running** job's processes keep the OS account and job folder they were started with
  (``<log_dir>/users/OLD/…``; a running process's account never changes), its owner in the
  scheduler is NEW from now on;
* OLD's definitions (with their runs); those the hub's removal of OLD paused (``owner_removed``)
  are resumed as NEW's, when NEW may still run them (else left paused, with why);
* per-user quota lines and budgets, and team memberships (``user_teams``, team policies'
  ``members``; embedded mode);
* the usage intervals: GPU-hours, fair share and the budgets' standing follow the person, as
  Slurm's accounting keys job records by uid and ``sacct`` shows today's name.

What keeps the old name: the audit log (each record says what was done under the name of its
time; the ``user_renamed`` record links the two names), the OS account and job folder of jobs
running now, and settings in the configuration file (the answer's ``notes`` list them:
``priority_grants``, ``user_teams``, ``admin_users`` — an admin edits the file).

Rules: admins only (403, audited); ``user`` and ``to`` are user names (400 naming the field);
``to`` differs from ``user``; on a hub, OLD must no longer be a user of the hub (rename it there
first) and NEW must be one (400 naming the field, with the fix); refused (409 naming ``to``) when
NEW has live jobs, quota lines or budgets of its own, or a definition of the same name as one of
OLD's — and, unless ``merge`` says both names are one person, when NEW has any records of its own
(finished jobs, usage, definitions, memberships): a typo'd ``to`` naming another person gave them the
first one's job logs and ran their pending command as the other's OS account (verify27 V8). Idempotent: once nothing is left under OLD and a ``user_renamed`` record says OLD → NEW, the
same request answers ``already`` and changes nothing. ``dry_run`` answers the same plan and changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..admission import Caller
from ..admission.rules import edge_spaces, visible_text
from ..errors import ConflictError, NotFoundError, SchedError, ValidationError
from ..model import JobState, QuotaSet
from ..store import JobRecord
from ..store.definitions import list_definitions, update_definition
from .context import Context
from .models.users import RenameUserRequest, RenameUserResponse
from .team_move import near_hint

__all__ = ["USER_RENAMED_ACTION", "UserRenameService", "user_rename_service"]

USER_RENAMED_ACTION = "user_renamed"
"""Audit action of a rename (user: the old name; details: ``user``, ``to`` and the counts moved)."""

_LIVE = (JobState.PENDING, JobState.PREEMPTED, JobState.ADMITTED, JobState.RUNNING)
_TRIES = 5
_MAX_NAME = 200
_KEPT = ("the audit log keeps the old name (each record as of its time; the user_renamed record links the two "
         "names); jobs running now keep the OS account and job folder they were started with")

OwnerCaller = Callable[[str], Caller]
"""``user -> their Caller`` asked of the hub now (hub mode's ``owner_caller``). Raises NotFoundError
when the hub has no such user, BusyError when it does not answer."""


def check_user_name(name: str, field: str) -> None:
    """A user name typed by an admin: not blank, printable, at most 200 characters, no edge spaces, no ``/``.

    Raises:
        ValidationError: naming ``field``.
    """
    if not name.strip():
        raise ValidationError(f"{field} is empty", field=field, hint="name the user, e.g. ana")
    visible_text(name, field, limit=_MAX_NAME)
    edge_spaces(name, field)
    if "/" in name:
        raise ValidationError(f"{field} contains '/' ({name!r}): no user name has one", field=field,
                              hint="give the user's name as the hub (or the server) shows it")


class UserRenameService:
    """``POST users/{user}/rename`` (module docstring).

    Args:
        ctx: the services' context (store, admission, clock, kick, engine).
        resume: ``(caller, definition id)`` → resume that definition as ``caller`` (the definitions
            service's ``resume``; raises SchedError when it may not run).
        notes: ``old name -> [settings of the configuration that still name it]``.

    Attributes:
        owner_caller: hub mode (set by the central service): asks the hub who a user is now; None
            (embedded): any well-formed name is taken.
    """

    def __init__(self, ctx: Context, resume: Callable[[Caller, str], Any],
                 notes: Callable[[str], list[str]] | None = None) -> None:
        self.ctx = ctx
        self.resume = resume
        self.notes = notes or (lambda user: [])
        self.owner_caller: OwnerCaller | None = None

    def rename(self, caller: Caller, user: str, request: RenameUserRequest) -> RenameUserResponse:
        """Move (or, ``dry_run``, plan moving) ``user``'s work to ``request.to``.

        Returns:
            each live job and definition with what changes; the counts of finished jobs, quota lines,
            budgets, memberships and usage rows moved; what keeps the old name; one ``user_renamed``
            audit record (not for a dry run, nor when it was done already).

        Raises:
            AuthorizationError: not an admin (audited).
            ValidationError: a bad name (``user`` / ``to``), ``to`` equal to ``user``; nothing under
                ``user``; on a hub, ``user`` still a hub user or ``to`` not one.
            ConflictError: ``to`` has live jobs, quota lines, budgets or a same-named definition of its own.
            BusyError: the hub did not answer who the users are.
        """
        self.ctx.admission.require_admin(caller, "carrying a renamed user's work over", field="user")
        check_user_name(user, "user")
        to = request.to
        check_user_name(to, "to")
        if to == user:
            raise ValidationError(f"to is the user's own name ({user!r})", field="to",
                                  hint="give the name the user was renamed to on the hub")
        plan = self._read(user, to)
        if plan["empty"]:
            return self._nothing(user, to, request.dry_run)
        self._check_hub(user, to)
        self._check_free(to, plan)
        self._check_person(user, to, plan, request.merge)
        items = [_job_item(r, to) for r in plan["live"]]
        resumable = self._resumable(user, plan["definitions"])
        items += [{"id": d.id, "kind": "definition", "state": None,
                   "why": f"{to}'s from now on" + (f" (paused when {user} left the hub: resumed as {to}'s)"
                                                    if d.id in resumable else "")}
                  for d in plan["definitions"]]
        resumed: list[str] = sorted(resumable)
        counts = {k: plan[k] for k in ("finished", "quota_lines", "budgets", "memberships", "usage_rows")}
        if not request.dry_run:
            counts = self._write(caller, user, to, plan, items)
            resumed = self._resume_all(caller, resumable, to, items)
        verb = "would move" if request.dry_run else "moved"
        text = (f"{verb} {user}'s work to {to}: {sum(1 for i in items if i['kind'] != 'definition')} live job(s), "
                f"{counts['finished']} finished job record(s), {len(plan['definitions'])} definition(s), "
                f"{counts['quota_lines']} quota line(s), {counts['budgets']} budget(s), {counts['memberships']} "
                f"team membership(s) and {counts['usage_rows']} usage interval(s) (GPU-hours, fair share and budget "
                f"standing are {to}'s)" + (f"; {len(resumed)} definition(s) resumed" if resumed else "")
                + f". Kept: {_KEPT}.")
        return RenameUserResponse.model_validate({
            "user": user, "to": to, "dry_run": request.dry_run, "items": items,
            "finished_jobs": counts["finished"], "quota_lines": counts["quota_lines"], "budgets": counts["budgets"],
            "memberships": counts["memberships"], "usage_rows": counts["usage_rows"], "resumed": resumed,
            "kept": _KEPT, "notes": self.notes(user), "text": text})

    # ---- reading and checking -------------------------------------------------------------------
    def _read(self, user: str, to: str) -> dict[str, Any]:
        """What ``user`` (and, for the checks, ``to``) has in the store now."""
        quotas = self.ctx.store.quota_set()
        with self.ctx.store.transaction(write=False) as tx:
            live = tx.list_jobs(user=user, states=_LIVE)
            everything = tx.count_jobs(user=user)
            definitions = list_definitions(tx, user=user)
            theirs = list_definitions(tx, user=to)
            usage_rows = tx.usage_count(user=user)
            to_live = [r.job.id for r in tx.list_jobs(user=to, states=_LIVE)]
            to_records = tx.count_jobs(user=to)
            to_usage = tx.usage_count(user=to)
        lines = sum(1 for q in quotas.quotas if q.user == user)
        budgets = sum(1 for b in quotas.budgets if b.user == user)
        memberships = len(quotas.user_teams.get(user, ())) + sum(1 for p in quotas.teams if user in p.members)
        empty = not (everything or definitions or lines or budgets or memberships or usage_rows)
        return {"live": live, "finished": everything - len(live), "definitions": definitions, "quota_lines": lines,
                "budgets": budgets, "memberships": memberships, "usage_rows": usage_rows, "empty": empty,
                "to_live": to_live, "to_names": {d.name for d in theirs}, "quotas": quotas,
                "to_own": {"job record(s)": to_records, "usage interval(s)": to_usage, "definition(s)": len(theirs),
                           "team membership(s)": len(quotas.user_teams.get(to, ()))
                           + sum(1 for p in quotas.teams if to in p.members)}}

    def _nothing(self, user: str, to: str, dry_run: bool) -> RenameUserResponse:
        """Nothing left under ``user``: the rename to ``to`` was done (idempotent answer), or a refusal.

        Raises:
            ValidationError: ``user`` was renamed to another name, or never had anything (field ``user``).
        """
        before = [e for e in self.ctx.store.list_events(action=USER_RENAMED_ACTION, limit=200, newest_first=True)
                  if (e.details or {}).get("user") == user]
        if before:
            last = before[0]
            done_to = (last.details or {}).get("to")
            when = last.at.strftime("%Y-%m-%d %H:%M UTC")
            if done_to == to:
                text = (f"{user} was renamed to {to} at {when} by {last.actor}; nothing is left under {user}: "
                        "nothing to do")
                return RenameUserResponse.model_validate({
                    "user": user, "to": to, "dry_run": dry_run, "already": True, "items": [], "finished_jobs": 0,
                    "quota_lines": 0, "budgets": 0, "memberships": 0, "usage_rows": 0, "kept": _KEPT,
                    "notes": self.notes(user), "text": text})
            raise ValidationError(f"user {user!r} was renamed to {done_to!r} at {when} by {last.actor}; nothing is "
                                  f"left under {user!r}", field="user",
                                  hint=f"to rename again, name the current one: jupyter-sched users rename {done_to} "
                                       f"{to}")
        raise ValidationError(f"user {user!r} has no jobs, definitions, quota lines, budgets, memberships or usage "
                              "here", field="user", hint=near_hint(user, self._users(), "check the old name (as the "
                                                                                    "scheduler's jobs list shows it)"))

    def _check_hub(self, user: str, to: str) -> None:
        """On a hub: ``user`` must be gone from it and ``to`` a user of it.

        Raises:
            ValidationError: ``user`` is still a hub user (field ``user``) or ``to`` is not one (field ``to``).
        """
        ask = self.owner_caller
        if ask is None:
            return
        try:
            ask(user)
        except NotFoundError:
            pass
        else:
            raise ValidationError(f"{user!r} is still a user of this hub: their work stays theirs", field="user",
                                  hint=f"rename them on the hub first (Admin page, or PATCH /hub/api/users/{user} "
                                       f'{{"name": "{to}"}}), then run this again')
        try:
            ask(to)
        except NotFoundError:
            raise ValidationError(f"to: {to!r} is not a user of this hub", field="to",
                                  hint=f"rename {user} on the hub first (Admin page, or PATCH /hub/api/users/{user} "
                                       f'{{"name": "{to}"}}), or check the new name') from None

    @staticmethod
    def _check_free(to: str, plan: dict[str, Any]) -> None:
        """``to`` must have no live work, per-user lines or same-named definitions of its own.

        Raises:
            ConflictError: naming ``to``.
        """
        if plan["to_live"]:
            ids = plan["to_live"]
            raise ConflictError(f"to: {to} already has {len(ids)} live job(s) of their own ({', '.join(ids[:5])}"
                                f"{' …' if len(ids) > 5 else ''}): the two histories would be mixed", field="to",
                                hint=f"let them end or cancel them (jupyter-sched cancel JOB as {to} or an admin), "
                                     "then run this again")
        quotas: QuotaSet = plan["quotas"]
        own = sum(1 for q in quotas.quotas if q.user == to) + sum(1 for b in quotas.budgets if b.user == to)
        if own:
            raise ConflictError(f"to: {to} already has {own} quota line(s)/budget(s) of their own", field="to",
                                hint=f"remove {to}'s per-user lines and budgets with PUT quotas (or jupyter-sched "
                                     "quotas) first; the old name's move over")
        clash = sorted({d.name for d in plan["definitions"]} & plan["to_names"])
        if clash:
            raise ConflictError(f"to: {to} already has definition(s) named {', '.join(clash)}", field="to",
                                hint=f"rename or delete {to}'s (jupyter-sched definitions edit ID --name …), then "
                                     "run this again")

    @staticmethod
    def _check_person(user: str, to: str, plan: dict[str, Any], merge: bool) -> None:
        """``to`` must be nobody yet — a name with no records of its own — unless ``merge`` says it is the same
        person (verify27 V8: a typo'd ``to`` merged two people).

        Raises:
            ConflictError: naming ``to`` and what it already has (a dry run too: it is the plan that is refused).
        """
        own = {what: n for what, n in plan["to_own"].items() if n}
        if not own or merge:
            return
        said = ", ".join(f"{n} {what}" for what, n in own.items())
        raise ConflictError(
            f"to: {to} already has records of their own ({said}): this would MERGE two people's records — {user}'s "
            f"job logs would be {to}'s to read, and {user}'s pending jobs would run as {to}'s OS account",
            field="to", hint=f"check the new name (as the hub shows {user} now); if {to} really is the same person "
                             "under an earlier name, add --merge (\"merge\": true)",
            details={"to_records": own})

    def _resumable(self, user: str, definitions: list[Any]) -> set[str]:
        """Ids of ``definitions`` paused by the hub's removal of ``user`` (the newest ``owner_removed``
        record's ``paused_definitions``) and still paused."""
        from ..hub.offboard import OWNER_REMOVED_ACTION

        paused = {d.id for d in definitions if d.paused}
        if not paused:
            return set()
        for event in self.ctx.store.list_events(action=OWNER_REMOVED_ACTION, limit=200, newest_first=True):
            details = event.details or {}
            if details.get("user") == user or event.user == user:
                return paused & {str(i) for i in details.get("paused_definitions") or ()}
        return set()

    def _users(self) -> set[str]:
        with self.ctx.store.transaction(write=False) as tx:
            users = {r.job.spec.user for r in tx.list_jobs(states=_LIVE)} | {d.user for d in list_definitions(tx)}
        return users

    # ---- writing --------------------------------------------------------------------------------
    def _write(self, caller: Caller, user: str, to: str, plan: dict[str, Any], items: list[dict[str, Any]],
               ) -> dict[str, int]:
        """Move everything in one transaction (jobs compare-and-set, read again when changed); one
        ``user_renamed`` record. Returns the counts moved."""
        with self.ctx.store.transaction() as tx:
            moved_jobs = 0
            todo = [r.job.id for r in tx.list_jobs(user=user)]
            for _ in range(_TRIES):
                again = []
                for record in tx.get_jobs(todo).values():
                    if record.job.spec.user != user:
                        continue
                    job = replace(record.job, spec=replace(record.job.spec, user=to))
                    if tx.try_update_job(replace(record, job=job)) is None:
                        again.append(record.job.id)
                    else:
                        moved_jobs += 1
                todo = again
                if not todo:
                    break
            if todo:
                raise ConflictError(f"jobs of {user} kept changing while being moved ({', '.join(todo[:5])})",
                                    field="user", hint="run the rename again (nothing was moved)")
            for definition in list_definitions(tx, user=user):
                update_definition(tx, replace(definition, user=to))
            qs = tx.quota_set()
            moved_qs, lines, budgets, memberships = _renamed_quota_set(qs, user, to)
            if lines or budgets or memberships:
                tx.replace_quota_set(moved_qs)
                tx.note_quota_source(caller.user)
            usage_rows = tx.rename_usage_user(user, to)
            live = sum(1 for i in items if i["kind"] != "definition")
            counts = {"finished": max(0, moved_jobs - live), "quota_lines": lines, "budgets": budgets,
                      "memberships": memberships, "usage_rows": usage_rows}
            tx.add_event(actor=caller.user, action=USER_RENAMED_ACTION, job_id=None, user=user,
                         message=f"{user}'s work moved to {to} by {caller.user}: {moved_jobs} job record(s) "
                                 f"({live} live), {len(plan['definitions'])} definition(s), {lines} quota line(s), "
                                 f"{budgets} budget(s), {memberships} membership(s), {usage_rows} usage interval(s)",
                         details={"user": user, "to": to, "jobs": moved_jobs, "live": [i["id"] for i in items],
                                  "definitions": [d.id for d in plan["definitions"]], **counts},
                         at=self.ctx.clock.now())
        self.ctx.engine.decider.usage.reset()  # fair share and budgets per user: read the moved rows again
        self.ctx.kick("user_renamed")
        return counts

    def _resume_all(self, caller: Caller, ids: set[str], to: str, items: list[dict[str, Any]]) -> list[str]:
        """Resume the definitions the removal paused, now ``to``'s; one that may not run stays paused, its
        item saying why."""
        resumed = []
        for item in items:
            if item["id"] not in ids:
                continue
            try:
                self.resume(caller, item["id"])
            except SchedError as err:
                item["why"] = f"{to}'s from now on; left paused: {err.message} — resume it once that is mended"
                continue
            resumed.append(item["id"])
        return resumed


def _renamed_quota_set(qs: QuotaSet, user: str, to: str) -> tuple[QuotaSet, int, int, int]:
    """``qs`` with ``user``'s per-user lines, budgets and memberships moved to ``to``; and the counts."""
    lines = sum(1 for q in qs.quotas if q.user == user)
    budgets = sum(1 for b in qs.budgets if b.user == user)
    user_teams = dict(qs.user_teams)
    memberships = len(user_teams.get(user, ()))
    if user in user_teams:
        old = user_teams.pop(user)
        user_teams[to] = tuple(dict.fromkeys((*user_teams.get(to, ()), *old)))
    teams = []
    for policy in qs.teams:
        if user in policy.members:
            memberships += 1
            policy = replace(policy, members=tuple(dict.fromkeys(to if m == user else m for m in policy.members)))
        teams.append(policy)
    moved = replace(qs, quotas=tuple(replace(q, user=to) if q.user == user else q for q in qs.quotas),
                    budgets=tuple(replace(b, user=to) if b.user == user else b for b in qs.budgets),
                    teams=tuple(teams), user_teams=user_teams)
    return moved, lines, budgets, memberships


def _job_item(record: JobRecord, to: str) -> dict[str, Any]:
    job = record.job
    kind = "lease" if job.is_lease else "job"
    if job.state.holds_gpus:
        account = ((record.handle or {}).get("run_as") or {}).get("account") if isinstance(
            (record.handle or {}).get("run_as"), dict) else None
        runs_as = f" as the OS account {account}" if account else ""
        why = (f"runs on{runs_as} (a running process keeps its account and job folder); {to} owns it from now on, "
               f"and its GPU-hours are {to}'s")
    else:
        why = f"waits as {to}'s: a hold for the old name's removal no longer applies; it starts as {to}"
    return {"id": job.id, "kind": kind, "state": job.state.value, "why": why}


def user_rename_service(services: Any) -> UserRenameService:
    """The :class:`UserRenameService` of :class:`~.root.Services`: definitions resumed through the
    definitions service; notes of the configuration's settings that still name the old name."""
    policy = services.admission.policy
    admins: frozenset[str] = frozenset(getattr(services.membership, "admins", ()))

    def notes(user: str) -> list[str]:
        said = []
        if user in policy.grants.users:
            classes = ", ".join(sorted(policy.grants.users[user]))
            said.append(f"c.SchedApp.priority_grants names {user} ({classes}): give them to the new name in the "
                        "configuration file")
        if user in policy.user_teams:
            said.append(f"c.SchedApp.user_teams names {user}: write the new name in the configuration file (its "
                        "membership in the store was moved)")
        if user in admins:
            said.append(f"c.SchedApp.admin_users names {user}: write the new name in the configuration file")
        return said

    return UserRenameService(services.ctx, services.definitions.resume, notes)

