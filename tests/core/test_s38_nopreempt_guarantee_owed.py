"""s38 (session 37's no_preempt gaps, item 4): ``--no-preempt`` never keeps a guarantee from coming back.

DESIGN.md *Reclaim*: guaranteed GPUs are protected from being lent away, and a team's within-guarantee job must never
wait indefinitely while another team borrows. A ``no_preempt`` request never preempts nor reclaims (newuser36 N6).
Probed here both ways, pure core tests over :class:`Scenario`:

* a ``no_preempt`` job is no shield: running on borrowed GPUs it is reclaimed like any other, and a team's other
  jobs still reclaim while its ``no_preempt`` job waits;
* the fault found: a 2-GPU ``no_preempt`` job of vision (within its guarantee, vision using nothing) waited for good
  while nlp borrowed every GPU with untimed 1-GPU jobs — each GPU that freed went to nlp's next job (no EASY
  reservation without end times). Now what frees is owed to vision's guarantee and not lent to nlp's borrowing
  (:mod:`jupyter_sched.scheduling.owed`), so the job starts once enough has freed; nothing is evicted for it, and
  nlp's next job says why it waits. Work within its own team's guarantee is not held.
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import Scenario, make_job, make_node, quotas

from jupyter_sched.model import Job, Quota
from jupyter_sched.scheduling import SchedulingProfile


def _free_only(job: Job) -> Job:
    return replace(job, spec=replace(job.spec, no_preempt=True))


def _scenario(*lines: Quota) -> Scenario:
    return Scenario([make_node("vm", gpus=4)], quota=quotas(*lines), profile=SchedulingProfile(min_runtime_s=0))


def _live(sc: Scenario, job_id: str) -> bool:
    return any(j.id == job_id for j in sc.snap.jobs) and sc.state(job_id) == "running"


def test_s38_nopreempt_waiting_guarantee_is_not_lent_away_to_another_teams_borrowing() -> None:
    sc = _scenario(Quota(team="vision", guaranteed=3, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=3))
    nlp = [make_job(f"b{i}", gpus=1, team="nlp", user="n", submitted=0) for i in range(4)]
    sc.at(0).submit(*nlp).cycle()  # nlp runs 4 untimed 1-GPU jobs: 3 of them on vision's idle guarantee
    sc.at(1).submit(_free_only(make_job("np", gpus=2, team="vision", user="v", submitted=1))).cycle()
    assert sc.state("np") == "pending"
    said = sc.job("np").reason
    assert said is not None and said.message.endswith(
        "waiting for a free GPU: this request does not preempt or reclaim (--no-preempt); GPUs that free are kept "
        "for it within team vision's guarantee, not lent to another team."), said.message
    assert said.details["preemption_rule"] == {"rule": "no_preempt", "owed": True, "team": "vision", "model": "A100-80GB"}
    n = 4
    for minute in range(2, 8):  # each minute one of nlp's jobs ends and nlp queues another
        sc.at(minute).submit(make_job(f"b{n}", gpus=1, team="nlp", user="n", submitted=minute))
        n += 1
        sc.finish(next(f"b{i}" for i in range(n) if _live(sc, f"b{i}")))
        result = sc.cycle()
        assert result.preemptions == ()  # nothing is ever evicted for it: it asked for free GPUs only
        if sc.state("np") == "running":
            break
        held = sc.job(f"b{n - 1}").reason
        assert held is not None and held.code == "Priority", held
        assert "owed to team vision's guarantee: v's job np waits within it for free GPUs (--no-preempt)" in \
            held.message, held.message
    assert sc.state("np") == "running" and minute == 3, minute  # the second GPU that freed: it starts
    assert sum(1 for i in range(n) if _live(sc, f"b{i}")) == 2  # nlp keeps what it held


def test_s38_nopreempt_owed_gpus_still_go_to_work_within_its_own_teams_guarantee() -> None:
    """Only borrowing is held back: another team's job within its own guarantee takes a GPU that frees."""
    sc = _scenario(Quota(team="vision", guaranteed=2, borrowing_limit=0), Quota(team="nlp", guaranteed=2, borrowing_limit=0),
                   Quota(team="ops", guaranteed=0, borrowing_limit=4))
    sc.at(0).submit(*[make_job(f"o{i}", gpus=1, team="ops", user="o", submitted=0) for i in range(4)]).cycle()
    sc.at(1).submit(_free_only(make_job("np", gpus=2, team="vision", user="v", submitted=1))).cycle()
    sc.at(2).submit(make_job("o4", gpus=1, team="ops", user="o", submitted=2),
                    make_job("nl", gpus=1, team="nlp", user="n", submitted=2))
    sc.finish("o0")
    result = sc.cycle()
    assert [a.job_id for a in result.admits] == ["nl"] and result.preemptions == ()
    assert (sc.state("np"), sc.state("o4")) == ("pending", "pending")


def test_s38_nopreempt_work_is_reclaimed_and_does_not_stop_its_teams_reclaims() -> None:
    """no_preempt shields nothing: a no_preempt borrower of nlp is reclaimed for vision's job within its guarantee,
    and vision's other job reclaims while vision's no_preempt job waits."""
    sc = _scenario(Quota(team="vision", guaranteed=3, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=3))
    sc.at(0).submit(_free_only(make_job("nb1", gpus=2, team="nlp", user="n", submitted=0)),
                    _free_only(make_job("nb2", gpus=2, team="nlp", user="n", submitted=0))).cycle()
    sc.at(5).submit(_free_only(make_job("wait", gpus=1, team="vision", user="v1", submitted=5)),
                    make_job("take", gpus=2, team="vision", user="v2", submitted=6))
    result = sc.cycle()
    assert [(p.job_id, p.kind) for p in result.preemptions] == [("nb1", "reclaim")]
    sc.stopped("nb1")
    sc.at(6).cycle()
    assert (sc.state("take"), sc.state("wait"), sc.state("nb2")) == ("running", "pending", "running")
