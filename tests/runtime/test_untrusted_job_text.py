"""What a job writes cannot stop the engine (red team 6), on a real server and PostgreSQL.

A failed job's message quotes its log's last lines. PostgreSQL's ``text`` holds no NUL byte: a job
that printed ``\\x00`` and failed made every write of its end fail, and the engine, which takes a
store error for a lost database, retried for everyone's work without end. The message now shows
control characters (``^@``) instead of carrying them, so the end is written and the next job runs.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import httpx

from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer


def _ended(client: httpx.Client, job_id: str, *states: str) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while True:
        job: dict[str, object] = client.get(f"jobs/{job_id}").json()
        if job["state"] in states:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.2)


def test_a_nul_byte_in_a_failed_jobs_last_lines_is_stored_and_the_engine_goes_on(tmp_path: Path, pg_url: str) -> None:
    srv = EmbeddedServer.start(tmp_path, db_url=pg_url, users={OWNER_TOKEN: "eve"}, simulated_gpus=1)
    try:
        eve = httpx.Client(base_url=srv.api, headers={"Authorization": f"token {OWNER_TOKEN}"}, timeout=30)
        script = "import sys; sys.stdout.write('before\\x00after\\x1b[2J\\n'); sys.stdout.flush(); sys.exit(1)"
        bad = eve.post("jobs", json={"gpus": 0, "command": [sys.executable, "-c", script]}).json()
        failed = _ended(eve, bad["id"], "failed")
        assert failed["message"] == "exited with code 1: before^@after", failed["message"]  # its one line leads
        after = eve.post("jobs", json={"gpus": 0, "command": ["true"]}).json()
        assert _ended(eve, after["id"], "succeeded", "failed")["state"] == "succeeded"
    finally:
        srv.kill()
