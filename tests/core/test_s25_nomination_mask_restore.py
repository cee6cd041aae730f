"""Session 25: a cycle crashed with ``ValueError: GPU GPU-n0-3 has 0 milli-GPUs free, 250 asked``.

Found as a counterexample of tests/core/test_cycle_memos.py (random draws, so CI met it only sometimes).
A victim search trial-evicts candidates and puts them back in any order. A nomination's mask was put
back by masking the nominated GPU's free rest *at that moment*: p0's mask held 650 milli of GPU 3 when
taken out, but by its restore a 250-milli share admitted this cycle (p8) had been withdrawn too, so the
mask took 900 — and p8's own restore then found no room. Now the mask comes back exactly as it was.

One node of 4 A100s; team ``a`` guaranteed 3, ``b`` and ``c`` nothing; shares on GPUs 1 and 3.
"""

from __future__ import annotations

from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.scheduling import SchedulingProfile, Snapshot, run_cycle


def _world() -> Snapshot:
    jobs = [running(make_job("s-n0-1-0", milli=100, team="a", user="u1"), "n0", [1], milli=100, started=-1),
            running(make_job("w-n0-2", team="a", user="u1", priority="low"), "n0", [2], started=-1),
            running(make_job("s-n0-3-0", milli=500, team="b", user="u1", priority="low"), "n0", [3], milli=500,
                    started=-1),
            running(make_job("s-n0-3-1", milli=100, team="a", user="u1"), "n0", [3], milli=100, started=-1)]
    pending = [("p0", "b", "high", 500), ("p1", "a", "high", 1000), ("p2", "a", "high", 500),
               ("p3", "a", "normal", 1000), ("p4", "a", "normal", 1000), ("p5", "a", "normal", 500),
               ("p6", "a", "normal", 1000), ("p7", "a", "normal", 500), ("p8", "c", "high", 250)]
    jobs += [make_job(j, milli=milli, team=team, user="u1", priority=priority, submitted=k)
             for k, (j, team, priority, milli) in enumerate(pending)]
    quota = QuotaSet(quotas=(Quota(team="a", guaranteed=3), Quota(team="b", guaranteed=0), Quota(team="c", guaranteed=0)))
    return snapshot([make_node("n0", gpus=4)], jobs, quota=quota, now=T0 + timedelta(minutes=1))


def test_s25_a_nominations_mask_is_put_back_as_it_was_and_the_cycle_does_not_crash() -> None:
    snap = _world()
    result = run_cycle(snap, SchedulingProfile())  # raised ValueError before
    assert result.admits or result.preemptions, "it decided something"
    used: dict[str, int] = {}
    for admit in result.admits:
        for uuid in admit.allocation.all_gpu_uuids():
            used[uuid] = used.get(uuid, 0) + admit.allocation.gpu_milli
    for job in snap.jobs:
        if job.allocation is not None and job.id not in {p.job_id for p in result.preemptions}:
            for uuid in job.allocation.all_gpu_uuids():
                used[uuid] = used.get(uuid, 0) + job.allocation.gpu_milli
    assert all(milli <= 1000 for milli in used.values()), used  # nothing admitted beyond a GPU
