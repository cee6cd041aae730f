"""Per-team figures of a simulation: how long each team's work waited and the GPU-hours it held.

The cluster-wide summary (mean wait, makespan) cannot compare two quota lines: a line that helps
one team makes another wait (hubadmin26 B7). :func:`team_figures` splits a run by team;
:func:`team_lines` says it, one line per team, under the summary of ``jupyter-sched simulate``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import pandas as pd

from ..accounting import UsageInterval

__all__ = ["TEAM_COLUMNS", "team_figures", "team_lines"]

TEAM_COLUMNS = ("team", "jobs", "started", "waited", "never_started", "mean_wait_s", "max_wait_s", "gpu_h")
"""Columns of :func:`team_figures` (``teams.csv`` of ``simulate --out``)."""


def team_figures(jobs: pd.DataFrame, intervals: Iterable[UsageInterval], *, start: datetime,
                 end_s: float) -> pd.DataFrame:
    """One row per team (sorted by name) of a run's per-job records.

    Args:
        jobs: the run's ``SimResult.jobs`` (columns ``team``, ``submit_s``, ``wait_s``).
        intervals: its accounting rows (one per GPU held per attempt; ``share`` GPUs of it).
        start: the simulation start (intervals are datetimes, jobs seconds after it).
        end_s: when the run ended (s after start): open intervals and never-started jobs count to it.

    Returns:
        :data:`TEAM_COLUMNS`: ``jobs``; ``started`` (ran at least once); ``waited`` (of those, waited
        more than 0 s in the queue); ``never_started`` (still waiting at the end, or refused);
        ``mean_wait_s`` / ``max_wait_s`` over every job — every wait in the queue, after a preemption
        too; one never started waited until the end; ``gpu_h`` GPU-hours held (shares counted).
    """
    held: dict[str, float] = {}
    for row in intervals:
        until = end_s if row.ended_at is None else (row.ended_at - start).total_seconds()
        held[row.team] = held.get(row.team, 0.0) + row.share * max(0.0, until - (row.started_at - start).total_seconds())
    rows = []
    if len(jobs):
        for team, group in jobs.groupby("team", sort=True):
            started = group["wait_s"].notna()
            waits = group["wait_s"].where(started, end_s - group["submit_s"]).astype(float).clip(lower=0.0)
            rows.append({"team": str(team), "jobs": len(group), "started": int(started.sum()),
                         "waited": int((group.loc[started, "wait_s"] > 0).sum()),
                         "never_started": int((~started).sum()), "mean_wait_s": float(waits.mean()),
                         "max_wait_s": float(waits.max()), "gpu_h": held.get(str(team), 0.0) / 3600.0})
    return pd.DataFrame(rows, columns=list(TEAM_COLUMNS))


def team_lines(teams: pd.DataFrame) -> list[str]:
    """``teams`` in words, one line per team::

        team cv: 12 jobs, 7 waited · mean wait 14m over all 12, longest 1h02m · 40.5 GPU-hours
        team nlp: 3 jobs, 0 waited, 1 never started (counted as waiting to the end) · mean wait 2h over all 3, longest 4h · 6.0 GPU-hours

    The mean is over every job of the team, those that did not wait counted as 0s (newuser38 n19: "1 waited ·
    mean wait 47m34s" read as the one waiter's mean, which was 5h33m).
    """
    from ..model.units import format_duration

    out = []
    for row in teams.itertuples(index=False):
        never = f", {row.never_started} never started (counted as waiting to the end)" if row.never_started else ""
        out.append(f"team {row.team}: {row.jobs} job{'' if row.jobs == 1 else 's'}, {row.waited} waited{never} · "
                   f"mean wait {format_duration(row.mean_wait_s)}{' over all ' + str(row.jobs) if row.jobs > 1 else ''}, "
                   f"longest {format_duration(row.max_wait_s)} · "
                   f"{row.gpu_h:.1f} GPU-hours")
    return out
