"""Finished jobs whose end is their owner's claim, and an admin's correction of it (red33 R3's old rows).

A job that ended while no service watched it was settled from ``exit.json`` in its folder, which its owner writes
(the wrapper is the owner's process). Since migration 29 that claim is bounded (``jobs.seen_running_at`` below,
now above; :mod:`jupyter_sched.engine.seen_running`), but rows settled before kept it: a 92-s 2-GPU run charged
1 s, an end claimed in June 2027 making a team's budget read "8457.87 of 100 spent". Nothing went back over them.

:func:`suspect_ends` lists the settled jobs (succeeded, failed, cancelled) whose end the store shows to be such a
claim, each with why — from the record where it says so, else from figures no real end has:

* ``claimed_unbounded``: settled "(while the server was down)" with no stored last-seen time (before the bound,
  or never seen by a poll): only its start bounded the owner's word;
* ``after_settled``: it ends after the service recorded its end (the terminal audit record's time), by more than
  :data:`SKEW_S` (another clock's end, a pod's, may run a little ahead);
* ``in_future``: it ends after now (by more than :data:`SKEW_S`);
* ``ran_nothing``: it ends at its start (a claim before its start is taken as its start);
* ``seen_after_end``: a service saw it running after it (``seen_running_at``);
* ``reported_after_end``: it reported progress after it (``job_progress.reported_at``);
* ``alive_after_end``: the audit log shows it alive after it (re-adopted with its process running, ready, not
  answering, over its time limit).

Each comes with the bounds the store knows: the end is no earlier than the latest of its start and those signs of
life (``earliest``), and no later than the record of its end (``latest``; now when there is none), and the end the
service would have taken had the bound been in force (``suggested``: the claim kept within those bounds).

:func:`correct_end` sets a new end within those bounds, with a reason: the job's ``finished_at`` (its row version
moves: caches read it again), its last attempt's usage intervals closed at it — deleted and written again, so every
running sum over the usage table (the engine's fair-share and budget ledger, in any process sharing the store)
notices a row behind its cursor and reads again — and one ``end_corrected`` audit record: who, the job, its owner,
before → after, the GPU-hours before and after (and the GPU-seconds taken back per GPU model), and the reason.
Fair share, budgets, usage reports and learnt runtimes read the end the store records, so they follow.

A correction that shortens a job takes GPU-seconds back, so the usage per team can go down; Prometheus reads a
counter that goes down as a reset (``increase()`` then counts the whole total again). :func:`taken_back` sums what
every correction took back per team and GPU model from the ``end_corrected`` records (which retention keeps: usage is
never pruned either), so the ``GET metrics`` usage counter counts usage before corrections and a second counter
what they took back (:mod:`jupyter_sched.extension.metrics_accounting`); both only grow (s36-edges).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

import sqlalchemy as sa

from .. import untrusted_json
from ..accounting import UsageInterval
from ..errors import NotFoundError, ValidationError
from ..model import JobKind, JobState
from ..wording.claimed_ends import end_corrected_sentence, suspicion_sentence, utc_time
from . import schema
from .codec import JobRecord, parse_ts, ts
from .rebill import holders_beside, rebill, seconds_charged
from .retention import END_CORRECTED_ACTION as KEPT_ACTION
from .store import StoreTx

__all__ = ["CLAIM_MARK", "END_CORRECTED_ACTION", "EndCorrection", "SuspectEnd", "Suspicion", "correct_end",
           "TAKEN_BACK_BY_TEAM_KEY", "TAKEN_BACK_KEY", "named_jobs", "planned_end", "same_end", "suspect_ends", "taken_back"]

CLAIM_MARK = "(while the server was down)"
"""What the message of a job settled from its own ``exit.json`` ends with (the local executor's unwatched settle)."""

END_CORRECTED_ACTION = KEPT_ACTION
"""Audit action of an admin's correction (details: ``before``, ``after``, ``reason``, GPU-hours before and after,
:data:`TAKEN_BACK_KEY`); retention keeps these records (:mod:`.retention`)."""

ALIVE_ACTIONS = ("adopted", "ready", "not_ready", "time_limit", "stop_retry", "lease_outside_process")
"""Audit actions about a job that say its work was alive at that time."""

SETTLED = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)
"""States an end claim settles in (a lost job's end is the service's own time)."""

_MAX_REASON = 500

SKEW_S = 60.0
"""Seconds an end may lie after its record or now before it is called impossible: another clock (a Kubernetes
node's, for a pod's end) may run ahead of the service's; a claim a minute long is worth no admin's time."""


@dataclass(frozen=True, slots=True)
class Suspicion:
    """One reason a job's recorded end is suspect: ``code`` (module docstring), ``at`` the time it names
    (None: none), ``text`` the sentence."""

    code: str
    text: str
    at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "text": self.text, "at": None if self.at is None else self.at.isoformat()}


@dataclass(frozen=True, slots=True)
class SuspectEnd:
    """A settled job whose end is suspect, with the bounds the store knows (times UTC).

    Attributes:
        gpus: GPUs it held (all workers); gpu_hours: what its usage rows charge now.
        earliest/latest: the range a corrected end may take; suggested: the claim kept in it.
    """

    job_id: str
    user: str
    team: str
    state: str
    gpus: int
    started_at: datetime
    finished_at: datetime
    settled_at: datetime | None
    earliest: datetime
    latest: datetime
    suggested: datetime
    gpu_hours: float
    why: tuple[Suspicion, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "user": self.user, "team": self.team, "state": self.state, "gpus": self.gpus,
                "started_at": self.started_at.isoformat(), "finished_at": self.finished_at.isoformat(),
                "settled_at": None if self.settled_at is None else self.settled_at.isoformat(),
                "earliest": self.earliest.isoformat(), "latest": self.latest.isoformat(),
                "suggested": self.suggested.isoformat(), "gpu_hours": round(self.gpu_hours, 4),
                "why": [w.to_dict() for w in self.why]}


@dataclass(frozen=True, slots=True)
class EndCorrection:
    """What :func:`correct_end` did: the end and GPU-hours before and after, the usage rows rewritten."""

    job_id: str
    user: str
    before: datetime
    after: datetime
    gpu_hours_before: float
    gpu_hours_after: float
    usage_rows: int
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"job_id": self.job_id, "user": self.user, "before": self.before.isoformat(),
                "after": self.after.isoformat(), "gpu_hours_before": round(self.gpu_hours_before, 4),
                "gpu_hours_after": round(self.gpu_hours_after, 4), "usage_rows": self.usage_rows, "text": self.text}


when = utc_time
"""``2026-12-06 19:43:05 UTC`` (:func:`jupyter_sched.wording.claimed_ends.utc_time`)."""


def _said(code: str, end: datetime, at: datetime | None = None, detail: str = "") -> Suspicion:
    return Suspicion(code, suspicion_sentence(code, end=end, at=at, detail=detail), at)


def suspect_ends(tx: StoreTx, now: datetime, *, limit: int = 500) -> list[SuspectEnd]:
    """The settled jobs whose end is suspect (module docstring), newest end first, at most ``limit``.

    The database picks the candidates (three statements: the settled jobs' own figures, the events of their lives
    joined to them, their progress; each linear in the rows it reads); each candidate, newest end first, is then
    read whole until ``limit`` are suspect. Rows that do not decode are skipped (the store's readers quarantine them).
    """
    j, e, p = schema.jobs, schema.events, schema.job_progress
    settled = [s.value for s in SETTLED]
    is_settled = sa.and_(j.c.state.in_(settled), j.c.kind != JobKind.LEASE.value, j.c.finished_at.is_not(None),
                         j.c.started_at.is_not(None))
    corrected = sa.exists().where(e.c.job_id == j.c.id, e.c.action == END_CORRECTED_ACTION)
    # three statements, each linear in what it reads: the jobs' own figures; the events of a job's life joined to
    # their job (read along the action index, never an EXISTS per job: 100k jobs made that 10^10 steps); progress
    own = sa.select(j.c.id).where(is_settled, sa.or_(
        sa.and_(j.c.message.like(f"%{CLAIM_MARK}%"), j.c.seen_running_at.is_(None), ~corrected),
        j.c.finished_at > ts(now), j.c.finished_at <= j.c.started_at, j.c.seen_running_at > j.c.finished_at))
    told = (sa.select(e.c.job_id).select_from(e.join(j, j.c.id == e.c.job_id))
            .where(e.c.action.in_((*ALIVE_ACTIONS, *settled)), is_settled, sa.or_(
                sa.and_(e.c.action.in_(ALIVE_ACTIONS), e.c.at > j.c.finished_at),
                sa.and_(e.c.action == j.c.state, e.c.at < j.c.finished_at))).distinct())
    reported = (sa.select(p.c.job_id).select_from(p.join(j, j.c.id == p.c.job_id))
                .where(is_settled, p.c.reported_at > j.c.finished_at))
    ids: set[str] = set()
    for query in (own, told, reported):
        ids.update(str(i) for i in tx.conn.execute(query).scalars())
    ends: list[tuple[str, str]] = []
    chosen = sorted(ids)
    for at in range(0, len(chosen), 500):  # bounded IN lists (SQLite's variable limit)
        ends += [(str(i), str(f)) for i, f in tx.conn.execute(
            sa.select(j.c.id, j.c.finished_at).where(j.c.id.in_(chosen[at:at + 500])))]
    ends.sort(key=lambda pair: (pair[1], pair[0]), reverse=True)
    out: list[SuspectEnd] = []
    for job_id, _ in ends:
        if len(out) >= limit:
            break
        found = _look(tx, job_id, now)
        if found is not None and found.why:
            out.append(found)
    return out


def _look(tx: StoreTx, job_id: str, now: datetime) -> SuspectEnd | None:
    """``job_id``'s end, its signs of life and bounds; None when it is no settled job with a start and an end."""
    try:
        record = tx.get_job(job_id)
    except (NotFoundError, ValidationError):
        return None
    job = record.job
    if job.state not in SETTLED or job.is_lease or job.started_at is None or job.finished_at is None:
        return None
    start, end = job.started_at, job.finished_at
    e = schema.events
    found = tx.conn.execute(sa.select(e.c.action, e.c.at).where(
        e.c.job_id == job_id, e.c.action.in_((*ALIVE_ACTIONS, job.state.value, END_CORRECTED_ACTION)))
        .order_by(e.c.id)).all()
    corrected = any(action == END_CORRECTED_ACTION for action, _ in found)
    rows: list[tuple[str, Any]] = [(str(action), at) for action, at in found if action != END_CORRECTED_ACTION]
    settled_at = next((_time(at) for action, at in rows if action == job.state.value), None)
    why: list[Suspicion] = []
    lives: list[datetime] = []
    seen = tx.seen_running_at(job_id)
    if CLAIM_MARK in job.message and seen is None and not corrected:  # an admin's end stands
        why.append(_said("claimed_unbounded", end))
    skew = timedelta(seconds=SKEW_S)
    if settled_at is not None and end > settled_at + skew:
        why.append(_said("after_settled", end, settled_at))
    if end > now + skew:
        why.append(_said("in_future", end, end))
    if end <= start:
        why.append(_said("ran_nothing", end, start))
    if seen is not None and seen > end:
        why.append(_said("seen_after_end", end, seen))
        lives.append(seen)
    reported = _reported_at(tx, job_id)
    if reported is not None and reported > end:
        why.append(_said("reported_after_end", end, reported))
        lives.append(reported)
    alive = [(action, at) for action, raw in rows if action != job.state.value
             and (at := _time(raw)) is not None and at > end and (settled_at is None or at <= settled_at)]
    if alive:
        action, at = max(alive, key=lambda pair: pair[1])
        why.append(_said("alive_after_end", end, at, action))
        lives.append(at)
    latest = settled_at if settled_at is not None else now
    latest = max(min(latest, now), start)
    earliest = min(max([start, *lives]), latest)
    suggested = min(max(end, earliest), latest)
    return SuspectEnd(job_id=job.id, user=job.spec.user, team=job.spec.team, state=job.state.value,
                      gpus=job.spec.resources.total_gpus, started_at=start,
                      finished_at=end, settled_at=settled_at, earliest=earliest, latest=latest, suggested=suggested,
                      gpu_hours=_gpu_hours(tx, job_id), why=tuple(why))


def named_jobs(tx: StoreTx, ref: str, *, limit: int = 500) -> list[dict[str, Any]]:
    """The jobs of every user named ``ref``, newest submit first (at most ``limit``), each as
    ``{"id", "name", "state", "finished_at"}`` — the rows the CLI's one resolver of a job reference reads
    (:func:`jupyter_sched.client._wire.job_named`), so ``doctor correct-end`` takes a name as every other command
    does (newuser35 N4). Read from the ``jobs.name`` column on its index; no row decoded."""
    j = schema.jobs
    rows = tx.conn.execute(sa.select(j.c.id, j.c.state, j.c.finished_at)
                           .where(j.c.name == ref[:schema.JOB_NAME_WIDTH], j.c.kind != JobKind.LEASE.value)
                           .order_by(j.c.submitted_at.desc(), j.c.id.desc()).limit(limit)).all()
    return [{"id": str(i), "name": ref, "state": str(state), "finished_at": finished} for i, state, finished in rows]


NOTHING_BELOW_S = 1.0
"""A corrected end closer than this to the recorded one changes nothing an admin means: the ends are shown to the
second (:func:`when`), so an end copied from them differs from the record by its microseconds only."""


def same_end(look: SuspectEnd, end: datetime) -> bool:
    """Whether ``end`` is ``look``'s recorded end, to the second (:data:`NOTHING_BELOW_S`)."""
    return abs((end - look.finished_at).total_seconds()) < NOTHING_BELOW_S


def planned_end(tx: StoreTx, job_id: str, end: datetime | None, reason: str, *, now: datetime,
                ) -> tuple[SuspectEnd, datetime]:
    """What :func:`correct_end` would do, checked as it checks — the job, its bounds, the end it would take
    (None: the suggested one) — without a change: the dry run of ``doctor correct-end`` says what ``--yes`` does,
    or refuses as it would (newuser35 N4: the dry run invited ``--yes`` for a job that did not exist).

    Returns:
        ``(look, after)``: the job's end, signs of life and bounds, and the end it would get.

    Raises:
        ValidationError: ``reason`` blank, too long or not printable (field ``reason``); ``end`` naive, outside
            the bounds, or the recorded end of a job whose end is not suspect ("nothing to correct": no audit
            record of a no-op; field ``end``); the job not a settled job with a start and an end (field ``job_id``).
        NotFoundError: no such job.
    """
    _reason(reason)
    if end is not None and end.tzinfo is None:
        raise ValidationError("end has no time zone", field="end",
                              hint="give an ISO 8601 time with its zone, e.g. 2026-12-06T19:43:05Z")
    job = tx.get_job(job_id).job
    look = _look(tx, job_id, now)
    if look is None:
        raise ValidationError(f"job {job_id} is {job.state.value}: only a settled job's end (succeeded, failed or "
                              "cancelled, with a start) can be corrected", field="job_id",
                              hint="list the suspect ends with GET usage/claimed-ends (jupyter-sched doctor ends)")
    after = look.suggested if end is None else end
    if not look.earliest <= after <= look.latest:
        raise ValidationError(
            f"end {when(after)} is outside what the store knows of job {job_id}: no earlier than {when(look.earliest)} "
            f"(its start and the last sign it was running) and no later than {when(look.latest)} (when its end was "
            "recorded)", field="end",
            hint=f"give a time from {look.earliest.isoformat()} to {look.latest.isoformat()}, or leave end out for "
                 f"the suggested {look.suggested.isoformat()}")
    if not look.why and same_end(look, after):
        # a no-op "correction" of an end nothing suspects wrote an end_corrected audit record "01:04:13 UTC ->
        # 01:04:13 UTC" (newuser35 N4); a suspect end kept as it is, is an admin's word that it stands (the record
        # says so, and `doctor ends` lists it no more)
        raise ValidationError(
            f"nothing to correct: job {job_id} already ends at {when(look.finished_at)}, and its end is not suspect "
            "(doctor ends does not list it)", field="end",
            hint=f"to change it, give an end from {when(look.earliest)} to {when(look.latest)}")
    return look, after


def correct_end(tx: StoreTx, job_id: str, end: datetime | None, reason: str, *, actor: str, now: datetime,
                ) -> EndCorrection:
    """Set ``job_id``'s end to ``end`` (None: the suggested end) within the bounds the store knows (module
    docstring), closing its last attempt's usage at it; one ``end_corrected`` audit record by ``actor``.

    Raises:
        ValidationError: as :func:`planned_end` (``reason``, ``end`` — outside the bounds, or nothing to correct —,
            ``job_id``).
        NotFoundError: no such job.
        ConflictError: the job's row changed meanwhile (run it again).
    """
    text = _reason(reason)
    look, after = planned_end(tx, job_id, end, reason, now=now)
    record = tx.get_job(job_id)
    job = record.job
    before, hours_before = look.finished_at, look.gpu_hours
    gpus = _shared_gpus(tx, job_id)
    beside = sorted(holders_beside(tx, gpus, before, after) - {job_id})
    charged_before = seconds_charged(tx, [job_id, *beside], until=now)  # what the usage counter had counted so far
    tx.update_job(_with_end(record, after))
    rows = _reclose_usage(tx, job_id, after)
    rows += rebill(tx, gpus, before, after).rows  # the shares beside it on its GPUs, over the moved stretch (red42 R2)
    hours_after = _gpu_hours(tx, job_id)
    charged_after = seconds_charged(tx, [job_id, *beside], until=now)
    by_team = _taken_back_by_team(charged_before, charged_after)
    changed = [(other, _hours(charged_before.get(other)), _hours(charged_after.get(other))) for other in beside]
    changed = [(other, b, a) for other, b, a in changed if abs(b - a) > 1e-9]
    said = end_corrected_sentence(job_id=job_id, owner=job.spec.user, actor=actor, before=before, after=after,
                                  gpu_hours_before=hours_before, gpu_hours_after=hours_after, reason=text,
                                  beside=changed)
    back: defaultdict[str, float] = defaultdict(float)
    for models in by_team.values():
        for model, seconds in models.items():
            back[model] += seconds
    tx.add_event(actor=actor, action=END_CORRECTED_ACTION, job_id=job_id, user=job.spec.user, message=said,
                 details={"owner": job.spec.user, "team": job.spec.team, "before": before.isoformat(),
                          "after": after.isoformat(), "reason": text, "gpu_hours_before": round(hours_before, 6),
                          "gpu_hours_after": round(hours_after, 6), "usage_rows": rows,
                          TAKEN_BACK_KEY: {model: round(seconds, 6) for model, seconds in back.items()},
                          TAKEN_BACK_BY_TEAM_KEY: by_team,
                          "beside": [{"job_id": other, "gpu_hours_before": round(b, 6), "gpu_hours_after": round(a, 6)}
                                     for other, b, a in changed],
                          "why": [w.code for w in look.why]}, at=now)
    return EndCorrection(job_id=job_id, user=job.spec.user, before=before, after=after,
                         gpu_hours_before=hours_before, gpu_hours_after=hours_after, usage_rows=rows, text=said)


def _shared_gpus(tx: StoreTx, job_id: str) -> list[str]:
    """The GPUs the job's last attempt held a share of (not whole, not a MIG slice): where its end moving changes
    what the holdings beside it are charged."""
    u = schema.usage
    last = tx.conn.execute(sa.select(sa.func.max(u.c.attempt)).where(u.c.job_id == job_id)).scalar()
    if last is None:
        return []
    return sorted({str(g) for g, share in tx.conn.execute(sa.select(u.c.gpu_uuid, u.c.share).where(
        u.c.job_id == job_id, u.c.attempt == last)) if 0 < float(share) < 1 and not str(g).startswith("MIG-")})


def _hours(by: dict[tuple[str, str], float] | None) -> float:
    return sum((by or {}).values()) / 3600.0


def _taken_back_by_team(before: dict[str, dict[tuple[str, str], float]],
                        after: dict[str, dict[tuple[str, str], float]]) -> dict[str, dict[str, float]]:
    """``{team: {gpu_model: GPU-seconds}}`` the correction lowered the usage by, net over the corrected job and the
    holdings beside it (a shortened share's half and its neighbour's half becoming the whole GPU take nothing back)."""
    net: defaultdict[tuple[str, str], float] = defaultdict(float)
    for side, sign in ((before, 1.0), (after, -1.0)):
        for by in side.values():
            for key, seconds in by.items():
                net[key] += sign * seconds
    out: dict[str, dict[str, float]] = {}
    for (team, model), seconds in sorted(net.items()):
        if seconds > 1e-6:
            out.setdefault(team, {})[model] = round(seconds, 6)
    return out


def _reason(reason: str) -> str:
    """``reason`` stripped; refused when blank, too long or not one printable line (field ``reason``)."""
    text = reason.strip()
    if not text:
        raise ValidationError("reason is empty", field="reason",
                              hint="say why the end is corrected, e.g. 'claimed while the service was down'")
    if len(text) > _MAX_REASON or any(not ch.isprintable() for ch in text):
        raise ValidationError(f"reason must be one printable line of at most {_MAX_REASON} characters",
                              field="reason", hint="shorten it to one line")
    return text


def _with_end(record: JobRecord, end: datetime) -> JobRecord:
    return replace(record, job=replace(record.job, finished_at=end))


def _reclose_usage(tx: StoreTx, job_id: str, end: datetime) -> int:
    """Close the job's last attempt's usage intervals at ``end`` (never before a row's start): each row deleted and
    written again under a new id, so a running sum that read it notices (module docstring). How many. A GPU's
    holding cut where its charge changed (schema 30, red40 R1) has several rows: the last one ends at ``end``, the
    earlier ones no later than it (a later end lengthens the last stretch only)."""
    u = schema.usage
    last = tx.conn.execute(sa.select(sa.func.max(u.c.attempt)).where(u.c.job_id == job_id)).scalar()
    if last is None:
        return 0
    rows = [dict(r) for r in tx.conn.execute(sa.select(u).where(u.c.job_id == job_id, u.c.attempt == last,
                                                                 u.c.ended_at.is_not(None))).mappings()]
    last_start: dict[str, str] = {}
    for row in rows:
        last_start[row["gpu_uuid"]] = max(last_start.get(row["gpu_uuid"], ""), str(row["started_at"]))
    for row in rows:
        tx.conn.execute(u.delete().where(u.c.id == row["id"]))
    for row in rows:
        start = parse_ts(row["started_at"])
        assert start is not None
        at = str(ts(max(end, start)))
        if str(row["started_at"]) < last_start[row["gpu_uuid"]]:
            at = min(str(row["ended_at"]), at)
        tx.conn.execute(u.insert().values({**{k: v for k, v in row.items() if k != "id"}, "ended_at": at}))
    tx.jobs_changed = True  # answers summed from usage rows are kept by the jobs change counter
    return len(rows)


def _gpu_hours(tx: StoreTx, job_id: str) -> float:
    """GPU-hours the job's closed usage rows charge (share times length)."""
    return sum(_gpu_seconds_by_model(tx, job_id).values()) / 3600.0


def _gpu_seconds_by_model(tx: StoreTx, job_id: str, *, until: datetime | None = None) -> dict[str, float]:
    """GPU-seconds the job's closed usage rows charge (share times length), per GPU model; only up to ``until`` when
    given (an end claimed in the future is charged as time passes: the usage counter counts up to its scrape)."""
    out: defaultdict[str, float] = defaultdict(float)
    for iv in tx.usage_rows(job_ids=[job_id]):
        if iv.ended_at is not None:
            end = iv.ended_at if until is None else min(iv.ended_at, until)
            out[iv.gpu_model] += iv.charged * max(0.0, (end - iv.started_at).total_seconds())
    return dict(out)


TAKEN_BACK_KEY = "gpu_seconds_taken_back"
"""Key of an ``end_corrected`` record's details: ``{gpu_model: GPU-seconds}`` the correction took back (only models
whose usage, counted up to the correction, it lowered; empty when it raised or kept it) — since red42 R2 net over
the job and the holdings beside it on its GPUs, all teams together (:data:`TAKEN_BACK_BY_TEAM_KEY` per team)."""

TAKEN_BACK_BY_TEAM_KEY = "gpu_seconds_taken_back_by_team"
"""Key of an ``end_corrected`` record's details (red42 R2): ``{team: {gpu_model: GPU-seconds}}`` the correction
lowered each team's usage by (the teams of the usage rows, as the usage counter sums them), net over the corrected
job and the holdings beside it it re-charged; what :func:`taken_back` reads where present."""


def taken_back(tx: StoreTx) -> dict[tuple[str, str], float]:
    """GPU-seconds every admin's end correction took back, per ``(team, gpu_model)`` (module docstring): the sum,
    over the ``end_corrected`` records, of what each lowered a model's usage by, as counted up to the correction (an
    end claimed in the future had been charged only up to then). Never smaller later (retention keeps these records).
    A record written before its details said this per model (:data:`TAKEN_BACK_KEY`) counts it from its ``before``,
    ``after`` and time (:func:`_old_taken_back`); a record that does not decode is skipped. One statement along the
    ``(action, id)`` index; corrections are an admin's hand work, so few."""
    e = schema.events
    out: defaultdict[tuple[str, str], float] = defaultdict(float)
    for job_id, details, at in tx.conn.execute(sa.select(e.c.job_id, e.c.details, e.c.at)
                                               .where(e.c.action == END_CORRECTED_ACTION).order_by(e.c.id)):
        try:
            said = untrusted_json.loads(details or "{}")  # an admin's correction record; its reason is free text
        except ValueError:
            continue
        if not isinstance(said, dict) or not job_id:
            continue
        by_team = said.get(TAKEN_BACK_BY_TEAM_KEY)
        if isinstance(by_team, dict):  # red42 R2: net over the job and the holdings beside it, per team
            for team, models in by_team.items():
                for model, seconds in (models.items() if isinstance(models, dict) else ()):
                    if isinstance(seconds, (int, float)) and seconds > 0:
                        out[(str(team), str(model))] += float(seconds)
            continue
        back = said.get(TAKEN_BACK_KEY)
        if not isinstance(back, dict):
            back = _old_taken_back(tx, str(job_id), said, _time(at))
        team = said.get("team")
        if not isinstance(team, str) or not team:
            team = next((iv.team for iv in tx.usage_rows(job_ids=[str(job_id)])), "")
        for model, seconds in back.items():
            if isinstance(seconds, (int, float)) and seconds > 0:
                out[(team, str(model))] += float(seconds)
    return dict(out)


def _old_taken_back(tx: StoreTx, job_id: str, said: dict[str, Any], at: datetime | None) -> dict[str, float]:
    """What a record without :data:`TAKEN_BACK_KEY` took back, as the usage counter had counted it when the record was
    written (``at``): the job's GPUs per model (its last attempt's shares) times how much earlier than ``at`` the end
    became (none when it became later)."""
    before, after = _time(said.get("before")), _time(said.get("after"))
    if at is None or before is None or after is None:
        return {}
    seconds = (min(before, at) - min(after, at)).total_seconds()
    if seconds <= 0:
        return {}
    last = tx.usage_rows(job_ids=[job_id])
    attempt = max((iv.attempt for iv in last), default=None)
    latest: dict[str, UsageInterval] = {}  # a GPU's last stretch (schema 30 cuts one where its charge changes)
    for iv in last:
        if iv.attempt == attempt and (iv.gpu_uuid not in latest or iv.started_at > latest[iv.gpu_uuid].started_at):
            latest[iv.gpu_uuid] = iv
    shares: defaultdict[str, float] = defaultdict(float)
    for iv in latest.values():
        shares[iv.gpu_model] += iv.charged
    return {model: share * seconds for model, share in shares.items()}


def _reported_at(tx: StoreTx, job_id: str) -> datetime | None:
    p = schema.job_progress
    return _time(tx.conn.execute(sa.select(p.c.reported_at).where(p.c.job_id == job_id)).scalar())


def _time(raw: Any) -> datetime | None:
    try:
        return parse_ts(str(raw)) if raw is not None else None
    except (ValidationError, ValueError):
        return None
