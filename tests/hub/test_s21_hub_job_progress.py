"""Hub mode: a job's own process reports its progress through the central service, with the URL and
token the service gave it; another user's job token is refused and audited (s21-hubjobs item 1;
session 20 wired it without a hub run).

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts (amy, eve) whose jobs ``jupyter-sched serve`` (as root, on PostgreSQL) starts as them in a clean
environment; each job calls ``jupyter_sched.report_progress`` or the REST route itself with what its
environment holds. No token is wired by the users; the test never sees a job token (the jobs print only
what they were answered).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.accounts import Account

from .hub_harness import SERVICE, Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

REPORTER = """
import json, os, sys, time
import jupyter_sched
answer = jupyter_sched.report_progress(1, 4)
print(json.dumps({"url": os.environ.get("JUPYTER_SCHED_URL"), "token": bool(os.environ.get("JUPYTER_SCHED_JOB_TOKEN")),
                  "stored": (answer or {}).get("stored")}), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
"""

# eve's job tries amy's job's progress, the job list, and a forged token, with what its environment holds
PROBE = """
import json, os, sys, time, urllib.error, urllib.request
url, token, other = os.environ["JUPYTER_SCHED_URL"], os.environ["JUPYTER_SCHED_JOB_TOKEN"], sys.argv[2]
def call(method, path, body, token):
    request = urllib.request.Request(url + "api/sched/" + path, method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": "token " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as answer:
            return [answer.status, json.loads(answer.read() or b"null")]
    except urllib.error.HTTPError as refused:
        return [refused.code, json.loads(refused.read() or b"null")]
forged = token.rsplit(".", 1)[0] + "." + "A" * 43
print(json.dumps({"other": call("POST", "jobs/" + other + "/progress", {"done": 3, "total": 4}, token),
                  "list": call("GET", "jobs", None, token),
                  "forged": call("POST", "jobs/" + os.environ["JUPYTER_SCHED_JOB_ID"] + "/progress",
                                 {"done": 1, "total": 2}, forged)}), flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.1)
"""


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "s21jobs")


def _api(hub: Hub, token: str, method: str, path: str, body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{hub.service_url}api/sched/{path}", json=body, timeout=60,
                         headers={"Authorization": f"token {token}"})


def _wait(what: str, check: Any, timeout_s: float = 90) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


def _printed(hub: Hub, token: str, job_id: str) -> dict[str, Any]:
    """The JSON line the job printed (its log, read by its owner), once there."""
    def line() -> dict[str, Any] | None:
        text = _api(hub, token, "GET", f"jobs/{job_id}/logs").json().get("text", "")
        found = [row for row in text.splitlines() if row.startswith("{")]
        return json.loads(found[-1]) if found else None

    return dict(_wait(f"job {job_id} to print", line))


def test_s21_hub_a_jobs_own_process_reports_progress_and_another_users_job_token_is_refused(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    gate = hub.base / "s21-jobs-may-end"
    made: list[tuple[str, str]] = []
    try:
        answer = _api(hub, tokens[amy], "POST", "jobs", {"gpus": 0, "name": "reporter", "time_limit": "10m",
                                                          "command": ["python", "-c", REPORTER, str(gate)]})
        assert answer.status_code == 201, answer.text
        amy_job = answer.json()["id"]
        made.append((amy, amy_job))
        said = _printed(hub, tokens[amy], amy_job)
        log_text = _api(hub, tokens[amy], "GET", f"jobs/{amy_job}/logs").json().get("text", "")
        # the URL JupyterHub reaches the service at (JUPYTERHUB_SERVICE_URL + prefix), and a token: nothing wired
        assert said == {"url": f"http://127.0.0.1:{hub.service_port}/services/{SERVICE}/", "token": True,
                        "stored": True}, log_text + hub.log_tail(4000)
        seen = _api(hub, tokens[amy], "GET", f"jobs/{amy_job}")
        assert seen.json()["state"] == "running" and seen.json()["progress"]["fraction"] == 0.25, seen.text
        assert "jsjob1." not in seen.text

        answer = _api(hub, tokens[eve], "POST", "jobs", {"gpus": 0, "name": "probe", "time_limit": "10m",
                                                          "command": ["python", "-c", PROBE, str(gate), amy_job]})
        assert answer.status_code == 201, answer.text
        eve_job = answer.json()["id"]
        made.append((eve, eve_job))
        probe = _printed(hub, tokens[eve], eve_job)
        status, error = probe["other"]
        assert status == 403 and error["error"]["field"] == "job_id" and amy_job in error["error"]["message"], probe
        assert probe["list"][0] == 403, probe  # a job token may call nothing but its own job's progress
        assert probe["forged"][0] == 401 and probe["forged"][1]["error"]["field"] == "Authorization", probe
        assert _api(hub, tokens[amy], "GET", f"jobs/{amy_job}").json()["progress"]["fraction"] == 0.25  # unchanged

        refused = _api(hub, tokens["carol"], "GET", "audit?action=refused").json()  # carol: a hub admin
        mine = [r for r in refused if r.get("job_id") == eve_job]
        assert {(r["user"], r["details"].get("field"), r["details"].get("status")) for r in mine} == {
            (eve, "job_id", 403), (eve, "Authorization", 403)}, mine  # under eve, never amy; the forgery: nobody
        assert not any(r.get("job_id") == amy_job for r in refused), refused
        assert "jsjob1." not in json.dumps(refused)
        assert _api(hub, tokens[eve], "GET", f"jobs/{amy_job}").status_code == 403  # eve's own token: not hers
    finally:
        gate.touch()
        for name, job_id in made:
            _api(hub, tokens[name], "DELETE", f"jobs/{job_id}")
    for name, job_id in made:
        _wait(f"job {job_id} to end", lambda n=name, j=job_id: _api(hub, tokens[n], "GET", f"jobs/{j}").json()["state"]
              in ("succeeded", "cancelled", "failed"))
    logs = (hub.base / "service.log").read_text(errors="replace") + (hub.base / "hub.log").read_text(errors="replace")
    assert "jsjob1." not in logs, "no job token in the service's or the hub's log"
