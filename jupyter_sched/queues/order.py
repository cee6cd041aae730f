"""Queue ordering: class, then fair share between teams, then users, then submit time.

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
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone

from ..model import Job, PriorityClass

__all__ = ["QUEUE_SORTS", "QueueSort", "fair_order", "fifo_order"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_RANK = {p: p.rank for p in PriorityClass}


QueueSort = Callable[[Sequence[Job], Callable[[str], float], Mapping[str, float]], Iterator[Job]]
"""``(pending_jobs, team_share, user_usage) -> iterator of jobs`` — the queue-sort plugin shape."""


def _job_key(job: Job, user_usage: Mapping[str, float]) -> tuple[float, datetime, str]:
    return (user_usage.get(job.spec.user, 0.0), job.submitted_at or _EPOCH, job.id)


def fair_order(jobs: Sequence[Job], team_share: Callable[[str], float],
               user_usage: Mapping[str, float]) -> Iterator[Job]:
    """Yield ``jobs`` in scheduling order, re-reading ``team_share(team)`` as admissions happen.

    Args:
        jobs: pending jobs.
        team_share: current fair share of a team (lower goes first).
        user_usage: decayed GPU-seconds per user (lower goes first within a team).
    """
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


def fifo_order(jobs: Sequence[Job], team_share: Callable[[str], float],
               user_usage: Mapping[str, float]) -> Iterator[Job]:
    """Class, then submit time, then id — no fair share (Kueue ``StrictFIFO`` ordering, without blocking)."""
    yield from sorted(jobs, key=lambda j: (-_RANK[j.spec.priority], j.submitted_at or _EPOCH, j.id))


QUEUE_SORTS: dict[str, QueueSort] = {"fair": fair_order, "fifo": fifo_order}
"""Queue-sort plugins by name (a profile's ``queue_sort``)."""
