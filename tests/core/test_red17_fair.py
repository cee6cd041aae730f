"""The no-quota fair order counts what work makes unusable and orders teams by their share after
the head job (red team 17, R1 and R10; issue 20).

R1: a 0.55-GPU job alone on a GPU leaves 0.45 that no pending whole-GPU (or 0.55) request can use,
so for fair share it holds the whole GPU — four of them held all 4 GPUs while counted as 2.2 and
won every tie. R10: a team at its equal share beat a team below it (the key was "above the share
before the job", 0 for both, and submit time broke the tie).
"""

from __future__ import annotations

from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.queues.order import holdings
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory


def frac(job_id: str, gpu: int | None = None, submitted: float = 0.0):  # type: ignore[no-untyped-def]
    job = make_job(job_id, user="red17b", team="teamb", milli=550, submitted=submitted)
    return job if gpu is None else running(job, "n1", [gpu], milli=550)


def whole(job_id: str, gpu: int | None = None, submitted: float = 0.0):  # type: ignore[no-untyped-def]
    job = make_job(job_id, user="red17a", team="teama", submitted=submitted)
    return job if gpu is None else running(job, "n1", [gpu])


def test_red17_r1_a_fraction_alone_on_a_gpu_no_pending_request_can_share_holds_the_whole_gpu() -> None:
    jobs = [frac(f"b-frac{i}", i) for i in range(4)] + [whole("a-next5", submitted=5)]
    held = holdings(jobs, 4)
    assert dict(held.by_user) == {"red17b": 4.0}
    assert dict(held.charged) == {f"b-frac{i}": 1.0 for i in range(4)}
    # a pending 0.4 fits in the 0.45 left: the GPUs are not blocked, each job holds what it asked
    held = holdings([*jobs[:4], make_job("small", user="red17a", team="teama", milli=400)], 4)
    assert held.by_user["red17b"] == 4 * 0.55
    # two users sharing a blocked GPU: each holds its part of the occupancy, scaled to the GPU
    pair = [running(make_job("x", user="u", team="t", milli=300), "n1", [0], milli=300),
            running(make_job("y", user="v", team="t", milli=300), "n1", [0], milli=300),
            make_job("w", user="v", team="t")]
    assert dict(holdings(pair, 4).by_user) == {"u": 0.5, "v": 0.5}


def test_red17_r1_the_freed_gpu_goes_to_the_user_whose_fractions_do_not_block_the_rest() -> None:
    # the 3rd of red17a's 4 GPUs freed: red17b's two 0.55 fractions hold GPUs 0 and 1 whole,
    # red17a holds GPU 3; GPU 2 is free. Before the fix red17b counted 1.1 (within the share of 2,
    # as red17a's 1) and its earlier-submitted fraction took GPU 2 too (then the 4th: all 4 GPUs).
    jobs = [frac("b-frac1", 0), frac("b-frac2", 1), whole("a-run4", 3),
            frac("b-frac3", submitted=1), frac("b-frac4", submitted=2),
            whole("a-next5", submitted=5), whole("a-next6", submitted=6)]
    snap = snapshot([make_node(gpus=4)], jobs,
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"red17a": 1e6, "red17b": 10.0}))
    result = run_cycle(snap, SchedulingProfile())
    assert [a.job_id for a in result.admits] == ["a-next5"]
    positions = {p.job_id: p.reason.position for p in result.pending}
    assert positions["b-frac3"] < positions["a-next6"]  # then red17b (2 + 0.55) before red17a (2 + 1)


def test_red17_r10_a_team_at_its_share_goes_after_a_team_below_it_even_through_a_fresh_teammate() -> None:
    # teamb holds 2 of 4 (its equal share), teama 1; red17c (teamb, fresh: no usage) submitted first
    jobs = [whole("a-hold", 0), running(make_job("b-run2", user="red17b", team="teamb"), "n1", [1]),
            running(make_job("b-run3", user="red17b", team="teamb"), "n1", [2]),
            make_job("c-q1", user="red17c", team="teamb", submitted=1),
            make_job("c-q2", user="red17c", team="teamb", submitted=2),
            whole("a-new", submitted=3)]
    snap = snapshot([make_node(gpus=4)], jobs,
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"red17a": 5000.0, "red17b": 9000.0}))
    result = run_cycle(snap, SchedulingProfile())
    assert [a.job_id for a in result.admits] == ["a-new"]
