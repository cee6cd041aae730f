"""New user 16's findings of branch r16-nu16 (/work/coord/notes/newuser16.md), each its own test,
against a real embedded server (simulated GPUs, SQLite) and the real CLI and magics."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.onboarding.test_cli_firsthour import api, clear, module_server
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-cat": "cat", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "nu16", USERS)


def _refusals(server: EmbeddedServer, user: str, field: str) -> list[dict[str, Any]]:
    """The audited refusals of ``user`` naming ``field``, polled with a deadline (written just after the answer)."""
    boss = api(server, "tok-boss")
    deadline = time.monotonic() + 30
    while True:
        rows = boss.get("audit", params={"user": user, "action": "refused", "limit": 1000}).json()
        found = [r for r in rows if (r.get("details") or {}).get("field") == field]
        if found:
            return found
        assert time.monotonic() < deadline, rows
        time.sleep(0.2)


def test_newuser16_n15_gpu_history_of_another_users_work_is_refused_like_its_job_history(
        server: EmbeddedServer) -> None:
    """N15: cat was refused ann's job series by job id but got the same series by the GPU id the queue
    shows. One rule now: a non-admin's ``telemetry/history?gpu=`` of a GPU that another user's live
    work holds is refused (403 naming the rule, audited); the owner, an admin and a free GPU answer."""
    clear(server)
    ann, cat, boss = api(server, "tok-ann"), api(server, "tok-cat"), api(server, "tok-boss")
    made = ann.post("jobs", json={"gpus": 1, "command": ["sleep", "120"], "name": "a-busy"})
    assert made.status_code == 201, made.text
    job_id = made.json()["id"]
    deadline = time.monotonic() + 60
    while True:
        job = ann.get(f"jobs/{job_id}").json()
        if job["state"] == "running" and job.get("allocation"):
            break
        assert time.monotonic() < deadline, job
        time.sleep(0.2)
    held = job["allocation"]["gpu_uuids"][0]
    free = next(g["uuid"] for g in boss.get("inventory").json()["nodes"][0]["gpus"] if g["uuid"] != held)
    by_job = cat.get("telemetry/history", params={"job": job_id})
    assert by_job.status_code == 404, by_job.text
    by_gpu = cat.get("telemetry/history", params={"gpu": held})
    assert by_gpu.status_code == 403, by_gpu.text
    error = by_gpu.json()["error"]
    assert error["field"] == "gpu" and "another user's job" in error["message"] and job_id in error["message"], error
    assert "series" not in by_gpu.json() and "points" not in by_gpu.json()
    assert any(r["job_id"] == job_id for r in _refusals(server, "cat", "gpu"))
    for allowed, gpu in ((ann, held), (boss, held), (cat, free)):
        answer = allowed.get("telemetry/history", params={"gpu": gpu})
        assert answer.status_code == 200, answer.text
    ann.delete(f"jobs/{job_id}")
