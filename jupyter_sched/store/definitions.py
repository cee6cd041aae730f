"""Definition and run rows: reads and compare-and-set writes inside a :class:`~.store.StoreTx`.

Functions rather than :class:`~.store.StoreTx` methods keep the definitions' storage beside its
tables and out of the job store's hot paths. Every write goes through an open transaction, so the
caller decides what commits together — above all :func:`insert_run`, which writes the run row and
its job row in one transaction: the run's unique key ``(definition_id, trigger, scheduled_for)``
refuses a second run for a firing (another server, or this one after a restart, got there first),
and then neither row is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..definitions.model import DefinitionRun, JobDefinition, MissedPolicy, OverlapPolicy, RunTrigger, SkippedFirings
from ..errors import ConflictError, NotFoundError, SchedError
from . import schema
from .codec import JobRecord, dumps, loads, parse_ts, ts
from .store import StoreTx

__all__ = [
    "count_definitions",
    "delete_definition",
    "firing_heads_query",
    "get_definition",
    "insert_definition",
    "insert_run",
    "latest_runs",
    "list_definition_ids",
    "list_definitions",
    "list_firing_heads",
    "list_runs",
    "record_skips",
    "run_for_job",
    "update_definition",
]

_D = schema.definitions
_R = schema.definition_runs


def _spec(d: JobDefinition) -> dict[str, Any]:
    """The ``spec`` column's JSON. ``overlap`` and ``skipped`` (new user 34, n1) live here rather than in
    columns of their own: a row written before has neither and reads as the default policy and no skips
    (no migration; the firing pass reads them only of a due definition, with its whole row)."""
    spec: dict[str, Any] = {"notebook": d.notebook, "script": d.script, "args": list(d.args),
                            "parameters": dict(d.parameters), "job": dict(d.job), "compute_type": d.compute_type,
                            "overlap": d.overlap.value}
    if d.skipped is not None:
        spec["skipped"] = _skipped_json(d.skipped)
    return spec


def _skipped_json(s: SkippedFirings) -> dict[str, Any]:
    """The spec's ``skipped`` object (read back by :func:`_skipped`)."""
    return {"count": s.count, "first": ts(s.first), "last": ts(s.last), "why": s.why, "cause": s.cause,
            "job_id": s.job_id}


def _skipped(value: Any) -> SkippedFirings | None:
    """A stored ``skipped`` (None when absent or not readable: a hand-edited row still lists)."""
    if not isinstance(value, Mapping):
        return None
    try:
        first, last = parse_ts(value.get("first")), parse_ts(value.get("last"))
        if first is None or last is None:
            return None
        job_id = value.get("job_id")
        return SkippedFirings(count=int(value.get("count") or 1), first=first, last=last, why=str(value.get("why") or ""),
                              cause=str(value.get("cause") or ""), job_id=job_id if isinstance(job_id, str) else None)
    except (TypeError, ValueError, SchedError):
        return None


def _overlap(value: Any) -> OverlapPolicy:
    try:
        return OverlapPolicy(value) if value is not None else OverlapPolicy.SKIP_WAITING
    except ValueError:
        return OverlapPolicy.SKIP_WAITING


def _columns(d: JobDefinition) -> dict[str, Any]:
    assert d.cursor is not None and d.created_at is not None and d.updated_at is not None
    return {"id": d.id, "user": d.user, "team": d.team, "name": d.name, "spec": dumps(_spec(d)),
            "schedule": d.schedule, "timezone": d.timezone, "paused": d.paused, "missed": d.missed.value,
            "cursor": ts(d.cursor), "created_at": ts(d.created_at), "updated_at": ts(d.updated_at),
            "version": d.version}


def _from_row(row: Mapping[Any, Any]) -> JobDefinition:
    spec = loads(row["spec"]) or {}
    return JobDefinition(
        id=row["id"], name=row["name"], user=row["user"], team=row["team"],
        notebook=spec.get("notebook"), script=spec.get("script"), args=tuple(spec.get("args") or ()),
        parameters=dict(spec.get("parameters") or {}), job=dict(spec.get("job") or {}),
        schedule=row["schedule"], timezone=row["timezone"], paused=bool(row["paused"]),
        missed=MissedPolicy(row["missed"]), created_at=parse_ts(row["created_at"]),
        updated_at=parse_ts(row["updated_at"]), cursor=parse_ts(row["cursor"]), version=int(row["version"]),
        compute_type=spec.get("compute_type"), overlap=_overlap(spec.get("overlap")), skipped=_skipped(spec.get("skipped")))


def insert_definition(tx: StoreTx, definition: JobDefinition) -> JobDefinition:
    """Insert a new definition (version 1).

    Raises:
        ConflictError: the id exists.
    """
    stored = replace(definition, version=1)
    try:
        with tx.conn.begin_nested():
            tx.conn.execute(_D.insert(), _columns(stored))
    except sa.exc.IntegrityError as exc:
        raise ConflictError(f"definition {definition.id} already exists", field="id") from exc
    return stored


def get_definition(tx: StoreTx, definition_id: str) -> JobDefinition:
    """The live (not deleted) definition ``definition_id``.

    Raises:
        NotFoundError: no such definition, or it was deleted.
    """
    row = tx.conn.execute(sa.select(_D).where(_D.c.id == definition_id, _D.c.deleted_at.is_(None))).mappings().first()
    if row is None:
        raise NotFoundError(f"no definition {definition_id!r}", field="definition_id",
                            hint="list your definitions to see their ids")
    return _from_row(row)


def list_definitions(tx: StoreTx, *, user: str | None = None, active_only: bool = False,
                     limit: int | None = None, name: str | None = None,
                     after: tuple[datetime, str] | None = None) -> list[JobDefinition]:
    """Live definitions, newest first; ``user`` filters by owner, ``name`` by name; ``active_only``
    leaves out paused ones and those without a schedule (what the firing loop reads).
    ``after = (created_at, id)`` of the last row of a previous page: only rows after it in this
    order (keyset paging, as :meth:`~.store.StoreTx.list_jobs`)."""
    # a page (limit given) reads its ids first, then their rows: ordering whole rows made SQLite sort every
    # row of the user with its spec (~250 KB each) for a page of 50 (red28 R6)
    query = sa.select(_D.c.id if limit is not None else _D).where(_D.c.deleted_at.is_(None))
    if after is not None:
        at = ts(after[0])
        query = query.where(sa.or_(_D.c.created_at < at, sa.and_(_D.c.created_at == at, _D.c.id < after[1])))
    if user is not None:
        query = query.where(_D.c.user == user)
    if name is not None:
        query = query.where(_D.c.name == name)
    if active_only:
        query = query.where(_D.c.paused.is_(False), _D.c.schedule.is_not(None))
    query = query.order_by(_D.c.created_at.desc(), _D.c.id.desc())
    if limit is None:
        return [_from_row(row) for row in tx.conn.execute(query).mappings()]
    ids = list(tx.conn.execute(query.limit(limit)).scalars())
    rows = {row["id"]: row for row in tx.conn.execute(sa.select(_D).where(_D.c.id.in_(ids))).mappings()} if ids else {}
    return [_from_row(rows[i]) for i in ids if i in rows]


def list_definition_ids(tx: StoreTx, *, user: str) -> list[str]:
    """The ids of ``user``'s live definitions (no row decoded: red29 R3)."""
    query = sa.select(_D.c.id).where(_D.c.deleted_at.is_(None), _D.c.user == user).order_by(_D.c.id)
    return list(tx.conn.execute(query).scalars())


def definition_owners(tx: StoreTx, ids: Sequence[str]) -> dict[str, str]:
    """``{definition id: owner}`` of ``ids`` (the owner column only, no spec read: the firing pass orders
    its due definitions by owner before reading their rows, s37-defs); an id with no row is left out."""
    owners: dict[str, str] = {}
    for start in range(0, len(ids), 500):  # within every database's bound on bound parameters
        query = sa.select(_D.c.id, _D.c.user).where(_D.c.id.in_(list(ids[start:start + 500])))
        owners.update((str(row.id), str(row.user)) for row in tx.conn.execute(query))
    return owners


def list_firing_heads(tx: StoreTx) -> list[JobDefinition]:
    """The active definitions (not paused, with a schedule, not deleted) as the firing pass decides what is
    due: :data:`~.schema.FIRING_HEAD_COLUMNS` only (id, schedule, time zone, cursor, version), read from the
    index ``ix_definitions_firing`` alone; the spec is neither read nor decoded (red29 R3: 1,500 active
    definitions with ~180 KB specs cost ~1.2 s of the engine's thread and GiBs of RSS a pass). Each is a
    :class:`JobDefinition` with only those fields (no name, owner, team or spec): read the whole row
    (:func:`get_definition`) of those that are due before firing them."""
    return [JobDefinition(id=row["id"], name="", user="", team="", schedule=row["schedule"], timezone=row["timezone"],
                          cursor=parse_ts(row["cursor"]), version=int(row["version"]))
            for row in tx.conn.execute(firing_heads_query()).mappings()]


def firing_heads_query() -> sa.Select[Any]:
    """The statement of :func:`list_firing_heads` (its plan reads ``ix_definitions_firing`` alone)."""
    return (sa.select(*(_D.c[name] for name in schema.FIRING_HEAD_COLUMNS))
            .where(_D.c.paused == sa.false(), _D.c.deleted_at.is_(None), _D.c.schedule.is_not(None))
            .order_by(_D.c.id))


def count_definitions(tx: StoreTx, *, user: str) -> int:
    """How many live definitions ``user`` keeps (one ``COUNT``, no row read: red28 R6)."""
    query = sa.select(sa.func.count()).select_from(_D).where(_D.c.deleted_at.is_(None), _D.c.user == user)
    return int(tx.conn.execute(query).scalar_one())


def update_definition(tx: StoreTx, definition: JobDefinition) -> JobDefinition:
    """Write ``definition`` if its row still has ``definition.version``; return it with the next version.

    Raises:
        ConflictError: the row changed or was deleted since it was read.
    """
    new = replace(definition, version=definition.version + 1)
    result = tx.conn.execute(
        _D.update().where(_D.c.id == definition.id, _D.c.version == definition.version, _D.c.deleted_at.is_(None))
        .values(**{k: v for k, v in _columns(new).items() if k != "id"}))
    if result.rowcount != 1:
        raise ConflictError(f"definition {definition.id} changed meanwhile", field="definition_id",
                            hint="read it again and retry")
    return new


def record_skips(tx: StoreTx, definition_id: str, *, version: int, cursor: datetime, skipped: SkippedFirings) -> bool:
    """Move a definition's cursor past firings it skipped and keep them in its ``skipped``, without reading its row:
    one compare-and-set ``UPDATE`` of its cursor, version (+1) and the ``skipped`` key of its spec (SQLite's
    ``json_set``, PostgreSQL's ``jsonb ||``; the rest of the spec as it is), as the firing pass writes the firings its
    owner's rate skipped (:mod:`jupyter_sched.definitions.rate_skips`; session 38: each one read the whole row, ~180 KB
    of spec at red29's caps, and wrote it back). Whether the row still had ``version`` (False: it changed, was paused
    or deleted meanwhile, and nothing was written)."""
    value = dumps(_skipped_json(skipped))
    dialect = tx.conn.dialect.name
    spec: Any
    if dialect == "sqlite":
        spec = sa.func.json_set(_D.c.spec, "$.skipped", sa.func.json(value))
    elif dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import JSONB

        patch = sa.func.jsonb_build_object("skipped", sa.cast(sa.literal(value), JSONB))
        spec = sa.cast(sa.cast(_D.c.spec, JSONB).op("||")(patch), sa.Text)
    else:  # another database: its JSON functions unknown, the spec read and written whole
        row = tx.conn.execute(sa.select(_D.c.spec).where(_D.c.id == definition_id, _D.c.version == version)).first()
        if row is None:
            return False
        spec = dumps({**(loads(row[0]) or {}), "skipped": loads(value)})
    result = tx.conn.execute(
        _D.update().where(_D.c.id == definition_id, _D.c.version == version, _D.c.deleted_at.is_(None),
                          _D.c.paused == sa.false())
        .values(cursor=ts(cursor), version=version + 1, spec=spec))
    return bool(result.rowcount == 1)


def delete_definition(tx: StoreTx, definition: JobDefinition, *, at: datetime) -> None:
    """Mark ``definition`` deleted (its runs and their jobs stay, as history); compare-and-set.

    Raises:
        ConflictError: the row changed or was deleted since it was read.
    """
    result = tx.conn.execute(
        _D.update().where(_D.c.id == definition.id, _D.c.version == definition.version, _D.c.deleted_at.is_(None))
        .values(deleted_at=ts(at), updated_at=ts(at), version=definition.version + 1))
    if result.rowcount != 1:
        raise ConflictError(f"definition {definition.id} changed meanwhile", field="definition_id",
                            hint="read it again and retry")


def insert_run(tx: StoreTx, run: DefinitionRun, job: JobRecord) -> bool:
    """Insert ``run`` and its ``job`` together; False (nothing written) when the firing already has a run.

    The unique key ``(definition_id, trigger, scheduled_for)`` decides: the run row goes first,
    inside a savepoint, so a duplicate firing costs one refused insert and leaves the outer
    transaction usable.
    """
    values = {"definition_id": run.definition_id, "job_id": run.job_id, "trigger": run.trigger.value,
              "scheduled_for": ts(run.scheduled_for), "parameters": dumps(dict(run.parameters)),
              "created_at": ts(run.created_at or tx.now), "catch_up": run.catch_up, "missed": run.missed,
              "missed_from": ts(run.missed_from) if run.missed_from else None,
              "missed_to": ts(run.missed_to) if run.missed_to else None}
    try:
        with tx.conn.begin_nested():
            tx.conn.execute(_R.insert(), values)
    except sa.exc.IntegrityError:
        return False
    tx.insert_job(job)
    return True


def _run_from_row(row: Mapping[Any, Any]) -> DefinitionRun:
    scheduled = parse_ts(row["scheduled_for"])
    assert scheduled is not None
    return DefinitionRun(definition_id=row["definition_id"], job_id=row["job_id"], trigger=RunTrigger(row["trigger"]),
                         scheduled_for=scheduled, parameters=dict(loads(row["parameters"]) or {}),
                         created_at=parse_ts(row["created_at"]), catch_up=bool(row["catch_up"]),
                         missed=int(row["missed"] or 0), missed_from=parse_ts(row["missed_from"]),
                         missed_to=parse_ts(row["missed_to"]))


def list_runs(tx: StoreTx, definition_ids: Sequence[str], *, limit: int | None = None,
              trigger: RunTrigger | None = None) -> list[DefinitionRun]:
    """Runs of the given definitions, newest scheduled first (at most ``limit`` in all; ``trigger``: only
    those of that trigger)."""
    if not definition_ids:
        return []
    query = sa.select(_R).where(_R.c.definition_id.in_(list(definition_ids)))
    if trigger is not None:
        query = query.where(_R.c.trigger == trigger.value)
    query = query.order_by(_R.c.scheduled_for.desc(), _R.c.id.desc())
    if limit is not None:
        query = query.limit(limit)
    return [_run_from_row(row) for row in tx.conn.execute(query).mappings()]


def latest_runs(tx: StoreTx, definition_ids: Sequence[str]) -> dict[str, DefinitionRun]:
    """The newest run (by ``scheduled_for``, then id) of each of ``definition_ids`` that has one, by
    definition id: one query reading one run row per definition, however many runs each keeps
    (red28 R6: a list read every run of every definition to keep the newest)."""
    if not definition_ids:
        return {}
    rank = sa.func.row_number().over(partition_by=_R.c.definition_id,
                                     order_by=(_R.c.scheduled_for.desc(), _R.c.id.desc())).label("rank")
    ranked = sa.select(_R.c.id, rank).where(_R.c.definition_id.in_(list(definition_ids))).subquery()
    query = sa.select(_R).join(ranked, ranked.c.id == _R.c.id).where(ranked.c.rank == 1)
    return {row["definition_id"]: _run_from_row(row) for row in tx.conn.execute(query).mappings()}


def run_for_job(tx: StoreTx, job_id: str) -> DefinitionRun | None:
    """The run whose job is ``job_id`` (None for a job that is no definition's run)."""
    row = tx.conn.execute(sa.select(_R).where(_R.c.job_id == job_id)).mappings().first()
    return None if row is None else _run_from_row(row)
