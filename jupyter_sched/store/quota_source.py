"""Where the quota set in force came from: the ``quota_source`` rows (schema version 14).

Row ``name = 'quotas'`` (:data:`QUOTAS`): ``set_by`` (``config`` — the config file's ``c.SchedApp.quotas``
applied at a start — or the admin whose ``PUT quotas`` replaced the set) at ``set_at``, and the
digest of the config file's quota lines last applied (``config_digest``, at ``config_at``). A start
compares the config's digest with it: unchanged lines leave a set an admin PUT in force; changed
lines replace it (new user 20, N26: a restart silently put the config's lines back over a PUT).

Row ``name = 'user_teams'`` (:data:`MEMBERS`, since version 15): the same for the team memberships
(``c.SchedApp.user_teams`` against PUT quotas' ``user_teams``; new user 20, N21).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from . import schema
from .codec import parse_ts, ts

__all__ = ["CONFIG_ACTOR", "MEMBERS", "QUOTAS", "QuotaSource", "config_digest", "read_quota_source",
           "write_quota_source"]

CONFIG_ACTOR = "config"
"""``set_by`` of a set the config file's lines put in force (and the audit actor of that change)."""

QUOTAS = "quotas"
"""The row of the quota lines (and budgets, team policies)."""
MEMBERS = "user_teams"
"""The row of the team memberships (``user_teams``)."""


@dataclass(frozen=True, slots=True)
class QuotaSource:
    """Who set the quota set in force and the config lines last applied.

    Attributes:
        set_by: ``config`` or the admin of the last ``PUT quotas``.
        set_at: when (UTC).
        config_digest: :func:`config_digest` of the config file's lines last applied (None: never).
        config_at: when they were applied (UTC; None: never).
    """

    set_by: str
    set_at: datetime
    config_digest: str | None = None
    config_at: datetime | None = None


def config_digest(lines: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 (hex, 64 characters) of the config's quota lines as dicts, in order; key order and
    number spelling (``2`` vs ``2.0``) do not change it."""
    canonical = [{k: (float(v) if isinstance(v, int) and not isinstance(v, bool) else v)
                  for k, v in sorted(line.items())} for line in lines]
    return hashlib.sha256(json.dumps(canonical, sort_keys=True).encode()).hexdigest()


def read_quota_source(conn: sa.Connection, name: str = QUOTAS) -> QuotaSource | None:
    """The row ``name`` (None: nothing was written to it since the store reached version 14, or 15
    for :data:`MEMBERS`)."""
    row = conn.execute(sa.select(schema.quota_source).where(schema.quota_source.c.name == name)).first()
    if row is None:
        return None
    set_at = parse_ts(row.set_at)
    if set_at is None:
        return None
    return QuotaSource(set_by=row.set_by, set_at=set_at, config_digest=row.config_digest,
                       config_at=parse_ts(row.config_at) if row.config_at else None)


def write_quota_source(conn: sa.Connection, *, set_by: str, at: datetime, digest: str | None = None,
                       name: str = QUOTAS) -> None:
    """Record in row ``name`` that ``set_by`` put the set in force at ``at``; ``digest``: the config
    lines just applied (or found already in force) — otherwise the config digest last recorded is kept."""
    was = read_quota_source(conn, name)
    values: dict[str, Any] = {"set_by": set_by, "set_at": ts(at),
                              "config_digest": was.config_digest if was is not None else None,
                              "config_at": ts(was.config_at) if was is not None and was.config_at else None}
    if digest is not None:
        values.update(config_digest=digest, config_at=ts(at))
    if was is None and conn.execute(sa.select(schema.quota_source.c.name)
                                    .where(schema.quota_source.c.name == name)).first() is None:
        conn.execute(schema.quota_source.insert().values(name=name, **values))
    else:
        conn.execute(schema.quota_source.update().where(schema.quota_source.c.name == name).values(**values))
