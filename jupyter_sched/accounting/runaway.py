"""Open usage rows whose job is not running: "runaway" rows, left out instead of billed to now (hubadmin26 B15).

A usage row is opened with an admission and closed with the job's end in the same transaction, so
an open row belongs to a job that holds its GPUs now. A crash between launch and record, an
adoption bug or a restore can leave one open whose job ended, runs another attempt, or is not in
the jobs table at all (Slurm's "runaway jobs"). Counted as held until now it billed its owner from
its start on, and — holding the GPU "first" — took every later run on that GPU off the users who
ran them. Reports and fair share leave such a row out, with one warning naming it; ``jupyter-sched
doctor`` lists it first with the ``UPDATE`` that closes it at its job's end (its own start when
the job ended at no known time or is unknown).

Pure: no I/O (the store finds the rows: ``StoreTx.runaway_usage``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..model.units import to_iso
from .usage import UsageInterval

__all__ = ["HOLDING_STATES", "RunawayUsage", "with_runaways", "without_runaways"]

HOLDING_STATES = frozenset({"admitted", "running", "preempted"})
"""Job states whose current attempt may hold an open usage row (``preempted`` is the instant
between the stop and the requeue)."""


@dataclass(frozen=True, slots=True)
class RunawayUsage:
    """An open usage row whose job does not hold its GPUs.

    Attributes:
        row_id: the usage row's id.
        interval: the row (``ended_at`` None).
        job_state: its job's state, None when the jobs table has no such job.
        job_attempt: its job's current attempt (None when unknown).
        job_end: its job's end (``finished_at``), None when the job has none or is unknown.
    """

    row_id: int
    interval: UsageInterval
    job_state: str | None
    job_attempt: int | None
    job_end: datetime | None

    @property
    def key(self) -> tuple[str, int, str]:
        """``(job_id, attempt, gpu_uuid)``: the row's identity in the store."""
        return self.interval.job_id, self.interval.attempt, self.interval.gpu_uuid

    @property
    def close_at(self) -> datetime:
        """Where the repair closes it: its job's end, or its own start when that is unknown or earlier."""
        start = self.interval.started_at
        return self.job_end if self.job_end is not None and self.job_end > start else start

    @property
    def why(self) -> str:
        """Why the row is not counted as held, in words."""
        if self.job_state is None:
            return "its job is not in the jobs table"
        if self.job_state in HOLDING_STATES:
            return f"its job runs a later attempt ({self.job_attempt}) now"
        return f"its job is {self.job_state}" + (f" since {to_iso(self.job_end)}" if self.job_end is not None else "")

    def warning(self) -> str:
        """The sentence a report (and the service log) carries for it."""
        iv = self.interval
        return (f"usage row {self.row_id} of job {iv.job_id} (attempt {iv.attempt}, {iv.user}) on GPU {iv.gpu_uuid} "
                f"is open since {to_iso(iv.started_at)} but {self.why}: left out, not billed to now — "
                "`jupyter-sched doctor` closes it")


def without_runaways(intervals: Iterable[UsageInterval],
                     runaways: Sequence[RunawayUsage]) -> list[UsageInterval]:
    """``intervals`` less the open rows of ``runaways`` (closed rows of the same key are kept)."""
    if not runaways:
        return list(intervals)
    keys = {r.key for r in runaways}
    return [iv for iv in intervals if iv.ended_at is not None or (iv.job_id, iv.attempt, iv.gpu_uuid) not in keys]


def with_runaways(rows: list[dict[str, Any]], runaways: Sequence[RunawayUsage], keys: Sequence[str],
                  zero: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Report ``rows`` with each runaway row's warning on the rows of its group (every period); a
    group with no row of its own appears as ``zero`` with the warning (the report says what it
    left out, once, and on its owner's line)."""
    for runaway in runaways:
        iv, said = runaway.interval, runaway.warning()
        fields = {"user": iv.user, "team": iv.team, "gpu_model": iv.gpu_model, "job_id": iv.job_id, "kind": iv.kind}
        mine = [row for row in rows if all(str(row.get(k)) == str(fields[k]) for k in keys if k in fields)]
        if not mine:
            mine = [{**{k: fields.get(k) for k in keys}, **zero}]
            rows.append(mine[0])
        for row in mine:
            if said not in row.setdefault("warnings", []):
                row["warnings"].append(said)
    return rows
