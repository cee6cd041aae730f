"""Nodes an admin cordoned for maintenance: the ``node_cordons`` rows (schema version 18).

One row per node (``jupyter-sched nodes cordon|drain``): its :class:`~jupyter_sched.model.resources.Cordon`.
The engine and the services read them through :class:`~jupyter_sched.engine.cordons.CordonBook`.
"""

from __future__ import annotations

import sqlalchemy as sa

from ..model.resources import Cordon
from . import schema
from .codec import parse_ts, ts

__all__ = ["delete_cordon", "read_cordons", "write_cordon"]


def read_cordons(conn: sa.Connection) -> dict[str, Cordon]:
    """Every stored cordon by node name (a row whose time does not parse is left out)."""
    table = schema.node_cordons
    out: dict[str, Cordon] = {}
    for row in conn.execute(sa.select(table).order_by(table.c.node)):
        at = parse_ts(row.cordoned_at)
        if at is None:
            continue
        out[row.node] = Cordon(reason=row.reason, by=row.cordoned_by, at=at, evict_at=parse_ts(row.evict_at))
    return out


def write_cordon(conn: sa.Connection, node: str, cordon: Cordon) -> Cordon | None:
    """Put ``cordon`` on ``node`` (replacing the one there); return the one it replaced (None: none)."""
    table = schema.node_cordons
    was = read_cordons(conn).get(node)
    values = {"reason": cordon.reason, "cordoned_by": cordon.by, "cordoned_at": ts(cordon.at),
              "evict_at": ts(cordon.evict_at)}
    if was is None:
        conn.execute(table.insert().values(node=node, **values))
    else:
        conn.execute(table.update().where(table.c.node == node).values(**values))
    return was


def delete_cordon(conn: sa.Connection, node: str) -> Cordon | None:
    """Take ``node``'s cordon off; return it (None: the node was not cordoned)."""
    was = read_cordons(conn).get(node)
    if was is not None:
        conn.execute(schema.node_cordons.delete().where(schema.node_cordons.c.node == node))
    return was
