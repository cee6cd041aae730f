"""Decoded job rows kept by ``(id, version)``: a scheduling cycle's snapshot decodes only what changed.

Every write of a job row bumps its ``version`` (:meth:`.store.StoreTx.insert_job`,
:meth:`~.store.StoreTx.update_job`, the doctor's repair; in any process, since the version is in
the row), so a row read at the same ``(id, version)`` decodes to the same frozen
:class:`~.codec.JobRecord`. The engine's snapshot reads every live job each cycle; at 20,000
pending on 5,000 nodes decoding them (JSON spec, allocation, reason, timestamps) was 0.8-1.3 s of
CPU per cycle under the interpreter lock, the web loop starved meanwhile (issue 17; session 15
measured 85 % of the snapshot in ``Store.live_jobs``).

:func:`read_live` reads in two steps, inside one transaction that sees one state of the
database (SQLite: a read transaction's snapshot; PostgreSQL: REPEATABLE READ, see
:meth:`.store.Store.live_jobs`):

1. ``id, version`` of every live row, in submit order (an index scan without the JSON columns);
2. the whole rows of only those ids whose version the cache does not hold, by primary key in
   chunks, decoded (the cycle's pause between two decodes: the web loop can answer meanwhile).

A second process that writes a row bumps its version, so step 1 sees a version the cache does not
hold and step 2 reads the row afresh: the cache never serves a row older than the transaction's
view. When most rows are missing (the first cycle, after a restart) one scan of whole rows is
cheaper than fetching by id, and is done instead.

Memory: only live rows are kept (a row decoded as finished is dropped), and each :func:`read_live`
drops every kept row that is no longer live (finished, deleted): the cache follows the live set.
``limit`` bounds it should no snapshot run (a server without an engine): rows past it are decoded
and not kept — the kept ones stay useful (clearing a full cache made every cycle decode everything
once the live set passed it: 1.0 s per build at 25,000 live rows, the old 20,000-row cache).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from ..model import QuotaSet
from . import schema
from .codec import JobRecord, record_from_row

__all__ = ["RowCache", "read_live"]

_CHUNK = 500
"""Ids per ``IN`` list (SQLite's and PostgreSQL's parameter limits are far above)."""
_J = schema.jobs
_IN_STATES = _J.c.state.in_(sa.bindparam("states", expanding=True))
# built once, values passed as parameters (building a statement per call costs SQLAlchemy a cache key)
_LIVE_KEYS = sa.select(_J.c.id, _J.c.version).where(_IN_STATES).order_by(_J.c.submitted_at, _J.c.id)
_LIVE_ROWS = sa.select(_J).where(_IN_STATES).order_by(_J.c.submitted_at, _J.c.id)
_ROWS_BY_ID = sa.select(_J).where(_J.c.id.in_(sa.bindparam("ids", expanding=True)))


class RowCache:
    """Decoded live job rows by id, served while the row's ``version`` is unchanged.

    Args:
        limit: most rows kept (0: nothing is kept, every read decodes).

    Attributes:
        decodes: rows decoded so far (cache misses; diagnostics, benchmarks and tests).
        quota_set: the quota set last read and the ``quotas`` change counter it was read at (see
            :meth:`.store.StoreTx.quota_set`).

    Thread-safe through the interpreter lock: each change is one dict operation; two threads
    decoding the same row keep equal records.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self.decodes = 0
        self.quota_set: tuple[int, QuotaSet] | None = None
        self._records: dict[str, JobRecord] = {}

    def __len__(self) -> int:
        return len(self._records)

    def cached(self, job_id: str, version: int) -> JobRecord | None:
        """The kept record of row ``job_id`` at ``version``, or None."""
        record = self._records.get(job_id)
        return record if record is not None and record.version == version else None

    def decode(self, row: Mapping[Any, Any]) -> JobRecord:
        """The record of a ``jobs`` row, decoded unless kept at its version.

        Raises:
            what :func:`~.codec.record_from_row` raises for a row that does not decode.
        """
        record = self.cached(row["id"], row["version"])
        if record is not None:
            return record
        record = record_from_row(row)
        self.decodes += 1
        if self.limit:
            job_id = record.job.id
            if record.job.state.terminal:
                self._records.pop(job_id, None)
            elif job_id in self._records or len(self._records) < self.limit:
                self._records[job_id] = record
        return record

    def lookup(self, keys: Iterable[tuple[str, int]]) -> tuple[dict[str, JobRecord], list[str]]:
        """Of ``(id, version)`` pairs: the kept records by id, and the ids not kept at that version."""
        kept = self._records
        found: dict[str, JobRecord] = {}
        missing: list[str] = []
        for job_id, version in keys:
            record = kept.get(job_id)
            if record is not None and record.version == version:
                found[job_id] = record
            else:
                missing.append(job_id)
        return found, missing

    def retain(self, live: Mapping[str, object]) -> int:
        """Drop every kept row whose id is not a key of ``live`` (all live rows); return how many."""
        gone = self._records.keys() - live.keys()
        for job_id in gone:
            self._records.pop(job_id, None)
        return len(gone)


def read_live(conn: sa.Connection, states: Iterable[str], cache: RowCache,
              decode: Callable[[Mapping[Any, Any]], JobRecord | None],
              pause: Callable[[], object] | None = None) -> list[JobRecord]:
    """Every job row in ``states``, in submit order (then id), decoding only what ``cache`` lacks.

    Args:
        conn: a connection inside a transaction that sees one state of the database for both
            reads (see the module docstring).
        states: the live states' values.
        cache: the process's :class:`RowCache` (with ``limit`` 0 this is one scan, all decoded).
        decode: decodes one row through ``cache`` (None for a row that does not decode: skipped,
            the caller quarantines it).
        pause: called after each decoded row (the cycle's step aside for the web loop).

    Returns:
        the decoded records (rows that do not decode left out).
    """
    values = set(states)
    live = {"states": sorted(values)}
    keys = conn.execute(_LIVE_KEYS, live).all() if cache.limit else []  # (id, version) rows
    found, missing = cache.lookup(keys)
    if not cache.limit or 2 * len(missing) > len(keys):  # mostly cold: one scan beats lookups by id
        records = [record for row in conn.execute(_LIVE_ROWS, live).mappings()
                   if (record := _decoded(cache, decode, row, pause)) is not None]
        found = {record.job.id: record for record in records}
    else:
        for first in range(0, len(missing), _CHUNK):
            for row in conn.execute(_ROWS_BY_ID, {"ids": missing[first:first + _CHUNK]}).mappings():
                record = _decoded(cache, decode, row, pause)
                if record is not None and record.job.state.value in values:  # (one view: always so)
                    found[record.job.id] = record
        records = [found[job_id] for job_id, _ in keys if job_id in found]
    if cache.limit:
        cache.retain(found)
    return records


def _decoded(cache: RowCache, decode: Callable[[Mapping[Any, Any]], JobRecord | None], row: Mapping[Any, Any],
             pause: Callable[[], object] | None) -> JobRecord | None:
    """``decode(row)``, then ``pause()`` if it had to decode (a kept row costs no pause)."""
    before = cache.decodes
    record = decode(row)
    if pause is not None and cache.decodes != before:
        pause()
    return record
