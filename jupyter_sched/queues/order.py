"""Queue ordering plugins: class, then fair share between teams, then users, then submit time.

Order of pending jobs (DESIGN.md "Priority classes"; issue 4 §1):

1. priority class ``high`` > ``normal`` > ``low`` — aging never crosses classes;
2. inside a class, the team with the lowest *fair share* goes next: its dominant borrowed share
   (usage above guarantee / cohort capacity of the line's scope, max over its lines) divided by
   its weight — Kueue's fair sharing (KEP-1714, "DominantResourceShare"). Shares are re-read after
   every admission, so one team cannot take all borrowable GPUs in a single cycle;
3. inside a team, users with less decayed usage first (Slurm's fair-share factor; the half-life
   decay is computed at the edge into ``UsageHistory.decayed_gpu_seconds_by_user``);
4. then original submit time (a requeued job keeps it), then id for determinism.

The generator is pure: it reads the quota ledger's current usage when it picks the next team.

Other sorts (chosen by name in the profile, :data:`QUEUE_SORTS`): ``fifo`` (class, submit time)
and ``short-first`` — inside a class, *highest response ratio next* (Brinch Hansen, "An analysis
of response ratio scheduling", IFIP 1971): ``(wait + expected runtime) / expected runtime``, so
short jobs go first and a long job's ratio grows while it waits (no starvation). Expected runtimes
come from the job's time limit or the runtime learned from history (the profile's
``eta_source``); jobs without one go last in their class.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Protocol

from ..model import Job, PriorityClass

__all__ = ["QUEUE_SORTS", "QueueContext", "QueueSort", "fair_order", "fifo_order", "short_first_order"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_RANK = {p: p.rank for p in PriorityClass}


@dataclass(frozen=True, slots=True)
class QueueContext:
    """What a queue sort may read.

    Attributes:
        now: the cycle's time.
        team_share: current fair share of a team (lower goes first); re-read as admissions happen.
        user_usage: decayed GPU-seconds per user (lower goes first within a team).
        expected_runtime: seconds a job is expected to run (``math.inf``: unknown).
    """

    now: datetime
    team_share: Callable[[str], float]
    user_usage: Mapping[str, float] = field(default_factory=dict)
    expected_runtime: Callable[[Job], float] = lambda job: math.inf


class QueueSort(Protocol):
    """``(pending_jobs, context) -> jobs in scheduling order`` — the queue-sort plugin shape."""

    def __call__(self, jobs: Sequence[Job], context: QueueContext, /) -> Iterator[Job]:
        """Yield every job of ``jobs`` once, in the order they are visited."""
        ...


def _job_key(job: Job, user_usage: Mapping[str, float]) -> tuple[float, datetime, str]:
    return (user_usage.get(job.spec.user, 0.0), job.submitted_at or _EPOCH, job.id)


def fair_order(jobs: Sequence[Job], context: QueueContext, /) -> Iterator[Job]:
    """Yield ``jobs`` in scheduling order, re-reading ``context.team_share(team)`` as admissions happen."""
    team_share, user_usage = context.team_share, context.user_usage
    by_class: dict[int, dict[str, list[Job]]] = {}
    for job in jobs:
        by_class.setdefault(_RANK[job.spec.priority], {}).setdefault(job.spec.team, []).append(job)
    for rank in sorted(by_class, reverse=True):
        teams = by_class[rank]
        queues: dict[str, list[Job]] = {}
        heap: list[tuple[float, datetime, str, str]] = []
        for team, members in teams.items():
            members.sort(key=lambda j: _job_key(j, user_usage), reverse=True)  # pop() from the end
            queues[team] = members
            head = members[-1]
            heap.append((team_share(team), head.submitted_at or _EPOCH, head.id, team))
        heapq.heapify(heap)
        while heap:
            share, _, _, team = heapq.heappop(heap)
            current = team_share(team)
            members = queues[team]
            if current != share:  # stale entry: usage changed since it was pushed
                head = members[-1]
                heapq.heappush(heap, (current, head.submitted_at or _EPOCH, head.id, team))
                continue
            yield members.pop()
            if members:
                head = members[-1]
                heapq.heappush(heap, (team_share(team), head.submitted_at or _EPOCH, head.id, team))


def fifo_order(jobs: Sequence[Job], context: QueueContext, /) -> Iterator[Job]:
    """Class, then submit time, then id — no fair share (Kueue ``StrictFIFO`` ordering, without blocking)."""
    yield from sorted(jobs, key=lambda j: (-_RANK[j.spec.priority], j.submitted_at or _EPOCH, j.id))


def short_first_order(jobs: Sequence[Job], context: QueueContext, /) -> Iterator[Job]:
    """Class, then highest response ratio ``(wait + runtime) / runtime`` (module doc), then submit time."""
    now = context.now

    def key(job: Job) -> tuple[int, float, datetime, str]:
        runtime = context.expected_runtime(job)
        submitted = job.submitted_at or _EPOCH
        if not math.isfinite(runtime) or runtime <= 0:
            ratio = 0.0  # unknown runtime: after every job with one, oldest first
        else:
            ratio = (max(0.0, (now - submitted).total_seconds()) + runtime) / runtime
        return (-_RANK[job.spec.priority], -ratio, submitted, job.id)

    yield from sorted(jobs, key=key)


QUEUE_SORTS: dict[str, QueueSort] = {"fair": fair_order, "fifo": fifo_order, "short-first": short_first_order}
"""Queue-sort plugins by name (a profile's ``queue_sort``)."""
