"""Who holds what now, per team: GPUs running against the team's guarantee and what is borrowed, and what
waits — from job dicts (:func:`~jupyter_sched.model.codec.job_to_dict`, the REST shape) and quota lines
(``GET quotas``' ``quotas``). One rule for ``jupyter-sched queue --summary`` (hubadmin23 A12) and the
team-labelled gauges of ``GET metrics`` (:mod:`jupyter_sched.extension.metrics`), so the two never
disagree.

Pure: no I/O, no clock (``now`` is given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ..quota.held_whole import team_milli_held

__all__ = ["HOLDING", "job_gpus", "team_rows"]

HOLDING = ("admitted", "running")
"""Job states that hold GPUs."""


def job_gpus(row: Mapping[str, Any]) -> float:
    """GPUs one queue row holds or asks for: a gang's workers times GPUs each (group by group), a
    fractional GPU as its share (``gpu_milli``/1000)."""
    res = row.get("resources") if isinstance(row.get("resources"), Mapping) else row
    assert isinstance(res, Mapping)
    groups = [g for g in res.get("groups") or () if isinstance(g, Mapping)]
    if groups:
        return float(sum(int(g.get("workers", 1) or 1) * float(g.get("gpus", 0) or 0) for g in groups))
    gpus = float(res.get("gpus", 0) or 0)
    milli = res.get("gpu_milli", 1000) or 1000
    share = milli / 1000 if gpus == 1 and milli < 1000 else 1.0
    return int(res.get("workers", 1) or 1) * gpus * share


def team_rows(queue: Sequence[Mapping[str, Any]], quotas: Mapping[str, Any], now: datetime) -> list[dict[str, Any]]:
    """One dict per team with work in ``queue`` or a team quota line: ``team``, ``running`` (GPUs),
    ``guaranteed`` (GPUs, None without a line), ``limit`` (GPUs above the guarantee; None: no line, or
    unlimited — ``unlimited`` True), ``borrowed`` (GPUs running over the guarantee), ``pending`` (jobs),
    ``pending_gpus``, ``oldest_wait_s`` (seconds, None when nothing waits); sorted by team.

    ``running`` is what the team's quota lines count (:func:`~jupyter_sched.quota.held_whole.team_milli_held`,
    the count admission and ``GET me`` use): a GPU only the team's shares hold counts whole, and
    ``shares_rest`` says how much of ``running`` is such GPUs' unused rest (newuser39 n7: RUNNING 1.7 and
    BORROWED 0.7 while admission counted 2 whole and made the team's next share wait at its limit of 2).
    A holding row without GPU ids (an older server's, another user's row redacted) counts its ask."""
    teams: dict[str, dict[str, Any]] = {}

    def team(name: str) -> dict[str, Any]:
        return teams.setdefault(name, {"team": name, "running": 0.0, "guaranteed": None, "limit": None,
                                       "unlimited": False, "borrowed": 0.0, "pending": 0, "pending_gpus": 0.0,
                                       "oldest_wait_s": None, "shares_rest": 0.0})

    for line in quotas.get("quotas") or ():
        if not isinstance(line, Mapping) or line.get("user"):
            continue
        entry = team(str(line.get("team")))
        entry["guaranteed"] = (entry["guaranteed"] or 0.0) + float(line.get("guaranteed") or 0)
        if line.get("borrowing_limit") is None:
            entry["unlimited"] = True
        else:
            entry["limit"] = (entry["limit"] or 0.0) + float(line["borrowing_limit"])
    held: list[tuple[str, str, int]] = []  # (team, GPU id, milli-GPUs) of every holding row with its GPUs' ids
    for row in queue:
        entry = team(str(row.get("team") or "-"))
        if row.get("state") in HOLDING:
            gpus = _held_gpus(row)
            if gpus is None:
                entry["running"] += job_gpus(row)
            else:
                held.extend((entry["team"], uuid, milli) for uuid, milli in gpus)
        elif row.get("state") == "pending":
            entry["pending"] += 1
            entry["pending_gpus"] += job_gpus(row)
            try:
                since = datetime.fromisoformat(str(row.get("submitted_at")).replace("Z", "+00:00"))
            except ValueError:
                continue
            waited = max(0.0, (now - since).total_seconds())
            entry["oldest_wait_s"] = max(entry["oldest_wait_s"] or 0.0, waited)
    for name in {owner for owner, _, _ in held}:
        entry = teams[name]
        asked = sum(milli for owner, _, milli in held if owner == name)
        charged = team_milli_held(held, name)
        entry["running"] += charged / 1000
        entry["shares_rest"] = (charged - asked) / 1000
    for entry in teams.values():
        entry["borrowed"] = max(0.0, entry["running"] - (entry["guaranteed"] or 0.0))
        if entry["unlimited"]:
            entry["limit"] = None
    return [teams[name] for name in sorted(teams)]


def _held_gpus(row: Mapping[str, Any]) -> list[tuple[str, int]] | None:
    """``(GPU id, milli-GPUs)`` per GPU a holding row's allocation names (every worker's), None without them."""
    alloc = row.get("allocation")
    if not isinstance(alloc, Mapping):
        return None
    milli = int(alloc.get("gpu_milli") or 1000)
    workers = [w for w in alloc.get("workers") or () if isinstance(w, Mapping)]
    uuids = [str(u) for w in workers for u in w.get("gpu_uuids") or ()] if workers else \
        [str(u) for u in alloc.get("gpu_uuids") or ()]
    if not uuids:
        return None if job_gpus(row) else []
    return [(u, milli) for u in uuids]
