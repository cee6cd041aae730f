"""Victim selection for reclaim (across teams) and priority preemption (within a team).

Rules (DESIGN.md "Reclaim" / "Preemption"; Kueue classical preemption, ``pkg/scheduler/preemption``):

* **Reclaim** — a job whose team stays within its guarantee after admission may evict work of
  other teams that runs on *borrowed* capacity (Kueue ``reclaimWithinCohort: Any``). A victim's
  eviction must never push its team below its own guarantee on any line (case 004's upstream
  fix direction; Volcano #4947), so a reclaim can never bounce back.
* **Priority** — inside a team, a higher class may evict jobs of a lower class listed in the
  profile's ``preemptible_classes`` (default ``low``).
* Candidate order: borrowers first, then the lowest class, then the youngest (least work lost);
  jobs younger than ``min_runtime_s`` go last, so they are chosen only when nothing else works.
* **Minimal set** — remove candidates in order until the job fits (quota and placement), then
  try to put each one back, last removed first skipped (Kueue ``minimalPreemptions``:
  remove-then-fill-back). If removing every candidate does not make the job fit, nothing is
  evicted: a preemption that cannot help is wasted work (case 001).
* **No loops** — a job never evicts the job that last evicted it (``preempted_by``), and the
  freed GPUs are nominated for the preemptor so the victim cannot retake them (case 004).

"Covered" jobs: inside each team, holders are ordered by class (high first) then admission time,
and the team's guarantee is handed out in that order; a job fully covered is *within guarantee*
and is never a reclaim victim — so a ``high`` job within its team's guarantee is never preempted.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..model import GPU_MILLI
from ..quota.ledger import QuotaLedger

__all__ = ["Candidate", "PreemptionPlan", "covered_jobs", "keeps_guarantee", "order_candidates", "plan_preemption"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A holder that could be evicted.

    Attributes:
        job_id / team / user: the holder.
        rank: class rank (high 2, normal 1, low 0).
        milli: milli-GPUs it holds (quota units).
        started: when it started (or was admitted); None = unknown (treated as old).
        kind: ``"reclaim"`` (borrowed work of another team) or ``"priority"`` (same team, lower class).
        protected: younger than the profile's minimum runtime.
    """

    job_id: str
    team: str
    user: str
    rank: int
    milli: int
    started: datetime | None
    kind: str
    protected: bool = False


@dataclass(frozen=True, slots=True)
class PreemptionPlan:
    """Outcome of a victim search.

    Attributes:
        victims: candidates to evict (minimal set), in eviction order; empty when refused.
        refused: one sentence saying why no preemption was issued (when ``victims`` is empty).
        details: numbers behind ``refused``.
    """

    victims: tuple[Candidate, ...] = ()
    refused: str = ""
    details: Mapping[str, object] = field(default_factory=dict)


def covered_jobs(holders: Iterable[tuple[str, str, int, datetime | None, int]],
                 guarantee_milli: Callable[[str], int]) -> set[str]:
    """Job ids fully inside their team's guarantee.

    Args:
        holders: ``(job_id, team, rank, admitted_at, milli)`` of jobs holding GPUs.
        guarantee_milli: team -> guaranteed milli-GPUs (the team's most generous line).

    Returns:
        Ids of jobs that the team's guarantee covers when handed out by class (high first),
        then admission time (older first).
    """
    by_team: dict[str, list[tuple[str, str, int, datetime | None, int]]] = {}
    for h in holders:
        by_team.setdefault(h[1], []).append(h)
    covered: set[str] = set()
    for team, members in by_team.items():
        left = guarantee_milli(team)
        members.sort(key=lambda h: (-h[2], h[3] or _EPOCH, h[0]))
        for job_id, _, _, _, milli in members:
            if milli <= left:
                covered.add(job_id)
                left -= milli
            else:
                left = 0
    return covered


def order_candidates(cands: Iterable[Candidate]) -> list[Candidate]:
    """Borrowers first, then lowest class, then youngest; min-runtime-protected jobs last."""
    return sorted(cands, key=lambda c: (c.protected, c.kind != "reclaim", c.rank,
                                        -(c.started or _EPOCH).timestamp(), c.job_id))


def keeps_guarantee(quota: QuotaLedger, victim_id: str) -> tuple[bool, str, float]:
    """Would evicting ``victim_id`` keep its team at or above every team-line guarantee?

    Returns:
        ``(ok, line_model, guaranteed_gpus)`` — the first violated line when not ok.
    """
    entry = quota.charges.get(victim_id)
    if entry is None:
        return True, "", 0.0
    keys, milli = entry
    for key in keys:
        line = quota.lines[key]
        if line.user is None and quota.usage.get(key, 0) - milli < line.guaranteed:
            return False, line.model, line.guaranteed / GPU_MILLI
    return True, "", 0.0


def plan_preemption(candidates: list[Candidate], fits: Callable[[], bool],
                    evict: Callable[[Candidate], None], restore: Callable[[Candidate], None],
                    allowed: Callable[[Candidate], tuple[bool, str]]) -> PreemptionPlan:
    """Remove-then-fill-back over ordered ``candidates`` (run inside a ledger trial).

    Args:
        candidates: ordered by :func:`order_candidates`.
        fits: does the preemptor fit now (quota and placement)?
        evict / restore: trial-evict a candidate / put it back on the ledger.
        allowed: may this candidate be evicted *now* (e.g. its team stays at its guarantee)?
            Returns ``(ok, why_not)``.

    Returns:
        The minimal victim set, or a refusal naming why (the ledger is left as the trial found it
        only by the caller's trial undo).
    """
    removed: list[Candidate] = []
    refusals: list[str] = []
    for cand in candidates:
        ok, why = allowed(cand)
        if not ok:
            refusals.append(why)
            continue
        evict(cand)
        removed.append(cand)
        if fits():
            break
    else:
        if refusals:
            return PreemptionPlan(refused="; ".join(dict.fromkeys(refusals)),
                                  details={"refused": list(dict.fromkeys(refusals))})
        if removed:
            return PreemptionPlan(refused=f"evicting all {len(removed)} preemptible jobs would still not make it fit",
                                  details={"candidates": [c.job_id for c in removed]})
        return PreemptionPlan(refused="no preemptible job", details={})
    kept = list(removed)
    for cand in reversed(removed[:-1]):
        restore(cand)
        if fits():
            kept.remove(cand)
        else:
            evict(cand)
    return PreemptionPlan(victims=tuple(kept))
