"""New user 21, N5: one sentence for a planned preemption — the CLI's queue and jobs lines (``ends_by``),
``status JOB`` (``job_line``), the magics' tables (``queue_frame``) and a wait's wide line — on the data the server sends
(``preemption_planned``, :mod:`jupyter_sched.services.planned`)."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.magics.render import queue_frame
from jupyter_sched.wording.jobs import ends_by, job_line
from jupyter_sched.wording.preemption import planned_preemption_text
from jupyter_sched.wording.progress import wait_progress

NOW = datetime(2026, 12, 5, 2, 6, 53, tzinfo=timezone.utc)
PLAN: dict[str, Any] = {"at": "2026-12-05T02:11:00Z", "for_job": "j-n2", "for_name": "norm2", "for_owner": None,
                        "for_priority": "normal", "for_team": "ml", "same_team": True, "verb": "preempted"}


def _running(**fields: Any) -> dict[str, Any]:
    return {"id": "j-low", "name": "lowml", "kind": "training", "state": "running", "user": "ana", "priority": "low",
            "time_limit_s": 600, "started_at": "2026-12-05T02:06:00Z", "preemption_planned": PLAN,
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-0"], "gpu_milli": 1000}, **fields}


def test_newuser21_n5_the_running_line_says_when_and_for_whom() -> None:
    want = ("ends by 02:16 UTC (in 9m07s), its 10m time limit — to be preempted at ~02:11 UTC for norm2 (j-n2), "
            "normal priority of the same team, unless it ends first")
    assert ends_by(_running(), NOW) == want
    assert queue_frame([_running()], NOW)["eta"][0] == want  # %schedule queue / jobs
    assert job_line(_running(), NOW).endswith(f" · {want}")  # status JOB, as queue says it (newuser27 n9)
    frame = wait_progress(_running(), NOW)  # wait: the bar's label stays short, a notebook or a log says the plan
    assert frame.label == "running on vm · 53s of 10m limit"
    assert frame.long_label == (f"{frame.label} · to be preempted at ~02:11 UTC for norm2 (j-n2), normal priority of "
                                "the same team, unless it ends first")


@pytest.mark.parametrize(("plan", "lease", "want"), [
    ({"for_owner": "bob", "for_name": "x (v2)"}, False,
     "to be preempted at ~Dec 5 02:11 UTC for bob's job \"x (v2)\" (j-n2), normal priority of the same team, "
     "unless it ends first"),
    ({"same_team": False, "verb": "reclaimed", "for_team": "vision"}, False,
     "to be reclaimed at ~Dec 5 02:11 UTC for norm2 (j-n2), to return borrowed quota to vision, unless it ends first"),
    ({"same_team": False, "for_team": "vision"}, True,
     "to be preempted at ~Dec 5 02:11 UTC for norm2 (j-n2), normal priority of team vision, unless it is released "
     "first"),
    ({"for_name": "a\nb\x1b[31m"}, False,
     "to be preempted at ~Dec 5 02:11 UTC for a b (j-n2), normal priority of the same team, unless it ends first"),
    ({"for_name": None}, False,
     "to be preempted at ~Dec 5 02:11 UTC for j-n2, normal priority of the same team, unless it ends first"),
], ids=["another user's waiter, by owner and quoted name", "a reclaim across teams", "a lease of another team's class",
        "a name with a newline and an escape made one plain line", "a waiter without a name"])
def test_newuser21_n5_words_of_each_plan(plan: dict[str, Any], lease: bool, want: str) -> None:
    assert planned_preemption_text({**PLAN, **plan}, None, lease=lease) == want


@pytest.mark.parametrize("job", [
    _running(preemption_planned=None),
    _running(preemption_planned={"at": "soon", "for_job": "j-n2"}),
    _running(preemption_planned={**PLAN, "for_job": ""}),
    _running(state="succeeded"),
    _running(stop_requested={"intent": "preempt", "text": "stopping (preempted)"}),
    _running(stopping_since="2026-12-05T02:06:50Z"),
], ids=["no plan", "no time", "no waiter", "ended", "stop requested", "stopping"])
def test_newuser21_n5_no_plan_said_where_there_is_none(job: dict[str, Any]) -> None:
    assert "to be preempted" not in ends_by(job, NOW) and "to be preempted" not in job_line(job, NOW)
    assert "to be preempted" not in wait_progress(job, NOW).long_label
