"""The per-user cap on running CPU-only (0-GPU) jobs (red-team 15 R2, new user 15 N9).

0-GPU work is charged to no quota: without a cap one hub user started ~1,000 processes on the host.
``SchedulingProfile.max_running_cpu_jobs_per_user`` pends (never refuses) a user's 0-GPU jobs beyond
it, code ``CpuJobLimit``, naming the rule and the numbers; GPU jobs and other users are not held.
"""

from __future__ import annotations

import pytest
from core_builders import Scenario, make_job, make_node, running, snapshot

from jupyter_sched.errors import ValidationError
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.live import LiveCycle
from jupyter_sched.wording.reasons import render_reason

CAP = SchedulingProfile(max_running_cpu_jobs_per_user=3)


def _cpu(job_id: str, user: str = "nu15b", submitted: float = 0.0):  # type: ignore[no-untyped-def]
    return make_job(job_id, gpus=0, milli=0, user=user, submitted=submitted)


def test_cpu_jobs_beyond_the_cap_pend_naming_the_rule_and_numbers() -> None:
    jobs = [_cpu(f"c{i}", submitted=i) for i in range(5)] + [make_job("g", gpus=1, user="nu15b", submitted=9),
                                                             _cpu("other", user="nu15a", submitted=10)]
    result = run_cycle(snapshot([make_node(gpus=1)], jobs), CAP)
    admitted = sorted(a.job_id for a in result.admits)
    assert admitted == ["c0", "c1", "c2", "g", "other"]  # a GPU job and another user's are not held
    pends = {p.job_id: p.reason for p in result.pending}
    assert set(pends) == {"c3", "c4"}
    reason = pends["c3"]
    assert reason.code == "CpuJobLimit"
    assert reason.message == ("nu15b runs 3 CPU-only jobs; at most 3 per user "
                              "(c.SchedApp.max_running_cpu_jobs_per_user)")
    assert reason.details["running"] == 3 and reason.details["limit"] == 3
    text = render_reason(reason_to_dict(reason))
    assert text.line.endswith("nu15b runs 3 CPU-only jobs; at most 3 per user "
                              "(c.SchedApp.max_running_cpu_jobs_per_user) · starts when one of them ends"), text.line
    assert text.unblock == ""


def test_running_cpu_jobs_count_and_one_ending_starts_the_next() -> None:
    sc = Scenario([make_node(gpus=1)], profile=CAP)
    sc.submit(*(running(_cpu(f"r{i}"), "n1", []) for i in range(3)), _cpu("new", submitted=5))
    first = sc.cycle()
    assert not first.admits and [p.reason.code for p in first.pending] == ["CpuJobLimit"]
    assert sc.state("new") == "pending"
    sc.at(1).finish("r0")
    second = sc.cycle()
    assert [a.job_id for a in second.admits] == ["new"]


def test_no_cap_by_default_and_zero_means_none() -> None:
    jobs = [_cpu(f"c{i}", submitted=i) for i in range(20)]
    for profile in (None, SchedulingProfile(max_running_cpu_jobs_per_user=0)):
        assert len(run_cycle(snapshot([make_node(gpus=1)], jobs), profile).admits) == 20


def test_a_live_decision_counts_the_cycles_admissions() -> None:
    live = LiveCycle(snapshot([make_node(gpus=1)], [_cpu("c0"), _cpu("c1")]), CAP)
    assert len(live.result.admits) == 2
    assert [a.job_id for a in live.decide(_cpu("c2", submitted=1), live.snapshot.now).admits] == ["c2"]  # type: ignore[union-attr]
    over = live.decide(_cpu("c3", submitted=2), live.snapshot.now)
    assert over is not None and [p.reason.code for p in over.pending] == ["CpuJobLimit"]


@pytest.mark.parametrize("bad", [-1, 1.5, True, "8"])
def test_the_cap_is_validated(bad: object) -> None:
    with pytest.raises(ValidationError) as err:
        SchedulingProfile(max_running_cpu_jobs_per_user=bad)  # type: ignore[arg-type]
    assert err.value.field == "max_running_cpu_jobs_per_user"
