"""red39 R5 (HIGH): the owed hold for a waiting ``--no-preempt`` guarantee kept what its job could not use.

:func:`jupyter_sched.scheduling.owed.owed_outcome` summed every GPU's free milli as "free GPUs": with five GPUs
half used by teamc's shares (2.5 GPUs of rests) and one GPU wholly free, teama's 2-GPU no-preempt job (within
its guarantee) was owed 2 of "3.5 free", so teamc's 1-GPU borrower took the last whole GPU while the job was told
"GPUs that free are kept for it" (variant 2: with no shares, unhealthy GPUs counted as free). What is kept is now
what the owed job could be placed on, GPU by GPU as the placer sees it. Pure core tests over :class:`Scenario`.
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import Scenario, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, Quota
from jupyter_sched.scheduling import SchedulingProfile, run_cycle

_SHARE_MIB = 70 * 1024  # mem_per_gpu 70GiB: two such shares never fit one 80 GiB GPU (red team 15 R7)


def _free_only(job: Job) -> Job:
    return replace(job, spec=replace(job.spec, no_preempt=True))


def _quota() -> tuple[Quota, ...]:
    return (Quota(team="teama", guaranteed=4, borrowing_limit=0), Quota(team="teamc", guaranteed=1, borrowing_limit=5))


def _owed_reason(sc: Scenario, job_id: str) -> None:
    said = sc.job(job_id).reason
    assert said is not None and said.details["preemption_rule"]["owed"] is True, said
    assert "GPUs that free are kept for it within team teama's guarantee" in said.message, said.message


def _shares_world(sharing: str = "any") -> Scenario:
    """8 GPUs: teama's a-train holds 2, teamc's five 0.5 shares hold half of 5 others each, 1 wholly free."""
    sc = Scenario([make_node("vm", gpus=8)], quota=quotas(*_quota()),
                  profile=SchedulingProfile(min_runtime_s=0, gpu_sharing=sharing))
    sc.at(0).submit(make_job("a-train", gpus=2, team="teama", user="ra", submitted=0)).cycle()
    for i in range(5):
        sc.at(1 + i).submit(make_job(f"c-share{i}", gpus=1, milli=500, min_memory_mib=_SHARE_MIB, team="teamc",
                                     user="rc", submitted=1 + i)).cycle()
    assert [sc.state(f"c-share{i}") for i in range(5)] == ["running"] * 5
    gpus = {j.allocation.gpu_uuids for j in sc.snap.jobs if j.allocation is not None and j.id.startswith("c-share")}
    assert len(gpus) == 5  # each on a GPU of its own: one whole GPU is left
    return sc


def test_red39_r5_owed_guarantee_not_lent_when_only_share_rests_stay_free() -> None:
    sc = _shares_world()
    sc.at(10).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=10))).cycle()
    assert sc.state("a-guar") == "pending"
    _owed_reason(sc, "a-guar")
    result = sc.at(11).submit(make_job("c-take", gpus=1, team="teamc", user="rc", submitted=11)).cycle()
    assert [a.job_id for a in result.admits] == [] and result.preemptions == ()
    assert sc.state("c-take") == "pending"  # before: it started on the last whole GPU
    held = sc.job("c-take").reason
    assert held is not None and held.code == "Priority", held
    assert "would borrow GPUs owed to team teama's guarantee: ra's job a-guar waits within it" in held.message
    # what frees piles up for it: one share ends, its GPU is wholly free, and a-guar starts on the two
    sc.finish("c-share0")
    result = sc.at(12).cycle()
    assert [a.job_id for a in result.admits] == ["a-guar"], result.admits
    assert sc.state("c-take") == "pending"


def test_red39_r5_owed_share_rest_still_goes_to_a_borrower_that_packs_beside_its_own_shares() -> None:
    """The reverse: a rest that the owed whole-GPU job could not use is not kept — teamc's 0.5 borrower packs
    beside its team's share (gpu_sharing "team"), taking nothing owed, while the wholly free GPU stays free."""
    sc = _shares_world("team")
    sc.at(10).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=10))).cycle()
    _owed_reason(sc, "a-guar")
    result = sc.at(11).submit(make_job("c-half", gpus=1, milli=500, team="teamc", user="rc", submitted=11)).cycle()
    assert [a.job_id for a in result.admits] == ["c-half"], [(p.job_id, p.reason) for p in result.pending]
    mine = sc.job("c-half").allocation
    assert mine is not None and mine.gpu_milli == 500
    assert any(j.allocation is not None and j.allocation.gpu_uuids == mine.gpu_uuids
               for j in sc.snap.jobs if j.id.startswith("c-share"))  # beside a share: the whole GPU stays free


def test_red39_r5_owed_share_is_not_kept_a_rest_its_team_may_not_share() -> None:
    """A share's rest is kept only for an owed share its team may put there: with gpu_sharing "team", teama's
    0.5 no-preempt share may not go beside teamc's 0.1 share, so that GPU's 0.9 rest is not owed to it and teamc's
    0.5 borrower packs there; the GPU that frees later is a-half's."""
    sc = Scenario([make_node("vm", gpus=2)], quota=quotas(Quota(team="teama", guaranteed=1, borrowing_limit=0),
                                                          Quota(team="teamc", guaranteed=0, borrowing_limit=2)),
                  profile=SchedulingProfile(min_runtime_s=0, gpu_sharing="team"))
    sc.at(0).submit(make_job("c-whole", gpus=1, team="teamc", user="rc", submitted=0),
                    make_job("c-tenth", gpus=1, milli=100, team="teamc", user="rc", submitted=0)).cycle()
    assert (sc.state("c-whole"), sc.state("c-tenth")) == ("running", "running")
    sc.at(1).submit(_free_only(make_job("a-half", gpus=1, milli=500, team="teama", user="ra", submitted=1))).cycle()
    assert sc.state("a-half") == "pending"  # it may not go beside teamc's share
    _owed_reason(sc, "a-half")
    result = sc.at(2).submit(make_job("c-half", gpus=1, milli=500, team="teamc", user="rc", submitted=2)).cycle()
    assert [a.job_id for a in result.admits] == ["c-half"], [(p.job_id, p.reason) for p in result.pending]
    # a whole GPU that frees is what a-half can use: it starts there, before teamc's next borrower (0.3) that packs
    # beside its team's shares
    sc.finish("c-whole")
    sc.at(3).submit(make_job("c-next", gpus=1, milli=300, team="teamc", user="rc", submitted=3))
    result = sc.cycle()
    assert [a.job_id for a in result.admits] == ["a-half", "c-next"], result.admits
    assert sc.job("a-half").allocation != sc.job("c-half").allocation


def test_red39_r5_borrower_on_a_rest_the_owed_job_cannot_use_is_not_held() -> None:
    """The reverse: a rest the owed whole-GPU job could not use is not kept. teamd's 0.5 borrower goes beside
    teamc's share and leaves the wholly free GPU as it was (before: "1.5 free - 0.5 < 2 owed" refused it)."""
    sc = Scenario([make_node("vm", gpus=4)], quota=quotas(Quota(team="teama", guaranteed=2, borrowing_limit=0),
                                                          Quota(team="teamc", guaranteed=1, borrowing_limit=3),
                                                          Quota(team="teamd", guaranteed=0, borrowing_limit=2)),
                  profile=SchedulingProfile(min_runtime_s=0))
    sc.at(0).submit(*[make_job(f"c-run{i}", gpus=1, team="teamc", user="rc", submitted=0) for i in range(2)],
                    make_job("c-share", gpus=1, milli=500, min_memory_mib=_SHARE_MIB, team="teamc", user="rc",
                             submitted=0)).cycle()
    sc.at(1).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=1))).cycle()
    _owed_reason(sc, "a-guar")
    result = sc.at(2).submit(make_job("d-half", gpus=1, milli=500, team="teamd", user="rd", submitted=2)).cycle()
    assert [a.job_id for a in result.admits] == ["d-half"], [(p.job_id, p.reason) for p in result.pending]
    d_half, c_share = sc.job("d-half").allocation, sc.job("c-share").allocation
    assert d_half is not None and c_share is not None and d_half.gpu_uuids == c_share.gpu_uuids  # beside it
    # and a whole-GPU borrower of teamd would take the GPU owed to a-guar: it waits
    result = sc.at(3).submit(make_job("d-whole", gpus=1, team="teamd", user="rd", submitted=3)).cycle()
    assert [a.job_id for a in result.admits] == [], result.admits
    held = sc.job("d-whole").reason
    assert held is not None and held.code == "Priority" and "owed to team teama's guarantee" in held.message, held


def test_red39_r5_owed_guarantee_not_lent_when_free_gpus_are_unhealthy() -> None:
    """Variant 2: no shares; 2 of the 3 free GPUs are unhealthy (RMA): the one healthy free GPU is owed to a-guar's
    guarantee, not lent to teamc's borrower."""
    sc = Scenario([make_node("vm", gpus=8, unhealthy=(6, 7))], quota=quotas(*_quota()),
                  profile=SchedulingProfile(min_runtime_s=0))
    sc.at(0).submit(make_job("a-train", gpus=2, team="teama", user="ra", submitted=0),
                    *[make_job(f"c-run{i}", gpus=1, team="teamc", user="rc", submitted=0) for i in range(3)]).cycle()
    assert sc.used_gpus() == 5
    sc.at(1).submit(_free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=1))).cycle()
    assert sc.state("a-guar") == "pending"
    _owed_reason(sc, "a-guar")
    result = sc.at(2).submit(make_job("c-take", gpus=1, team="teamc", user="rc", submitted=2)).cycle()
    assert [a.job_id for a in result.admits] == [], result.admits  # before: it started on the one healthy GPU
    held = sc.job("c-take").reason
    assert held is not None and held.code == "Priority" and "owed to team teama's guarantee" in held.message, held
    sc.finish("c-run0")
    result = sc.at(3).cycle()
    assert [a.job_id for a in result.admits] == ["a-guar"], result.admits


def test_red39_r5_share_wait_line_does_not_count_unhealthy_gpus_as_free() -> None:
    """The same kind in a pending line (``admit._share_frees_enough``): node a's unhealthy GPU is not a GPU its share's
    end would complete into two; node b has one free GPU beside a whole job. The 2-GPU job waits for the GPU held
    whole, not "a whole GPU is free only when they end" of the share."""
    nodes = [make_node("a", gpus=2, unhealthy=(1,)), make_node("b", gpus=2)]
    jobs = [running(make_job("half", milli=500, team="teamc", user="rc"), "a", [0], milli=500),
            running(make_job("whole", gpus=1, time_limit_s=1200, team="teamc", user="rc"), "b", [1]),
            make_job("waiter", gpus=2, time_limit_s=600, submitted=1)]
    result = run_cycle(snapshot(nodes, jobs), SchedulingProfile())
    reason = next(p.reason for p in result.pending if p.job_id == "waiter")
    assert reason.details["shares_decide"] is False, reason.message
    assert "a whole GPU is free only when they end" not in reason.message, reason.message


def test_red39_r5_owed_hold_judges_the_placement_admission_takes_around_a_reservation() -> None:
    """The hold looks at where admission would really put the borrower: a-guar holds the EASY reservation on node a
    (its GPUs free at c's ends); teamd's 0.5 share, kept off the reserved GPUs, would open node b's wholly free GPU
    — a GPU owed to a-guar — not the rest beside c's share the plain placer picks. It waits."""
    nodes = [make_node("a", gpus=2), make_node("b", gpus=1)]
    jobs = [running(make_job("c-run", gpus=1, team="teamc", user="rc", time_limit_s=3600), "a", [0]),
            running(make_job("c-share", milli=500, team="teamc", user="rc", time_limit_s=3600), "a", [1], milli=500),
            _free_only(make_job("a-guar", gpus=2, team="teama", user="ra", submitted=1, time_limit_s=3600)),
            make_job("d-share", milli=500, team="teamd", user="rd", submitted=2)]
    q = quotas(Quota(team="teama", guaranteed=2, borrowing_limit=0), Quota(team="teamc", guaranteed=1, borrowing_limit=3),
               Quota(team="teamd", guaranteed=0, borrowing_limit=1))
    result = run_cycle(snapshot(nodes, jobs, quota=q), SchedulingProfile(min_runtime_s=0))
    assert result.admits == (), result.admits  # judged on the plain placer's pick, it started on GPU-b-0
    held = next(p.reason for p in result.pending if p.job_id == "d-share")
    assert held.code == "Priority" and "owed to team teama's guarantee" in held.message, held.message
