"""hubadmin22 H9: taking back ops's guarantee evicted nlp's running 7-minute training job, not nlp's
idle, kernel-less lease that did the borrowing.

4 GPUs in the report; here the two nlp items fill a 2-GPU node (nlp 1+2: guaranteed 1, so one of them
borrows), and ops (1+0, using nothing) submits a 1-GPU job within its guarantee. The lease, one
minute old, was younger than the minimum runtime (5 min), so the victim search spared it (cost item 1)
and took b-nlp, losing 7 GPU-minutes. A lease that sits idle (``Snapshot.idle_ends``: idle under a
policy that releases it) loses nothing when evicted and has no work for the minimum runtime to
protect: it is the cheaper victim. A lease in use is still spared while young, and the reclaim's
audit then names the young candidates it kept (``spared_min_runtime``).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, Scenario, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Job, JobKind, Quota
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import CycleResult, Snapshot

Q = quotas(Quota(team="nlp", guaranteed=1, borrowing_limit=2), Quota(team="ops", guaranteed=1, borrowing_limit=0))


def _lease(started_min: float) -> Job:
    """nlp's lease made straight at the service: no kernel bound, 1 GPU on n1's GPU 1."""
    job = make_job("l-nlp", team="nlp", user="ha22b")
    return running(replace(job, spec=replace(job.spec, kind=JobKind.LEASE)), "n1", [1], started=started_min)


def _snap(*, idle: bool, lease_started_min: float = -1.0) -> Snapshot:
    jobs = [running(make_job("b-nlp", team="nlp", user="ha22b", time_limit_s=3600), "n1", [0], started=-7),
            _lease(lease_started_min), make_job("c-back", team="ops", user="ha22c")]
    snap = snapshot([make_node("n1", gpus=2)], jobs, quota=Q)
    return replace(snap, idle_ends={"l-nlp": T0 + timedelta(minutes=9)}) if idle else snap


def _reclaim_row(result: CycleResult) -> dict[str, object]:
    rows = [a for a in result.audit if a.action == "reclaim"]
    assert len(rows) == 1, rows
    return dict(rows[0].details)


def test_s22_hubadmin22_h9_reclaim_takes_the_idle_borrowing_lease_not_the_running_job() -> None:
    result = run_cycle(_snap(idle=True))
    assert [p.job_id for p in result.preemptions] == ["l-nlp"], result.preemptions
    details = _reclaim_row(result)
    assert details["plan"] == ["l-nlp"], details
    assert details["protected_min_runtime"] is False, details  # an idle lease has no work to protect
    assert details["idle"] is True, details                     # and the audit says why it was the cheap one
    assert "spared_min_runtime" not in details, details


def test_s22_hubadmin22_h9_a_young_lease_in_use_is_spared_and_the_audit_names_it() -> None:
    result = run_cycle(_snap(idle=False))  # in use (not in idle_ends): the minimum runtime spares it
    assert [p.job_id for p in result.preemptions] == ["b-nlp"], result.preemptions
    details = _reclaim_row(result)
    assert details["spared_min_runtime"] == ["l-nlp"], details
    assert "idle" not in details, details
    row = next(a for a in result.audit if a.action == "reclaim")
    assert row.message.endswith("to return borrowed quota to ops; kept l-nlp (run less than the minimum runtime, "
                                "5m)"), row.message


def test_s22_hubadmin22_h9_an_old_lease_in_use_and_an_old_job_compare_by_work_lost() -> None:
    # neither protected: the lease (20 GPU-min held, in use) against b-nlp's 7 GPU-min of work: b-nlp loses less
    result = run_cycle(_snap(idle=False, lease_started_min=-20))
    assert [p.job_id for p in result.preemptions] == ["b-nlp"], result.preemptions
    assert "spared_min_runtime" not in _reclaim_row(result)


def test_s22_hubadmin22_h9_the_start_on_gpus_freed_for_it_is_no_backfill() -> None:
    # the lease in use is spared, b-nlp goes and is requeued with a reservation; c-back then starts on the
    # GPU held for it: that is what the preemption was for, not a backfill around b-nlp's reservation
    sc = Scenario([make_node("n1", gpus=2)], quota=Q)
    sc.submit(*_snap(idle=False).jobs)
    assert [p.job_id for p in sc.cycle().preemptions] == ["b-nlp"]
    rows = [a for a in sc.at(1).cycle().audit if a.action == "admit" and a.job_id == "c-back"]
    assert len(rows) == 1, rows
    assert rows[0].details["backfill"] is False, rows[0]
    assert rows[0].message.endswith(": fits on the GPUs held for it"), rows[0].message
