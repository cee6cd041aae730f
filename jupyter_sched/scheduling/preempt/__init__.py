"""Phase 3d of the cycle: preemption and reclaim in one plan, and waiting on GPUs being freed.

The cycle's side of preemption: it gathers candidates from the cycle state, searches the minimal
victim set on the cycle's ledger, and issues the decisions. Who may evict whom, what a victim
costs, the minimal-set search and reclaim's rules are pure and live in
:mod:`jupyter_sched.preemption` (:mod:`~jupyter_sched.preemption.policy`,
:mod:`~jupyter_sched.preemption.candidates`, :mod:`~jupyter_sched.preemption.victims`,
:mod:`~jupyter_sched.preemption.reclaim_rules`).

* :mod:`.phase` — :func:`preempt`, the phase in order (candidates → wait → search → higher
  class first → issue, or a refusal);
* :mod:`.candidates` — own-team, reclaim, borrow-within-cohort and nomination candidates;
* :mod:`.search` — the victim search inside an undone trial;
* :mod:`.issue` — evictions, withdrawals, dropped nominations, the job's nomination and reason;
* :mod:`.waiting` — :func:`wait_on_nominated` and spare GPUs: wait for stopping victims instead of
  picking new ones (case 032);
* :mod:`.refusals` — the reason when nothing is evicted.
"""

from .phase import preempt
from .waiting import wait_on_nominated

__all__ = ["preempt", "wait_on_nominated"]
