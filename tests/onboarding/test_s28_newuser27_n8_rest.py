"""newuser27 N8, the rest.

(b) The owner's line kept saying "60 % done, reported 22:27 UTC (1m10s ago) · projected end …, from its progress
report of 22:27:38 UTC" while the job's reports went to a server that had stopped. Past the run's stale bound (3 of
its report intervals, at least 2 minutes: the bound past which the ETAs no longer read the report) the line says
"no progress report since 22:27:38 UTC (3m10s)" — status, queue, jobs, the magics (wording.reported) and the panel.

(a) A job's own in-job client (``jupyter_sched.client.connect()``, not only ``report_progress``) finds the store's
current server when the address it was given stops answering: the host registry names this account's schedulers,
one that holds the job (``GET jobs/{id}`` answers) is taken, the same code path as report_progress's.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from jupyter_sched.wording.jobs import job_line
from jupyter_sched.wording.reported import progress_text

AT = "2026-12-05T22:27:38Z"


def _job(**progress: Any) -> dict[str, Any]:
    return {"id": "j-big", "name": "big-prog", "kind": "training", "state": "running", "mine": True,
            "started_at": "2026-12-05T22:20:00Z", "time_limit_s": 1800,
            "allocation": {"node": "vm", "gpu_uuids": ["GPU-0"], "gpu_milli": 1000},
            "progress": {"fraction": 0.6, "done": 240, "total": 400, "at": AT, "run_started_at": "2026-12-05T22:20:00Z",
                         "ran_s": 458.0, "reports": 45, **progress}}


def test_newuser27_n8_the_owners_line_says_when_reports_stopped() -> None:
    fresh = datetime(2026, 12, 5, 22, 28, 48, tzinfo=timezone.utc)  # 70 s: within 2 min, as reported
    assert progress_text(_job(), fresh) == "60 % done, reported 22:27 UTC (1m10s ago)"
    later = datetime(2026, 12, 5, 22, 30, 48, tzinfo=timezone.utc)  # 190 s: past the bound
    assert progress_text(_job(), later) == "60 % done, no progress report since 22:27:38 UTC (3m10s)"
    assert "no progress report since 22:27:38 UTC (3m10s)" in job_line(_job(), later)  # status JOB
    # a job reporting every 5 minutes is not stale at 10 minutes (3 intervals: 15 min)
    slow = _job(ran_s=1800.0, reports=6)
    assert progress_text(slow, datetime(2026, 12, 5, 22, 37, 38, tzinfo=timezone.utc)).endswith("(10m ago)")
    # the server's own text (no clock) is unchanged
    assert progress_text(_job(), None) == "60 % done, reported Dec 5 22:27 UTC"
