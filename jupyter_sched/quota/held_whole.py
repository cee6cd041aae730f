"""What a team holds as its quota lines count it, read from allocations (red team 15 R5, 38 R3).

The rule (DESIGN.md *Reclaim*; the scheduling cycle's
:func:`~jupyter_sched.scheduling.preempt.candidates.held_away`, which admission and reclaim both
read): a GPU that only one team's shares occupy counts as a whole GPU held by that team — it keeps
the rest from other teams' work — while shares packed on one GPU charge their fractions of it (4 x
0.25 = 1 GPU), and a GPU shared with another team's work charges each team its fractions. This
module says the same over plain ``(team, GPU, milli-GPUs)`` holdings, for the views that read job
rows rather than the cycle's cluster state (``GET me``'s ``team_in_use``).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..model import GPU_MILLI

__all__ = ["team_milli_held"]


def team_milli_held(holdings: Iterable[tuple[str, str, int]], team: str) -> int:
    """Milli-GPUs ``team`` holds among ``holdings`` (``(team, GPU uuid, milli-GPUs)`` per GPU of every
    job holding GPUs, any team's): a GPU only its shares occupy counts whole."""
    on: dict[str, list[tuple[str, int]]] = {}
    for owner, gpu, milli in holdings:
        on.setdefault(gpu, []).append((owner, milli))
    total = 0
    for holders in on.values():
        mine = sum(milli for owner, milli in holders if owner == team)
        if mine and mine < GPU_MILLI and all(owner == team for owner, _ in holders):
            total += GPU_MILLI  # its shares alone: the rest is kept from every other team
        else:
            total += mine
    return total
