"""Quarantine: rows the store cannot read are set aside with a named error, never fatal.

One bad row must never stop a scheduling cycle or a report (DESIGN, *Telemetry validity*;
issue 17): a usage row with a truncated timestamp (case 011's robustness half), a telemetry
rollup with 101 % utilization (case 009's), a job row whose JSON no longer decodes. The store's
readers check each row they decode (:func:`check_usage_row`, :func:`check_rollup_row`; job and
audit rows by decoding them), skip the bad ones and note them in the ``quarantine`` table with
the error and the columns that could still be read (who, which job, which GPU), so that

* every reader goes on with the good rows (the engine schedules, reports answer);
* reports say what they skipped (``warnings`` naming the row) and to whom it belonged, so an
  account never silently disappears from a report;
* an admin lists, repairs or removes the rows with ``jupyter-sched doctor``
  (:mod:`jupyter_sched.cli.doctor`); a repaired row is read again and leaves the quarantine.

The row itself stays where it is, untouched: quarantine is a note, not a move — nothing is
lost, and repairing it is an ``UPDATE`` of the one bad column.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..errors import ValidationError
from .codec import parse_ts

__all__ = ["QUARANTINE_TABLES", "Quarantined", "attach_warnings", "check_rollup_row", "check_usage_row",
           "row_attributes", "sound_usage_sql"]

QUARANTINE_TABLES = ("jobs", "usage", "gpu_rollups", "events", "quotas", "budgets", "team_policies", "job_progress")
"""Tables whose rows can be quarantined."""

_PERCENT_COLUMNS = ("utilization_avg", "utilization_max", "activity_avg", "activity_max")
_MEASURE_COLUMNS = ("memory_used_max_mib", "memory_total_mib", "power_avg_w", "temperature_max_c")
"""A rollup's other readings: finite numbers (a NaN or infinity is no measurement and not JSON: s29)."""
_ATTRIBUTES = ("job_id", "attempt", "user", "team", "gpu_uuid", "gpu_model", "kind", "node", "minute", "state",
               "actor", "action")


@dataclass(frozen=True, slots=True)
class Quarantined:
    """One row set aside.

    Attributes:
        table: the table (one of :data:`QUARANTINE_TABLES`).
        key: the row's primary key, as text.
        error: what is wrong, one sentence naming the row and the column.
        attributes: the columns that could still be read (``user``, ``team``, ``job_id``,
            ``gpu_uuid`` …): whom the row concerns.
        found_at: when it was first noted (None until stored).
        id: the quarantine entry's id (0 until stored).
    """

    table: str
    key: str
    error: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    found_at: datetime | None = None
    id: int = 0

    @property
    def warning(self) -> str:
        """The sentence a report carries for it."""
        return f"skipped {self.error}; an admin can repair or remove it with `jupyter-sched doctor`"

    def to_dict(self) -> dict[str, Any]:
        """JSON shape (doctor ``--json``, report warnings)."""
        return {"id": self.id, "table": self.table, "key": self.key, "error": self.error,
                "attributes": dict(self.attributes),
                "found_at": self.found_at.isoformat() if self.found_at else None}


def row_attributes(row: Mapping[Any, Any]) -> dict[str, Any]:
    """The identifying columns of ``row`` that are present (never the payload)."""
    keys = set(row.keys())
    return {name: row[name] for name in _ATTRIBUTES if name in keys and row[name] is not None}


def _timestamp(row: Mapping[Any, Any], column: str, where: str, *, required: bool) -> str | None:
    raw = row[column]
    if raw is None:
        return f"{where} has no {column} (the record is truncated)" if required else None
    try:
        parse_ts(str(raw))
    except (ValidationError, ValueError, TypeError):
        return f"{where}: {column} {raw!r} is unreadable (truncated or not an ISO 8601 UTC time)"
    return None


def check_usage_row(row: Mapping[Any, Any]) -> str | None:
    """What makes a ``usage`` row unusable for accounting, or None when it is sound.

    Checked: ``started_at`` present and readable, ``ended_at`` readable when present and not
    before ``started_at``, ``share`` a number in (0, 1], ``billed`` (schema 30; red40 R1) null or a number in (0, 1].
    """
    where = f"usage row {row['id']} (job {row['job_id']} attempt {row['attempt']} GPU {row['gpu_uuid']})"
    problem = _timestamp(row, "started_at", where, required=True) or _timestamp(row, "ended_at", where,
                                                                               required=False)
    if problem:
        return problem
    share = row["share"]
    if not isinstance(share, (int, float)) or not 0 < float(share) <= 1:
        return f"{where} has share {share!r} GPUs (must be in (0, 1])"
    billed = row.get("billed")
    if billed is not None and (not isinstance(billed, (int, float)) or not 0 < float(billed) <= 1):
        return f"{where} is charged {billed!r} GPUs (must be in (0, 1])"
    if row["ended_at"] is not None and str(row["ended_at"]) < str(row["started_at"]):
        return f"{where} ends {row['ended_at']} before it starts {row['started_at']}"
    return None


_TS_GLOB = "[0-9][0-9][0-9][0-9]-[0-1][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z"
_TS_REGEX = r"^[0-9]{4}-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9][.][0-9]{6}Z$"


def sound_usage_sql(usage: sa.Table, *, sqlite: bool) -> sa.ColumnElement[bool]:
    """SQL twin of :func:`check_usage_row` for aggregates the database computes: true for a row
    whose timestamps have the store's fixed shape (:func:`~.codec.ts`), whose end is not before
    its start and whose share is in (0, 1]. Sums guard their arithmetic with it (``CASE WHEN``,
    which PostgreSQL evaluates lazily, so a truncated text is never cast) and thereby skip what
    the row readers quarantine: a report's total never counts a row its listing leaves out.
    """
    def shaped(column: sa.ColumnElement[Any]) -> sa.ColumnElement[bool]:
        return column.op("GLOB")(_TS_GLOB) if sqlite else column.op("~")(_TS_REGEX)

    c = usage.c
    return sa.and_(c.share > 0, c.share <= 1, sa.or_(c.billed.is_(None), sa.and_(c.billed > 0, c.billed <= 1)),
                   shaped(c.started_at),
                   sa.or_(c.ended_at.is_(None), sa.and_(shaped(c.ended_at), c.ended_at >= c.started_at)))


def check_rollup_row(row: Mapping[Any, Any]) -> str | None:
    """What makes a ``gpu_rollups`` row unusable, or None when it is sound.

    Checked: ``minute`` readable; utilization and activity (percent) within 0..100 and not
    NaN (DCGM blank sentinels and 101 % readings are not measurements, case 009); memory, power and
    temperature finite numbers where given (s29: an infinity reached answers as invalid JSON);
    sample count not negative.
    """
    where = f"telemetry rollup {row['id']} (GPU {row['gpu_uuid']} minute {row['minute']})"
    problem = _timestamp(row, "minute", where, required=True)
    if problem:
        return problem
    for column in _PERCENT_COLUMNS:
        value = row[column]
        if value is None:
            continue
        if not isinstance(value, (int, float)) or math.isnan(float(value)) or not 0.0 <= float(value) <= 100.0:
            return f"{where}: {column} {value!r} % is outside 0..100"
    for column in _MEASURE_COLUMNS:
        value = row.get(column)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not math.isfinite(value)):
            return f"{where}: {column} {value!r} is not a finite number"
    if int(row["samples"] or 0) < 0:
        return f"{where} has a negative sample count {row['samples']!r}"
    return None


def attach_warnings(rows: list[dict[str, Any]], entries: Sequence[Quarantined], by: Sequence[str], *,
                    user: str | None = None, gpus_of: Mapping[tuple[str, ...], set[str]] | None = None,
                    zero: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Report rows with a ``warnings`` list on every group a quarantined row concerns.

    A skipped usage row is attributed to its group through the columns that could still be read
    (its user, team, GPU model, job, kind; ``period`` is unknown and left empty); a group that only
    skipped rows reach still appears, with zeros (``zero``) and its warnings — an account never
    disappears from a report because one of its rows is unreadable (case 011). A skipped rollup
    warns the groups that held its GPU (``gpus_of``: GPUs of each group's intervals).

    Args:
        rows: the report rows (grouping fields + sums); not modified.
        entries: quarantine entries of the ``usage`` and ``gpu_rollups`` tables.
        by: the grouping fields of ``rows``.
        user: the report is limited to this user (entries of others are not shown).
        gpus_of: GPU uuids per group key (tuple of the grouping values as text).
        zero: the sums of an empty group (for groups only quarantined rows reach).

    Returns:
        New rows, in the same order, plus the zero rows at the end.
    """
    keys = tuple(by)
    out = [dict(row) for row in rows]
    index = {tuple(str(row.get(k, "")) for k in keys): row for row in out}
    for entry in entries:
        attrs = entry.attributes
        if user is not None and attrs.get("user") not in (None, user):
            continue
        if entry.table == "usage":
            key = tuple(str(attrs.get(k, "")) if k != "period" else "" for k in keys)
            row = index.get(key)
            if row is None:
                row = {**dict(zip(keys, key, strict=True)), **dict(zero or {})}
                index[key] = row
                out.append(row)
            row.setdefault("warnings", []).append(entry.warning)
        elif entry.table == "gpu_rollups" and gpus_of is not None:
            gpu = str(attrs.get("gpu_uuid", ""))
            for key, gpus in gpus_of.items():
                if gpu in gpus and key in index:
                    index[key].setdefault("warnings", []).append(entry.warning)
    return out
