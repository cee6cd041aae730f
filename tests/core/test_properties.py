"""Property test (hypothesis): the cycle's invariants over random inventories, quotas and job streams.

Invariants checked after every cycle of a random timeline:
no GPU double-allocated; no team above guarantee + borrowing limit; reclaim takes only from teams
that borrow; priority preemption only evicts a lower, preemptible class of the same team (so a
``high`` job is only ever evicted as borrowed work); every pending job gets exactly one decision,
and every pending decision exactly one reason.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_sched.model import Job, Quota, QuotaSet
from jupyter_sched.placement import PlacementConfig
from jupyter_sched.scheduling import SchedulingProfile, apply_result, run_cycle

TEAMS = ("a", "b", "c")


@st.composite
def worlds(draw: st.DrawFn) -> tuple[list, QuotaSet, list[Job], list[int]]:
    n_nodes = draw(st.integers(1, 3))
    nodes = []
    for i in range(n_nodes):
        gpus = draw(st.integers(1, 8))
        nodes.append(make_node(f"n{i}", gpus=gpus, model=draw(st.sampled_from(["A100-80GB", "H100-80GB"])),
                               unhealthy=draw(st.sets(st.integers(0, gpus - 1), max_size=1)),
                               nvlink=[((k ^ 1),) if (k ^ 1) < gpus else () for k in range(gpus)]))
    total = sum(len(n.gpus) for n in nodes)
    lines = []
    left = total
    if draw(st.booleans()):
        for team in TEAMS:
            g = draw(st.integers(0, max(0, left)))
            left -= g
            lines.append(Quota(team=team, guaranteed=g, borrowing_limit=draw(st.one_of(st.none(), st.integers(0, 4)))))
    jobs = []
    for k in range(draw(st.integers(1, 14))):
        jobs.append(make_job(
            f"j{k}", gpus=draw(st.integers(0, 5)), team=draw(st.sampled_from(TEAMS)),
            user=draw(st.sampled_from(["u1", "u2"])), priority=draw(st.sampled_from(["high", "normal", "low"])),
            milli=draw(st.sampled_from([1000, 1000, 1000, 500])), workers=draw(st.sampled_from([1, 1, 1, 2])),
            time_limit_s=draw(st.sampled_from([None, 600.0, 3600.0])), submitted=k,
            checkpointable=draw(st.booleans())))
    jobs = [j if j.spec.resources.gpus == 1 or j.spec.resources.gpu_milli == 1000 else
            replace(j, spec=replace(j.spec, resources=replace(j.spec.resources, gpu_milli=1000))) for j in jobs]
    arrivals = [draw(st.integers(0, 3)) for _ in jobs]
    return nodes, QuotaSet(quotas=tuple(lines)), jobs, arrivals


def _team_usage(jobs: tuple[Job, ...]) -> dict[str, int]:
    usage: dict[str, int] = defaultdict(int)
    for j in jobs:
        if j.state.holds_gpus:
            usage[j.spec.team] += j.spec.resources.total_milli
    return usage


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(worlds(), st.sampled_from([SchedulingProfile(), SchedulingProfile(defragment=True, min_runtime_s=0),
                                   SchedulingProfile(placement=PlacementConfig(scores={"spread": 1.0}))]))
def test_invariants_hold_over_random_timelines(world: tuple[list, QuotaSet, list[Job], list[int]],
                                               profile: SchedulingProfile) -> None:
    nodes, quota, jobs, arrivals = world
    lines = {q.team: q for q in quota.quotas}
    snap = snapshot(nodes, quota=quota)
    for step in range(5):
        snap = replace(snap, now=T0 + timedelta(minutes=step),
                       jobs=(*snap.jobs, *(j for j, t in zip(jobs, arrivals, strict=True) if t == step)))
        if step == 3:  # some work finishes
            snap = replace(snap, jobs=tuple(j for j in snap.jobs if not (j.state.holds_gpus and j.id.endswith(("1", "4")))))
        before = _team_usage(snap.jobs)
        result = run_cycle(snap, profile)

        pending_ids = sorted(j.id for j in snap.jobs if j.state.value == "pending")
        decided = sorted([a.job_id for a in result.admits] + [p.job_id for p in result.pending]
                         + [r.job_id for r in result.rejects])
        assert decided == pending_ids  # exactly one decision per pending job
        for p in result.pending:
            assert p.reason.code and p.reason.message  # exactly one primary reason, rendered

        by_id = {j.id: j for j in snap.jobs}
        for a in result.admits:  # a reclaim sees the cycle's own admissions (the rule holds at decision time)
            before[by_id[a.job_id].spec.team] += by_id[a.job_id].spec.resources.total_milli
        for p in result.preemptions:
            victim, preemptor = by_id[p.job_id], by_id[p.for_job]
            assert victim.state.holds_gpus
            if p.kind == "reclaim":
                assert victim.spec.team != preemptor.spec.team
                guaranteed = lines[victim.spec.team].guaranteed * 1000 if victim.spec.team in lines else 0
                assert before[victim.spec.team] > guaranteed, "reclaimed from a team that was not borrowing"
            elif p.kind == "priority":
                assert victim.spec.team == preemptor.spec.team
                assert victim.spec.priority.rank < preemptor.spec.priority.rank and victim.spec.priority.value == "low"

        snap = apply_result(snap, result)
        gpu_load: dict[str, int] = defaultdict(int)
        for j in snap.jobs:
            if j.state.holds_gpus and j.allocation is not None:
                for uuid in j.allocation.all_gpu_uuids():
                    gpu_load[uuid] += j.allocation.gpu_milli
        assert all(load <= 1000 for load in gpu_load.values()), "GPU double-allocated"
        nominated: dict[str, str] = {}
        for job_id, alloc in result.nominations.items():
            for uuid in alloc.all_gpu_uuids():
                assert nominated.setdefault(uuid, job_id) == job_id, "GPU nominated twice"
        usage = _team_usage(snap.jobs)
        for team, line in lines.items():
            if line.borrowing_limit is not None:
                assert usage[team] <= (line.guaranteed + line.borrowing_limit) * 1000, f"{team} above its ceiling"
