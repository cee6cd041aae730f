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

from jupyter_sched.model import Job, Quota, QuotaSet
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.admit import admit_placed, placed_around
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


GIB = 1024
# teamc may use 1 GPU (guaranteed 1, no borrowing); teamb is guaranteed 1 and borrows the rest
RECLAIM_LIMITS = quotas(Quota(team="teamc", guaranteed=1, borrowing_limit=0), Quota(team="teamb", guaranteed=1))


def _packed_and_borrowed() -> list[Job]:
    """GPU 0: halves of teamc and teamb side by side (20 GiB each: 40 GiB left); GPUs 1-3: teamb's whole
    borrowers (started an hour ago: old enough to reclaim)."""
    return [running(make_job("c-half", milli=500, min_memory_mib=20 * GIB, team="teamc", user="carol"), "n1", [0],
                    milli=500, started=-60),
            running(make_job("b-half", milli=500, min_memory_mib=20 * GIB, team="teamb", user="bob"), "n1", [0],
                    milli=500, started=-60),
            *(running(make_job(f"b{i}", team="teamb", user="bob"), "n1", [i], started=-60) for i in (1, 2, 3))]


def test_red39_charge_a_share_is_not_given_a_reclaim_it_could_not_start_on() -> None:
    # teamc holds 0.5 (its half packed beside teamb's); a 0.1 share asking 70 GiB cannot pack on GPU 0, so it
    # needs a GPU of its own: counted whole, teamc would hold 1.5 of its 1. Checked at its fraction (0.6, within
    # the guarantee) the plan reclaimed one of teamb's borrowers, and the share could still not start there.
    tenth = make_job("c-tenth", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol", submitted=1)
    result = run_cycle(snapshot([make_node(gpus=4)], [*_packed_and_borrowed(), tenth], quota=RECLAIM_LIMITS))
    assert result.preemptions == (), result.preemptions
    assert result.admits == (), result.admits
    reason = next(p.reason for p in result.pending if p.job_id == "c-tenth")
    assert reason.code != "WaitingForPreemption", reason


def test_red39_charge_a_share_admitted_through_a_plan_borrows_the_gpu_it_opens() -> None:
    # teamc's tenth alone on GPU 0 holds teamc's guarantee of 1 whole; a second tenth asking 70 GiB opens GPU 1:
    # admitted through a plan (admit_placed: a plan's withdrawals and nominations), it borrows that whole GPU,
    # as try_flavor says it — admit_placed said 0.1 (the fraction above the guarantee)
    held = running(make_job("c0", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol"), "n1", [0], milli=100)
    new = make_job("c-new", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol", submitted=1)
    ctx = CycleContext(snapshot([make_node(gpus=2)], [held, new], quota=quotas(Quota(team="teamc", guaranteed=1))),
                       SchedulingProfile(gpu_sharing="team"))
    flavor = next(f for f in ctx.placer.flavors(new.spec.resources) if f.pools)
    placement = placed_around(ctx, new, new.spec.resources, flavor, None)
    assert placement is not None and placement.allocation.gpu_uuids == ("GPU-n1-1",), placement
    admit_placed(ctx, new, placement, flavor.model)
    assert [(a.job_id, a.borrowed) for a in ctx.admits] == [("c-new", 1.0)], ctx.admits
    assert "borrowing 1 GPU above teamc's guarantee" in ctx.audit[-1].message, ctx.audit[-1].message


def _spread_tenths(guaranteed: int) -> tuple[list[Job], QuotaSet]:
    """teamc's two 0.1 shares asking 70 GiB, each alone on its GPU (2 GPUs held whole), teama's whole GPUs on
    the other two (its guarantee), and a third such tenth of teamc queued."""
    tenths = [running(make_job(f"c{i}", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol"), "n1", [i],
                      milli=100) for i in range(2)]
    whole = [running(make_job(f"a{i}", team="teama", user="ann"), "n1", [i], started=-120) for i in (2, 3)]
    queued = make_job("c-new", milli=100, min_memory_mib=70 * GIB, team="teamc", user="carol", submitted=1)
    return [*tenths, *whole, queued], quotas(Quota(team="teamc", guaranteed=guaranteed), Quota(team="teama", guaranteed=2))


def test_red39_charge_the_reclaim_note_counts_a_share_and_its_team_as_the_charge_does() -> None:
    # teamc is guaranteed 2 and its tenths hold 2 GPUs whole: the new tenth would borrow (a GPU of its own),
    # so nothing is reclaimed. The note said "needs 0.1 with 0.2 already in use, above the guarantee" of 2
    # and "it can start when teama's jobs free 0.1 GPU": the fractions, where the check counts whole GPUs
    jobs, limits = _spread_tenths(2)
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=limits), SchedulingProfile(gpu_sharing="team"))
    assert result.preemptions == ()
    message = next(p.reason.message for p in result.pending if p.job_id == "c-new")
    assert "teamc already uses its 2 guaranteed GPUs (1.8 GPUs of it the unused rest of GPUs only its shares " \
           "hold), so this job (a GPU of its own for its 0.1 GPU share) may only borrow" in message, message
    assert "it can start when teama's jobs free 1 GPU (teama uses its whole guarantee of 2 GPUs) or teamc's own " \
           "running work frees 1 GPU" in message, message
    assert "0.2 already in use" not in message and "free 0.1 GPU" not in message, message


def test_red39_charge_a_lone_share_ending_gives_back_its_whole_gpu_in_the_must_release_count() -> None:
    # a whole-GPU job of teamc waits for capacity on the 4 GPUs: teamc's two tenths each alone on a GPU and teama's
    # two whole GPUs; each ending frees a whole GPU, so 2 of them must end — the tenths counted 0.1 each, the
    # count said 1 ("short by 0.2 GPU": 4 GPUs less the 2.2 they asked)
    jobs, limits = _spread_tenths(4)
    jobs[-1] = make_job("c-whole", gpus=2, team="teamc", user="carol", submitted=1)
    result = run_cycle(snapshot([make_node(gpus=4)], jobs, quota=limits), SchedulingProfile(gpu_sharing="team"))
    reason = next(p.reason for p in result.pending if p.job_id == "c-whole")
    waits = reason.details.get("eta_waits_on")
    assert waits and {"c0", "c1"} <= set(waits), reason.details
    assert reason.details.get("eta_must_release") == 2, reason.details


def test_red39_charge_fair_share_counts_the_gpus_a_teams_shares_hold_whole() -> None:
    # teama's three 0.1 shares (70 GiB) each hold a GPU of their own: 3 GPUs on a guarantee of 1, borrowing 2 as the
    # quota check counts it; teamb borrows 1 (2 whole GPUs). One GPU is left and each team queues a whole-GPU job,
    # teama's first: fair share gives it to the team borrowing less, teamb — it read teama's 0.3 (no borrowing)
    tenths = [running(make_job(f"a{i}", milli=100, min_memory_mib=70 * GIB, team="teama", user="ann"), "n1", [i],
                      milli=100) for i in range(3)]
    whole = [running(make_job(f"b{i}", team="teamb", user="bob"), "n1", [i]) for i in (3, 4)]
    queued = [make_job("a-next", team="teama", user="ann", submitted=1),
              make_job("b-next", team="teamb", user="bob", submitted=2)]
    limits = quotas(Quota(team="teama", guaranteed=1), Quota(team="teamb", guaranteed=1))
    ctx = CycleContext(snapshot([make_node(gpus=6)], [*tenths, *whole, *queued], quota=limits),
                       SchedulingProfile(gpu_sharing="team"))
    assert ctx.quota.team_share("teama") > ctx.quota.team_share("teamb") > 0
    result = run_on(ctx)
    assert [a.job_id for a in result.admits] == ["b-next"], (result.admits, result.pending)
