"""Red team 18, R4 (core half): a pending job in ``Snapshot.held_jobs`` — its owner left the team it
charges, or lost its class there — pends ``TeamMembership`` with the change, when it was found and
the way out, however many GPUs are free; other work is not held back, and a later snapshot without
the hold admits it. The edge that finds the change is ``jupyter_sched.hub.membership``."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, snapshot

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import JobHold
from jupyter_sched.wording import render_reason

FOUND = T0 - timedelta(minutes=5)


def test_red18_r4_a_held_job_pends_team_membership_with_free_gpus_and_starts_without_the_hold() -> None:
    jobs = [make_job("c-queued", gpus=2, user="red18c", team="teama"), make_job("a-one", gpus=1, user="ana", team="teama")]
    hold = JobHold(team="teama", since=FOUND, teams=("default",))
    result = run_cycle(replace(snapshot([make_node("n1", gpus=4)], jobs), held_jobs={"c-queued": hold}))
    assert [a.job_id for a in result.admits] == ["a-one"], "the team's own member is not held back"
    reason = next(p.reason for p in result.pending if p.job_id == "c-queued")
    assert reason.code == "TeamMembership", reason
    assert reason.message == ("held: red18c is no longer a member of team teama (found 2025-03-30T11:55:00Z); "
                              "it never starts charged to teama"), reason.message
    said = {k: reason.details[k] for k in ("user", "team", "since", "teams")}
    assert said == {"user": "red18c", "team": "teama", "since": FOUND.isoformat(), "teams": ["default"]}, reason.details
    # no ETA from GPUs: it waits on an admin (or its owner's cancel), not on ana's job ending
    assert reason.eta is None and reason.eta_reason == "held until red18c is a member of teama again", reason
    assert not reason.details.get("eta_waits_on"), reason.details
    assert reason.unblock == ("cancel it and resubmit to one of red18c's teams (default), or an admin adds red18c "
                              "back to teama"), reason.unblock
    text = render_reason(reason_to_dict(reason), now=T0, relative=True)
    assert "no longer a member of team teama" in text.summary, text

    free = run_cycle(snapshot([make_node("n1", gpus=4)], jobs))
    assert sorted(a.job_id for a in free.admits) == ["a-one", "c-queued"], "re-read each cycle: no hold, it starts"


def test_red18_r4_a_class_no_longer_granted_says_so() -> None:
    job = make_job("hi", gpus=1, user="eve", team="teama", priority="high")
    hold = JobHold(team="teama", since=FOUND, teams=("teama",), priority="high")
    result = run_cycle(replace(snapshot([make_node("n1", gpus=2)], [job]), held_jobs={"hi": hold}))
    assert not result.admits
    (pend,) = result.pending
    assert pend.reason.code == "TeamMembership" and pend.reason.details["priority"] == "high", pend.reason
    assert pend.reason.message.startswith("held: priority high is no longer granted to eve in team teama"), pend.reason
