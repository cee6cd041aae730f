"""New user 20, N18: a wait that ends by preemption once the victims pass the minimum runtime says so.

ml (guaranteed 2 + borrowing limit 1) runs lowml (3 GPUs, low, evicted once before, so protected
for the 5 min minimum runtime); a normal ml job of 1 GPU is held by ml's borrowing limit. The
scheduler preempts lowml for it the moment lowml has run 5 min, but the reason said "ETA when
lowml ends" (its 10 min limit) and never said why it would start earlier. Jobs, kernel leases and
dry runs get one reason: the ETA is that moment, and the ETA sentence says what happens then.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, Scenario, make_job, make_node, quotas, running

from jupyter_sched.model import Job, JobKind, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import dryrun
from jupyter_sched.wording import render_reason

UNTIL = T0 + timedelta(minutes=3)  # lowml started 2 min before T0: it has run 5 min at T0 + 3 min


def _ml(limit_s: float = 600) -> Scenario:
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=1), Quota(team="vision", guaranteed=1, borrowing_limit=0))
    sc = Scenario([make_node("n1", gpus=4)], quota=q)
    low = running(make_job("lowml", gpus=3, team="ml", priority="low", time_limit_s=limit_s), "n1", range(3),
                  started=-2)
    return sc.submit(replace(low, preempted_by="hi"))  # requeued after an earlier preemption: protected 5 min


def _norm1() -> Job:
    return make_job("norm1", gpus=1, team="ml", time_limit_s=300)


def _lease() -> Job:
    job = make_job("l-k1", team="ml")
    return replace(job, spec=replace(job.spec, kind=JobKind.LEASE, kernel_id="k-1"))


@pytest.mark.parametrize("make", [_norm1, _lease], ids=["job", "kernel lease"])
def test_newuser20_n18_a_quota_wait_ends_when_its_own_low_job_passes_the_minimum_runtime(make: object) -> None:
    assert callable(make)
    waiting: Job = make()
    sc = _ml().submit(waiting)
    first = sc.cycle()
    assert first.preemptions == ()
    reason = {p.job_id: p.reason for p in first.pending}[waiting.id]
    assert reason.code == "BorrowingLimitReached"
    assert reason.eta == UNTIL  # not lowml's end at T0 + 8 min
    assert reason.details["eta_code"] == "MinRuntime" and reason.details["eta_waits_on"] == ["lowml"]
    text = render_reason(reason_to_dict(reason) or {}, now=T0, relative=True)
    assert text.eta == ("ETA 12:03 UTC (in 3m): then lowml, low priority of the same team, has run 5 min "
                        "(the minimum runtime) and is preempted for it")
    assert "minimum runtime" not in text.summary and "when lowml ends" not in text.line  # said once
    # and it is true: nothing happens before that moment, lowml is preempted for it at that moment
    assert sc.at(2.5).cycle().preemptions == ()
    assert [(p.job_id, p.for_job) for p in sc.at(3).cycle().preemptions] == [("lowml", waiting.id)]


def test_newuser20_n18_a_dry_run_says_the_same() -> None:
    sc = _ml()
    answer = dryrun(sc.snap, _norm1().spec)
    assert not answer.fits_now and answer.would_preempt == ()
    assert answer.when == UNTIL and answer.reason is not None
    assert render_reason(reason_to_dict(answer.reason) or {}, now=T0).eta.startswith(
        "ETA 12:03 UTC: then lowml, low priority of the same team, has run 5 min")


def test_newuser20_n18_never_later_than_the_natural_end() -> None:
    # lowml's limit ends it at T0 + 1 min, before its minimum runtime passes: that end is the ETA
    sc = _ml(limit_s=180).submit(_norm1())
    reason = sc.cycle().pending[0].reason
    assert reason.eta == T0 + timedelta(minutes=1) and reason.details["eta_code"] == "Projected"
    assert "when lowml ends" in render_reason(reason_to_dict(reason) or {}, now=T0).eta
