"""hubadmin25 B18 (core half): a person's hold on a pending job (``Job.held``) and an admin's top
(``Job.top_at``). A held job pends ``Held`` with who held it, when and how to release it, however many
GPUs are free; it is never admitted, nominated nor reserved (the job behind it starts, and backfill does
not plan around it); its ETA is "unknown: held". A topped job goes first in its class (latest topped
first), never above a higher class."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model.codec import job_from_dict, job_to_dict, reason_to_dict
from jupyter_sched.model.job import Hold
from jupyter_sched.queues.order import QUEUE_SORTS, QueueContext, topped_first
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.profile import SchedulingProfile
from jupyter_sched.wording import render_reason

AT = T0 - timedelta(minutes=3)


def test_hubadmin25_b18_a_held_job_pends_held_with_free_gpus_and_starts_once_released() -> None:
    held = replace(make_job("first", gpus=2, user="ana"), held=Hold(by="ana", at=AT))
    jobs = [held, make_job("second", gpus=1, user="bob", submitted=1)]
    result = run_cycle(snapshot([make_node("n1", gpus=4)], jobs))
    assert [a.job_id for a in result.admits] == ["second"], "the job behind a held one is not held back"
    (pend,) = result.pending
    reason = pend.reason
    assert reason.code == "Held", reason
    assert reason.message == "held by ana at 2025-03-30T11:57:00Z"  # the command once, in unblock (newuser27 n2)
    assert {k: reason.details[k] for k in ("by", "at", "admin")} == {"by": "ana", "at": "2025-03-30T11:57:00Z", "admin": False}
    assert reason.eta is None and reason.eta_reason == "held", reason
    assert reason.unblock == "release it: jupyter-sched release first"
    assert not result.nominations, "a held job is nominated nothing"
    text = render_reason(reason_to_dict(reason), now=T0, relative=True)
    assert text.eta == "ETA unknown: held", text

    released = run_cycle(snapshot([make_node("n1", gpus=4)], [replace(held, held=None)]))
    assert [a.job_id for a in released.admits] == ["first"], "released: it starts as before"


def test_hubadmin25_b18_an_admin_hold_says_only_an_admin_releases_it() -> None:
    job = replace(make_job("j-a", user="ana"), held=Hold(by="boss", at=AT, admin=True))
    (pend,) = run_cycle(snapshot([make_node("n1", gpus=1)], [job])).pending
    assert pend.reason.message.startswith("held by boss (an admin) at "), pend.reason
    assert pend.reason.unblock == "an admin releases it: jupyter-sched release j-a (an admin's hold)"


def test_hubadmin25_b18_a_held_blocked_job_takes_no_reservation_so_backfill_is_not_kept_out() -> None:
    # 2 of 4 GPUs busy until +60 min; the held 4-GPU job would reserve all four at +60 if it were not held
    busy = running(make_job("busy", gpus=2, user="cat", time_limit_s=3600), started=0)
    big = replace(make_job("big", gpus=4, user="ana", submitted=1), held=Hold(by="ana", at=AT))
    long_small = make_job("long", gpus=2, user="bob", submitted=2, time_limit_s=7200)
    result = run_cycle(snapshot([make_node("n1", gpus=4)], [busy, big, long_small]))
    assert [a.job_id for a in result.admits] == ["long"], "a held job reserves nothing: the 2 h job starts now"
    (pend,) = result.pending
    assert pend.job_id == "big" and pend.reason.code == "Held" and pend.reason.eta is None


def test_hubadmin25_b18_the_hold_survives_the_codec() -> None:
    job = replace(make_job("j-c", user="ana"), held=Hold(by="boss", at=AT, admin=True), top_at=T0)
    back = job_from_dict(job_to_dict(job))
    assert back.held == job.held and back.top_at == T0
    assert job_to_dict(job)["held"] == {"by": "boss", "at": "2025-03-30T11:57:00Z", "admin": True}


def test_hubadmin25_b18_a_topped_job_goes_first_in_its_class_latest_top_first_never_above_a_higher_class() -> None:
    jobs = [make_job("h1", priority="high", submitted=5), make_job("n1", submitted=1), make_job("n2", submitted=2),
            replace(make_job("n3", submitted=3), top_at=T0), replace(make_job("n4", submitted=4), top_at=T0 + timedelta(1)),
            make_job("l1", priority="low", submitted=0), replace(make_job("l2", priority="low", submitted=6), top_at=T0)]
    for sort in ("fair", "fifo", "short-first", "fair-usage"):
        order = QUEUE_SORTS[sort](jobs, QueueContext(now=T0, team_share=lambda team: 0.0))
        assert [j.id for j in topped_first(jobs, order)] == ["h1", "n4", "n3", "n1", "n2", "l2", "l1"], sort


def test_hubadmin25_b18_the_cycle_admits_a_topped_job_before_older_ones_of_its_class() -> None:
    jobs = [make_job("old", gpus=1, user="ana", submitted=0), replace(make_job("requeued", gpus=1, user="bob",
                                                                             submitted=9), top_at=T0)]
    result = run_cycle(snapshot([make_node("n1", gpus=1)], jobs), SchedulingProfile(queue_sort="fifo"))
    assert [a.job_id for a in result.admits] == ["requeued"]
    (pend,) = result.pending
    assert pend.job_id == "old" and pend.reason.position == 1


def test_hubadmin25_b18_a_job_held_for_a_revoked_class_starts_once_its_class_is_changed() -> None:
    from jupyter_sched.model import PriorityClass
    from jupyter_sched.scheduling.snapshot import JobHold

    job = make_job("hi", gpus=1, user="eve", team="teama", priority="high")
    hold = JobHold(team="teama", since=AT, teams=("teama",), priority="high")
    (pend,) = run_cycle(replace(snapshot([make_node("n1", gpus=2)], [job]), held_jobs={"hi": hold})).pending
    assert pend.reason.code == "TeamMembership"
    assert "or an admin changes its class: jupyter-sched update hi --priority normal" in pend.reason.unblock
    # B1's way out: an admin sets its class to one granted (jupyter-sched update hi --priority normal); the
    # membership source re-reads the job later, the core at once
    normal = replace(job, spec=replace(job.spec, priority=PriorityClass.NORMAL))
    result = run_cycle(replace(snapshot([make_node("n1", gpus=2)], [normal]), held_jobs={"hi": hold}))
    assert [a.job_id for a in result.admits] == ["hi"]
