"""``jupyter-sched doctor``: find, list, repair or remove the rows the store could not read.

The store never stops on a bad row: readers skip it and note it in the quarantine
(:mod:`jupyter_sched.store.quarantine`); reports carry a warning naming it. This admin command
works on the database directly (it must work when the server is down or the rows break it)::

    jupyter-sched doctor [--db URL]                       scan every table, then list the quarantine; say how
                                                          local jobs are isolated on this host (GPUs fenced by a
                                                          devices cgroup, or by environment only) and who
                                                          can read their command lines (/proc's hidepid)
    jupyter-sched doctor list                             list without scanning
    jupyter-sched doctor repair ID COLUMN=VALUE [...]     fix columns of the row; kept only if it reads
    jupyter-sched doctor remove ID --yes                  delete the row
    jupyter-sched doctor rotate-job-secret [--revoke-running --yes]   a new secret for jobs' progress tokens
                                                          (audited; running jobs' tokens work until they end)
    jupyter-sched doctor migrate [--yes]                  bring the store's schema to this code's
    jupyter-sched doctor ends                             finished jobs whose end is their owner's claim or
                                                          impossible by the record, with why
    jupyter-sched doctor correct-end JOB [--end TIME] --reason TEXT --yes
                                                          set such a job's end within what the store knows
                                                          (usage follows; audited end_corrected)

No other action migrates the store (hubadmin26 B5: a look with a new version before the restart upgraded
the store under the running old service): on a store of another schema they say which, what the next
start does, and read or change nothing (exit 1).

``--db`` takes an SQLAlchemy URL (default: the file named by ``$JUPYTER_SCHED_DB_URL_FILE``, else
``$JUPYTER_SCHED_DB_URL`` — as ``jupyter-sched serve`` reads them —, else the embedded server's
``<jupyter data dir>/jupyter_sched/sched.sqlite``). The doctor opens only a store that exists: it
never creates a file, a folder or tables (new user 13, N18: in a fresh home it created an empty
store and said every row of it read). It says which store it works on, and where that URL came
from. It works on the database, never through a server: with ``$JUPYTER_SCHED_HUB_URL`` set and no
store named, it says to run it where the service runs instead of reading this account's embedded
default. Every repair and removal writes an audit record (actor ``doctor:<OS user>``) with the
row's identity, the error and the change.

A URL that names no store the doctor can open (not a URL, a database other than SQLite or
PostgreSQL, a driver not installed) is said in one line, as the server and ``serve`` say it
(:mod:`jupyter_sched.store.url`); ``--db`` with a password is refused as ``serve --db-url`` refuses
it (every local user reads a command line with ``ps``): put it in ``$JUPYTER_SCHED_DB_URL`` or a file.

A scan also runs the server's start-up configuration check (one check: :mod:`jupyter_sched.extension.config_check`)
on the config that server reads — ``jupyter_server_config`` for the embedded store, the service's
``jupyter_sched_serve_config.py`` for a hub's — and lists every bad ``c.SchedApp`` setting, and every name that is
no setting (with the close name), before a restart finds them one at a time (newuser29 N4).

``--json``: a scan prints its whole report, each check with its status and what to do (:mod:`.doctor_report`'s
shape, docs/admin.md); ``list`` the quarantine's rows.

Exit codes: 0 nothing quarantined (or the repair/removal done); 1 quarantined rows remain, usage
rows overlap on a GPU (a scan lists them, each with the SQL that repairs it), the configuration has a
bad setting, or the repair did not make the row readable; 2 bad command line (a password in ``--db``); 3 no store
there, or it cannot be opened (the URL included).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa

from ..accounting.overlaps import UsageOverlap, resolve_overlaps
from ..accounting.runaway import RunawayUsage
from ..buildinfo import version_string
from ..errors import NotFoundError, SchedError, ValidationError
from ..model.units import to_iso
from ..store import Store
from ..store import schema as tables
from ..store.codec import QUOTA_TABLES, loads, parse_ts, quota_row_error, quota_row_from, record_from_row, ts
from ..store.exposure import db_access, exposure_warning
from ..store.migrations import applied_steps, current_version, describe_applied, latest_version
from ..store.progress import check_progress_row
from ..store.quarantine import QUARANTINE_TABLES, Quarantined, check_rollup_row, check_usage_row, row_attributes
from ..store.reach import FIX as REACH_FIX
from ..store.reach import reach_warning
from ..store.url import has_password, password_on_command_line, safe_url, store_url_problem
from ..textsafe import escaped_line
from ..wording.config import no_quota_warning
from .doctor_args import EXIT_FOUND, EXIT_NO_STORE, EXIT_OK, EXIT_USAGE, parse
from .doctor_report import Check, DoctorReport

__all__ = ["StoreChoice", "choose_store", "default_db_url", "main", "scan"]


_KEY = {"jobs": "id", "usage": "id", "gpu_rollups": "id", "events": "id", **QUOTA_TABLES, "job_progress": "job_id"}


ENV_DB_URL, ENV_DB_URL_FILE, ENV_HUB_URL = "JUPYTER_SCHED_DB_URL", "JUPYTER_SCHED_DB_URL_FILE", "JUPYTER_SCHED_HUB_URL"
"""The store URL as ``jupyter-sched serve`` reads it (jupyter_sched.hub.serve, which imports
jupyter_server: not on this path), and the hub service a client would talk to."""


def _embedded_default() -> Path:
    try:
        from jupyter_core.paths import jupyter_data_dir

        data = Path(jupyter_data_dir())
    except ImportError:  # the slim install has no jupyter_core: its default location
        data = Path.home() / ".local" / "share" / "jupyter"
    return (data / "jupyter_sched" / "sched.sqlite").expanduser().absolute()


def default_db_url() -> str:
    """``$JUPYTER_SCHED_DB_URL``, else the embedded server's SQLite file in the Jupyter data dir
    (its folder is not created)."""
    return os.environ.get(ENV_DB_URL) or f"sqlite:///{_embedded_default()}"


@dataclass(frozen=True, slots=True)
class StoreChoice:
    """The store the doctor works on: its URL and where that came from, in words."""

    url: str
    source: str
    embedded_default: bool = False
    embedded_server: bool = False
    """The store a ``jupyter lab``'s own config names (``c.SchedApp.db_url``): that server's config is checked,
    as of the default file's (``embedded_default``), not a hub service's."""

    @property
    def embedded(self) -> bool:
        """Whose config is checked: the embedded server's (``jupyter lab``), else a hub service's."""
        return self.embedded_default or self.embedded_server


def _configured_db_url() -> tuple[str, str] | None:
    """``(url, where)`` of ``c.SchedApp.db_url`` as ``jupyter lab`` reads it (its ``jupyter_server_config``
    files in the Jupyter config path, the highest priority that sets it), None when none sets it or
    jupyter_core is not installed (a slim install runs no ``jupyter lab``). newuser30 N5: the README's own
    config sets db_url there, and doctor checked the default SQLite file instead."""
    try:
        configs = _server_configs()
    except (ImportError, SchedError):  # no jupyter_core; a --config FILE that does not load (said later)
        return None
    for config, where in configs:
        url = config.SchedApp.get("db_url") if "SchedApp" in config else None
        if isinstance(url, str) and url.strip():
            return url.strip(), f"c.SchedApp.db_url in {where}"
    return None


def choose_store(db: str | None, env: Mapping[str, str]) -> StoreChoice:
    """``--db``, else ``$JUPYTER_SCHED_DB_URL_FILE``'s URL, else ``$JUPYTER_SCHED_DB_URL``, else the
    ``c.SchedApp.db_url`` of this account's ``jupyter lab`` config (:func:`_configured_db_url`), else the
    embedded server's default file.

    Raises:
        SchedError: the URL file cannot be read; or no store was named while
            ``$JUPYTER_SCHED_HUB_URL`` is set (the hub's store is the service's database, not this
            account's embedded default: new user 13, N18).
    """
    if db:
        return StoreChoice(db, "--db")
    if path := env.get(ENV_DB_URL_FILE, ""):
        try:
            return StoreChoice(Path(path).read_text(encoding="utf-8").strip(), f"${ENV_DB_URL_FILE} ({path})")
        except OSError as exc:
            raise SchedError(f"cannot read the store URL file {path} (${ENV_DB_URL_FILE}): {exc.strerror}",
                             field="db_url", hint=f"fix ${ENV_DB_URL_FILE}, or pass --db URL") from None
    if env.get(ENV_DB_URL):
        return StoreChoice(env[ENV_DB_URL], f"${ENV_DB_URL}")
    if configured := _configured_db_url():  # the store the server itself opens (newuser30 N5)
        return StoreChoice(configured[0], configured[1], embedded_server=True)
    if hub := env.get(ENV_HUB_URL, "").strip():
        raise ValidationError(  # the command's place, not a missing store: fix the command (newuser39 n16)
            f"works on a store's database, not through a server; ${ENV_HUB_URL} is set ({hub}), so the store to "
            "check is the hub service's database, not this account's embedded default",
            field="db_url", hint=f"run it where the service runs, as an admin, with the service's ${ENV_DB_URL_FILE} or "
                                 f"${ENV_DB_URL}, or pass --db URL")
    return StoreChoice(f"sqlite:///{_embedded_default()}", "the embedded server's default file", embedded_default=True)


def _existing_store(choice: StoreChoice, env: Mapping[str, str]) -> str | None:
    """Why ``choice`` names no store to check (nothing is created to find out), or None when it holds
    a jupyter_sched schema."""
    url = sa.engine.make_url(choice.url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:" \
            and not url.database.startswith("file:") and not Path(url.database).is_file():
        return f"no store at {url.database} ({choice.source}): nothing to check, and none was created"
    engine = sa.create_engine(choice.url)
    try:
        with engine.connect() as conn:
            if current_version(conn) == 0:
                return (f"{url.render_as_string(hide_password=True)} ({choice.source}) holds no jupyter_sched store "
                        "(no schema_version table): nothing to check, and nothing was created")
    except sa.exc.SQLAlchemyError as exc:
        cause = getattr(exc, "orig", None) or exc
        why = (str(cause).strip().splitlines() or [type(cause).__name__])[0]
        return f"cannot open the store at {url.render_as_string(hide_password=True)} ({choice.source}): {why}"
    finally:
        engine.dispose()
    return None


def _check_job(row: Mapping[Any, Any]) -> str | None:
    try:
        record_from_row(row)
    except Exception as exc:  # any decoding failure is the finding
        return f"job row {row['id']} does not decode ({type(exc).__name__}: {exc})"
    return None


def _check_event(row: Mapping[Any, Any]) -> str | None:
    try:
        parse_ts(row["at"])
        loads(row["details"])
    except Exception as exc:  # any decoding failure is the finding
        return f"audit record {row['id']} ({row['action']}) does not decode ({type(exc).__name__}: {exc})"
    return None


def _check_quota_row(table: str) -> Callable[[Mapping[Any, Any]], str | None]:
    """The check of a quota line, budget or team policy row: as the service's read decodes it (hubadmin26
    B16: a bad one stopped the service at start while doctor said every row read)."""
    def check(row: Mapping[Any, Any]) -> str | None:
        try:
            quota_row_from(table, row)
        except Exception as exc:  # any decoding failure is the finding
            return quota_row_error(table, row, exc)
        return None
    return check


CHECKS: dict[str, Callable[[Mapping[Any, Any]], str | None]] = {
    "jobs": _check_job, "usage": check_usage_row, "gpu_rollups": check_rollup_row, "events": _check_event,
    **{table: _check_quota_row(table) for table in QUOTA_TABLES}, "job_progress": check_progress_row}
"""The check of each quarantinable table: None for a sound row, else the error sentence."""


def scan(store: Store, read: dict[str, int] | None = None) -> list[Quarantined]:
    """Read every row of every quarantinable table; note the bad ones; return them (new or not).
    ``read``, when given, gets the number of rows read per table."""
    found: list[Quarantined] = []
    with store.engine.connect() as conn:
        for name in QUARANTINE_TABLES:
            table = tables.metadata.tables[name]
            for row in conn.execute(sa.select(table).execution_options(yield_per=1000)).mappings():
                if read is not None:
                    read[name] = read.get(name, 0) + 1
                error = CHECKS[name](row)
                if error is not None:
                    found.append(Quarantined(name, str(row[_KEY[name]]), error, row_attributes(row)))
    with store.transaction() as tx:
        tx.note_quarantined(found)
    return found


def _entry(store: Store, entry_id: int) -> Quarantined:
    for entry in store.quarantined():
        if entry.id == entry_id:
            return entry
    raise SchedError(f"no quarantine entry {entry_id}", hint="run `jupyter-sched doctor list` to see the ids")


def _row(conn: sa.Connection, entry: Quarantined) -> Mapping[Any, Any] | None:
    table = tables.metadata.tables[entry.table]
    key = table.c[_KEY[entry.table]]
    value: Any = entry.key if isinstance(key.type, sa.String) else int(entry.key)
    return conn.execute(sa.select(table).where(key == value)).mappings().first()


def repair(store: Store, entry_id: int, changes: Mapping[str, str], *, actor: str) -> str:
    """Set ``changes`` (column → text; ``null`` for NULL) on the quarantined row and keep them only
    if the row then reads; return what happened.

    Raises:
        SchedError: unknown entry or column, the row is gone, or it still does not read (nothing
            was changed).
    """
    entry = _entry(store, entry_id)
    table = tables.metadata.tables[entry.table]
    key_column = _KEY[entry.table]
    values: dict[str, Any] = {}
    for column, text in changes.items():
        if column not in table.c or column == key_column:
            raise SchedError(f"{entry.table} has no column {column!r} that can be set",
                             hint="columns: " + ", ".join(c.name for c in table.c if c.name != key_column))
        values[column] = None if text == "null" else _typed(table.c[column], text)
    with store.transaction() as tx:
        row = _row(tx.conn, entry)
        if row is None:
            tx.release_quarantined(entry.table, entry.key)
            return f"{entry.table} row {entry.key} no longer exists; its quarantine entry was dropped"
        if entry.table == "jobs":
            values["version"] = int(row["version"]) + 1  # caches keyed by version read it afresh
        tx.jobs_changed = entry.table in ("jobs", "usage")  # answers kept by the jobs change counter (issue 17)
        tx.quotas_changed = entry.table in QUOTA_TABLES  # every process reads the quota set again
        tx.conn.execute(table.update().where(table.c[key_column] == row[key_column]).values(**values))
        fixed = _row(tx.conn, entry)
        assert fixed is not None
        error = CHECKS[entry.table](fixed)
        if error is not None:
            raise SchedError(f"still unreadable after the change: {error}", hint="nothing was changed; try again")
        tx.release_quarantined(entry.table, entry.key)
        tx.add_event(actor=actor, action="quarantine_repaired", job_id=row.get("job_id") if entry.table != "jobs"
                     else entry.key, user=row.get("user"), message=f"repaired {entry.error}",
                     details={"table": entry.table, "key": entry.key, "error": entry.error,
                              "set": {k: v for k, v in changes.items()}})
    store.forget_noted(entry.table, entry.key)
    return f"repaired {entry.table} row {entry.key}; it reads again"


def remove(store: Store, entry_id: int, *, actor: str) -> str:
    """Delete the quarantined row (audited) and its entry; return what happened."""
    entry = _entry(store, entry_id)
    table = tables.metadata.tables[entry.table]
    with store.transaction() as tx:
        row = _row(tx.conn, entry)
        if row is not None:
            tx.conn.execute(table.delete().where(table.c[_KEY[entry.table]] == row[_KEY[entry.table]]))
            tx.jobs_changed = tx.jobs_changed or entry.table in ("jobs", "usage")  # GET me sums usage rows
            tx.quotas_changed = entry.table in QUOTA_TABLES  # every process reads the quota set again
        tx.release_quarantined(entry.table, entry.key)
        tx.add_event(actor=actor, action="quarantine_removed",
                     job_id=str(entry.attributes.get("job_id") or (entry.key if entry.table == "jobs" else "")) or None,
                     user=entry.attributes.get("user"), message=f"removed {entry.error}",
                     details={"table": entry.table, "key": entry.key, "error": entry.error,
                              "attributes": dict(entry.attributes)})
    store.forget_noted(entry.table, entry.key)
    return f"removed {entry.table} row {entry.key}"


def _rotate(store: Store, args: argparse.Namespace, actor: str, out: TextIO, err: TextIO) -> int:
    """``doctor rotate-job-secret`` (hubadmin23/24 A19): a new generation, audited; the secret never shown."""
    from ..services.job_tokens import REVOKED_SEEN_S
    from ..store.job_secrets import rotate_job_secret

    if args.revoke_running and not args.yes:
        err.write("jupyter-sched doctor: --revoke-running stops every running job's progress token now (their "
                  "reports are refused until they end); add --yes to do it\n")
        return EXIT_USAGE
    done = rotate_job_secret(store, actor, revoke=args.revoke_running)
    if args.json:
        out.write(json.dumps({"generation": done.generation, "kept": list(done.kept), "deleted": list(done.deleted),
                              "running": done.running, "revoked": args.revoke_running}) + "\n")
        return EXIT_OK
    out.write(f"rotated the job-token secret to generation {done.generation} (audited as {actor}): every server "
              "of this store gives the next job it starts a token of it\n")
    if args.revoke_running:
        out.write(f"revoked: the tokens of the {done.running} running job(s) are refused from now on (by every "
                  f"server within {REVOKED_SEEN_S:g} s)\n")
    elif done.kept:
        out.write(f"the tokens of the {done.running} running job(s) keep working until those jobs end (then the old "
                  f"secret is deleted at the next rotation); --revoke-running --yes stops them now\n")
    else:
        out.write("no running job holds a token of the old secret: it is deleted\n")
    return EXIT_OK


def _suspect_ends_note(store: Store) -> str | None:
    """A scan's line when finished jobs' ends are suspect (``doctor ends`` lists them), else None."""
    from ..store.claimed_ends import suspect_ends

    with store.transaction(write=False) as tx:
        found = suspect_ends(tx, datetime.now(timezone.utc), limit=1000)
    if not found:
        return None
    return (f"ends: {len(found)}{'+' if len(found) >= 1000 else ''} finished job(s) whose end is suspect (their own "
            "claim while the service was down, or impossible by the record): jupyter-sched doctor ends")


def _ends(store: Store, args: argparse.Namespace, out: TextIO) -> int:
    """``doctor ends``: the suspect ends (exit 1 when any)."""
    from ..store.claimed_ends import suspect_ends, when

    with store.transaction(write=False) as tx:
        found = suspect_ends(tx, datetime.now(timezone.utc), limit=max(1, args.limit))
    if args.json:
        out.write(json.dumps([s.to_dict() for s in found], indent=2) + "\n")
        return EXIT_FOUND if found else EXIT_OK
    if not found:
        out.write("no finished job's end is suspect (none claimed while the service was down and unbounded, none "
                  "impossible by the record)\n")
        return EXIT_OK
    out.write(f"{len(found)} finished job(s) whose end is suspect:\n")
    for s in found:  # a user's name and words: escaped on one line (s30)
        out.write(escaped_line(f"  {s.job_id} of {s.user} ({s.team}), {s.state}, {s.gpus} GPU(s): started "
                               f"{when(s.started_at)}, ended {when(s.finished_at)}, charged {s.gpu_hours:.4g} "
                               "GPU-hours") + "\n")
        for w in s.why:
            out.write(escaped_line(f"    - {w.text}") + "\n")
        out.write(f"    its end can be set from {when(s.earliest)} to {when(s.latest)}; suggested {when(s.suggested)}\n")
    out.write("correct one: jupyter-sched doctor correct-end JOB [--end TIME] --reason TEXT --yes (audited)\n")
    return EXIT_FOUND


def _correct_end(store: Store, args: argparse.Namespace, actor: str, out: TextIO, err: TextIO) -> int:
    """``doctor correct-end JOB``: without ``--yes`` what it would do (exit 2), else the correction (audited). JOB
    is looked up first, by its id or its name as every other command takes one (newuser35 N4), and the dry run
    refuses what ``--yes`` would refuse (no such job, not settled, an end outside its range, nothing to correct)."""
    from ..store.claimed_ends import correct_end, planned_end, same_end, when

    now = datetime.now(timezone.utc)
    with store.transaction(write=False) as tx:
        job_id = _job_here(tx, args.job)
        look, after = planned_end(tx, job_id, args.end, args.reason, now=now)
    if not args.yes:
        change = (f"keep the end of {job_id} ({look.user}, {look.state}) at {when(after)} as it stands (`doctor ends` "
                  "lists it no more)" if same_end(look, after) else
                  f"set the end of {job_id} ({look.user}, {look.state}) from {when(look.finished_at)} to {when(after)}")
        listed = "" if look.why else "; its end is not suspect (`doctor ends` does not list it)"
        err.write(f"jupyter-sched doctor: would {change} (it can be from {when(look.earliest)} to "
                  f"{when(look.latest)}){listed}; add --yes to do it\n")
        return EXIT_USAGE
    with store.transaction(now=now) as tx:
        done = correct_end(tx, job_id, args.end, args.reason, actor=actor, now=now)
    if args.json:
        out.write(json.dumps(done.to_dict()) + "\n")
    else:
        out.write(escaped_line(done.text) + "\n")
    return EXIT_OK


def _job_here(tx: Any, ref: str) -> str:
    """The id of the job ``ref`` names in this store — an id as typed, else the one job of that name (any user's:
    the doctor is an admin's) — by the CLI's one resolver (:func:`jupyter_sched.client._wire.job_named`).

    Raises:
        NotFoundError: no job has that id or name.
        ValidationError: several jobs have that name (their ids listed, newest first): which one's end is meant
            cannot be told, and a correction is a change to the record.
    """
    from ..client._wire import job_named, needs_lookup
    from ..store.claimed_ends import named_jobs

    rows = named_jobs(tx, ref) if needs_lookup(ref) else None
    if rows is not None and len(rows) > 1:
        ids = ", ".join(f"{row['id']} ({row['state']})" for row in rows[:8]) + (" …" if len(rows) > 8 else "")
        raise ValidationError(f"{len(rows)} jobs are named {ref[:80]!r}: {ids}", field="job",
                              hint="give the id of the one whose end to correct (newest first; `jupyter-sched "
                                   "doctor ends` lists the suspect ones)")
    try:
        job_id = job_named(ref, rows).id  # an id as typed (J-… in capitals: the id), or the one job of that name
        tx.get_job(job_id)
    except NotFoundError:
        raise NotFoundError(f"no job {ref[:80]!r} in this store: no job has that id or that name", field="job",
                            hint="`jupyter-sched doctor ends` lists the jobs whose end is suspect, with their "
                                 "ids") from None
    return job_id


def _typed(column: sa.Column[Any], text: str) -> Any:
    if isinstance(column.type, sa.Integer):
        return int(text)
    if isinstance(column.type, sa.Float):
        return float(text)
    return text


def _print_entries(entries: Sequence[Quarantined], out: TextIO, as_json: bool,
                   read: Mapping[str, int] | None) -> None:
    """The quarantine (``list``'s answer; ``--json``: the entries); see :func:`_quarantine_check`."""
    if as_json:
        out.write(json.dumps([e.to_dict() for e in entries], indent=2) + "\n")
        return
    out.writelines(line + "\n" for line in _quarantine_check(entries, read).lines)


_QUARANTINE_FIX = "jupyter-sched doctor repair ID COLUMN=VALUE  ·  remove: jupyter-sched doctor remove ID --yes"


def _quarantine_check(entries: Sequence[Quarantined], read: Mapping[str, int] | None) -> Check:
    """The quarantine; with none, what was read to say so (``read``: rows per table of a scan;
    None for ``list``, which reads no rows)."""
    if not entries:
        said = ("no quarantined rows (list reads none: `jupyter-sched doctor` reads every row)" if read is None else
                "no quarantined rows: every row read ("
                + ", ".join(f"{read.get(name, 0)} of {name}" for name in QUARANTINE_TABLES) + ")")
        return Check("quarantine", "ok", said, lines=(said,))
    rows = []
    for e in entries:  # a quarantined row is the one most likely to hold a hostile name: each value escaped (s30)
        who = ", ".join(f"{k}={v}" for k, v in e.attributes.items() if k in ("user", "team", "job_id", "gpu_uuid"))
        rows.append(escaped_line(f"[{e.id}] {e.table} row {e.key}: {e.error}" + (f" ({who})" if who else "")))
    head = f"{len(entries)} quarantined row(s):"
    return Check("quarantine", "fail", head.rstrip(":"), fix="repair: " + _QUARANTINE_FIX, details=tuple(rows),
                 lines=(head, *(f"  {row}" for row in rows), "repair: " + _QUARANTINE_FIX))


def usage_overlaps(store: Store, runaways: Sequence[RunawayUsage] = ()) -> list[UsageOverlap]:
    """Usage rows that overlap on one GPU (every row read; :func:`~..accounting.overlaps.resolve_overlaps`),
    the ``runaways`` closed where their repair closes them: an open row of a job that ended is the
    fault, never the later runs on its GPU (hubadmin26 B15: 227 DELETEs of real history were printed)."""
    closing = {r.key: r.close_at for r in runaways}
    rows = [replace(iv, ended_at=closing[key]) if iv.ended_at is None
            and (key := (iv.job_id, iv.attempt, iv.gpu_uuid)) in closing else iv for iv in store.usage_rows()]
    return resolve_overlaps(rows, now=datetime.now(timezone.utc))[1]


def _runaways_check(runaways: Sequence[RunawayUsage]) -> Check:
    """The open usage rows whose job is not running (or unknown), first, each with the UPDATE that
    closes it at its job's end (its own start when that is unknown); reports and fair share leave
    them out meanwhile (hubadmin26 B15). Printed only when there are some."""
    if not runaways:
        return Check("runaway_usage", "ok", "no open usage row of a job that is not running")
    head = (f"{len(runaways)} open usage row(s) whose job is not running (or unknown) — reports and fair share "
            "leave them out; close each:")
    lines, details = [head], []
    for runaway in runaways:
        iv = runaway.interval
        row = escaped_line(f"usage row {runaway.row_id}: job {iv.job_id} (attempt {iv.attempt}, {iv.user}) on "
                           f"GPU {iv.gpu_uuid} open since {to_iso(iv.started_at)}; {runaway.why}")
        repair = escaped_line(_close_sql(runaway))
        lines += [f"  {row}", f"    repair: {repair}"]
        details.append(f"{row} — repair: {repair}")
    return Check("runaway_usage", "fail", head.rstrip(":"), fix="run each row's repair SQL on the store",
                 details=tuple(details), lines=tuple(lines))


def _sql_text(value: object) -> str:
    """An SQL string literal (a quote in an id is doubled)."""
    return "'" + str(value).replace("'", "''") + "'"


def _close_sql(runaway: RunawayUsage) -> str:
    """The statement that closes a runaway row where its job ended (its start when unknown)."""
    iv = runaway.interval
    return (f"UPDATE usage SET ended_at = {_sql_text(ts(runaway.close_at))} WHERE id = {runaway.row_id} "
            f"AND job_id = {_sql_text(iv.job_id)} AND ended_at IS NULL;")


def _overlaps_check(overlaps: Sequence[UsageOverlap]) -> Check:
    """Each overlapping pair of usage rows, with the SQL that makes the store say what reports count
    (hubadmin25 B7: one such pair failed the month's bill, and nothing found it)."""
    if not overlaps:
        return Check("usage_overlaps", "ok", "no usage rows overlap on a GPU", lines=("no usage rows overlap on a GPU",))
    head = (f"{len(overlaps)} usage row(s) overlap another on the same GPU (reports count that time once, for "
            "the row that held the GPU first, and warn):")
    fix = ("repair each with the SQL shown (psql/sqlite3 on the store, the service stopped or not: the rows are "
           "closed history), then run `jupyter-sched doctor` again")
    lines, details = [head], []
    for overlap in overlaps:
        said, repair = escaped_line(overlap.warning().split(' — ')[0]), escaped_line(_repair_sql(overlap))
        lines += [f"  {said}", f"    repair: {repair}"]
        details.append(f"{said} — repair: {repair}")
    return Check("usage_overlaps", "fail", head.rstrip(":"), fix=fix, details=tuple(details),
                 lines=(*lines, fix))


def _repair_sql(overlap: UsageOverlap) -> str:
    """The statement that makes the store say what reports count: the later row cut, or deleted
    when none of it counts (its times in the store's own text form, which its queries compare)."""
    text = _sql_text
    cut = overlap.cut
    where = f"WHERE job_id = {text(cut.job_id)} AND attempt = {int(cut.attempt)} AND gpu_uuid = {text(cut.gpu_uuid)}"
    return f"DELETE FROM usage {where};" if overlap.dropped else \
        f"UPDATE usage SET started_at = {text(ts(overlap.until))} {where};"


def _shared_without_quotas(store: Store) -> bool:
    """A store more than one user's work is in, with no quota line: one user may hold every GPU
    (what ``serve`` warns about at start-up). Never fails the doctor: an unreadable answer is no."""
    try:
        quotas = store.quota_set()
        return _owners(store) > 1 and not quotas.quotas and not quotas.unreadable_lines
    except (sa.exc.SQLAlchemyError, SchedError):
        return False


def _owners(store: Store) -> int:
    """How many users the store has jobs of.

    Raises:
        sqlalchemy.exc.SQLAlchemyError: the store cannot be read."""
    with store.engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count(sa.distinct(tables.jobs.c.user)))).scalar() or 0)


def _isolation_check(hub: bool = True) -> Check:
    """:func:`_isolation` as a check: ``warn`` where GPUs are fenced by environment only, hub users' servers are not
    fenced, or jobs have no out-of-memory floor."""
    from ..executors.limits import LocalLimits, oom_floor_problem
    from ..executors.server_fence import server_fence_problem

    said = _isolation(hub)
    fenced = LocalLimits(make=False).fences_gpus and (not hub or server_fence_problem() is None)
    if fenced and oom_floor_problem() is None:
        return Check("isolation", "ok", said, lines=(said,))
    return Check("isolation", "warn", said, fix="docs/admin.md, \"GPUs, processes and memory of local jobs\": run the "
                 "service as root on a host with a cgroup v1 devices controller, or use the Kubernetes executor",
                 lines=(said,))


def _isolation(hub: bool = True) -> str:
    """How this host's local jobs are isolated (red team 15, R1): whether a devices cgroup fences
    their GPUs or only their environment does, and their process and memory limits — looked at,
    nothing created. Said for a ``jupyter-sched serve`` with the default limits run as this account;
    and, ``hub`` (the store checked is not a personal lab's), whether hub users' notebook servers and
    kernels can be fenced here (red team 16, R1) — a lab has no hub users (verify30 V3: a personal
    lab's doctor spoke of "the hub's spawner" and "any hub user's notebook server")."""
    from ..executors.limits import LocalLimits
    from ..executors.server_fence import NOT_FENCED, SERVERS_FENCED, server_fence_problem

    limits = LocalLimits(make=False)
    if not hub:
        return "isolation: " + limits.summary()
    problem = server_fence_problem()
    if problem is None and limits.fences_gpus:
        servers = (SERVERS_FENCED + "; with any other spawner (or c.FencedLocalProcessSpawner.fence_gpus = False) "
                   "they can open any GPU of this host")
    else:
        servers = (f"{NOT_FENCED}: {problem or 'jobs are not fenced by a devices cgroup here'}; any hub user's "
                   "notebook server or kernel on this host can open any GPU of this host")
    return "isolation: " + limits.summary() + "; " + servers


def _command_lines_check(mounts: str | None = None) -> Check:
    """:func:`_command_lines` as a check (``warn`` unless ``/proc`` hides other accounts' processes)."""
    from ..executors.proc_mount import PROC_MOUNTS, command_line_visibility

    seen = command_line_visibility(mounts or PROC_MOUNTS)
    if seen.hidden:
        return Check("command_lines", "ok", seen.text, lines=(seen.text,))
    return Check("command_lines", "warn", seen.text, fix="pass secrets to jobs through env, never in their arguments; "
                 "or mount /proc with hidepid=2 (mount -o remount,hidepid=2 /proc, and in /etc/fstab)",
                 lines=(seen.text,))


def _command_lines(mounts: str | None = None) -> str:
    """Whether other accounts read local jobs' command lines here (``/proc``'s ``hidepid``; new user
    17, N13: the API redacts another user's command, ``ps`` did not)."""
    from ..executors.proc_mount import PROC_MOUNTS, command_line_visibility

    return command_line_visibility(mounts or PROC_MOUNTS).text


_GIVEN_CONFIG: list[str] = []
"""``doctor --config FILE``: the one config file checked, when given (newuser38 n32: a service started with
``--config=FILE`` had its settings unchecked, and nothing said so)."""


def _given_config() -> list[tuple[Any, str]] | None:
    """``[(config, path)]`` of ``doctor --config FILE`` (raises SchedError naming the file when it does not load);
    None when no --config was given."""
    if not _GIVEN_CONFIG:
        return None
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    path = os.path.abspath(_GIVEN_CONFIG[0])
    loader = JSONFileConfigLoader if path.endswith(".json") else PyFileConfigLoader
    try:
        return [(loader(os.path.basename(path), path=os.path.dirname(path)).load_config(), path)]
    except Exception as exc:  # a missing file, a syntax error: the file and why, never a traceback
        raise SchedError(f"--config {path}: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}",
                         field="config", hint="give the file the server was started with (--config=FILE)") from None


def _serve_configs() -> list[tuple[Any, str]]:
    """This account's service config files (``jupyter_sched_serve_config.py`` in the Jupyter config path),
    highest priority first, as the service reads them: ``(config, path)`` of each that loads (one that does not:
    the service says why at its start)."""
    from ..wording.config import CONFIG_FILE

    given = _given_config()
    return given if given is not None else _config_files(CONFIG_FILE)


def _config_files(*names: str) -> list[tuple[Any, str]]:
    """The files ``names`` (``.py`` or ``.json``) in each folder of the Jupyter config path, highest priority
    first: ``(config, path)`` of each that loads."""
    from jupyter_core.paths import jupyter_config_path
    from traitlets.config.loader import JSONFileConfigLoader, PyFileConfigLoader

    out = []
    for folder in jupyter_config_path():
        for name in names:
            loader = JSONFileConfigLoader if name.endswith(".json") else PyFileConfigLoader
            if os.path.isfile(os.path.join(folder, name)):
                try:
                    out.append((loader(name, path=folder).load_config(), os.path.join(folder, name)))
                except Exception:
                    continue
    return out


def _config_lines(*, embedded: bool, hub_store: bool = False) -> list[str]:
    """The start's configuration check (:func:`jupyter_sched.extension.config_check.config_problems`, the one
    check) on the config this doctor's server reads: ``jupyter_server_config.json``/``.py`` in the Jupyter config
    path (``SchedApp``, a ``jupyter lab``: ``embedded``), else the service's ``jupyter_sched_serve_config.py``
    (``HubSchedApp``), merged as the server merges them. ``config: <files>: N settings to fix`` then one
    line each (field and fix); ``config: <files>: every c.SchedApp setting reads`` when none; ``[]`` when no such
    file sets ``c.SchedApp`` (newuser29 N4: doctor said nothing of a config the server refused). No service config
    found is said only of a ``hub_store`` (:func:`_is_hub_store`): a named store of a personal lab has no service."""
    from traitlets.config import Config

    from ..wording.config import CONFIG_FILE

    try:
        configs = _server_configs() if embedded else _serve_configs()
    except SchedError as exc:  # doctor --config FILE that does not load
        return [f"config: {exc.message} — {exc.hint}", "  (not checked)"]
    if not configs and not embedded and hub_store:  # said: the service's settings went unchecked (newuser38 n32)
        return [f"config: no {CONFIG_FILE} in the Jupyter config path (jupyter --paths): {UNCHECKED}"]
    merged = Config()
    for config, _ in reversed(configs):  # the highest priority (first) last: it wins
        merged.merge(config)
    if "SchedApp" not in merged and "HubSchedApp" not in merged:
        return []
    try:
        from ..extension.config_check import config_problems

        if embedded:
            from ..extension.app import SchedApp as app_class
        else:
            from ..hub.central import HubSchedApp as app_class
    except ImportError as exc:  # a slim install without jupyter_server: no server reads it here
        return [f"config: not checked here ({exc}); run doctor where the server is installed"]
    found = config_problems(merged, app_class, config_name="jupyter_server_config" if embedded
                            else CONFIG_FILE.removesuffix(".py")).lines()
    where = ", ".join(path for _, path in configs)
    if not found:
        return [f"config: {where}: every c.SchedApp setting reads"]
    head = f"config: {where}: {len(found)} setting{'s' if len(found) != 1 else ''} to fix (the server refuses " \
        "to start with a bad one, and ignores a name that is no setting)"
    return [head, *(f"  {line}" for line in found)]


UNCHECKED = ("nothing checked — a service started with --config=FILE: pass it here, jupyter-sched doctor --config "
             "FILE")
"""What a hub store's doctor says when no service config is found (newuser38 n32); the config check's fix."""


def _is_hub_store(store: Store | None, url: str) -> bool:
    """Whether the store checked is a hub service's: it holds a listening span (every ``jupyter-sched serve``
    process writes one once its front door listens, :mod:`jupyter_sched.hub.listening`; a ``jupyter lab`` writes
    none), or a ``jupyter-sched serve`` on this host registered with it (:mod:`~jupyter_sched.extension
    .host_schedulers`, the store's digest). Run A of session 38: no service config was said as a warning for any named
    store, a personal lab's SQLite file too, where no service config exists to be found."""
    if store is not None:
        try:
            with store.engine.connect() as conn:
                if conn.execute(sa.select(tables.service_spans.c.id).limit(1)).first() is not None:
                    return True
        except sa.exc.SQLAlchemyError:  # a store without the table (older schema): the registry still says
            pass
    try:  # the slim install has no jupyter_server: no service of it runs from here
        from ..extension.host_schedulers import SERVE, others, store_digest
    except ImportError:
        return False
    digest = store_digest(url)
    return bool(digest) and any(s.kind == SERVE and s.store == digest for s in others(me_pid=os.getpid()))


def _unread_config_here(*, embedded: bool) -> str:
    """A ``note:`` line when the folder doctor runs in holds the config file the server reads elsewhere
    (``jupyter_server_config.py``/``.json``; the service's ``jupyter_sched_serve_config.py``, not ``embedded``) and
    this folder is not in the Jupyter config path: it is never read — where it goes instead, or ``--config``
    (newuser29 n1: a file left in the project folder was ignored, silently; the README's words). "" otherwise."""
    from jupyter_core.paths import jupyter_config_dir, jupyter_config_path

    from ..wording.config import CONFIG_FILE

    here = os.getcwd()
    if any(os.path.realpath(folder) == os.path.realpath(here) for folder in jupyter_config_path()):
        return ""
    names = ("jupyter_server_config.py", "jupyter_server_config.json") if embedded else (CONFIG_FILE,)
    left = [name for name in names if os.path.isfile(os.path.join(here, name))]
    if not left:
        return ""
    start = f"jupyter lab --config=./{left[0]}" if embedded else f"jupyter-sched serve --config=./{left[0]}"
    return (f"note: ./{left[0]} in this folder is not read: Jupyter reads no config from the folder it starts in — "
            f"move it to {jupyter_config_dir()} (jupyter --config-dir; jupyter --paths lists every config folder), "
            f"or start with {start}")


def _server_configs() -> list[tuple[Any, str]]:
    """This account's ``jupyter_server_config.py`` and ``.json`` files in the Jupyter config path, highest
    priority first, as ``jupyter lab`` reads them: ``(config, path)`` of each that loads."""
    given = _given_config()
    return given if given is not None else _config_files("jupyter_server_config.py", "jupyter_server_config.json")


def _job_python_check(configs: Sequence[tuple[Any, str]]) -> Check | None:
    """:func:`_job_python` as a check (``warn`` where it does not import ``jupyter_sched``); None where unset."""
    said = _job_python(configs)
    if not said:
        return None
    if said.endswith(") imports jupyter_sched"):
        return Check("job_python", "ok", said, lines=(said,))
    return Check("job_python", "warn", said, fix="install jupyter_sched in that interpreter, or set "
                 "c.HubSchedApp.job_python to one that imports it", lines=(said,))


def _job_python(configs: Sequence[tuple[Any, str]]) -> str:
    """Whether ``c.HubSchedApp.job_python`` as this account's service config sets it (:func:`_serve_configs`, the
    first that sets it) imports ``jupyter_sched``, in the words the service's
    start-up warning uses (newuser22 N11: notebook jobs and ``report_progress`` need it); "" when no config
    file sets it (then jobs use the service's own interpreter) or it cannot be read."""
    from ..hub.job_python import job_python_warning, missing_jupyter_sched

    for config, where in configs:
        python = config.HubSchedApp.get("job_python") if "HubSchedApp" in config else None
        if isinstance(python, str) and python:
            problem = missing_jupyter_sched(python)
            return (f"job python: {python} (set in {where}) imports jupyter_sched" if problem is None
                    else f"job python: {job_python_warning(python, problem)} (set in {where})")
    return ""


def _log_disk(store: Store, configs: Sequence[tuple[Any, str]]) -> Check | None:
    """The log-disk line (:func:`.log_disk.log_disk_fit`) of the first service config that sets ``log_dir``
    (``warn`` where the logs may not fit the disk); None when none does (or its folder is not here)."""
    from .log_disk import log_disk_fit

    for config, _ in configs:
        if "SchedApp" in config and config.SchedApp.get("log_dir"):
            try:
                fits, said = log_disk_fit(config, _owners(store))
            except (OSError, sa.exc.SQLAlchemyError):
                return None
            if not said:
                return None
            return Check("log_disk", "ok" if fits else "warn", said, fix=None if fits else
                         "set c.SchedApp.max_user_log_mib, or give the log disk users x it", lines=(said,))
    return None


def _inventory_host_check(configs: Sequence[tuple[Any, str]]) -> Check | None:
    """The inventory file the first config that names one sets (``c.SchedApp.inventory_file``), where jobs run on
    this host (the local executor): ``warn`` where it declares more cores or memory than this host has — the
    start-up WARNING's sentence (newuser39 n10, :func:`~jupyter_sched.services.host_size.overstated_nodes`), for an
    admin who reads the doctor, not the log; ``ok`` where it does not. None where no config names one."""
    from ..services.host_size import inventory_file_over_host

    for config, where in configs:
        if "SchedApp" not in config:
            continue
        sched = config.SchedApp
        path = sched.get("inventory_file")
        if not isinstance(path, str) or not path:
            continue
        if sched.get("executor", "local") != "local":
            return None  # each job runs on the node it is placed on
        said = inventory_file_over_host(path)
        if said is None:
            return Check("inventory_host", "ok", f"inventory: {path} (set in {where}) declares no more host CPU or "
                         "memory than this host has")
        return Check("inventory_host", "warn", f"inventory: {said}", fix="declare this host's own cpus and memory "
                     f"in {path}", lines=(f"inventory: {said} ({path}, set in {where})",))
    return None


def _front_door_check() -> Check | None:
    """:func:`_front_door` as a check (``warn``; None where the kernel can be asked)."""
    said = _front_door()
    return Check("front_door", "warn", said, fix="a kernel with NETLINK sock_diag (inet_diag), or a front door "
                 "on a unix socket (docs/admin.md, \"An address no user can take\")", lines=(said,)) if said else None


def _front_door() -> str:
    """``front door: …`` when the kernel's ``sock_diag`` cannot be asked on this host (the service then cannot tell
    which local account opened a loopback connection: red29 R1); "" when it can."""
    from .. import sock_diag
    from ..hub.forwarded import local_accounts_unknown

    return "" if sock_diag.available() else f"front door: {local_accounts_unknown()}"


def _origins_check(store: Store) -> Check | None:
    """What the last service started on this store found of the hub's origins (red38 R5: an admin's shell has not
    the service's ``JUPYTERHUB_HOST``/``JUPYTERHUB_PUBLIC_URL``, so the doctor reads the service's own finding,
    :func:`jupyter_sched.hub.origins.origins_said`); ``warn`` when it warned. None when no service of this version
    started on the store, or the store cannot say (older schema)."""
    try:
        from ..hub.origins import origins_said

        said = origins_said(store)
    except (ImportError, SchedError):  # the slim install has no hub; a store that cannot be read says so elsewhere
        return None
    if said is None:
        return None
    found = said.line.removeprefix("origins: ")
    where = f"{said.host}, pid {said.pid}" if said.pid is not None else said.host
    line = f"origins: (the service found at its start, {said.at.strftime('%Y-%m-%d %H:%M')} UTC on {where}) {found}"
    fix = ("c.JupyterHub.subdomain_host in the hub's config (docs/admin.md, \"One origin per server\")"
           if said.warn else None)
    return Check("origins", "warn" if said.warn else "ok", line, fix=fix, lines=(line,))


def _hub_service_here(choice: StoreChoice) -> str:
    """When the doctor took this account's embedded default while a hub service (``jupyter-sched
    serve``) runs on this host, the sentence saying so and how to check the service's store; else ""
    (hubadmin22 H6: as root on the hub host it read root's embedded SQLite and said all was well,
    while the service's store was the PostgreSQL named in the hub's ``services`` environment).

    The host's scheduler registry (:mod:`jupyter_sched.extension.host_schedulers`) says which
    schedulers run here and their kind, never their store URL (it may hold a password)."""
    if not choice.embedded_default:
        return ""
    try:  # the slim install has no jupyter_server: no service of it runs from here
        from ..extension.host_schedulers import others
    except ImportError:
        return ""
    services = [s for s in others(me_pid=os.getpid()) if s.kind == "jupyter-sched serve"]
    if not services:
        return ""
    # each one: with several, the admin may mean any (newuser38 n29: the second of two was not named)
    named = [f"{s.user} (pid {s.pid}, {s.url})" for s in services]
    said = (f"`jupyter-sched serve` of {named[0]} runs" if len(named) == 1 else
            f"{len(named)} `jupyter-sched serve` run: of {', of '.join(named)}, each")
    return (f"this checked {getpass.getuser()}'s embedded default store, but {said} on this host with the store "
            f"it was given (${ENV_DB_URL_FILE} or "
            f"${ENV_DB_URL} in its environment, e.g. the hub config's services entry) — check "
            f"{'that one' if len(named) == 1 else 'the one you mean'} with "
            f"`{ENV_DB_URL_FILE}=FILE jupyter-sched doctor` or `jupyter-sched doctor --db URL` (a URL without a "
            "password)")


def _schema_skew(store: Store) -> tuple[int, int] | None:
    """``(the store's schema, this code's)`` when they differ, else None."""
    with store.engine.connect() as conn:
        have = current_version(conn)
    return None if have == latest_version() else (have, latest_version())


def _refuse_skew(store: Store, skew: tuple[int, int], args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """A store of another schema than this code's: say which and what to do; read or write no row (a
    scan of an older schema would read tables it does not have yet, a repair of a newer one would
    write rows this code does not know). Exit 1."""
    have, knows = skew
    if not args.json:
        out.write(f"store: {store.safe_url}\n{_versions(store)}\n")
    if have < knows:
        steps = ", ".join(map(str, range(have + 1, knows + 1)))
        err.write(f"jupyter-sched doctor: the store is at schema {have}; this code (jupyter_sched {version_string()}) "
                  f"knows up to {knows}: the service's next start with this code migrates it ({steps}) — "
                  "`jupyter-sched doctor migrate --yes` migrates it now (back up first: an older version refuses a "
                  "newer schema). Nothing was read or changed.\n")
    else:
        err.write(f"jupyter-sched doctor: the store is at schema {have}, newer than this code (jupyter_sched "
                  f"{version_string()}, up to {knows}): run the doctor of the version the service runs. Nothing was "
                  "read or changed.\n")
    return EXIT_FOUND


def _migrate(store: Store, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``doctor migrate [--yes]``: what the service's next start would apply; with ``--yes`` apply it now."""
    if args.yes:
        out.write((f"migrated the store {store.safe_url}: {', '.join(map(str, store.migrated))}" if store.migrated
                   else f"the store {store.safe_url} is at schema {latest_version()}: nothing to migrate") + "\n")
        out.write(_versions(store) + "\n")
        return EXIT_OK
    skew = _schema_skew(store)
    if skew is None:
        out.write(f"the store {store.safe_url} is at schema {latest_version()}: nothing to migrate\n")
        return EXIT_OK
    have, knows = skew
    if have > knows:
        err.write(f"jupyter-sched doctor: the store is at schema {have}, newer than this code (up to {knows}): "
                  "nothing to migrate with it\n")
        return EXIT_FOUND
    err.write(f"jupyter-sched doctor: would migrate the store {store.safe_url} from schema {have} to {knows} "
              f"({', '.join(map(str, range(have + 1, knows + 1)))}); back it up, stop the service of the older "
              "version, then add --yes\n")
    return EXIT_USAGE


def _versions(store: Store) -> str:
    """``code: jupyter_sched V; store schema N (this code knows up to M): 1-12 at …, 13-17 at …``
    (hubadmin23 A7: whether an upgrade took, without reading the service's log)."""
    with store.engine.connect() as conn:
        steps = applied_steps(conn)
    now = f"; migrated now by this doctor: {', '.join(map(str, store.migrated))}" if store.migrated else ""
    return (f"code: jupyter_sched {version_string()}; store schema {steps[-1][0] if steps else 0} (this code knows up "
            f"to {latest_version()}), applied {describe_applied(steps)}{now}")


def _store_disk_check(choice: StoreChoice) -> Check | None:
    """``fail`` when a SQLite store's folder cannot hold it: a read-only file system, a folder or file this account
    cannot write, less than :data:`~jupyter_sched.store.start_failure.MIN_FREE_BYTES` free (newuser41 N3: the
    scheduler could not start, and the doctor said nothing); None for another database or a folder that can."""
    from ..store.start_failure import MIN_FREE_BYTES, folder_problem, size_words, sqlite_file

    if (store_file := sqlite_file(choice.url)) is None or (problem := folder_problem(store_file)) is None:
        return None
    said = f"{problem.cause}; the scheduler needs at least {size_words(MIN_FREE_BYTES)} free there to commit" \
        if problem.code == "ENOSPC" else problem.cause
    fix = problem.fix(url_set=not choice.embedded_default)
    return Check("store_disk", "fail", said, fix=fix, lines=(f"store disk: {said}. Fix: {fix}",))


def _write_disk_check(choice: StoreChoice, disk: Check, args: argparse.Namespace, out: TextIO) -> int:
    """Say a failed ``store_disk`` check alone (nothing else can be read or written there): exit 1."""
    if getattr(args, "json", False):
        out.write(json.dumps({"store": safe_url(choice.url), "source": choice.source, "status": "fail", "exit": 1,
                              "checks": [disk.to_dict()]}, indent=2) + "\n")
    else:
        out.write(f"store: {safe_url(choice.url)} ({choice.source})\n")
        out.writelines(line + "\n" for line in disk.lines)
    return EXIT_FOUND


def _store_checks(store: Store, choice: StoreChoice) -> list[Check]:
    """The notes said right below the store's name: one user may hold every GPU (no quota line; red team 15, R4),
    jobs could log in to the database (hubadmin22 H5), this is not the running service's store (hubadmin22 H6)."""
    checks = []
    if not choice.embedded_default and _shared_without_quotas(store):  # red team 15, R4
        quotas = no_quota_warning(None)
        checks.append(Check("quotas", "warn", quotas, fix="set team quota lines (docs/admin.md, \"Configuring it\")",
                            lines=(f"note: {quotas}",)))
    access = db_access(store.engine)
    if said := exposure_warning(access, jobs_here=None):  # hubadmin22 H5
        checks.append(Check("database", "warn", said, fix="docs/admin.md, \"Database\"", lines=(f"database: {said}",)))
    if said := reach_warning(access, jobs_here=None):  # red38 R2: connection slots any local account can hold
        checks.append(Check("database_reach", "warn", said, fix=REACH_FIX, lines=(f"database reach: {said}",)))
    if said := _hub_service_here(choice):  # hubadmin22 H6
        checks.append(Check("store_choice", "warn", said, fix="run the doctor on the service's store (--db URL or "
                            f"${ENV_DB_URL_FILE})", lines=(f"note: {said}",)))
    return checks


def _scan_checks(store: Store, choice: StoreChoice, entries: Sequence[Quarantined],
                 read: Mapping[str, int]) -> list[Check]:
    """Every check of a scan after the store's notes, in the text form's order."""
    runaways = store.runaway_usage()
    checks = [_runaways_check(runaways),  # first: the one row to fix (hubadmin26 B15)
              _quarantine_check(entries, read), _overlaps_check(usage_overlaps(store, runaways))]
    if said := _suspect_ends_note(store):  # red33 R3's old rows: said where an admin looks first
        checks.append(Check("suspect_ends", "warn", said, fix="jupyter-sched doctor ends, then doctor correct-end",
                            lines=(said,)))
    checks += [_isolation_check(hub=not choice.embedded), _command_lines_check()]
    try:
        configs = _serve_configs() if not choice.embedded else _server_configs()
    except SchedError:  # a --config FILE that does not load: the config line says so
        configs = []
    if not choice.embedded:  # a hub's store: its service's settings here (newuser22 N11)
        checks += [c for c in (_job_python_check(configs), _log_disk(store, configs), _front_door_check(),
                               _origins_check(store)) if c]
    if (inventory := _inventory_host_check(configs)) is not None:  # newuser39 n10: jobs run on this host
        checks.append(inventory)
    config_lines = _config_lines(embedded=choice.embedded,  # newuser29 N4
                                 hub_store=not choice.embedded and _is_hub_store(store, choice.url))
    if config_lines:
        bad = len(config_lines) > 1
        unchecked = not bad and config_lines[0].endswith(UNCHECKED)  # no service config found (newuser38 n32)
        checks.append(Check("config", "fail" if bad else "warn" if unchecked else "ok", config_lines[0],
                            fix="fix each setting as its line says, then restart the server" if bad else
                            UNCHECKED.split(" — ", 1)[1] if unchecked else None,
                            details=tuple(line.strip() for line in config_lines[1:]), lines=tuple(config_lines)))
    if unread := _unread_config_here(embedded=choice.embedded):  # newuser29 n1
        checks.append(Check("config_file_unread", "warn", unread, fix=unread.split(" — ", 1)[-1], lines=(unread,)))
    return checks


def _write_lines(checks: Sequence[Check], out: TextIO) -> None:
    """The text form: each check's lines as they were always printed."""
    for check in checks:
        out.writelines(line + "\n" for line in check.lines)


def _said(exc: SchedError) -> str:
    """The CLI's one-line shape: ``jupyter-sched doctor: what — how [code]`` (newuser39 n16: the code was left out)."""
    return f"jupyter-sched doctor: {exc.message}" + (f" — {exc.hint}" if exc.hint else "") + f" [{exc.code}]\n"


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the doctor (see module docstring); return the exit code."""
    stdout, stderr = out or sys.stdout, err or sys.stderr
    args = parse(argv, out=stdout, err=stderr)
    return args if isinstance(args, int) else run(args, out=stdout, err=stderr)


def run(args: argparse.Namespace, *, out: TextIO, err: TextIO) -> int:
    """Run the doctor on arguments :func:`.doctor_args.parse` read; return the exit code."""
    stdout, stderr = out, err
    if args.db and has_password(args.db):  # serve's rule for the same secret (new user 14, N22)
        stderr.write(f"jupyter-sched doctor: {password_on_command_line('--db')}\n")
        return EXIT_USAGE
    _GIVEN_CONFIG[:] = [args.config] if getattr(args, "config", None) else []  # newuser38 n32
    embedded = True  # whose config is checked: the embedded server's, or (a hub's store named) the service's
    url = ""
    try:
        choice = choose_store(args.db, os.environ)
        embedded, url = choice.embedded, choice.url
        if (problem := store_url_problem(choice.url)) is not None:  # THE store-URL check: no traceback (N22)
            raise SchedError(f"{choice.source} {safe_url(choice.url)!r}: {problem[0]}", field="db_url", hint=problem[1])
        if (disk := _store_disk_check(choice)) is not None:  # it may not even open (newuser41 N3: disk I/O error)
            return _write_disk_check(choice, disk, args, stdout)
        missing = _existing_store(choice, os.environ)
        if missing is not None:  # never a store made to be checked (new user 13, N18)
            server = os.environ.get("JUPYTER_SCHED_URL", "").strip() if choice.embedded_default else ""
            raise SchedError(missing, hint=(f"doctor reads a database, not the server at $JUPYTER_SCHED_URL ({server}); "
                                            if server else "") + f"pass --db URL or set ${ENV_DB_URL} to the store "
                                                                 "the server uses")
        # never migrated by a look (hubadmin26 B5: a doctor run with the new version before the restart upgraded
        # the store under the running old service, and made its rollback need the backup): only `migrate --yes`
        store = Store(choice.url, run_migrations=args.action == "migrate" and args.yes)
    except ValidationError as exc:  # the command to fix (run it where the store is): nothing was looked for
        stderr.write(_said(exc))
        return EXIT_USAGE
    except SchedError as exc:
        stderr.write(_said(exc))
        if args.action in (None, "scan") and not args.json:  # no store yet: its server's config still checked
            stdout.writelines(line + "\n" for line in _config_lines(embedded=embedded, hub_store=not embedded
                                                                     and _is_hub_store(None, url)))
            if unread := _unread_config_here(embedded=embedded):  # newuser29 n1
                stdout.write(unread + "\n")
        return EXIT_NO_STORE
    skew = None if args.action == "migrate" else _schema_skew(store)
    if args.action == "migrate" or skew is not None:
        try:
            return _migrate(store, args, stdout, stderr) if skew is None else _refuse_skew(store, skew, args, stdout,
                                                                                            stderr)
        finally:
            store.close()
    scanning = args.action in (None, "scan")
    said_store = _store_checks(store, choice) if scanning or not args.json else []
    if not args.json:  # which store this is about, before anything is said of it
        stdout.write(f"store: {store.safe_url} ({choice.source})\n")
        stdout.write(_versions(store) + "\n")
        _write_lines(said_store, stdout)
    actor = f"doctor:{getpass.getuser()}"
    try:
        if scanning:
            read: dict[str, int] = {}
            scan(store, read)
            entries = store.quarantined()
            report = DoctorReport(store.safe_url, choice.source, _versions(store),
                                  [*said_store, *_scan_checks(store, choice, entries, read)],
                                  [e.to_dict() for e in entries])
            if args.json:  # the whole report (doctor_report's shape), not only the quarantine
                stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
            else:
                _write_lines(report.checks[len(said_store):], stdout)
            return EXIT_FOUND if report.exit_code else EXIT_OK
        if args.action == "list":
            entries = store.quarantined()
            _print_entries(entries, stdout, args.json, None)
            return EXIT_FOUND if entries else EXIT_OK
        if args.action == "rotate-job-secret":
            return _rotate(store, args, actor, stdout, stderr)
        if args.action == "ends":
            return _ends(store, args, stdout)
        if args.action == "correct-end":
            return _correct_end(store, args, actor, stdout, stderr)
        if args.action == "repair":
            changes = dict(change.split("=", 1) for change in args.changes if "=" in change)
            if len(changes) != len(args.changes):
                stderr.write("jupyter-sched doctor: give each change as COLUMN=VALUE\n")
                return EXIT_USAGE
            stdout.write(repair(store, args.id, changes, actor=actor) + "\n")
            return EXIT_OK
        if not args.yes:
            entry = _entry(store, args.id)
            stderr.write(f"jupyter-sched doctor: would delete {entry.table} row {entry.key} ({entry.error}); "
                         "add --yes to delete it\n")
            return EXIT_USAGE
        stdout.write(remove(store, args.id, actor=actor) + "\n")
        return EXIT_OK
    except SchedError as exc:
        stderr.write(_said(exc))
        return EXIT_FOUND
    except ValueError as exc:
        stderr.write(f"jupyter-sched doctor: {exc}\n")
        return EXIT_FOUND
    finally:
        store.close()
