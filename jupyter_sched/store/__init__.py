"""The store (edge): SQLAlchemy 2 over SQLite (WAL) or PostgreSQL, with versioned migrations.

Public surface: :class:`Store` (one-transaction helpers and :meth:`Store.transaction`),
:class:`StoreTx` (operations inside a transaction), :class:`JobRecord` (a job row),
:func:`check_integrity`, :func:`sqlite_url`, the id generators and :func:`migrate`.
"""

from . import schema
from .codec import JobRecord, job_columns, parse_ts, ts
from .ids import IdGenerator, SequentialIds, SortableIds
from .integrity import IntegrityReport, check_integrity
from .migrations import MIGRATIONS, Migration, current_version, latest_version, migrate
from .store import LIVE_STATES, AuditEvent, LeaderLease, QueueKey, Store, StoreTx, sqlite_url

__all__ = [
    "LIVE_STATES", "MIGRATIONS", "AuditEvent", "IdGenerator", "IntegrityReport", "JobRecord", "LeaderLease",
    "Migration", "QueueKey", "SequentialIds", "SortableIds", "Store", "StoreTx", "check_integrity",
    "current_version", "job_columns", "latest_version", "migrate", "parse_ts", "schema", "sqlite_url", "ts",
]
