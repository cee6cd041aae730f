"""A share is charged what it keeps from other teams (red team 38 R3), over built snapshots.

0.1-GPU shares asking 70 GiB each of 80 GiB GPUs cannot sit beside each other: each took a GPU of its
own (gpu_sharing "team" keeps other teams off it) while admission charged 0.1 against the team's
borrowing limit — three GPUs held on a limit of two, charged 0.3. Admission now counts what reclaim
counts (:func:`~jupyter_sched.scheduling.preempt.candidates.held_away`): a GPU only one team's shares
occupy is a whole GPU of that team, so a share opening a GPU of its own is charged the whole GPU, and
shares packed on one GPU still charge their fractions of it.
"""

from __future__ import annotations

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, Quota
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.preempt.candidates import held_away, team_borrowing

SHARED = SchedulingProfile(gpu_sharing="team")
GIB = 1024
# teamc: guaranteed 1, may borrow 1 (at most 2 GPUs); teama guaranteed 2 (its whole GPUs below)
LIMITS = quotas(Quota(team="teamc", guaranteed=1, borrowing_limit=1),
                Quota(team="teama", guaranteed=2, borrowing_limit=None))


def _frac(job_id: str, submitted: float, *, memory_gib: int = 70, milli: int = 100) -> Job:
    return make_job(job_id, milli=milli, min_memory_mib=memory_gib * GIB, team="teamc", user="carol",
                    submitted=submitted)


def _busy() -> list[Job]:
    """teama's whole GPUs on GPUs 0-4 of 8: 3 GPUs free, as in red team 38's run."""
    return [running(make_job(f"a{i}", team="teama", user="ann"), "n1", [i]) for i in range(5)]


def test_red38_r3_shares_spread_by_memory_count_whole_against_limit() -> None:
    fracs = [_frac(f"frac{i}", 1 + i) for i in range(3)]
    result = run_cycle(snapshot([make_node(gpus=8)], [*_busy(), *fracs], quota=LIMITS), SHARED)
    admitted = sorted(a.job_id for a in result.admits)
    assert admitted == ["frac0", "frac1"], (admitted, result.pending)
    gpus = {a.allocation.gpu_uuids[0] for a in result.admits}
    assert len(gpus) == 2  # each on a GPU of its own: its 70 GiB do not fit beside the other
    reason = next(p.reason for p in result.pending if p.job_id == "frac2")
    assert reason.code == "BorrowingLimitReached", reason
    assert reason.details["rule"] == "team borrowing limit"
    assert reason.details["used"] == 2 and reason.details["quota"] == 2, reason.details
    assert reason.details["requested"] == 1 and reason.details["share"] == 0.1, reason.details
    assert reason.details["held_whole"] == 1.8, reason.details
    assert "teamc would use 3 GPUs, above its limit of 2 GPUs (guaranteed 1 + borrowing limit 1)" in reason.message
    assert "a GPU only teamc's shares hold counts whole (this 0.1 GPU share would take a GPU of its own" \
        in reason.message, reason.message


def test_red38_r3_running_spread_shares_keep_a_whole_gpu_job_of_their_team_out() -> None:
    # two shares already hold two GPUs (the team's limit): a whole-GPU job of the team waits too
    held = [running(_frac(f"frac{i}", 0), "n1", [5 + i], milli=100) for i in range(2)]
    whole = make_job("c-whole", team="teamc", user="carol", submitted=1)
    result = run_cycle(snapshot([make_node(gpus=8)], [*_busy(), *held, whole], quota=LIMITS), SHARED)
    assert result.admits == () or all(a.job_id != "c-whole" for a in result.admits), result.admits
    reason = next(p.reason for p in result.pending if p.job_id == "c-whole")
    assert reason.code == "BorrowingLimitReached" and reason.details["used"] == 2, reason


def test_red38_r3_packed_shares_charge_their_fractions_of_one_gpu() -> None:
    # limit 1 GPU (guaranteed 1, no borrowing): 4 x 0.25 with small memory pack on one GPU = 1 GPU;
    # a fifth share would need a second GPU and waits
    one = quotas(Quota(team="teamc", guaranteed=1, borrowing_limit=0))
    quarters = [_frac(f"q{i}", 1 + i, memory_gib=10, milli=250) for i in range(5)]
    result = run_cycle(snapshot([make_node(gpus=4)], quarters, quota=one), SHARED)
    admitted = sorted(a.job_id for a in result.admits)
    assert admitted == ["q0", "q1", "q2", "q3"], (admitted, result.pending)
    assert len({a.allocation.gpu_uuids[0] for a in result.admits}) == 1
    reason = next(p.reason for p in result.pending if p.job_id == "q4")
    assert reason.code == "ExceedsQuota" and reason.details["used"] == 1, reason


def test_red38_r3_a_share_packs_beside_its_team_at_the_limit() -> None:
    # teamc at its limit of 2 GPUs with two 0.5 shares spread one per GPU: a small share still packs
    # beside one of them (it adds nothing to what the team holds), a 75 GiB one would open a third GPU
    held = [running(_frac(f"h{i}", 0, memory_gib=10, milli=500), "n1", [5 + i], milli=500) for i in range(2)]
    small = _frac("small", 1, memory_gib=10, milli=250)
    big = _frac("big", 2, memory_gib=75)  # 75 GiB do not fit beside 10
    result = run_cycle(snapshot([make_node(gpus=8)], [*_busy(), *held, small, big], quota=LIMITS), SHARED)
    placed = {a.job_id: a.allocation.gpu_uuids[0] for a in result.admits}
    assert placed.get("small") in ("GPU-n1-5", "GPU-n1-6"), (placed, result.pending)
    assert "big" not in placed
    assert next(p.reason for p in result.pending if p.job_id == "big").code == "BorrowingLimitReached"


def test_red38_r3_reclaim_and_admission_count_the_same_use() -> None:
    # the spread shares' team line: admission's quota check counts what reclaim's team_borrowing counts
    held = [running(_frac(f"frac{i}", 0), "n1", [5 + i], milli=100) for i in range(3)]
    ctx = CycleContext(snapshot([make_node(gpus=8)], [*_busy(), *held], quota=LIMITS), SHARED)
    key = ("teamc", None, "*")
    assert key in ctx.quota.lines, list(ctx.quota.lines)
    assert held_away(ctx)[key] == 2700
    assert ctx.quota.used(key) == 3000  # 0.3 asked + 2.7 held away: three GPUs
    assert team_borrowing(ctx, key)  # reclaim: above its guarantee of 1
    check = ctx.quota.check("teamc", "carol", "A100-80GB", 1000)
    assert not check.ok and check.details["used"] == 3, check  # admission: at (over) its limit of 2
