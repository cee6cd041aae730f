"""Charge a GPU's holdings anew over a past stretch whose holders changed after the fact (red42 R2).

A holding of a share of a GPU is charged what it keeps from others (:func:`~jupyter_sched.model.kept_share.kept_charges`,
red40 R1): the store cuts a GPU's intervals where its holders change and charges each stretch by that rule
(:meth:`jupyter_sched.store.StoreTx.open_usage` / ``close_usage``). An admin's end correction
(:func:`jupyter_sched.store.claimed_ends.correct_end`) moves a settled share's end after those cuts were made: the
shares beside it had been charged at the old end as if it left then, so one GPU was billed 1.5 over the stretch the
end moved later by (the neighbour charged the whole GPU beside the corrected share's half) and 0.5 over the stretch it
moved earlier by (the neighbour, alone on the GPU, still charged half).

:func:`rebill` charges every holding of the GPUs over the stretch anew by the same rule: each row overlapping it is cut
at every change of the GPU's holders inside it, each piece inside it charged what the rule gives for the holders of
that piece (their jobs' teams now, as :meth:`~jupyter_sched.store.StoreTx.recharge` decides), pieces outside kept as
they were, and a holding's neighbouring pieces of one charge joined again. Rows that change are deleted and written
again under new ids (as :func:`~jupyter_sched.store.claimed_ends.correct_end` rewrites the corrected job's own), so
every running sum over the usage table notices; rows that do not change are left alone.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from ..model.kept_share import kept_charges
from . import schema
from .codec import ts
from .store import StoreTx

__all__ = ["Rebilled", "holders_beside", "rebill", "seconds_charged"]

_SAME = ("job_id", "attempt", "user", "team", "kind", "gpu_uuid", "gpu_model", "share")
"""Columns a holding's pieces share: neighbouring pieces with these and one charge are joined."""


@dataclass(frozen=True, slots=True)
class Rebilled:
    """What :func:`rebill` rewrote: ``jobs`` whose rows changed, ``rows`` written."""

    jobs: tuple[str, ...]
    rows: int


def _charged(row: dict[str, Any]) -> float:
    billed = row["billed"]
    return float(billed if isinstance(billed, (int, float)) else row["share"])


def _teams_now(tx: StoreTx, job_ids: Iterable[str]) -> dict[str, str]:
    wanted = sorted(set(job_ids))
    j = schema.jobs.c
    out: dict[str, str] = {}
    for at in range(0, len(wanted), 500):  # bounded IN lists (SQLite's variable limit)
        out.update({str(i): str(t) for i, t in tx.conn.execute(
            sa.select(j.id, j.team).where(j.id.in_(wanted[at:at + 500])))})
    return out


def _pieces(rows: list[dict[str, Any]], lo: str, hi: str, team_of: dict[str, str]) -> list[dict[str, Any]]:
    """``rows`` (one GPU's, overlapping ``[lo, hi)``) cut at every change of the GPU's holders inside the stretch,
    the pieces inside it charged anew, neighbouring pieces of one holding and one charge joined."""
    cuts = {lo, hi}
    for row in rows:
        cuts.update(t for t in (row["started_at"], row["ended_at"]) if t is not None and lo < t < hi)
    points = sorted(cuts)
    live = [r for r in rows if r["ended_at"] is None or r["ended_at"] > r["started_at"]]
    out: list[dict[str, Any]] = []
    for row in rows:
        start, end = row["started_at"], row["ended_at"]
        if end is not None and end <= start:  # a holding of no length charges nothing: as it was
            out.append(dict(row))
            continue
        inner = [p for p in points if p > start and (end is None or p < end)]
        bounds: list[str | None] = [start, *inner, end]
        for a, b in itertools.pairwise(bounds):
            assert a is not None
            billed = row["billed"]
            if lo <= a and b is not None and b <= hi:
                holders = [r for r in live if r["started_at"] <= a and (r["ended_at"] is None or r["ended_at"] >= b)]
                charges = kept_charges([(team_of.get(str(r["job_id"]), str(r["team"])), float(r["share"]))
                                        for r in holders])
                billed = next(c for r, c in zip(holders, charges, strict=True) if r is row)
            out.append({**row, "started_at": a, "ended_at": b, "billed": billed})
    out.sort(key=lambda r: (str(r["job_id"]), int(r["attempt"]), r["started_at"]))
    joined: list[dict[str, Any]] = []
    for piece in out:
        last = joined[-1] if joined else None
        if (last is not None and all(last[k] == piece[k] for k in _SAME) and last["ended_at"] == piece["started_at"]
                and last["ended_at"] is not None and _same_charge(last, piece)):
            last["ended_at"] = piece["ended_at"]
            continue
        joined.append(piece)
    return joined


def _same_charge(a: dict[str, Any], b: dict[str, Any]) -> bool:
    if a["billed"] is None or b["billed"] is None:
        return a["billed"] is None and b["billed"] is None
    return abs(float(a["billed"]) - float(b["billed"])) <= 1e-9


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    billed = row["billed"]
    return (*(row[k] for k in _SAME), row["started_at"], row["ended_at"],
            None if billed is None else round(float(billed), 9))


def rebill(tx: StoreTx, gpu_uuids: Iterable[str], lo: datetime, hi: datetime) -> Rebilled:
    """Charge the holdings of each of ``gpu_uuids`` anew over ``[lo, hi)`` (module docstring), in ``tx``.

    Shares of whole GPUs only (a whole GPU's or a MIG slice's holder is charged its share whatever happens beside it).
    """
    lo_s, hi_s = ts(min(lo, hi)), ts(max(lo, hi))
    assert lo_s is not None and hi_s is not None
    if lo_s == hi_s:
        return Rebilled((), 0)
    u = schema.usage
    jobs: set[str] = set()
    written = 0
    for gpu in sorted(set(gpu_uuids)):
        if gpu.startswith("MIG-"):
            continue
        rows = [dict(r) for r in tx.conn.execute(sa.select(u).where(
            u.c.gpu_uuid == gpu, u.c.started_at < hi_s, sa.or_(u.c.ended_at.is_(None), u.c.ended_at > lo_s))
            .order_by(u.c.id)).mappings()]
        rows = [r for r in rows if isinstance(r["share"], (int, float)) and 0 < float(r["share"]) <= 1]
        if not rows:
            continue
        team_of = _teams_now(tx, (str(r["job_id"]) for r in rows))
        new = _pieces(rows, lo_s, hi_s, team_of)
        kept = {_key(r) for r in new} & {_key(r) for r in rows}
        gone = [r for r in rows if _key(r) not in kept]
        added = [r for r in new if _key(r) not in kept]
        if not gone and not added:
            continue
        for row in gone:
            tx.conn.execute(u.delete().where(u.c.id == row["id"]))
        for row in added:
            tx.conn.execute(u.insert().values({k: v for k, v in row.items() if k != "id"}))
        jobs.update(str(r["job_id"]) for r in (*gone, *added))
        written += len(added)
    if written:
        tx.jobs_changed = True  # answers summed from usage rows are kept by the jobs change counter
    return Rebilled(tuple(sorted(jobs)), written)


def holders_beside(tx: StoreTx, gpu_uuids: Iterable[str], lo: datetime, hi: datetime) -> set[str]:
    """Jobs holding a share of one of ``gpu_uuids`` at some time in ``[lo, hi]`` (before :func:`rebill` changes
    them: whose charge it may change)."""
    lo_s, hi_s = ts(min(lo, hi)), ts(max(lo, hi))
    wanted = sorted({g for g in gpu_uuids if not g.startswith("MIG-")})
    if not wanted:
        return set()
    u = schema.usage
    return {str(j) for j in tx.conn.execute(sa.select(u.c.job_id).where(
        u.c.gpu_uuid.in_(wanted), u.c.started_at <= hi_s, sa.or_(u.c.ended_at.is_(None), u.c.ended_at >= lo_s),
        u.c.share > 0, u.c.share < 1).distinct()).scalars()}


def seconds_charged(tx: StoreTx, job_ids: Iterable[str], *, until: datetime) -> dict[str, dict[tuple[str, str], float]]:
    """GPU-seconds each of ``job_ids`` is charged up to ``until`` (open rows run to it), per ``(team, gpu_model)`` of
    its rows — as the usage counter counts it (:meth:`~jupyter_sched.store.StoreTx.gpu_seconds_by_team_model`)."""
    out: dict[str, dict[tuple[str, str], float]] = {}
    wanted = sorted(set(job_ids))
    for at in range(0, len(wanted), 500):
        for iv in tx.usage_rows(job_ids=wanted[at:at + 500]):
            start = iv.started_at
            end = until if iv.ended_at is None else min(iv.ended_at, until)
            seconds = iv.charged * max(0.0, (end - start).total_seconds())
            by = out.setdefault(iv.job_id, defaultdict(float))
            by[(iv.team, iv.gpu_model)] += seconds
    return {job: dict(by) for job, by in out.items()}

