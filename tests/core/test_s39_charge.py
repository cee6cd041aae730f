"""The GPU-share quota charge kept incrementally by the quota ledger (session 39, s39-charge).

Red team 38 R3 made every quota check count what a team's shares hold away — a GPU only its shares occupy
counts whole — by a callable the cycle's context set on its quota ledger (``partial(held_away, ctx)``).
That made a loop, context → quota ledger → partial → context, so a cycle's context (its ledgers, every
placement and holding of its admissions) outlived the cycle until the cyclic collector found it: 125k more
objects for the collection the engine runs after each 5,000-node cycle (``cycle_bench``: ~+40 ms, the
"contextlib exit" of ``cyclic_gc_paused``). The ledger now keeps
:class:`~jupyter_sched.quota.held_whole.HeldAway`, which refers to the capacity ledger and the charges only.
"""

from __future__ import annotations

import gc
import weakref

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.cycle import run_on
from jupyter_sched.scheduling.preempt.candidates import held_away

LIMITS = quotas(Quota(team="teamc", guaranteed=1, borrowing_limit=1), Quota(team="teama", guaranteed=2))


def test_s39_charge_a_cycle_context_with_shares_is_freed_without_the_cyclic_collector() -> None:
    # teamc's tenths, one running and two queued, beside teama's whole GPUs: the quota ledger counts what
    # the shares hold away; once the cycle is done, nothing but the caller holds the context
    jobs = [running(make_job("c0", milli=100, team="teamc", user="carol"), "n1", [0], milli=100),
            make_job("c1", milli=100, min_memory_mib=70 * 1024, team="teamc", user="carol", submitted=1),
            make_job("a1", team="teama", user="ann", submitted=2)]
    ctx = CycleContext(snapshot([make_node(gpus=4)], jobs, quota=LIMITS), SchedulingProfile(gpu_sharing="team"))
    was = gc.isenabled()
    gc.disable()
    try:
        result = run_on(ctx)
        assert result.admits, result.pending
        assert held_away(ctx), "the world must hold shares away"
        gone = weakref.ref(ctx)
        del ctx
        assert gone() is None, "the cycle's context is kept alive by a reference loop"
    finally:
        if was:
            gc.enable()
