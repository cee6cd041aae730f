"""Versioned schema migrations: a small runner with a ``schema_version`` table.

Why not alembic: the package would need alembic's script directory, ``env.py`` and ini file in
the wheel and a second configuration path for the embedded SQLite default; our migrations are
few, forward-only and must run at server start on SQLite and PostgreSQL alike. A list of
numbered steps applied in one transaction does exactly that and is easy to audit.

Rules:

* Each :class:`Migration` has a strictly increasing ``version`` and an ``upgrade(conn)`` that
  runs inside the runner's transaction (both SQLite and PostgreSQL have transactional DDL, so
  a failed step leaves the database at the previous version).
* Applied steps are recorded in ``schema_version`` (version, description, applied_at).
* Running the migrations twice is a no-op (idempotent); a database newer than this code is
  refused with :class:`~jupyter_sched.errors.StoreError` rather than silently used.
* Concurrent runners (two servers starting on one store) serialise: SQLite through
  ``BEGIN IMMEDIATE``, PostgreSQL through a transaction-scoped advisory lock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

import sqlalchemy as sa

from ..errors import StoreError
from . import schema
from .codec import loads, ts

__all__ = ["HEAD_VERSION", "MIGRATIONS", "Migration", "current_version", "latest_version", "migrate"]

_ADVISORY_LOCK_KEY = 0x6A5F_5343  # "j_SC": any constant shared by all jupyter_sched servers

_version_table = sa.Table(
    "schema_version", sa.MetaData(),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.String(200), nullable=False),
    sa.Column("applied_at", sa.String(32), nullable=False),
)


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: ``upgrade(conn)`` moves the database from ``version - 1`` to ``version``."""

    version: int
    description: str
    upgrade: Callable[[sa.Connection], None]


def _v1_initial(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v1(md)
    md.create_all(conn)


def _v2_gpu_rollups(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v2(md)
    md.create_all(conn)


def _v3_definitions(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v3(md)
    md.create_all(conn)


def _v4_rollup_validity(conn: sa.Connection) -> None:
    have = {c["name"] for c in sa.inspect(conn).get_columns("gpu_rollups")}
    for name, type_ in schema.ROLLUP_VALIDITY_COLUMNS:
        if name not in have:
            conn.execute(sa.text(f"ALTER TABLE gpu_rollups ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v5_team_reclaim(conn: sa.Connection) -> None:
    name, type_ = schema.TEAM_RECLAIM_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("team_policies")}:
        conn.execute(sa.text(f"ALTER TABLE team_policies ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v6_quarantine(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v1(md)  # the usage table the new index is on (already in the database)
    schema.tables_v6(md)
    md.tables["quarantine"].create(conn)
    for index in md.tables["usage"].indexes:
        if index.name == "ix_usage_gpu_open":
            index.create(conn)


def _v7_rollup_attribution(conn: sa.Connection) -> None:
    have = {c["name"] for c in sa.inspect(conn).get_columns("gpu_rollups")}
    for name, type_ in schema.ROLLUP_ATTRIBUTION_COLUMNS:
        if name not in have:
            conn.execute(sa.text(f"ALTER TABLE gpu_rollups ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v8_change_counters(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v8(md)
    md.tables["change_counters"].create(conn)
    _v8_jobs_counter_row(conn)


def _v8_jobs_counter_row(conn: sa.Connection) -> None:
    """Step 8's data part: the ``jobs`` change counter's row, at 0 (a new store needs it too)."""
    conn.execute(schema.change_counters.insert().values(name=schema.JOBS_COUNTER, value=0))


def _add_index(conn: sa.Connection, table: str, name: str, indexes: Callable[[sa.MetaData], object]) -> None:
    """Create the one index ``name`` on ``table``, which is already in the database (created by
    version 1): ``indexes`` declares that version's indexes on the table's metadata."""
    md = sa.MetaData()
    schema.tables_v1(md)
    indexes(md)
    for index in md.tables[table].indexes:
        if index.name == name:
            index.create(conn, checkfirst=True)


def _v9_events_by_action(conn: sa.Connection) -> None:
    _add_index(conn, "events", "ix_events_action_id", schema.indexes_v9)


def _v10_jobs_by_state_kind(conn: sa.Connection) -> None:
    _add_index(conn, "jobs", "ix_jobs_state_kind_submitted", schema.indexes_v10)


def _v11_rollup_job_minutes(conn: sa.Connection) -> None:
    name, type_ = schema.ROLLUP_JOB_MINUTES_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("gpu_rollups")}:
        conn.execute(sa.text(f"ALTER TABLE gpu_rollups ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v12_live_keys_covered(conn: sa.Connection) -> None:
    _add_index(conn, "jobs", "ix_jobs_state_submitted_version", schema.indexes_v12)


def _v13_job_progress(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v13(md)
    md.create_all(conn)


def _v14_quota_source(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v14(md)
    md.create_all(conn)


def _v15_user_teams_lists(conn: sa.Connection) -> None:
    """Version 1's ``user_teams`` (one team per user) becomes one row per user and position; each
    user's one team is their position 0 (their default team)."""
    old = sa.Table("user_teams", sa.MetaData(), sa.Column("user", sa.String(200)), sa.Column("team", sa.String(200)))
    rows = [(r.user, r.team) for r in conn.execute(sa.select(old.c.user, old.c.team))]
    old.drop(conn)
    md = sa.MetaData()
    schema.tables_v15(md)
    table = md.tables["user_teams"]
    table.create(conn)
    for user, team in rows:
        conn.execute(table.insert().values(user=user, position=0, team=team))


def _v16_progress_ignored(conn: sa.Connection) -> None:
    name, type_ = schema.PROGRESS_IGNORED_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("job_progress")}:
        conn.execute(sa.text(f"ALTER TABLE job_progress ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v17_run_catch_up(conn: sa.Connection) -> None:
    have = {c["name"] for c in sa.inspect(conn).get_columns("definition_runs")}
    for name, type_ in schema.RUN_CATCH_UP_COLUMNS:
        if name not in have:
            conn.execute(sa.text(f"ALTER TABLE definition_runs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v18_node_cordons(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v18(md)
    md.create_all(conn)


def _v19_job_token_secrets(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v19(md)
    md.create_all(conn)


def _v20_false_starts(conn: sa.Connection) -> None:
    name, type_ = schema.FALSE_STARTS_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("jobs")}:
        conn.execute(sa.text(f"ALTER TABLE jobs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v21_job_holds(conn: sa.Connection) -> None:
    have = {c["name"] for c in sa.inspect(conn).get_columns("jobs")}
    for name, type_ in schema.JOB_HOLD_COLUMNS:
        if name not in have:
            conn.execute(sa.text(f"ALTER TABLE jobs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v22_eligible_at(conn: sa.Connection) -> None:
    name, type_ = schema.ELIGIBLE_AT_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("jobs")}:
        conn.execute(sa.text(f"ALTER TABLE jobs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v23_job_names(conn: sa.Connection) -> None:
    """``jobs.name`` filled from each row's spec (rows whose spec does not decode, or names no string, keep
    null), then its index. Idempotent: a row already named is left as it is."""
    name, type_ = schema.JOB_NAME_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("jobs")}:
        conn.execute(sa.text(f"ALTER TABLE jobs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))
    jobs = sa.table("jobs", sa.column("id", sa.String), sa.column("spec", sa.Text), sa.column(name, sa.String))
    page = (sa.select(jobs.c.id, jobs.c.spec).where(jobs.c.name.is_(None), jobs.c.id > sa.bindparam("after"))
            .order_by(jobs.c.id).limit(500))  # pages: a live row's spec may carry a notebook (MiB)
    write = jobs.update().where(jobs.c.id == sa.bindparam("w_id")).values(name=sa.bindparam("w_name"))
    after = ""
    while rows := conn.execute(page, {"after": after}).all():
        named = [{"w_id": job_id, "w_name": found[:schema.JOB_NAME_WIDTH]}
                 for job_id, spec in rows if isinstance(found := _spec_name(spec), str)]
        if named:
            conn.execute(write, named)
        after = rows[-1][0]
    _add_index(conn, "jobs", "ix_jobs_user_name_state", schema.columns_v23)


def _v24_usage_by_user_and_team(conn: sa.Connection) -> None:
    _add_index(conn, "usage", "ix_usage_user_ended", schema.indexes_v24)
    _add_index(conn, "usage", "ix_usage_team_ended", schema.indexes_v24)


def _v25_definitions_firing(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v3(md)
    schema.indexes_v25(md)
    for index in md.tables["definitions"].indexes:
        if index.name == "ix_definitions_firing":
            index.create(conn, checkfirst=True)


def _v26_service_spans(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v26(md)
    md.create_all(conn)


def _v27_store_identity(conn: sa.Connection) -> None:
    from .identity import write_identity

    write_identity(conn, datetime.now(timezone.utc).isoformat())


def _v28_submit_keys(conn: sa.Connection) -> None:
    md = sa.MetaData()
    schema.tables_v28(md)
    md.create_all(conn)


def _v29_seen_running(conn: sa.Connection) -> None:
    name, type_ = schema.SEEN_RUNNING_COLUMN
    if name not in {c["name"] for c in sa.inspect(conn).get_columns("jobs")}:
        conn.execute(sa.text(f"ALTER TABLE jobs ADD COLUMN {name} {type_.compile(dialect=conn.dialect)}"))


def _v30_usage_charge(conn: sa.Connection) -> None:
    """``usage.billed`` and the unique key ``(job_id, attempt, gpu_uuid, started_at)`` (red40 R1). PostgreSQL alters
    the table; SQLite cannot drop a table's own constraint, so the table is built again under its name (rows, ids and
    indexes kept; old rows' ``billed`` null: charged their ``share``)."""
    name, type_ = schema.BILLED_COLUMN
    if conn.dialect.name != "sqlite":
        if name not in {c["name"] for c in sa.inspect(conn).get_columns("usage")}:
            conn.execute(sa.text(f"ALTER TABLE usage ADD COLUMN {name} {type_().compile(dialect=conn.dialect)}"))
        conn.execute(sa.text("ALTER TABLE usage DROP CONSTRAINT IF EXISTS uq_usage_interval"))
        conn.execute(sa.text(f"ALTER TABLE usage ADD CONSTRAINT uq_usage_interval "
                             f"UNIQUE ({', '.join(schema.USAGE_KEY_V30)})"))
        return
    md = sa.MetaData()
    schema.tables_v1(md)
    schema.tables_v6(md)
    schema.indexes_v24(md)
    schema.columns_v30(md)
    new = md.tables["usage"]
    kept = [c.name for c in new.columns if c.name != name]
    conn.execute(sa.text("ALTER TABLE usage RENAME TO usage_v29"))
    for index in new.indexes:
        conn.execute(sa.text(f"DROP INDEX IF EXISTS {index.name}"))
    new.create(conn)
    old = sa.table("usage_v29", *(sa.column(c) for c in kept))
    conn.execute(sa.insert(new).from_select(kept, sa.select(*(old.c[c] for c in kept))))
    conn.execute(sa.text("DROP TABLE usage_v29"))


def _spec_name(spec: str | None) -> object:
    """The ``name`` of a stored spec's JSON; None when it does not decode or has none."""
    try:
        found = loads(spec)
    except (ValueError, TypeError, RecursionError):
        return None
    return found.get("name") if isinstance(found, dict) else None


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial schema: jobs, quotas, budgets, team policies, events, usage, leader", _v1_initial),
    Migration(2, "telemetry history: gpu_rollups (one row per GPU and minute)", _v2_gpu_rollups),
    Migration(3, "job definitions and their runs (one run per definition and scheduled instant)", _v3_definitions),
    Migration(4, "telemetry validity in gpu_rollups (valid/blank/suspect counts, rules, processes)",
              _v4_rollup_validity),
    Migration(5, "a team's reclaim rule (team_policies.reclaim)", _v5_team_reclaim),
    Migration(6, "quarantine of rows the store cannot read (named error, listed by jupyter-sched doctor); "
                 "open usage intervals indexed by GPU",
              _v6_quarantine),
    Migration(7, "who used a shared GPU and who used an unallocated one, per rollup minute "
                 "(gpu_rollups.job_shares, gpu_rollups.processes)", _v7_rollup_attribution),
    Migration(8, "change counters: every transaction that writes job rows increments change_counters.jobs "
                 "(polled reads are answered again while it is unchanged)", _v8_change_counters),
    Migration(9, "audit records indexed by action (the engine's per-cycle keepalive read and GET metrics' "
                 "admissions no longer scan the whole log)", _v9_events_by_action),
    Migration(10, "job rows indexed by state, kind and submit time (the runtime feed's newest succeeded runs "
                  "are read without sorting every finished job)", _v10_jobs_by_state_kind),
    Migration(11, "each job's own minute on a GPU it held (gpu_rollups.job_minutes): history and accounting "
                  "average a job's minute over the samples taken while it held the GPU", _v11_rollup_job_minutes),
    Migration(12, "job rows indexed by state, submit time, id and version (each scheduling cycle's read of the "
                  "live rows' versions reads the index alone)", _v12_live_keys_covered),
    Migration(13, "each job's latest progress report and the line through its run's reports (job_progress): "
                  "the ETAs of the jobs waiting on it read them (issue 16 item 4)", _v13_job_progress),
    Migration(14, "who set the quota set in force and the digest of the config's quota lines last applied "
                  "(quota_source): a restart no longer puts unchanged config lines over PUT quotas (new user 20, "
                  "N26)", _v14_quota_source),
    Migration(15, "a user's teams as a list (user_teams keyed by user and position, position 0 the default "
                  "team): PUT quotas takes what c.SchedApp.user_teams takes (new user 20, N21)", _v15_user_teams_lists),
    Migration(16, "why a job run's progress reports are not read for ETAs (job_progress.ignored: they contradict "
                  "themselves; red team 21, R2)", _v16_progress_ignored),
    Migration(17, "a definition's run says whether it came after firings missed while no server ran, and how many "
                  "(definition_runs.catch_up, missed, missed_from, missed_to; hub admin 22)", _v17_run_catch_up),
    Migration(18, "nodes an admin cordoned for maintenance (node_cordons: reason, by, at, evict_at): no new work "
                  "is placed there, across restarts and servers (jupyter-sched nodes cordon|drain; hubadmin24)",
              _v18_node_cordons),
    Migration(19, "the job-token secret in the store (job_token_secrets, one row per generation; an old file's "
                  "is moved in; doctor rotate-job-secret; hubadmin A19)", _v19_job_token_secrets),
    Migration(20, "how many of a job's runs were stopped just after they started (jobs.false_starts): they are no "
                  "attempts (new user 24, N1)", _v20_false_starts),
    Migration(21, "a person's hold on a pending job and an admin's top of it (jobs.hold, jobs.top_at): held jobs never "
                  "start until released, across restarts (jupyter-sched hold|release|top; hubadmin25 B18)", _v21_job_holds),
    Migration(22, "when a job's hold was released (jobs.eligible_at): its queue place and age count from then, behind "
                  "work submitted while it was held (verify26 V13)", _v22_eligible_at),
    Migration(23, "a job's name as a column (jobs.name, filled from each job's spec) indexed by owner, name and state: "
                  "a submit's note of the owner's live jobs of its name reads those rows only (s27-perf)", _v23_job_names),
    Migration(24, "usage intervals indexed by user, then end, and by team, then end: GET me's GPU-hour sums and a "
                  "budget's figure read the rows of their window only (red27 R5)", _v24_usage_by_user_and_team),
    Migration(25, "definitions indexed by paused and deleted, then id, schedule, time zone, cursor and version: the "
                  "firing pass tells which are due from the index alone, never reading a spec (red29 R3)",
              _v25_definitions_firing),
    Migration(26, "each service process's listening span (service_spans: host, port, start, last seen, end): a "
                  "squat report of a window an earlier process served is refused (red29 R6)", _v26_service_spans),
    Migration(27, "the store's own random id (store_identity), written once: the service keeps it and refuses a "
                  "database at the store's address that is not this store (red31 R3 addendum)", _v27_store_identity),
    Migration(28, "each user's submit keys (submit_keys: user, key, job, request digest; the newest 1,000 per user): "
                  "a submit sent again with its key is answered with the job it made, never a second (s31-n8)",
              _v28_submit_keys),
    Migration(29, "when a service last saw each job running (jobs.seen_running_at): an end its own files claim is never "
                  "earlier (red33 R3)", _v29_seen_running),
    Migration(30, "what a usage interval is charged (usage.billed: a GPU one team's shares alone hold is charged whole "
                  "between them), intervals cut where it changes (red40 R1)", _v30_usage_charge),
)


HEAD_VERSION = 30
"""The version :func:`_create_head` builds a new database at in one step. A new migration step also changes
:data:`.schema.metadata` (as every step must), adds its data part to :data:`_HEAD_DATA` when a new store needs
its rows, and moves this number; until this number is :func:`latest_version` a new database runs every step
(correct, only slower), and ``tests/runtime/test_s35_migr_fresh_store.py`` fails naming what to do."""


_HEAD_DATA: tuple[Callable[[sa.Connection], None], ...] = (_v8_jobs_counter_row, _v27_store_identity)
"""The data parts of the steps that a new database needs, in version order: step 8's ``jobs`` counter row and step
27's store id (which creates its own table, ``store_identity``). The other steps only move or fill rows a new
database does not have (step 15's teams, step 23's names)."""


def _head_applies(conn: sa.Connection) -> bool:
    """Whether :func:`_create_head` may build this version-0 database: it follows every step
    (:data:`HEAD_VERSION`) and the database holds none of the tables it creates (else the steps run, as before)."""
    from .identity import TABLE

    ours = frozenset(schema.metadata.tables) | {TABLE.name}
    return HEAD_VERSION == latest_version() and not ours & set(sa.inspect(conn).get_table_names())


def _create_head(conn: sa.Connection, applied_at: datetime) -> list[int]:
    """Build a new database at :data:`HEAD_VERSION` in one step and record every version as applied at
    ``applied_at``; the versions. The tables and indexes of :data:`.schema.metadata` (the same schema as every step
    run in turn; a test compares the two on SQLite and PostgreSQL), then :data:`_HEAD_DATA`. Only where
    :func:`_head_applies`, so nothing is checked first: ~25 ms against ~160 ms for the 29 steps on a SQLite file
    (s35-migr: tests and a new user's first ``jupyter lab`` create thousands).

    Raises:
        StoreError: a statement failed (the caller's transaction rolls back: the database stays empty).
    """
    try:
        schema.metadata.create_all(conn, checkfirst=False)
        for fill in _HEAD_DATA:
            fill(conn)
    except sa.exc.SQLAlchemyError as exc:
        raise StoreError(f"creating the store's schema (version {HEAD_VERSION}) failed: {exc}",
                         hint="the database was left empty") from exc
    conn.execute(_version_table.insert(), [{"version": step.version, "description": step.description,
                                            "applied_at": ts(applied_at)} for step in MIGRATIONS])
    return [step.version for step in MIGRATIONS]


def latest_version() -> int:
    """The schema version this code writes."""
    return MIGRATIONS[-1].version


def current_version(conn: sa.Connection) -> int:
    """The database's schema version (0 for an empty database)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return 0
    value = conn.execute(sa.select(sa.func.max(_version_table.c.version))).scalar()
    return int(value or 0)


def applied_steps(conn: sa.Connection) -> list[tuple[int, str]]:
    """``(version, applied_at)`` of every step recorded in the database, oldest first (empty for a new one)."""
    if not sa.inspect(conn).has_table("schema_version"):
        return []
    rows = conn.execute(sa.select(_version_table.c.version, _version_table.c.applied_at)
                        .order_by(_version_table.c.version))
    return [(int(version), str(at)) for version, at in rows]


def describe_migration(before: int, applied: list[int]) -> str:
    """One line for the start-up log (hubadmin23 A7): ``store schema migrated 12 → 17 (5 steps: 13, 14, 15, 16,
    17)``, ``store schema created (version 17)`` for a new database, ``store schema 17 (up to date, no
    migration)`` when none ran."""
    if not applied:
        return f"store schema {before} (up to date, no migration)"
    if before == 0:
        return f"store schema created (version {applied[-1]})"
    return (f"store schema migrated {before} → {applied[-1]} ({len(applied)} step{'s' if len(applied) != 1 else ''}: "
            f"{', '.join(map(str, applied))}; `jupyter-sched doctor` lists when each was applied)")


def describe_applied(steps: list[tuple[int, str]]) -> str:
    """The applied steps grouped by when they were applied (to the minute), oldest first:
    ``1-12 at 2026-11-02T10:14, 13-17 at 2026-12-05T08:40`` ('none' for an empty list)."""
    groups: list[tuple[int, int, str]] = []
    for version, at in steps:
        minute = at[:16]
        if groups and groups[-1][2] == minute and groups[-1][1] == version - 1:
            groups[-1] = (groups[-1][0], version, minute)
        else:
            groups.append((version, version, minute))
    return ", ".join(f"{a}-{b} at {m}" if a != b else f"{a} at {m}" for a, b, m in groups) or "none"


def migrate(engine: sa.Engine, *, now: Callable[[], datetime] | None = None, every_step: bool = False) -> list[int]:
    """Bring the database to :func:`latest_version`; return the versions applied (empty if none).

    A new database (version 0, none of the store's tables) is built in one step (:func:`_create_head`) and every
    version is recorded in ``schema_version`` as applied then, so the steps, ``jupyter-sched doctor`` and the
    start-up line (``store schema created (version N)``) read as after the steps; an older database runs the
    steps it lacks. ``every_step``: run every step on a new database too (tests compare the two).

    Raises:
        StoreError: the database is newer than this code, or a step failed (rolled back).
    """
    clock = now or (lambda: datetime.now(timezone.utc))
    applied: list[int] = []
    with engine.connect() as conn:
        conn.execution_options(sched_write=True)
        with conn.begin():
            if conn.dialect.name == "postgresql":
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK_KEY})
            _version_table.create(conn, checkfirst=True)
            version = current_version(conn)
            if version > latest_version():
                raise StoreError(
                    f"the store's schema version is {version} but this jupyter_sched knows only up to "
                    f"{latest_version()}", field="db_url",
                    hint="upgrade jupyter_sched on this server, or point it at another database")
            if version == 0 and not every_step and _head_applies(conn):
                applied = _create_head(conn, clock())
                version = HEAD_VERSION
            for step in MIGRATIONS:
                if step.version <= version:
                    continue
                try:
                    step.upgrade(conn)
                except sa.exc.SQLAlchemyError as exc:
                    raise StoreError(f"schema migration {step.version} ({step.description}) failed: {exc}",
                                     hint="the database was left at the previous version") from exc
                conn.execute(_version_table.insert().values(
                    version=step.version, description=step.description, applied_at=ts(clock())))
                applied.append(step.version)
    return applied
