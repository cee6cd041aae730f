"""New user 30, n14: while a job is being launched (state ``admitted``, which the panel and ``jobs`` call
"starting"), another user's waiting line counted it as one more job held: "ana holds 2 of 2 GPUs (2 jobs)"
beside a job list that said one of them was starting. The line now says so, in the one renderer the panel,
the magics and the CLI share."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.model import JobState
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import held_by_text


def test_newuser30_n14_a_waiting_line_says_which_of_the_holders_jobs_is_starting() -> None:
    a1 = running(make_job("a1", user="ana", time_limit_s=600), indices=[0], started=-1)
    a2 = replace(running(make_job("a2", user="ana", time_limit_s=600), indices=[1], started=0),
                 state=JobState.ADMITTED, started_at=None)  # given its GPU, being launched
    b1 = make_job("b1", user="bo", time_limit_s=600, submitted=-0.01)
    result = run_cycle(snapshot([make_node("n1", gpus=2)], [a1, a2, b1], now=T0), SchedulingProfile())
    reason = next(p.reason for p in result.pending if p.job_id == "b1")
    assert reason.details["held_by_one_user"]["starting"] == 1, reason.details["held_by_one_user"]
    line = render_reason(reason_to_dict(reason), now=T0, relative=True).line
    assert "ana holds 2 of 2 GPUs (2 jobs, 1 of them starting)" in line, line


@pytest.mark.parametrize(("holder", "said"), [
    ({"jobs": 1, "starting": 1}, "ana holds 2 of 2 GPUs (1 job, starting)"),
    ({"jobs": 3, "starting": 3, "without_limit": 3}, "ana holds 2 of 2 GPUs (3 jobs, all of them starting, no time limit)"),
    ({"jobs": 2, "starting": 1, "leases": 1}, "ana holds 2 of 2 GPUs (2 jobs, 1 of them starting and 1 lease)"),
    ({"jobs": 2}, "ana holds 2 of 2 GPUs (2 jobs)"),
], ids=["its one job", "all of its jobs", "beside a lease", "none starting: as before"])
def test_newuser30_n14_held_by_text_counts_starting_jobs(holder: dict[str, Any], said: str) -> None:
    assert held_by_text({"user": "ana", "gpus": 2, "total": 2, **holder}) == said
