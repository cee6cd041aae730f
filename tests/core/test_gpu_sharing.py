"""A fractional job shares a GPU only with its own user's work when the profile says so.

Red-team 5 finding 2: on a real hub, eve's 20 jobs of 1/1000 GPU were all packed by binpack onto
the GPU where alice's 0.5-GPU job ran (charged 0.02 GPU); a shared GPU is time-sliced with no
isolation of compute or memory. With ``share_gpus_across_users=False`` (the hub's default) a
fractional job goes to a partly used GPU only when every job on it is its owner's, else to a whole
free GPU, else it waits; the simulator's default (True) packs as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.scheduling import SchedulingProfile, run_cycle


@dataclass(frozen=True)
class Case:
    name: str
    share: bool
    gpus: int
    want_gpu: str | None  # the GPU the new job starts on; None: it waits


def _jobs(gpus: int) -> tuple[list[object], object]:
    alice_half = running(make_job("alice-half", milli=500, user="alice"), "n1", [0], milli=500)
    eve_tiny = make_job("eve-tiny", milli=1, user="eve", submitted=1)
    blockers = [running(make_job(f"bob-{i}", user="bob"), "n1", [i]) for i in range(1, gpus)]
    return [alice_half, *blockers], eve_tiny


CASES = [
    Case("eve's 1/1000 share is packed onto alice's half GPU when sharing across users is allowed", True, 2,
         "GPU-n1-0"),
    Case("eve's 1/1000 share takes a whole free GPU, not alice's half, when it is not", False, 2, "GPU-n1-1"),
    Case("with no GPU free of other users' work eve's share waits", False, 1, None),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_fractional_job_shares_a_gpu_with_another_user_only_when_the_profile_allows(case: Case) -> None:
    others, eve = _jobs(case.gpus)
    if case.gpus == 2:
        others = others[:1]  # GPU 1 stays wholly free
    snap = snapshot([make_node(gpus=case.gpus)], [*others, eve])
    result = run_cycle(snap, SchedulingProfile(share_gpus_across_users=case.share))
    placed = {a.job_id: a.allocation.gpu_uuids for a in result.admits}
    assert placed.get("eve-tiny", (None,))[0] == case.want_gpu, placed
    if case.want_gpu is None:  # it says why the half GPU free beside alice's work is not its
        pend = next(p for p in result.pending if p.job_id == "eve-tiny")
        assert "the shared ones with that much free hold other users' work" in pend.reason.message, pend.reason


def test_a_users_own_fractional_jobs_still_share_one_gpu() -> None:
    mine = running(make_job("alice-half", milli=500, user="alice"), "n1", [0], milli=500)
    again = make_job("alice-quarter", milli=250, user="alice", submitted=1)
    result = run_cycle(snapshot([make_node(gpus=2)], [mine, again]), SchedulingProfile(share_gpus_across_users=False))
    assert [a.allocation.gpu_uuids for a in result.admits] == [("GPU-n1-0",)]  # packed beside her own work
