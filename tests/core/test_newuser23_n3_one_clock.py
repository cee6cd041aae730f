"""newuser23 N3: one moment, two clocks — the minimum-runtime refusal said the end of a victim's minimum
runtime rounded up ("waits until … has run 5 min (08:44 UTC)") while the ETA beside it and the victim's line
said it floored ("ETA 08:43 UTC"). The refusal now writes it with the ETA's formatter (model.units.clock_text)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.model.units import clock_text
from jupyter_sched.scheduling import SchedulingProfile, run_cycle


def test_newuser23_n3_the_minimum_runtime_end_is_said_as_the_eta_says_it() -> None:
    # teama's borrowers started 2.5, 1.5 and 0.5 min ago (running again after an eviction): the youngest
    # has run 5 min at 12:04:30 — "12:05" (rounded up) before, beside "ETA 12:04"
    borrowers = [replace(running(make_job(f"a{i}", team="teama", user="ann"), "n1", [g], started=-(2.5 - i)),
                         preempted_by="b-old") for i, g in enumerate((0, 1, 3))]
    b_run = running(make_job("b-run", team="teamb", user="bob"), "n1", [2])
    q = quotas(Quota(team="teama", guaranteed=2, borrowing_limit=None), Quota(team="teamb", guaranteed=2))
    result = run_cycle(snapshot([make_node(gpus=4)], [*borrowers, b_run, make_job("b-evictor", team="teamb",
                                                                                   user="bob", submitted=0)],
                                quota=q, now=T0), SchedulingProfile())
    reason = next(p.reason for p in result.pending if p.job_id == "b-evictor")
    assert reason.details["preemption_rule"]["rule"] == "min_runtime", reason.details
    assert reason.eta == T0 + timedelta(minutes=4, seconds=30), reason.eta
    said = clock_text(reason.eta, T0)
    assert f"until ann's a2 (a2) has run 5 min ({said})" in reason.message, (said, reason.message)
