"""New user 25, N1, N2, N4: one projection of when running work ends, used by its own line and its waiters.

N1: 30 x 1-GPU 6-s jobs (2m limits) on 4 GPUs: each pending job's ETA was the previous pending job's ETA
plus one runtime ("#2 … when turnb-19 ends", turnb-19 being #1), one job every ~6 s where 4 GPUs start
four — 4x late. N2: a 5-s job's own line said "projected end … in 59s, if it runs as long as similar past
runs did". N4: a pending job's ETA leant on a just-started job ending "in 6s" whose own card said "ends by …
(in 2m), its 2m time limit". One cause: every running job's learnt end was floored at a minute from now
(``END_MARGIN_S``) — the older running jobs were "60 s away", the one admitted in the same cycle 6 s
away, so the whole queue chained on that one GPU, and the floored figure is what the 5-s job's own line
said; the job admitted this cycle carried no projected end at all. Now a running job's projected end is
its start plus its learnt runtime (conditioned on what it ran; at least ``MIN_LEFT_S`` from now), the
same figure on its own line (``CycleResult.projected``, jobs admitted this cycle included) and in every
ETA behind it; the k-th waiting job starts when the k-th GPU frees.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import Snapshot, run_cycle
from jupyter_sched.scheduling.snapshot import ProjectedEnd
from jupyter_sched.wording import render_reason

RUN_S = 6.0
LIMIT_S = 120.0


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _batch() -> Snapshot:
    """Three turnb jobs running on n1 (started 4, 3 and 1 s ago), one GPU free, nine queued; every run
    of the command took 6 s (learnt: the running ones given what they ran)."""
    ran = {"turnb-1": 4.0, "turnb-2": 3.0, "turnb-3": 1.0}
    jobs = [running(make_job(j, time_limit_s=LIMIT_S), "n1", [i], started=-s / 60)
            for i, (j, s) in enumerate(ran.items())]
    jobs += [make_job(f"turnb-{k}", time_limit_s=LIMIT_S, submitted=k / 600) for k in range(4, 13)]
    snap = snapshot([make_node("n1", gpus=4)], jobs, now=T0)
    return replace(snap, runtime_estimates={j.id: RUN_S for j in jobs}, runtime_sources={j.id: "same" for j in jobs})


def test_newuser25_n1_the_kth_waiting_job_starts_when_the_kth_gpu_frees() -> None:
    result = run_cycle(_batch())
    assert [a.job_id for a in result.admits] == ["turnb-4"]
    pending = {p.job_id: p.reason for p in result.pending}
    # running ends: turnb-1 +2 s, turnb-2 +3 s, turnb-3 +5 s, turnb-4 (admitted now) +6 s; then the
    # jobs started by the projection end 6 s after their own starts
    want = {"turnb-5": 2, "turnb-6": 3, "turnb-7": 5, "turnb-8": 6, "turnb-9": 8, "turnb-10": 9,
            "turnb-11": 11, "turnb-12": 12}
    assert {j: pending[j].eta for j in want} == {j: _at(s) for j, s in want.items()}
    # the first four name the running job whose end frees their GPU, earliest first — never a queued one
    waits = {j: pending[j].details["eta_waits_on"] for j in ("turnb-5", "turnb-6", "turnb-7", "turnb-8")}
    assert waits == {"turnb-5": ["turnb-1"], "turnb-6": ["turnb-2"], "turnb-7": ["turnb-3"],
                     "turnb-8": ["turnb-4"]}, waits
    text = render_reason(reason_to_dict(pending["turnb-5"]), now=T0, relative=True).eta
    assert text.startswith("ETA 12:00 UTC (in 2s), when turnb-1 ends"), text


def test_newuser25_n2_n4_each_running_line_says_the_end_its_waiters_are_given() -> None:
    result = run_cycle(_batch())
    pending = {p.job_id: p.reason for p in result.pending}
    ends = {j: result.projected[j].at for j in ("turnb-1", "turnb-2", "turnb-3", "turnb-4")}
    # N2: the 6-s runs' own lines say 6 s from their starts, not a minute from now; N4: the job admitted
    # in this very cycle carries its projected end too (its card said only its 2m limit)
    assert ends == {"turnb-1": _at(2), "turnb-2": _at(3), "turnb-3": _at(5), "turnb-4": _at(6)}
    assert result.projected["turnb-4"] == ProjectedEnd(at=_at(6), source="history", runs="same")
    for waiter, holder in (("turnb-5", "turnb-1"), ("turnb-6", "turnb-2"), ("turnb-7", "turnb-3"),
                           ("turnb-8", "turnb-4")):
        assert pending[waiter].eta == ends[holder], (waiter, holder)


def test_newuser25_n2_a_learnt_end_passed_is_re_projected_to_the_limit_and_says_why() -> None:
    """Without the minute's floor, a job that outran its learnt end is projected to its limit at the next
    cycle (the engine runs one every few seconds), with the note saying so — never "now"."""
    snap = replace(_batch(), now=_at(7))  # turnb-1 (started at -4 s) ran 11 s: past its 6 s
    snap = replace(snap, jobs=tuple(j for j in snap.jobs if j.id in ("turnb-1", "turnb-5")),
                   runtime_estimates={"turnb-1": RUN_S, "turnb-5": RUN_S})
    snap = replace(snap, inventory=replace(snap.inventory, nodes=(make_node("n1", gpus=1),)))
    reason = {p.job_id: p.reason for p in run_cycle(snap).pending}["turnb-5"]
    assert reason.eta == _at(LIMIT_S - 4), reason.eta
    assert reason.details["eta_bounds"] == {"turnb-1": "by its 2m time limit"}
