"""Red team 40 R1: a GPU share is charged what it keeps from others — the rule (pure).

A GPU only one team's shares hold is held whole by that team (admission, quota, reclaim: red38 R3); accounting
charges those shares the whole GPU between them, split by their fractions, never less than a share's own fraction;
a GPU several teams share charges each its fraction. ``kept_charges`` is that rule, in the core
(:mod:`jupyter_sched.model.kept_share`, exported by :mod:`jupyter_sched.scheduling.share_charge`).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from jupyter_sched.model.kept_share import kept_charges
from jupyter_sched.scheduling import share_charge


def test_red40_r1_a_share_alone_on_a_gpu_is_charged_the_whole_gpu() -> None:
    assert kept_charges([("r40c", 0.1)]) == [1.0]


def test_red40_r1_four_quarter_shares_of_one_team_are_charged_a_quarter_each() -> None:
    assert kept_charges([("t", 0.25)] * 4) == [0.25] * 4


def test_red40_r1_a_half_and_a_quarter_of_one_team_split_the_gpu_by_their_fractions() -> None:
    half, quarter = kept_charges([("t", 0.5), ("t", 0.25)])
    assert half == pytest.approx(2 / 3) and quarter == pytest.approx(1 / 3)
    assert half + quarter == pytest.approx(1.0)


def test_red40_r1_a_gpu_shared_across_teams_charges_each_its_fraction() -> None:
    assert kept_charges([("a", 0.5), ("b", 0.25)]) == [0.5, 0.25]
    assert kept_charges([("a", 0.25), ("a", 0.25), ("b", 0.25)]) == [0.25, 0.25, 0.25]


def test_red40_r1_never_less_than_its_fraction_and_never_more_than_the_gpu() -> None:
    assert kept_charges([("t", 1.0)]) == [1.0]  # a whole-GPU job
    assert kept_charges([("t", 0.7), ("t", 0.6)]) == [0.7, 0.6]  # an over-full record: each what it holds
    assert kept_charges([]) == []
    for holders in ([("t", 0.1)], [("t", 0.3), ("t", 0.3)], [("t", 0.5), ("u", 0.1)], [("t", 0.2)] * 5):
        charges = kept_charges(holders)
        assert all(c >= f for (_, f), c in zip(holders, charges, strict=True)), (holders, charges)
        assert sum(charges) <= 1 + 1e-9, (holders, charges)


def test_red40_r1_the_scheduling_core_exports_the_one_rule() -> None:
    assert share_charge.kept_charges is kept_charges  # one rule, not a copy


def test_red40_r1_safe_budget_holds_count_a_running_share_at_its_charge() -> None:
    """``budget_admission = "safe"`` bounds what running work may still spend: a 0.1 share alone on its GPU for
    its last hour spends a whole GPU-hour (it held 0.1: a safe budget let it overrun by 0.9 GPU-hours)."""
    from jupyter_sched.model import Allocation, JobState
    from jupyter_sched.scheduling.budget_fit import running_holds
    from tests.runtime.builders import T0, make_job

    def share(job_id: str, team: str, gpu: str, fraction: float) -> object:
        alloc = Allocation(node="vm", gpu_uuids=(gpu,), gpu_milli=round(fraction * 1000))
        job = make_job(job_id, user=f"u-{team}", state=JobState.RUNNING, allocation=alloc, team=team,
                       time_limit_s=3600)
        return replace(job, spec=replace(job.spec, resources=replace(job.spec.resources, gpu_milli=round(fraction * 1000))),
                       started_at=T0)

    jobs = [share("alone", "t", "GPU-0", 0.1), share("half", "p", "GPU-1", 0.5), share("quarter", "p", "GPU-1", 0.25),
            share("mine", "a", "GPU-2", 0.5), share("theirs", "b", "GPU-2", 0.25)]
    holds = running_holds(jobs, [], T0)  # type: ignore[arg-type]
    assert holds[("t", None)] == pytest.approx(1.0)  # was 0.1
    assert holds[("p", None)] == pytest.approx(1.0)  # 2/3 + 1/3 of one GPU-hour (was 0.75)
    assert holds[("a", None)] == pytest.approx(0.5) and holds[("b", None)] == pytest.approx(0.25)  # across teams
