"""``jupyter-sched doctor``: find, list, repair or remove the rows the store could not read.

The store never stops on a bad row: readers skip it and note it in the quarantine
(:mod:`jupyter_sched.store.quarantine`); reports carry a warning naming it. This admin command
works on the database directly (it must work when the server is down or the rows break it)::

    jupyter-sched doctor [--db URL]                       scan every table, then list the quarantine
    jupyter-sched doctor list                             list without scanning
    jupyter-sched doctor repair ID COLUMN=VALUE [...]     fix columns of the row; kept only if it reads
    jupyter-sched doctor remove ID --yes                  delete the row

``--db`` takes an SQLAlchemy URL (default: ``$JUPYTER_SCHED_DB_URL``, else the embedded server's
``<jupyter data dir>/jupyter_sched/sched.sqlite``). Every repair and removal writes an audit
record (actor ``doctor:<OS user>``) with the row's identity, the error and the change.

Exit codes: 0 nothing quarantined (or the repair/removal done); 1 quarantined rows remain, or
the repair did not make the row readable; 2 bad command line; 3 the store cannot be opened.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

import sqlalchemy as sa

from ..errors import SchedError
from ..store import Store, sqlite_url
from ..store import schema as tables
from ..store.codec import loads, parse_ts, record_from_row
from ..store.quarantine import QUARANTINE_TABLES, Quarantined, check_rollup_row, check_usage_row, row_attributes
from .main import _Parser

__all__ = ["default_db_url", "main", "scan"]

EXIT_OK, EXIT_FOUND, EXIT_USAGE, EXIT_NO_STORE = 0, 1, 2, 3

_KEY = {"jobs": "id", "usage": "id", "gpu_rollups": "id", "events": "id"}


def default_db_url() -> str:
    """``$JUPYTER_SCHED_DB_URL``, else the embedded server's SQLite file in the Jupyter data dir."""
    if os.environ.get("JUPYTER_SCHED_DB_URL"):
        return os.environ["JUPYTER_SCHED_DB_URL"]
    try:
        from jupyter_core.paths import jupyter_data_dir

        data = Path(jupyter_data_dir())
    except ImportError:  # the slim install has no jupyter_core: its default location
        data = Path.home() / ".local" / "share" / "jupyter"
    return sqlite_url(data / "jupyter_sched" / "sched.sqlite")


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


CHECKS: dict[str, Callable[[Mapping[Any, Any]], str | None]] = {
    "jobs": _check_job, "usage": check_usage_row, "gpu_rollups": check_rollup_row, "events": _check_event}
"""The check of each quarantinable table: None for a sound row, else the error sentence."""


def scan(store: Store) -> list[Quarantined]:
    """Read every row of every quarantinable table; note the bad ones; return them (new or not)."""
    found: list[Quarantined] = []
    with store.engine.connect() as conn:
        for name in QUARANTINE_TABLES:
            table = tables.metadata.tables[name]
            for row in conn.execute(sa.select(table).execution_options(yield_per=1000)).mappings():
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
    value: Any = entry.key if entry.table == "jobs" else int(entry.key)
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
        tx.release_quarantined(entry.table, entry.key)
        tx.add_event(actor=actor, action="quarantine_removed",
                     job_id=str(entry.attributes.get("job_id") or (entry.key if entry.table == "jobs" else "")) or None,
                     user=entry.attributes.get("user"), message=f"removed {entry.error}",
                     details={"table": entry.table, "key": entry.key, "error": entry.error,
                              "attributes": dict(entry.attributes)})
    store.forget_noted(entry.table, entry.key)
    return f"removed {entry.table} row {entry.key}"


def _typed(column: sa.Column[Any], text: str) -> Any:
    if isinstance(column.type, sa.Integer):
        return int(text)
    if isinstance(column.type, sa.Float):
        return float(text)
    return text


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jupyter-sched doctor",  # its errors in the CLI's one style
                     description="Find, list, repair or remove rows the store could not read.")
    parser.add_argument("--db", help="SQLAlchemy URL of the store (default: $JUPYTER_SCHED_DB_URL, else the "
                                     "embedded server's SQLite file)")
    parser.add_argument("--json", action="store_true", help="print JSON")
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.add_parser("scan", help="read every row, note the bad ones, list the quarantine (default)")
    sub.add_parser("list", help="list the quarantine without scanning")
    fix = sub.add_parser("repair", help="set columns of a quarantined row (COLUMN=VALUE; null for NULL)")
    fix.add_argument("id", type=int)
    fix.add_argument("changes", nargs="+", metavar="COLUMN=VALUE")
    drop = sub.add_parser("remove", help="delete a quarantined row")
    drop.add_argument("id", type=int)
    drop.add_argument("--yes", action="store_true", help="really delete it")
    return parser


def _print_entries(entries: Sequence[Quarantined], out: TextIO, as_json: bool) -> None:
    if as_json:
        out.write(json.dumps([e.to_dict() for e in entries], indent=2) + "\n")
        return
    if not entries:
        out.write("no quarantined rows: every row of jobs, usage, gpu_rollups and events reads\n")
        return
    out.write(f"{len(entries)} quarantined row(s):\n")
    for e in entries:
        who = ", ".join(f"{k}={v}" for k, v in e.attributes.items() if k in ("user", "team", "job_id", "gpu_uuid"))
        out.write(f"  [{e.id}] {e.table} row {e.key}: {e.error}" + (f" ({who})" if who else "") + "\n")
    out.write("repair: jupyter-sched doctor repair ID COLUMN=VALUE  ·  remove: jupyter-sched doctor remove ID --yes\n")


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run the doctor (see module docstring); return the exit code."""
    stdout, stderr = out or sys.stdout, err or sys.stderr
    try:
        args = _parser().parse_args(list(argv) if argv is not None else None)
    except SystemExit as exc:
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    try:
        store = Store(args.db or default_db_url())
    except SchedError as exc:
        stderr.write(f"jupyter-sched doctor: {exc}\n")
        return EXIT_NO_STORE
    actor = f"doctor:{getpass.getuser()}"
    try:
        if args.action in (None, "scan"):
            scan(store)
        if args.action in (None, "scan", "list"):
            entries = store.quarantined()
            _print_entries(entries, stdout, args.json)
            return EXIT_FOUND if entries else EXIT_OK
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
    except (SchedError, ValueError) as exc:
        stderr.write(f"jupyter-sched doctor: {exc}\n")
        return EXIT_FOUND
    finally:
        store.close()
