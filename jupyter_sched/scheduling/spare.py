"""Spare GPUs: freed by victims beyond what their preemptor needs, counted before any new eviction.

A victim set is chosen per pending job, and a victim often frees more GPUs than its preemptor
needs (a 3-GPU gang evicted for a 1-GPU job). Those *spare* GPUs are still held by the victim
until it stops (its grace period), so:

* **nothing is admitted onto them in the cycle that evicted it** — they are masked
  (:data:`STOPPING_PREFIX`) for the rest of the cycle, as the victim's own holding masks them
  in later cycles (issue 16 point 2; case 032). Before, a job visited later in the same cycle
  was admitted onto them — often a lower-class job of the victim's own team, which the victim,
  requeued ahead of it, then evicted from the very same GPUs (issue 16 property counterexamples
  2 and 4, hypothesis seeds 7 and 19: "no job is evicted twice for the same GPUs");
* **a later preemptor counts them before evicting anyone** — :func:`open_spare` frees them in
  the victim search's trial, together with the GPUs of jobs already stopping (an earlier
  preemption, a cancel, a time limit) that are nominated to nobody; a job that fits on them
  alone takes them over (nominated to it) and waits, with no new victim
  (:func:`jupyter_sched.scheduling.preempt.preempt`).

Masks live only in one cycle's ledger; the next cycle sees the victim itself holding them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import Job
from ..placement.state import Holding
from .context import CycleContext

__all__ = ["STOPPING_PREFIX", "claim", "hold_spare", "open_spare"]

STOPPING_PREFIX = "\0stopping:"
"""Ledger holder key prefix for GPUs still held by a victim evicted this cycle, nominated to nobody."""


def hold_spare(ctx: CycleContext, victims: Iterable[tuple[str, Holding]]) -> None:
    """Mask what is free of ``victims``' GPUs (call after evicting them and claiming their
    preemptor's GPUs): nothing else is admitted onto them while the victims stop."""
    st, owner = ctx.state, ctx.book.owner
    for victim, holding in victims:
        free = tuple((g, min(m, st.free_milli[g])) for g, m in holding.gpus
                     if g not in owner and st.free_milli[g] > 0)
        if free:
            st.take(STOPPING_PREFIX + victim, Holding(gpus=free, node=st.gpu_node[free[0][0]]))


def open_spare(ctx: CycleContext) -> list[str]:
    """Free, on the current trial, every spare GPU: this cycle's victims' masks and the whole
    holdings of jobs already stopping whose GPUs are nominated to nobody. Returns those jobs."""
    st, owner = ctx.state, ctx.book.owner
    opened = [k[len(STOPPING_PREFIX):] for k in st.holdings if k.startswith(STOPPING_PREFIX)]
    for victim in opened:
        st.release(STOPPING_PREFIX + victim)
    for h in sorted(ctx.in_flight):
        holding = st.holdings.get(h)
        if holding is not None and holding.gpus and not any(g in owner for g, _ in holding.gpus):
            ctx.ledger.evict(h)
            opened.append(h)
    return opened


def claim(ctx: CycleContext, job: Job, gpus: Sequence[int]) -> None:
    """Nominate ``gpus`` to ``job`` (outside any trial), taking them out of the spare masks first."""
    st = ctx.state
    wanted = set(gpus)
    for key in [k for k, hold in st.holdings.items()
                if k.startswith(STOPPING_PREFIX) and any(g in wanted for g, _ in hold.gpus)]:
        holding = st.release(key)
        assert holding is not None
        left = tuple((g, m) for g, m in holding.gpus if g not in wanted)
        if left:
            st.take(key, holding._replace(gpus=left, node=st.gpu_node[left[0][0]]))
    ctx.book.claim(job, gpus)
