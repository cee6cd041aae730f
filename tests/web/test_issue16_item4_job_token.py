"""Issue 16 item 4 (finishing): a job reports its progress with the token the scheduler gives it.

Real parts: a jupyter_server with jupyter_sched, real job processes that read their own environment and
call ``jupyter_sched.report_progress``, the SQLite store. The token under test is always the one a real
job found in its environment (written by the job to a file of the test, never to its log).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import BOSS_TOKEN, wait_for

TOKEN_ENV = "JUPYTER_SCHED_JOB_TOKEN"


async def _running(api: Any, job_id: str) -> None:
    async def running() -> bool:
        _, seen = await api("GET", f"jobs/{job_id}")
        return bool(seen["state"] == "running")

    await wait_for(running)


async def _job_with_token(api: Any, tmp_path: Path, name: str, code: str = "") -> tuple[str, str]:
    """A running job whose own process wrote its JUPYTER_SCHED_JOB_TOKEN to a file; ``(id, token)``."""
    out = tmp_path / f"{name}.token"
    program = (f"import os, time; open({str(out)!r}, 'w').write(os.environ.get({TOKEN_ENV!r}, 'MISSING')); "
               f"{code}time.sleep(300)")
    status, job = await api("POST", "jobs", {"gpus": 1, "time_limit": "10m", "command": [sys.executable, "-c", program]})
    assert status == 201, job

    async def written() -> str:
        return out.read_text() if out.exists() else ""

    token = await wait_for(written)
    assert token != "MISSING" and token.startswith("jsjob1."), "the job's environment has no progress token"
    await _running(api, job["id"])
    return str(job["id"]), token


async def _refusals(api: Any) -> list[dict[str, Any]]:
    _, audit = await api("GET", "audit", params={"action": "refused"}, token=BOSS_TOKEN)
    return list(audit)


async def test_issue16_item4_a_real_job_reports_with_its_own_token_and_get_shows_it(
        sched_app: Any, api: Any, tmp_path: Path) -> None:
    """No token wired by the user: the job calls report_progress and GET jobs/{id} shows the report."""
    code = "import jupyter_sched; print('answer', (jupyter_sched.report_progress(3, 4) or {}).get('stored'), flush=True); "
    job_id, token = await _job_with_token(api, tmp_path, "reporter", code)

    async def reported() -> Any:
        _, seen = await api("GET", f"jobs/{job_id}")
        return seen.get("progress")

    progress = await wait_for(reported)
    assert progress["fraction"] == pytest.approx(0.75) and progress["done"] == 3 and progress["total"] == 4
    _, job = await api("GET", f"jobs/{job_id}")
    assert token not in str(job)
    assert TOKEN_ENV not in (job.get("env") or {}) and "JUPYTER_SCHED_URL" not in (job.get("env") or {}), job  # the echo: the user's own


async def test_issue16_item4_the_job_token_reports_its_own_job_only(sched_app: Any, api: Any, tmp_path: Path) -> None:
    job_id, token = await _job_with_token(api, tmp_path, "own")
    status, answer = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 4}, token=token)
    assert status == 200 and answer["stored"] is True and answer["job_id"] == job_id, answer
    _, job = await api("GET", f"jobs/{job_id}")
    assert job["progress"]["fraction"] == pytest.approx(0.25)


async def test_issue16_item4_the_job_token_cannot_read_the_job_or_call_other_routes_audited(
        sched_app: Any, api: Any, tmp_path: Path) -> None:
    job_id, token = await _job_with_token(api, tmp_path, "reader")
    before = len((await api("GET", "jobs"))[1])
    for method, path, body in (("GET", f"jobs/{job_id}", None), ("GET", "jobs", None), ("GET", "me", None),
                               ("POST", "jobs", {"gpus": 0, "command": ["true"]}),
                               ("DELETE", f"jobs/{job_id}", None), ("GET", f"jobs/{job_id}/logs", None),
                               ("GET", "no/such/route", None)):
        status, error = await api(method, path, body, token=token)
        assert status == 403, (method, path, status, error)
        assert error["error"]["field"] == "Authorization" and "only report its own job" in error["error"]["message"]
        assert token not in str(error)
    _, jobs = await api("GET", "jobs")
    assert len(jobs) == before  # nothing was submitted
    _, job = await api("GET", f"jobs/{job_id}")
    assert job["state"] == "running"  # nor cancelled
    requests = {(r["user"], r.get("job_id"), r["details"].get("request"), r["details"].get("status"))
                for r in await _refusals(api)}
    assert {("ivan", job_id, "GET jobs/{job_id}", 403), ("ivan", job_id, "POST jobs", 403),
            ("ivan", job_id, "DELETE jobs/{job_id}", 403)} <= requests, requests


async def test_issue16_item4_the_job_token_cannot_report_for_another_job_audited(
        sched_app: Any, api: Any, tmp_path: Path) -> None:
    first, token = await _job_with_token(api, tmp_path, "first")
    second, _ = await _job_with_token(api, tmp_path, "second")
    status, error = await api("POST", f"jobs/{second}/progress", {"done": 1, "total": 2}, token=token)
    assert status == 403 and error["error"]["field"] == "job_id" and second in error["error"]["message"], error
    _, other = await api("GET", f"jobs/{second}")
    assert other.get("progress") is None
    refused = [r for r in await _refusals(api) if r.get("job_id") == first and r["details"].get("field") == "job_id"]
    assert refused and refused[0]["user"] == "ivan" and refused[0]["details"]["status"] == 403, refused


async def test_issue16_item4_the_job_token_stops_working_when_the_job_ended(
        sched_app: Any, api: Any, tmp_path: Path) -> None:
    job_id, token = await _job_with_token(api, tmp_path, "ending")
    status, _ = await api("DELETE", f"jobs/{job_id}")
    assert status in (200, 202)

    async def ended() -> bool:
        _, seen = await api("GET", f"jobs/{job_id}")
        return bool(seen["state"] in ("cancelled", "failed", "succeeded"))

    await wait_for(ended)
    status, error = await api("POST", f"jobs/{job_id}/progress", {"done": 2, "total": 4}, token=token)
    assert status == 401 and "expired" in error["error"]["message"] and error["error"]["field"] == "Authorization", error
    refused = [r for r in await _refusals(api) if r.get("job_id") == job_id and r["details"].get("status") == 401]
    assert refused and refused[0]["user"] == "ivan", refused


@pytest.mark.parametrize("mangle", [
    lambda t: t[:-4] + ("AAAA" if not t.endswith("AAAA") else "BBBB"),
    lambda t: t.replace(".1.", ".2.", 1),
    lambda t: "jsjob1.j-made-up.1." + "A" * 43,
    lambda t: "jsjob1.garbage",
], ids=["a changed mac", "another run's number", "a made-up job", "no token's shape"])
async def test_issue16_item4_a_forged_job_token_is_401_and_names_nobody(
        sched_app: Any, api: Any, tmp_path: Path, mangle: Any) -> None:
    job_id, token = await _job_with_token(api, tmp_path, "forged")
    audited = len(await _refusals(api))
    status, error = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 2}, token=mangle(token))
    assert status == 401 and error["error"]["field"] == "Authorization", error
    assert len(await _refusals(api)) == audited  # a forgery may name any job: not put on its owner's record


async def test_issue16_item4_a_job_token_in_the_url_is_refused(sched_app: Any, api: Any, tmp_path: Path) -> None:
    job_id, token = await _job_with_token(api, tmp_path, "query")
    status, error = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 2}, token=None,
                              params={"token": token})
    assert status == 401 and error["error"]["field"] == "token" and "header" in error["error"]["message"], error


async def test_issue16_item4_a_users_env_cannot_set_the_job_token(sched_app: Any, api: Any) -> None:
    status, error = await api("POST", "jobs", {"gpus": 0, "command": ["true"], "env": {TOKEN_ENV: "jsjob1.x.1.y"}})
    assert status == 400 and error["error"]["field"] == f"env.{TOKEN_ENV}", error
    refused = [r for r in await _refusals(api) if r["details"].get("field") == f"env.{TOKEN_ENV}"]
    assert refused, "the refusal is audited"


async def test_issue16_item4_the_job_token_is_in_no_log_and_no_answer(sched_app: Any, api: Any, tmp_path: Path) -> None:
    seen = _Lines()
    logging.getLogger().addHandler(seen)
    previous = logging.getLogger().level
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        await _no_token_anywhere(sched_app, api, tmp_path, seen)
    finally:
        logging.getLogger().removeHandler(seen)
        logging.getLogger().setLevel(previous)


class _Lines(logging.Handler):
    """Every log record of the server and the scheduler, formatted with its arguments."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def _no_token_anywhere(sched_app: Any, api: Any, tmp_path: Path, seen: _Lines) -> None:
    code = "import jupyter_sched; jupyter_sched.report_progress(1, 2); "
    job_id, token = await _job_with_token(api, tmp_path, "secret", code)

    async def reported() -> Any:
        _, seen = await api("GET", f"jobs/{job_id}")
        return seen.get("progress")

    await wait_for(reported)
    await api("GET", f"jobs/{job_id}", token=token)  # refused: the refusal says no token either
    await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 2}, token=token[:-2] + "xx")
    mac = token.rsplit(".", 1)[1]
    answers = [await api("GET", path, params=params, token=BOSS_TOKEN) for path, params in (
        (f"jobs/{job_id}", None), ("jobs", None), ("audit", None), (f"jobs/{job_id}/logs", None),
        ("queue", None), ("usage", None))]
    for status, body in answers:
        assert status == 200 and mac not in str(body), body
    text = "\n".join(seen.lines)
    assert "job-token" in text  # the request log was read: it names the token's stand-in user, never the token
    assert mac not in text
    log_text = "".join(p.read_text(errors="replace") for p in Path(sched_app.job_log_dir).rglob("*") if p.is_file())
    assert mac not in log_text  # the job's own output log, its record and its wrapper's stderr


async def test_issue16_item4_a_job_token_no_longer_taken_is_warned_once_and_the_job_runs_on(
        sched_app: Any, api: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, http_server_port: Any,
        jp_base_url: str) -> None:
    """report_progress uses JUPYTER_SCHED_JOB_TOKEN with JUPYTER_SCHED_URL; a 401 (the run ended) never
    raises into the training loop."""
    import asyncio

    import jupyter_sched
    from jupyter_sched.client import progress as client_progress

    job_id, token = await _job_with_token(api, tmp_path, "late")
    monkeypatch.setattr(client_progress, "_state", {"client": None, "sent_at": None, "interval_s": 10.0,
                                                    "warned": set()})
    monkeypatch.delenv("JUPYTER_SCHED_TOKEN", raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_JOB_ID", job_id)
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}")
    monkeypatch.setenv(TOKEN_ENV, token)
    loop = asyncio.get_running_loop()
    first = await loop.run_in_executor(None, jupyter_sched.report_progress, 1, 4)
    assert first is not None and first["stored"] is True
    await api("DELETE", f"jobs/{job_id}")

    async def ended() -> bool:
        _, seen = await api("GET", f"jobs/{job_id}")
        return bool(seen["state"] in ("cancelled", "failed", "succeeded"))

    await wait_for(ended)
    with pytest.warns(RuntimeWarning, match="no longer takes this job's token"):
        assert await loop.run_in_executor(None, jupyter_sched.report_progress, 4, 4) is None


class TestWithJupyterServersOwnTokenProvider:
    """The embedded default: jupyter_server's built-in token provider (wrapped by ProvenOnce), every caller
    its owner. The job token takes the same path: reports, and reads nothing."""

    @pytest.fixture
    def jp_server_config(self, tmp_path: Path) -> dict[str, Any]:
        from .conftest import server_config

        config = server_config(tmp_path)
        del config["ServerApp"]["identity_provider_class"]
        return config

    async def test_issue16_item4_the_owners_job_reports_and_its_token_reads_nothing(
            self, sched_app: Any, api: Any, tmp_path: Path) -> None:
        code = "import jupyter_sched; jupyter_sched.report_progress(1, 2); "
        job_id, token = await _job_with_token(api, tmp_path, "owner", code)

        async def reported() -> Any:
            _, seen = await api("GET", f"jobs/{job_id}")
            return seen.get("progress")

        assert (await wait_for(reported))["fraction"] == pytest.approx(0.5)
        status, error = await api("GET", f"jobs/{job_id}", token=token)
        assert status == 403 and error["error"]["field"] == "Authorization", error
        status, error = await api("GET", "jobs", token=token[:-3] + "abc")
        assert status == 401, error
