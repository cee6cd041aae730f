"""Who a fractional job shares a GPU with (``SchedulingProfile.gpu_sharing``).

Red-team 5 finding 2: on a real hub, eve's 20 jobs of 1/1000 GPU were all packed by binpack onto
the GPU where alice's 0.5-GPU job ran (charged 0.02 GPU); a shared GPU is time-sliced with no
isolation of compute or memory. The lead's decision: the trust boundary is the team. With
``gpu_sharing="team"`` (a server's default) a fractional job goes to a partly used GPU only when
every job on it is of its own team, else to a whole free GPU, else it waits and its reason names
the shared GPU; ``"none"`` never shares; ``"any"`` (the core's default, the simulator's) packs as before.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from core_builders import make_job, make_node, running, snapshot

from jupyter_sched.placement.fragmentation import FRAGMENTATION_POLICIES
from jupyter_sched.placement.placer import PlacementConfig
from jupyter_sched.scheduling import SchedulingProfile, run_cycle


@dataclass(frozen=True)
class Case:
    name: str
    sharing: str
    gpus: int
    eve_team: str
    want_gpu: str | None  # the GPU eve's new job starts on; None: it waits


CASES = [
    Case("eve's 1/1000 share is packed onto alice's half GPU when any job may share", "any", 2, "ev", "GPU-n1-0"),
    Case("another team's 1/1000 share takes a whole free GPU, not alice's half", "team", 2, "ev", "GPU-n1-1"),
    Case("a teammate's share still packs beside alice's half", "team", 2, "ml", "GPU-n1-0"),
    Case("with no GPU free of another team's work eve's share waits", "team", 1, "ev", None),
    Case("with sharing off even a teammate's share takes a whole GPU", "none", 2, "ml", "GPU-n1-1"),
]


@pytest.mark.parametrize("policy", ["", *FRAGMENTATION_POLICIES],
                         ids=["default placement", *(f"{p} placement" for p in FRAGMENTATION_POLICIES)])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_fractional_job_shares_a_gpu_only_as_the_profile_allows(case: Case, policy: str) -> None:
    """The same rule under every placement policy (red team 6: the fgd* policies, vectorised, packed
    another team's share onto alice's GPU whatever gpu_sharing said)."""
    alice_half = running(make_job("alice-half", milli=500, user="alice", team="ml"), "n1", [0], milli=500)
    eve_tiny = make_job("eve-tiny", milli=100, user="eve", team=case.eve_team, submitted=1)
    snap = snapshot([make_node(gpus=case.gpus)], [alice_half, eve_tiny])
    result = run_cycle(snap, SchedulingProfile(gpu_sharing=case.sharing,
                                               placement=PlacementConfig(fragmentation=policy)))
    placed = {a.job_id: a.allocation.gpu_uuids for a in result.admits}
    assert placed.get("eve-tiny", (None,))[0] == case.want_gpu, placed
    if case.want_gpu is None:  # it says which GPU had room and why that room is not its own
        pend = next(p for p in result.pending if p.job_id == "eve-tiny")
        assert "GPU-n1-0 has that much free but is shared by another team's work" in pend.reason.message, pend.reason


def test_an_unknown_sharing_mode_is_refused_naming_the_field() -> None:
    from jupyter_sched.errors import ValidationError

    with pytest.raises(ValidationError) as refused:
        SchedulingProfile(gpu_sharing="users")
    assert refused.value.field == "gpu_sharing"
