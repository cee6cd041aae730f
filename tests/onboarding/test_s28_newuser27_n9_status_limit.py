"""newuser27 n9: ``status JOB`` of a running job left its end out until a projection existed ("running on vm:
GPU-sim-vm-0 [simulated GPUs] · under 1 % done, reported 22:33 UTC (10s ago)" — no "ends by 22:38 UTC, its 5m
time limit", which ``queue`` and ``jobs`` show), and once projected dropped the "at the latest … its time limit"
half ``queue`` keeps. Now ``job_line`` (status JOB, the magics) says the queue's ``ends_by``."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.wording.jobs import ends_by, job_line

NOW = datetime(2026, 12, 5, 22, 33, 10, tzinfo=timezone.utc)
PROGRESS = {"fraction": 0.004, "at": "2026-12-05T22:33:00Z", "run_started_at": "2026-12-05T22:33:00Z", "ran_s": 0}


def _running(**fields: Any) -> dict[str, Any]:
    return {"id": "j-nb", "name": "nbjob", "kind": "training", "state": "running", "user": "root", "mine": True,
            "priority": "normal", "time_limit_s": 300, "started_at": "2026-12-05T22:33:00Z", "simulated": True,
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-sim-vm-0"], "gpu_milli": 1000}, "progress": PROGRESS,
            **fields}


def test_newuser27_n9_status_job_says_its_time_limit_end_before_a_projection() -> None:
    line = job_line(_running(), NOW)
    assert line == ("job j-nb (nbjob): running on vm: GPU-sim-vm-0 [simulated GPUs] · under 1 % done, reported "
                    "22:33 UTC (10s ago) · ends by 22:38 UTC (in 4m50s), its 5m time limit"), line
    assert line.endswith(ends_by(_running(), NOW))  # the words of `queue` and `jobs`


def test_newuser27_n9_status_job_keeps_at_the_latest_once_projected() -> None:
    end = {"at": "2026-12-05T22:35:00Z", "source": "progress", "report_at": "2026-12-05T22:33:00Z", "fraction": 0.5}
    job = _running(projected_end=end, progress={**PROGRESS, "fraction": 0.5})
    line = job_line(job, NOW)
    assert line.endswith("projected end ~22:35 UTC (in 1m50s), from its progress report of 22:33:00 UTC · at the latest "
                         "22:38 UTC (in 4m50s), its 5m time limit"), line
    assert line.endswith(ends_by(job, NOW)), line


def test_newuser27_n9_a_job_without_a_limit_says_so_as_queue_does() -> None:
    line = job_line(_running(time_limit_s=None), NOW)
    assert line.endswith(" · no time limit"), line
