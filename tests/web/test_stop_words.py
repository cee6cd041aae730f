"""A job ended by its time limit or a cancel ends its log saying so (issue 20, F15: its log just
stopped, and a reader could not tell a crash from a cancel).

Real parts: a jupyter_server with jupyter_sched, the local executor and its wrapper, real job
processes that print and then sleep; the last line is read through ``GET jobs/{id}/logs`` (the
job's own log file, which its wrapper writes as the job's owner) as the CLI and the panel read it.
"""

from __future__ import annotations

import sys
from typing import Any

from .conftest import JUDY_TOKEN, wait_for

PRINT_THEN_SLEEP = [sys.executable, "-u", "-c", "print('working'); import time; time.sleep(300)"]


async def _ended(api: Any, job_id: str, token: str | None = None) -> dict[str, Any] | None:
    status, job = await api("GET", f"jobs/{job_id}", **({"token": token} if token else {}))
    assert status == 200, job
    return job if job["state"] in ("cancelled", "failed", "succeeded") else None


async def _log(api: Any, job_id: str, token: str | None = None) -> str:
    status, chunk = await api("GET", f"jobs/{job_id}/logs", **({"token": token} if token else {}))
    assert status == 200, chunk
    return str(chunk["text"])


async def _printed(api: Any, job_id: str, token: str | None = None) -> bool:
    return "working" in await _log(api, job_id, token)


async def test_a_job_stopped_by_its_time_limit_says_so_last(sched_app: Any, api: Any) -> None:
    status, job = await api("POST", "jobs", {"gpus": 1, "time_limit": "2s", "command": PRINT_THEN_SLEEP})
    assert status == 201, job
    ended = await wait_for(lambda: _ended(api, job["id"]), timeout_s=60)
    assert ended["state"] == "failed" and "time limit" in ended["message"]
    text = await _log(api, job["id"])
    assert text.startswith("working\n") or "\nworking\n" in text, text
    assert text.endswith("\n[jupyter_sched] stopped: time limit 2s reached\n"), text
    # before it, which processes the stop signalled (newuser30 n16)
    assert "working\n[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process to stop it:\n" in text, text


async def test_a_cancelled_job_says_who_cancelled_it_last(sched_app: Any, api: Any) -> None:
    status, job = await api("POST", "jobs", {"gpus": 1, "time_limit": "10m", "command": PRINT_THEN_SLEEP},
                            token=JUDY_TOKEN)
    assert status == 201, job
    await wait_for(lambda: _printed(api, job["id"], JUDY_TOKEN), timeout_s=60)
    status, _ = await api("DELETE", f"jobs/{job['id']}", token=JUDY_TOKEN)
    assert status == 200
    await wait_for(lambda: _ended(api, job["id"], JUDY_TOKEN), timeout_s=60)
    lines = (await _log(api, job["id"], JUDY_TOKEN)).splitlines()
    # after its output, which processes the cancel signalled (newuser30 n16), then who cancelled it
    assert lines[-4:-2] == ["working", "[jupyter_sched] the scheduler sent SIGTERM to the job's 1 process to stop it:"]
    assert lines[-2].startswith("[jupyter_sched]   pid ") and "print('working')" in lines[-2], lines
    assert lines[-1] == "[jupyter_sched] cancelled by judy", lines


async def test_a_job_that_ends_by_itself_gets_no_closing_line(sched_app: Any, api: Any) -> None:
    status, job = await api("POST", "jobs", {"gpus": 1, "command": [sys.executable, "-c", "print('done', end='')"]})
    assert status == 201, job
    ended = await wait_for(lambda: _ended(api, job["id"]), timeout_s=60)
    assert ended["state"] == "succeeded"
    assert "[jupyter_sched]" not in await _log(api, job["id"])


async def test_newuser30_n16_a_job_that_left_a_process_running_says_it_was_stopped_in_its_log_and_message(
        sched_app: Any, api: Any) -> None:
    """Read as the CLI's ``logs``, ``%schedule logs`` and the panel read them: ``GET jobs/{id}/logs`` and the job."""
    body = ("import subprocess, sys; child = subprocess.Popen(['sleep', '1001']); print('pid', child.pid, flush=True)")
    status, job = await api("POST", "jobs", {"gpus": 1, "command": [sys.executable, "-c", body]})
    assert status == 201, job
    ended = await wait_for(lambda: _ended(api, job["id"]), timeout_s=60)
    assert ended["state"] == "succeeded" and ended["message"] == (
        "exited with code 0; its main process left 1 process running, ended as jobs leave none behind: "
        "sleep 1001 (SIGTERM)"), ended
    lines = (await _log(api, job["id"])).splitlines()
    child = lines[0].split()[1]
    assert lines[1:] == ["[jupyter_sched] the job's main process ended (exit code 0) and left 1 process running; jobs "
                         "do not leave processes behind, so it was sent SIGTERM:",
                         f"[jupyter_sched]   pid {child}: sleep 1001 (ended on SIGTERM)"], lines
