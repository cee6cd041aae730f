"""A projected start that has passed is re-projected, names what it waits on, and agrees with the reason.

New-user report (session 3, finding 1), on 4 simulated GPUs:

    jupyter-sched submit --gpus 4 --time-limit 3m --name hold -- sleep 120
    jupyter-sched submit --gpus 2 --time-limit 1m --name res -- sleep 1
    jupyter-sched submit --gpus 1 --name nolimit -- sleep 1
    jupyter-sched queue        # ~20 s later, once the projected start has passed

``hold``'s learned runtime (its user's earlier ``sleep`` runs) was shorter than it really ran, so
once that time passed the projection freed its GPUs "now", the strict search found no later change,
and both waiting jobs read "unknown: it waits on something other than GPUs freeing up; no running
job's end changes that" — while ``nolimit``'s reason said ``res`` was reserved from 04:54 and the
ETA column said 04:51.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import Job, PendingReason
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.model.units import said_time
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.wording import render_reason


def _secs(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def _report_jobs() -> list[Job]:
    return [running(make_job("hold", gpus=4, time_limit_s=180), "n1", started=0),
            make_job("res", gpus=2, time_limit_s=60, submitted=0.05),
            make_job("nolimit", gpus=1, submitted=0.1)]


def _cycle_at(seconds: float, jobs: list[Job], learned: dict[str, float],
              profile: SchedulingProfile | None = None) -> dict[str, PendingReason]:
    snap = replace(snapshot([make_node("n1", gpus=4)], jobs, now=_secs(seconds)), runtime_estimates=learned)
    return {p.job_id: p.reason for p in run_cycle(snap, profile).pending}


def test_finding_1_a_job_waiting_only_for_gpus_is_re_projected_once_the_holder_outlives_its_learned_runtime() -> None:
    before = _cycle_at(10, _report_jobs(), {"hold": 20.0})
    # the learnt end itself, as hold's own line says it (no minute's floor since new user 25, N2)
    assert before["res"].eta == _secs(20) and before["res"].details["eta_waits_on"] == ["hold"]

    after = _cycle_at(40, _report_jobs(), {"hold": 20.0})  # hold was expected to end at 20 s; still running
    for job_id in ("res", "nolimit"):
        reason = after[job_id]
        assert reason.details["eta_code"] == "Projected", reason.eta_reason
        assert reason.eta == _secs(180)  # re-estimated: it runs to its 3m limit at the latest, never "now"
        assert reason.details["eta_waits_on"] == ["hold"]
        assert reason.details["eta_note"] == ("hold ran longer than the ~20s that similar past runs took, so it "
                                              "is now expected to run to its 3m time limit")
        assert reason.details["eta_bounds"] == {"hold": "by its 3m time limit"}
    text = render_reason(reason_to_dict(after["res"]), now=_secs(40), relative=True)
    # newuser3 finding 4: the ETA leads with the limit its owner set, not the learned ~20s nobody stated
    assert text.eta == "ETA 12:03 UTC (in 2m20s), when hold ends (by its 3m time limit)"
    assert "expected 20s" not in text.line
    assert "other than GPUs" not in text.line


def test_newuser3_finding_28_an_eta_from_a_learned_runtime_says_so() -> None:
    """The running job's own line says "ends by <its 3m limit>"; a waiter's earlier ETA comes from
    what similar past runs took, and says so instead of contradicting it without a word."""
    before = _cycle_at(10, _report_jobs(), {"hold": 20.0})["res"]
    assert before.details["eta_learned"] == ["hold"]
    text = render_reason(reason_to_dict(before), now=_secs(10), relative=True)
    assert text.eta == "ETA 12:00 UTC (in 10s), when hold ends (if it runs as long as similar past runs did)"
    by_limits = _cycle_at(10, _report_jobs(), {})["res"]  # nothing learned: the ETA is the limit's
    assert "eta_learned" not in by_limits.details
    assert "similar past runs" not in render_reason(reason_to_dict(by_limits), now=_secs(10)).eta


def test_finding_1_the_reason_s_reservation_and_the_eta_name_one_start_time() -> None:
    for seconds in (10, 40):  # before the learned end (ETA < the limit-based reservation) and after it
        reasons = _cycle_at(seconds, _report_jobs(), {"hold": 20.0})
        res_eta = reasons["res"].eta
        assert res_eta is not None
        backfill = reasons["nolimit"].details["backfill"]
        assert backfill["reserved_for"] == "res" and backfill["reservation"] == res_eta.isoformat()
        assert f"reserved from {said_time(res_eta)}" in reasons["nolimit"].message  # to the second (new user 15, N6)
        text = render_reason(reason_to_dict(reasons["nolimit"]), now=_secs(seconds))
        clock = f"{res_eta:%H:%M} UTC"
        # no GPU is free: the sentence leaves the backfill clause out (new user 6 F2, c0d92ff) and
        # names no second time beside the ETA
        assert "reserved from" not in text.summary and text.eta.startswith(f"ETA {clock}")
    early = _cycle_at(10, _report_jobs(), {"hold": 20.0})["nolimit"].details["backfill"]
    assert early["reservation_latest"] == _secs(180).isoformat()  # the EASY bound, kept as data


def test_a_job_behind_a_queued_reservation_names_that_job() -> None:
    jobs = [running(make_job("hold", gpus=4, time_limit_s=180), "n1", started=0),
            make_job("res", gpus=4, time_limit_s=60, submitted=0.05),
            make_job("nolimit", gpus=1, submitted=0.1)]
    reasons = _cycle_at(10, jobs, {})
    assert reasons["nolimit"].eta == _secs(240)
    assert reasons["nolimit"].details["eta_waits_on"][0] == "res"
    text = render_reason(reason_to_dict(reasons["nolimit"]), now=_secs(10))
    assert text.eta.startswith("ETA 12:04 UTC, when res")


def test_a_running_job_past_its_time_limit_is_expected_to_stop_within_the_grace_period() -> None:
    reasons = _cycle_at(200, _report_jobs(), {}, SchedulingProfile(grace_s=30))  # hold's 180 s limit passed
    res = reasons["res"]
    assert res.eta == _secs(230) and res.details["eta_code"] == "Projected"
    assert res.details["eta_note"] == "hold ran past its 3m time limit and is expected to stop within the 30s " \
                                      "grace period"
    text = render_reason(reason_to_dict(res), now=_secs(200))
    assert text.eta == "ETA 12:03 UTC, when hold ends (within the 30s grace period: it ran past its 3m time limit)"


def test_a_stop_that_did_not_take_makes_the_eta_unknown_and_names_the_job() -> None:
    stuck = replace(_report_jobs()[0], stopping_since=_secs(100))
    reasons = _cycle_at(200, [stuck, *_report_jobs()[1:]], {}, SchedulingProfile(grace_s=30))
    res = reasons["res"]
    assert res.eta is None and res.details["eta_code"] == "HeldByTerminating"
    assert res.eta_reason == "hold did not stop within the 30s grace period"


def test_no_pending_eta_is_ever_in_the_past_while_the_holder_runs() -> None:
    for seconds in range(0, 400, 15):
        for job_id, reason in _cycle_at(seconds, _report_jobs(), {"hold": 20.0}).items():
            assert reason.eta is not None and reason.eta > _secs(seconds), (seconds, job_id, reason.eta_reason)


def test_an_eta_moved_by_a_holder_outliving_its_learned_runtime_says_so() -> None:
    jobs = _report_jobs()
    snap = replace(snapshot([make_node("n1", gpus=4)], jobs, now=_secs(10)), runtime_estimates={"hold": 20.0})
    first = {p.job_id: p.reason for p in run_cycle(snap, SchedulingProfile(eta_move_margin_s=60)).pending}
    queued = [j if j.id == "hold" else replace(j, reason=first[j.id]) for j in jobs]
    snap = replace(snap, jobs=tuple(queued), now=_secs(40))
    moved = {p.job_id: p.reason for p in run_cycle(snap, SchedulingProfile(eta_move_margin_s=60)).pending}
    record = moved["res"].details["eta_moved"]
    assert (record["cause"], record["jobs"]) == ("overran", ["hold"])
    assert record["message"].endswith("hold ran longer than the ~20s that similar past runs took, so it is now "
                                      "expected to run to its 3m time limit")


def test_newuser4_finding_8_a_holder_past_its_typical_runtime_bounds_the_eta_by_its_limit_and_says_why() -> None:
    """hold (3m limit) has run 40 s; similar runs typically took 20 s, and the runs that ran
    longer than 40 s took 57 s in the median (the feed's conditional estimate): the ETA is 57 s,
    but it said "(if it runs as long as similar past runs did)" while it kept moving on. It now
    names the limit as the bound and why the estimate moves."""
    snap = replace(snapshot([make_node("n1", gpus=4)], _report_jobs(), now=_secs(40)),
                   runtime_estimates={"hold": 57.0}, runtime_typical={"hold": 20.0})
    res = {p.job_id: p.reason for p in run_cycle(snap).pending}["res"]
    # 60 s, not 57: it is given at least as long again as it overran its typical run (verify30 V6), 40 + 20
    assert res.eta == _secs(60) and res.details["eta_waits_on"] == ["hold"]
    assert "eta_learned" not in res.details
    assert res.details["eta_bounds"] == {"hold": "by its 3m time limit at the latest"}
    assert res.details["eta_note"] == "hold has run longer than the ~20s that similar past runs took"
    text = render_reason(reason_to_dict(res), now=_secs(40), relative=True)
    assert text.eta.startswith("ETA 12:01 UTC (in 20s), when hold ends (by its 3m time limit at the latest)")
    # before it passed its typical runtime nothing changes: the ETA is what similar runs took
    before = replace(snapshot([make_node("n1", gpus=4)], _report_jobs(), now=_secs(10)),
                     runtime_estimates={"hold": 20.0})
    assert {p.job_id: p.reason for p in run_cycle(before).pending}["res"].details["eta_learned"] == ["hold"]


def test_new_user_5_the_eta_names_the_job_it_waits_for_by_the_name_its_owner_gave() -> None:
    """New user 5, finding 2: "ETA 12:43 UTC (in 19m38s), when j-1m8vbassf-j9njh9 ends" — a user
    knows the name they gave (``--name long-a``), not the id. The core carries the names of the
    jobs waited on (public, as every queue line shows them); the ETA says both."""
    hold = running(make_job("j-1m8vbassf", gpus=4, time_limit_s=1200), "n1", started=0)
    hold = replace(hold, spec=replace(hold.spec, name="long-a"))
    small = make_job("j-small", gpus=1, time_limit_s=1800, submitted=1)
    reason = _cycle_at(10, [hold, small], {})["j-small"]
    assert reason.details["eta_waits_on"] == ["j-1m8vbassf"]
    assert reason.details["eta_waits_on_names"] == {"j-1m8vbassf": "long-a"}
    text = render_reason(reason_to_dict(reason), now=_secs(10), relative=True)
    assert ", when long-a (j-1m8vbassf) ends" in text.eta, text.eta
    # a job whose name is its id is not said twice
    plain = _cycle_at(10, _report_jobs(), {"hold": 20.0})["res"]
    assert "eta_waits_on_names" not in plain.details
    assert ", when hold ends" in render_reason(reason_to_dict(plain), now=_secs(10)).eta
