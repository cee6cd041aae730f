"""New user 22, N10 (second half): one sentence for a running job's projected end on every Python surface —
the CLI's queue and jobs lines (``ends_by``), ``%schedule queue`` / ``%schedule jobs`` (``queue_frame``), a
wait's bar and wide line (``jupyter-sched wait``, ``%schedule wait``: ``wait_progress``) and ``%gpu status``
(``gpu_frame``) — on the data the server sends its owner (``projected_end``, :mod:`jupyter_sched.services.projected`).

Before, stuck's owner read "ends by 05:23 UTC (in 14m26s), its 15m time limit" while its waiter read "ETA 05:09
UTC, when stuck ends, from its progress"."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.magics.render import gpu_frame, queue_frame
from jupyter_sched.wording.jobs import ends_by, job_line
from jupyter_sched.wording.progress import wait_progress
from jupyter_sched.wording.projected import projected_end_text
from jupyter_sched.wording.status import status_lines

NOW = datetime(2026, 12, 5, 5, 8, 34, tzinfo=timezone.utc)
END: dict[str, Any] = {"at": "2026-12-05T05:09:39Z", "source": "progress", "report_at": "2026-12-05T05:08:30Z",
                       "fraction": 0.3}
PROGRESS = "projected end ~05:09 UTC (in 1m05s), from its progress report of 05:08:30 UTC"
LIMIT = "at the latest 05:23 UTC (in 14m26s), its 15m time limit"


def _stuck(**fields: Any) -> dict[str, Any]:
    return {"id": "j-stuck", "name": "stuck", "kind": "training", "state": "running", "user": "ana", "mine": True,
            "priority": "normal", "time_limit_s": 900, "started_at": "2026-12-05T05:08:00Z", "projected_end": END,
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-0"], "gpu_milli": 1000}, **fields}


def test_s23_newuser22_n10_the_cli_lines_say_the_projected_end_then_the_limit() -> None:
    assert ends_by(_stuck(), NOW) == f"{PROGRESS} · {LIMIT}"  # jupyter-sched queue / jobs


def test_s23_newuser22_n10_the_magics_tables_say_it() -> None:
    assert queue_frame([_stuck()], NOW)["eta"][0] == f"{PROGRESS} · {LIMIT}"  # %schedule queue / jobs


def test_s23_newuser22_n10_a_wait_says_it_beside_its_bar_and_where_from_on_wide_surfaces() -> None:
    frame = wait_progress(_stuck(), NOW)
    assert frame.label == "running on vm · 34s of 15m limit · projected end ~05:09 UTC (in 1m05s)"
    assert frame.narrow == "running on vm · 34s of 15m limit"  # a narrow terminal keeps the bar its room
    assert frame.long_label == f"running on vm · 34s of 15m limit · {PROGRESS}"


def test_s23_newuser22_n10_gpu_status_says_it_on_the_owners_work() -> None:
    inventory = {"gpus": [{"uuid": "GPU-0", "node": "vm", "index": 0, "model": "A100", "memory_mib": 81920}]}
    frame = gpu_frame(inventory, [_stuck()], now=NOW)
    assert frame["allocated_to"][0] == "ana: training j-stuck (stuck), projected end ~05:09 UTC (in 1m05s)"


def test_s23_newuser22_n10_status_job_and_the_status_summary_say_it() -> None:
    # `jupyter-sched status JOB` / `%schedule status JOB`
    assert job_line(_stuck(), NOW) == f"job j-stuck (stuck): running on vm: GPU-0 · {PROGRESS} · {LIMIT}"  # newuser27 n9
    progress = {"fraction": 0.4, "at": "2026-12-05T05:08:30Z", "run_started_at": "2026-12-05T05:08:00Z", "ran_s": 30}
    lines = status_lines("http://x/", {"version": "1"}, {"user": "ana"}, {"gpus": []},
                         running=[_stuck(progress=progress)], now=NOW)  # `jupyter-sched status`
    assert "progress   stuck (j-stuck): 40 % done, reported 05:08 UTC (4s ago) · projected end ~05:09 UTC (in 1m05s)" \
        in lines, lines


@pytest.mark.parametrize(("end", "want"), [
    ({"source": "history", "runs": "same", "report_at": None}, "projected end ~Dec 5 05:09 UTC, if it runs as long as "
                                                                "similar past runs did"),
    ({"source": "history", "runs": "other", "share": 0.12}, "projected end ~Dec 5 05:09 UTC, if it ends at ~12 % of its "
                                                             "time limit, as your other runs did"),
    ({"source": "progress"}, "projected end ~Dec 5 05:09 UTC, from its progress report of Dec 5 05:08:30 UTC"),
    ({"source": "guess"}, ""),
    ({"at": "soon"}, ""),
], ids=["learnt from similar runs", "learnt from the owner's other runs", "the server's text: clocks with their date",
        "an unknown source says nothing", "no time says nothing"])
def test_s23_newuser22_n10_words_of_each_projection(end: dict[str, Any], want: str) -> None:
    assert projected_end_text({**END, **end}, None, yours=True) == want


@pytest.mark.parametrize("job", [
    _stuck(projected_end=None),
    _stuck(stop_requested={"intent": "cancel", "text": "stopping (cancelled)", "kill_at": "2026-12-05T05:09:30Z"}),
], ids=["another user's line (no projection sent): the limit, as before", "stopping: its stop, not an end"])
def test_s23_newuser22_n10_no_projection_on_lines_that_have_none(job: dict[str, Any]) -> None:
    assert "projected end" not in ends_by(job, NOW)
    assert "projected end" not in wait_progress(job, NOW).long_label
