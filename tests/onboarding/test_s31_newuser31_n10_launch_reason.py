"""newuser31 N10: after the install was redone under a running lab, jobs failed with the launcher's reason in their
message ("exited with code 2: …/python3: can't open file '…/executors/wrapper.py': [Errno 2] …"); the magics showed
it, the CLI's ``jobs``/``status`` line said only "failed, exit code 2" — the reason after the code was dropped.
The one job-line renderer (``wording.jobs``) keeps it now, beside what the end stopped and the log's last lines."""

from __future__ import annotations

from datetime import datetime, timezone

from jupyter_sched.wording.jobs import job_line

NOW = datetime(2026, 12, 6, 13, 20, tzinfo=timezone.utc)
REASON = "/v/bin/python3: can't open file '/v/site-packages/jupyter_sched/executors/wrapper.py': [Errno 2] No such file"


def _failed(message: str) -> dict[str, object]:
    return {"id": "j-1", "name": "x", "state": "failed", "exit_code": 2, "message": message, "gpus": 1,
            "submitted_at": "2026-12-06T13:17:00Z", "started_at": "2026-12-06T13:17:01Z",
            "finished_at": "2026-12-06T13:17:02Z"}


def test_newuser31_n10_the_launchers_reason_after_the_code_is_on_the_line() -> None:
    line = job_line(_failed(f"exited with code 2: {REASON}"), NOW)
    assert "exit code 2" in line and REASON in line, line
    both = job_line(_failed(f"exited with code 2: {REASON}; last lines: boom"), NOW)
    assert REASON in both and "last lines: boom" in both, both
    plain = job_line(_failed("exited with code 2; last lines: boom"), NOW)
    assert "last lines: boom" in plain and ":  " not in plain, plain
