"""hubadmin24 (s25 drain): a node an admin cordoned for maintenance gets no new work, and the jobs that
wait for it are told why — the cordon is data in the snapshot (``Node.cordon``), the core stays pure.

- nothing new (a job, a kernel's lease, a backfilled job) is placed on a cordoned node; other nodes
  take the work;
- a job only the cordoned node could hold waits (it was refused as never fitting before), its reason
  ``NodeCordoned`` naming the node, the admin's reason, who and when; its ETA does not count the
  node's capacity;
- a drained node's work is stopped once its ``evict_at`` has passed — a preemption of kind ``drain``
  with the profile's grace and the checkpoint signal — and not before; without ``evict_at`` it runs on.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import Job, JobKind, Node
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.resources import Cordon
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording.reasons import render_reason

CORDON = Cordon(reason="PSU swap", by="root-admin", at=T0 - timedelta(minutes=5))


def cordoned(name: str = "n3", *, gpus: int = 4, cordon: Cordon = CORDON) -> Node:
    return replace(make_node(name, gpus=gpus), unschedulable=True, cordon=cordon)


def lease(job_id: str, *, gpus: int = 1, submitted: float = 0.0) -> Job:
    job = make_job(job_id, gpus=gpus, submitted=submitted)
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE, command=()))


@pytest.mark.parametrize("work", [
    pytest.param(make_job("train", gpus=1), id="a job goes to the node that is not cordoned"),
    pytest.param(lease("nb"), id="a kernel's lease goes to the node that is not cordoned"),
])
def test_s25_drain_nothing_new_is_placed_on_a_cordoned_node(work: Job) -> None:
    result = run_cycle(snapshot([cordoned(), make_node("n1", gpus=1)], [work]))
    assert [(a.job_id, a.allocation.node) for a in result.admits] == [(work.id, "n1")]


def test_s25_drain_a_backfill_candidate_is_not_placed_on_a_cordoned_node() -> None:
    # n1 is full until "busy" ends; "big" waits for it (the reservation); "small" would fit only on the
    # cordoned n3: it waits too, naming the cordon, instead of backfilling there
    jobs = [running(make_job("busy", time_limit_s=3600), "n1", [0, 1]), make_job("big", gpus=2, submitted=1),
            make_job("small", gpus=1, time_limit_s=60, submitted=2)]
    result = run_cycle(snapshot([cordoned(), make_node("n1", gpus=2)], jobs))
    assert result.admits == ()
    assert {p.job_id: p.reason.code for p in result.pending} == {"big": "NodeCordoned", "small": "NodeCordoned"}


def test_s25_drain_a_job_only_the_cordoned_node_holds_waits_naming_the_cordon() -> None:
    result = run_cycle(snapshot([cordoned(gpus=4), make_node("n1", gpus=1)], [make_job("wide", gpus=4)]))
    assert result.rejects == (), "a cordon is maintenance: the job waits, it is not refused as never fitting"
    (pend,) = result.pending
    reason = pend.reason
    assert reason.code == "NodeCordoned"
    assert reason.message == ("needs 4 A100-80GB GPUs, 1 free on the other nodes; node n3 is cordoned for maintenance: "
                              "PSU swap, by root-admin at Mar 30 11:55 UTC.")
    assert reason.details["cordons"] == [{"node": "n3", "gpus": 4, "reason": "PSU swap", "by": "root-admin",
                                          "at": "2025-03-30T11:55:00Z", "evict_at": None}]
    # its ETA does not count n3's 4 GPUs: no running job's end lets it in
    assert reason.eta is None
    assert reason.eta_reason == "only a cordoned node can hold it: it waits until an admin uncordons n3"
    text = render_reason(reason_to_dict(reason), now=T0)
    assert text.summary == ("needs 4 A100-80GB GPUs, 1 free on the other nodes; node n3 is cordoned for maintenance: "
                            "PSU swap, by root-admin at 11:55 UTC.")
    # the ETA says it waits for the uncordon; the unblock only how an admin does it (newuser35 n11: said twice)
    assert text.unblock == "An admin ends the cordon with jupyter-sched nodes uncordon n3."


def test_verify25_a_cpu_job_on_cordoned_nodes_is_told_the_cordon() -> None:
    """verify25 (small): a job asking no GPU, every node cordoned, waited "WaitingForCapacity: no node
    that passes the job's filters is ready for new work now (all are cordoned or not ready)" — the
    admin's cordon, its reason and who were not named, nor how it ends."""
    result = run_cycle(snapshot([cordoned(gpus=4)], [make_job("prep", gpus=0)]))
    (pend,) = result.pending
    reason = pend.reason
    assert reason.code == "NodeCordoned", reason
    assert reason.message == ("no node takes new work now: node n3 is cordoned for maintenance: PSU swap, by "
                              "root-admin at Mar 30 11:55 UTC.")
    assert "requested" not in reason.details and reason.details["cordons"][0]["node"] == "n3"
    text = render_reason(reason_to_dict(reason), now=T0)
    assert text.summary == "no node takes new work now: node n3 is cordoned for maintenance: PSU swap, by root-admin at 11:55 UTC."
    assert text.unblock == "It starts when an admin uncordons n3 (admins: jupyter-sched nodes uncordon n3)."
    # a node that takes work: the CPU job runs there, the cordon is not its reason
    result = run_cycle(snapshot([cordoned(gpus=4), make_node("n1", gpus=1)], [make_job("prep", gpus=0)]))
    assert [a.job_id for a in result.admits] == ["prep"]


def test_s25_drain_a_job_that_fits_elsewhere_later_gets_an_eta_from_those_nodes() -> None:
    jobs = [running(make_job("busy", time_limit_s=600), "n1", [0], started=-1), make_job("one", gpus=1)]
    result = run_cycle(snapshot([cordoned(), make_node("n1", gpus=1)], jobs))
    (pend,) = result.pending
    assert pend.reason.code == "NodeCordoned"
    assert pend.reason.eta == T0 - timedelta(seconds=60) + timedelta(seconds=600)  # busy started a minute ago


@pytest.mark.parametrize(("evict_after_min", "want_stopped"), [
    pytest.param(None, [], id="a cordon without a deadline: the work runs on to its end"),
    pytest.param(1, [], id="before the drain's deadline: the work runs on"),
    pytest.param(-1, ["there"], id="past the drain's deadline: the work on the node is stopped, not the other"),
])
def test_s25_drain_work_on_a_drained_node_is_stopped_after_the_deadline(evict_after_min: float | None,
                                                                          want_stopped: list[str]) -> None:
    evict_at = None if evict_after_min is None else T0 + timedelta(minutes=evict_after_min)
    node = cordoned(cordon=replace(CORDON, evict_at=evict_at))
    jobs = [running(make_job("there", checkpointable=True), "n3", [0, 1]), running(make_job("elsewhere"), "n1", [0])]
    result = run_cycle(snapshot([node, make_node("n1", gpus=1)], jobs))
    assert [p.job_id for p in result.preemptions] == want_stopped
    for stop in result.preemptions:
        assert (stop.kind, stop.for_job, stop.grace_s, stop.checkpoint_signal) == ("drain", "", 60.0, True)
        assert stop.reason == "preempted: node n3 is drained for maintenance by root-admin (PSU swap)"
    assert [(r.action, r.job_id, r.details["kind"]) for r in result.audit if r.action == "preempt"] == [
        ("preempt", j, "drain") for j in want_stopped]


def test_s25_drain_work_already_stopping_is_not_asked_again() -> None:
    node = cordoned(cordon=replace(CORDON, evict_at=T0 - timedelta(minutes=1)))
    job = replace(running(make_job("there"), "n3", [0]), stopping_since=T0 - timedelta(seconds=5))
    assert run_cycle(snapshot([node], [job])).preemptions == ()


def test_hubadmin26_b3_a_job_only_a_cordoned_node_holds_is_not_told_others_jobs_ending_start_it() -> None:
    """hubadmin26 B3: the only node that can hold it cordoned, a team's waiting job read "…; node n3 is cordoned …;
    no preemption: …; it can start when nlp's jobs free 1 GPU (…) · ETA unknown: only a cordoned node can hold it" —
    the middle clause false while the node is cordoned (GPUs freed there go to nobody) and against the ETA."""
    from core_builders import quotas

    from jupyter_sched.model import Quota

    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=2), Quota(team="nlp", guaranteed=2, borrowing_limit=2))
    jobs = [running(make_job("v1", gpus=2, team="vision", user="vi"), "n3", [0, 1]),
            running(make_job("n1", gpus=2, team="nlp", user="nl"), "n3", [2, 3]),
            make_job("v-wait", gpus=1, team="vision", user="vi", submitted=5)]
    result = run_cycle(snapshot([cordoned(gpus=4)], jobs, quota=q))
    reason = next(p.reason for p in result.pending if p.job_id == "v-wait")
    text = render_reason(reason_to_dict(reason), now=T0).summary
    assert reason.code == "NodeCordoned" and "cordoned for maintenance" in text, text
    assert "it can start when" not in text, text
    # the same cluster with the node back: the clause says who lets it start, as before
    result = run_cycle(snapshot([make_node("n3", gpus=4)], jobs, quota=q))
    reason = next(p.reason for p in result.pending if p.job_id == "v-wait")
    assert "it can start when" in render_reason(reason_to_dict(reason), now=T0).summary
