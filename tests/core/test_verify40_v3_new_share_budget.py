"""verify40 V3: ``budget_admission = "safe"`` fits a NEW GPU share at what it will be charged where it lands.

Usage charges a share what it keeps from others (red40 R1, :func:`~jupyter_sched.model.kept_share.kept_charges`):
a 0.1 share alone on its GPU is charged the whole GPU. The safe gate fitted a new share at its asked fraction
(0.1 x 5 min = 0.008 GPU-hours against 0.01 left), so it started and spent 0.083 GPU-hours (8x what was left).
Now the gate asks where the placer puts it (:func:`~jupyter_sched.scheduling.share_charge.placed_charge`, the
same rule): alone, 1 GPU x its limit; packed beside its team's share, its split of that GPU.
"""

from __future__ import annotations

from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Budget, Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.scheduling.snapshot import UsageHistory

_SAFE = SchedulingProfile(budget_admission="safe")


def _cycle(*jobs, left: float = 0.01, gpus: int = 1):  # type: ignore[no-untyped-def]
    budget = Budget(team="teamc", gpu_hours=1.0)
    quota = quotas(Quota(team="teamc", guaranteed=8), budgets=[budget])
    usage = UsageHistory(gpu_hours_this_period={("teamc", None): 1.0 - left})
    return run_cycle(snapshot([make_node(gpus=gpus)], list(jobs), quota=quota, usage=usage), _SAFE)


def _share(job_id: str, milli: int = 100, time_limit_s: float = 300, submitted: float = 0.0):  # type: ignore[no-untyped-def]
    return make_job(job_id, team="teamc", user="r40c", milli=milli, time_limit_s=time_limit_s, submitted=submitted)


def test_verify40_v3_a_lone_new_share_is_fitted_at_the_whole_gpu_it_will_be_charged() -> None:
    """Failed before: admitted at once (0.1 x 5 min = 0.008 <= 0.01 left)."""
    result = _cycle(_share("s1"))
    assert not result.admits, result.admits
    reason = result.pending[0].reason
    assert reason.code == "BudgetExhausted", reason
    assert reason.message == (
        "teamc has 0.01 GPU-hours of its budget left this month (0.99 of 1); this job may use up to 0.08 GPU-hours "
        "(a GPU only its team's shares would hold counts whole: 1 GPU for its 5m time limit) "
        "(c.SchedApp.budget_admission is safe)"), reason.message
    assert reason.details["job_gpu_hours"] == round(300 / 3600, 4), reason.details
    assert reason.details["fits_time_limit_s"] == 36, reason.details  # 0.01 GPU-hours of a whole GPU
    # a limit that fits the whole GPU's charge starts it
    assert [a.job_id for a in _cycle(_share("s2", time_limit_s=30)).admits] == ["s2"]


def test_verify40_v3_a_share_packed_beside_its_teams_share_is_fitted_at_its_split() -> None:
    """Beside teamc's running 0.4 share the new 0.1 is charged 0.1/0.5 = 0.2 of the GPU: 0.2 x 6 min = 0.02."""
    on = running(_share("old", milli=400, time_limit_s=60), "n1", [0], started=-1, milli=400)  # its hold: spent
    result = _cycle(on, _share("s1", time_limit_s=360), left=0.03)
    assert [a.job_id for a in result.admits] == ["s1"], result.pending  # 0.02 <= 0.03 (whole: 0.1 would not fit)
    result = _cycle(on, _share("s1", time_limit_s=360), left=0.015)
    reason = result.pending[0].reason
    assert "this job may use up to 0.02 GPU-hours (a GPU only its team's shares would hold counts whole: " \
           "0.2 GPU for its 6m time limit)" in reason.message, reason.message


def test_verify40_v3_a_cycles_earlier_lone_share_holds_its_whole_gpu_for_the_next() -> None:
    """Two new shares, two GPUs, 0.2 GPU-hours left: the first opens a GPU (1 x 6 min = 0.1), so the second,
    which would open the other, pends on the first's hold (at its fraction the first held 0.01 and both ran)."""
    result = _cycle(_share("s1", milli=500, time_limit_s=360), _share("s2", milli=600, time_limit_s=360,
                                                                         submitted=1), left=0.15, gpus=2)
    assert [a.job_id for a in result.admits] == ["s1"], result.pending
    reason = result.pending[0].reason
    assert reason.code == "BudgetExhausted" and "0.1 of them held by running jobs' limits" in reason.message, \
        reason.message
