"""newuser36 N6: a request that never preempts nor reclaims (``--no-preempt``), and the victim named before it goes.

On a hub with quotas the README's quickstart (``%gpu request 1``) took its lease by reclaiming another team's
borrowed GPU — that team's running job was evicted and restarted — and the line named the victim by id only.
A ``no_preempt`` request waits for a free GPU instead, its reason saying so; a request that does preempt names
whose job goes, and of which team, before it goes. Pure core tests over :class:`Scenario`.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from core_builders import Scenario, make_job, make_node, quotas

from jupyter_sched.model import Job, JobKind, Quota
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.wording.preemption import NO_PREEMPT_WAIT, no_preempt_owed_text


def _hub() -> Scenario:
    """vision guaranteed 3, nlp guaranteed 1 on 4 GPUs; nlp borrows the 4th with a 2-GPU job (n36's setup)."""
    q = quotas(Quota(team="vision", guaranteed=3, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    sc = Scenario([make_node("vm", gpus=4)], quota=q, profile=SchedulingProfile(min_runtime_s=0))
    sc.at(0).submit(make_job("a-train", gpus=2, team="vision", user="n36a", submitted=0)).cycle()
    sc.at(1).submit(make_job("c-two", gpus=2, team="nlp", user="n36c", submitted=1)).cycle()
    assert (sc.state("a-train"), sc.state("c-two")) == ("running", "running")
    return sc


def _request(job_id: str, *, no_preempt: bool, lease: bool = True) -> Job:
    """n36b's 1-GPU request of vision at minute 5: a kernel's lease (the quickstart's) or a batch job."""
    job = make_job(job_id, gpus=1, team="vision", user="n36b", submitted=5)
    kind = {"kind": JobKind.LEASE, "command": ()} if lease else {}
    return replace(job, spec=replace(job.spec, no_preempt=no_preempt, **kind))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["lease", "training"])
def test_newuser36_n6_no_preempt_request_never_nominates_a_victim(kind: str) -> None:
    """A within-guarantee request with no_preempt on a full cluster where another team borrows: no preemption,
    no nomination, ever; it pends WaitingForCapacity with the one clause, and starts once a GPU frees."""
    sc = _hub()
    job_id = "l-demo" if kind == "lease" else "j-demo"
    sc.at(5).submit(_request(job_id, no_preempt=True, lease=kind == "lease"))
    for _ in range(3):
        result = sc.cycle()
        assert result.preemptions == () and job_id not in result.nominations
    assert sc.state(job_id) == "pending" and sc.state("c-two") == "running"
    reason = sc.job(job_id).reason
    assert reason is not None and reason.code == "WaitingForCapacity"
    # within vision's guarantee, what frees is kept for it (s38: jupyter_sched.scheduling.owed)
    assert reason.message.endswith(f"; {no_preempt_owed_text('vision')}."), reason.message
    assert "no preemption:" not in reason.message
    assert reason.details["preemption_rule"]["rule"] == "no_preempt"
    assert NO_PREEMPT_WAIT == "waiting for a free GPU: this request does not preempt or reclaim (--no-preempt)"
    sc.finish("a-train")  # a GPU frees: it starts there, on free GPUs
    started = sc.cycle()
    assert [a.job_id for a in started.admits] == [job_id] and started.preemptions == ()


def test_newuser36_n6_reclaiming_request_names_the_victims_owner_and_team() -> None:
    """Without no_preempt the same lease reclaims (as designed), and its wait line names whose job goes and of
    which team — not the id alone; details carry the owner and team per victim for the panel."""
    sc = _hub()
    result = sc.at(5).submit(_request("l-demo", no_preempt=False)).cycle()
    assert [(p.job_id, p.kind) for p in result.preemptions] == [("c-two", "reclaim")]
    reason = sc.job("l-demo").reason
    assert reason is not None and reason.code == "WaitingForPreemption"
    assert reason.message.startswith("preempting n36c's job c-two of team nlp to free GPUs on vm")
    assert reason.details["victim_owners"] == {"c-two": "n36c"}
    assert reason.details["victim_teams"] == {"c-two": "nlp"}
