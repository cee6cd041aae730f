"""Red team 19, R5 on a real hub: a body over the service's cap (``c.FrontDoor.max_body_bytes``,
17 MiB) sent through JupyterHub's proxy gets the service's JSON 413 naming ``body`` and the limit, and is
audited as a refusal of the hub user whose token it carried.
Before the fix the service answered 413 and closed at once while configurable-http-proxy was still
writing the body: the reset made it answer its own HTML "503 Service Unavailable"
(``write ECONNRESET``). The service now reads and drops the rest of the body (bounded) before closing.

The last three tests, red team 39's R6, session 21's job progress and red team 18's R4 on a real hub, came here from
modules of their own (session 41: each started a hub, ~20 s, for its one test): see their docstrings.

Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
OS accounts, ``jupyter-sched serve`` as root on PostgreSQL; the request carries amy's own hub token.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.hub.front_door import MAX_BODY_BYTES
from tests.accounts import Account

from .hub_harness import SERVICE, Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

# session 21, job progress (its test below): amy's job reports its progress, eve's job probes
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
    yield from amy_and_eve_hub(pg_server, users, "red19r5")


def test_red19_r5_a_body_over_the_cap_through_the_hub_proxy_gets_the_services_json_413(
        hub: Hub, users: dict[str, Account]) -> None:
    token = hub.token_for(users["amy"].name)
    big = b'{"gpus": 0, "command": ["true"], "source": "' + b"x" * (MAX_BODY_BYTES + (1 << 20)) + b'"}'
    for _ in range(2):  # and again: the proxy's connection to the service is not left broken
        answer = httpx.post(f"{hub.service_url}api/sched/jobs", content=big, timeout=120,
                            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        assert answer.status_code == 413, (answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith("application/json"), answer.headers
        error = answer.json()["error"]
        assert error["code"] == "too_large" and error["field"] == "body", error
        assert f"{MAX_BODY_BYTES:,}" in error["message"] and f"{len(big):,}" in error["message"], error
    fine = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {token}"}, timeout=60)
    assert fine.status_code == 200, fine.text[:300]
    # audited as amy's refusal (before: only a per-minute count in the front door's log line)
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's oversize request audited")
    row = refused()[0]
    assert f"{len(big):,} bytes" in row["message"] and "api/sched/jobs" in str(row), row


def test_red20_r1_a_chunked_body_over_the_cap_through_the_hub_proxy_gets_the_json_413_and_is_audited(
        hub: Hub, users: dict[str, Account]) -> None:
    # fails before the fix: the proxy's HTML 503 (write ECONNRESET: tornado closed mid-body), no audit row
    token = hub.token_for(users["amy"].name)

    def pieces() -> Iterator[bytes]:  # no Content-Length: sent chunked, as red20/a32_chunked.py
        yield b'{"gpus": 0, "command": ["true"], "source": "'
        for _ in range(MAX_BODY_BYTES // (1 << 20) + 2):
            yield b"x" * (1 << 20)
        yield b'"}'

    for _ in range(2):  # and again: the proxy's connection to the service is not left broken
        answer = httpx.post(f"{hub.service_url}api/sched/jobs", content=pieces(), timeout=120,
                            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        assert answer.status_code == 413, (answer.status_code, answer.text[:300])
        assert answer.headers["content-type"].startswith("application/json"), answer.headers
        error = answer.json()["error"]
        assert error["code"] == "too_large" and error["field"] == "body", error
        assert f"{MAX_BODY_BYTES:,}" in error["message"] and "chunked" in error["message"], error
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "chunked" in row["message"]]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's chunked oversize request audited")
    assert "api/sched/jobs" in str(refused()[0]), refused()[0]


def test_red21_r4_a_body_in_one_byte_chunks_at_the_service_port_gets_the_json_400_and_is_audited_once(
        hub: Hub, users: dict[str, Account]) -> None:
    # fails before the fix: every 1-byte chunk was read on the service's loop (red21/a5_tinychunks.py "direct"),
    # the body reached the handlers, and nothing was audited
    import json
    import socket

    token = hub.token_for(users["amy"].name)
    body = json.dumps({"gpus": 0, "command": ["true"], "name": "x", "pad": "y" * 3_000}).encode()
    wire = b"".join(b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body))) + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", hub.service_port), timeout=10) as sock:
        sock.sendall(f"POST /services/{SERVICE}/api/sched/dryrun HTTP/1.1\r\nHost: x\r\nAuthorization: token {token}\r\n"
                     "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + wire)
        sock.settimeout(20)
        answer = b""
        try:
            while piece := sock.recv(65536):
                answer += piece
        except (TimeoutError, ConnectionError):
            pass
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    assert json.loads(text)["error"]["field"] == "body"
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def refused() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": users["amy"].name,
                                                                      "action": "refused"}, headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "chunks of at least" in row["message"]]

    hub.wait_for(lambda: len(refused()) >= 1, 30, "amy's finely chunked request audited")
    assert len(refused()) == 1 and "api/sched/dryrun" in str(refused()[0]), refused()


def _answer(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    try:
        while piece := sock.recv(65536):
            data += piece
    except (TimeoutError, ConnectionError):
        pass
    return data


def test_red39_r6_a_slow_content_length_body_is_cut_408_and_its_sender_audited(
        hub: Hub, users: dict[str, Account]) -> None:
    """Red team 39, R6 on a real hub: a hub user's slow Content-Length body is cut 408 at the service's front door,
    and the holder is audited (before, such bodies held the bodies' budget for ``body_timeout_s`` each, unnamed, and
    every other user's submit was answered 503 ``busy``). Real parts as the tests above; the request carries amy's
    own hub token, sent straight to the service's port (any local account can).

    Here at the end of this module: its audit check counts amy's body refusals that say "came too slowly", which no
    test above writes; theirs take the newest refusal of amy's (this one's would be it).
    """
    amy, eve = users["amy"].name, users["eve"].name
    token = hub.token_for(amy)
    me = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {token}"}, timeout=60)
    assert me.status_code == 200, me.text[:300]  # her token counts as amy at the front door from now on
    length = 1_000_000
    with socket.create_connection(("127.0.0.1", hub.service_port), timeout=10) as sock:
        sock.sendall(f"POST /services/{SERVICE}/api/sched/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: token {token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n".encode() + b"{" + b" " * 99)
        # meanwhile another user's small request is answered as usual
        other = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": f"token {hub.token_for(eve)}"},
                          timeout=60)
        assert other.status_code == 200, other.text[:300]
        answer = _answer(sock, 30)  # nothing more is sent: cut once past the grace
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:300]
    error = json.loads(text)["error"]
    assert error["code"] == "slow_body" and error["field"] == "body", error
    assert f"{length:,} bytes came too slowly: 100 bytes in" in error["message"], error
    assert "c.FrontDoor.body_timeout_s" in error["hint"], error
    admin = {"Authorization": f"token {hub.token_for('carol')}"}

    def cut() -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 50, "user": amy, "action": "refused"},
                         headers=admin, timeout=60)
        assert rows.status_code == 200, rows.text[:300]
        return [row for row in rows.json() if (row.get("details") or {}).get("field") == "body"
                and "came too slowly" in row["message"]]

    hub.wait_for(lambda: len(cut()) >= 1, 30, "amy's slow body audited")
    assert len(cut()) == 1 and "api/sched/jobs" in str(cut()[0]), cut()


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
    """Hub mode: a job's own process reports its progress through the central service, with the URL and
    token the service gave it; another user's job token is refused and audited (s21-hubjobs item 1;
    session 20 wired it without a hub run).

    Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
    OS accounts (amy, eve) whose jobs ``jupyter-sched serve`` (as root, on PostgreSQL) starts as them in a clean
    environment; each job calls ``jupyter_sched.report_progress`` or the REST route itself with what its
    environment holds. No token is wired by the users; the test never sees a job token (the jobs print only
    what they were answered).

    Here, in this module (session 41: its own module started a hub, ~20 s, for it alone), before red team 18's test,
    which leaves eve in two groups; it counts only refusals of its own jobs.
    """
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


def test_red18_r4_a_job_queued_on_a_group_its_owner_left_is_held_until_they_are_added_back(
        hub: Hub, users: dict[str, Account]) -> None:
    """Red team 18, R4 on a real hub: a job queued on a team (hub group) by a member whom an admin then
    removes from the group is held (``TeamMembership``, one ``team_left`` record), never starts charged to
    that team when its GPUs free, and starts once the admin adds the user back.

    Real parts, as tests/hub/test_red15_hub.py: JupyterHub (PyPI) + configurable-http-proxy (npm), real
    OS accounts, ``jupyter-sched serve`` as root on PostgreSQL (``hub_poll_interval_s`` 1 s); requests with
    each user's own hub token; group changes through the hub's REST API as an admin makes them (the
    service reads ``groups`` from the user models its ``read:users`` token sees). What the service
    writes after a change is polled for with a deadline (CI's hub host is slower).

    Here, last in this module (session 41: its own module started a hub, ~20 s, for it alone): it needs the hub's
    GPUs free (no test above holds one) and it leaves eve in vision (no test after it).
    """
    amy, eve = users["amy"].name, users["eve"].name
    # eve joins amy's group vision before her first request (a request's groups are cached per token)
    joined = hub.api("POST", "groups/vision/users", {"users": [eve]})
    assert joined.status_code == 200, joined.text
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def submit(user: str, body: dict[str, Any]) -> str:
        made = httpx.post(f"{api}jobs", json=body, headers={"Authorization": f"token {tokens[user]}"}, timeout=60)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def job(job_id: str) -> dict[str, Any]:
        got = httpx.get(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert got.status_code == 200, got.text
        return dict(got.json())

    def left() -> list[dict[str, Any]]:
        rows = httpx.get(f"{api}audit", params={"limit": 500, "user": eve, "action": "team_left"}, timeout=60,
                         headers={"Authorization": f"token {tokens['carol']}"})
        assert rows.status_code == 200, rows.text
        return list(rows.json())

    full = submit(amy, {"gpus": hub.gpus, "team": "vision", "command": ["sleep", "300"], "name": "r4-full"})
    queued = ""
    try:
        hub.wait_for(lambda: job(full)["state"] == "running", 60, "amy's job to run")
        queued = submit(eve, {"gpus": 1, "team": "vision", "command": ["true"], "name": "r4-queued-vision"})
        removed = hub.api("DELETE", "groups/vision/users", {"users": [eve]})
        assert removed.status_code == 200, removed.text
        hub.wait_for(lambda: (job(queued).get("reason") or {}).get("code") == "TeamMembership", 60,
                     "eve's queued job to be held")
        reason = job(queued)["reason"]
        assert f"held: {eve} is no longer a member of team vision" in reason["message"], reason
        hub.wait_for(lambda: bool(left()), 60, "the team_left record")
        (row,) = left()
        assert row["details"]["held"] == [queued] and row["details"]["team"] == "vision", row

        stop = httpx.delete(f"{api}jobs/{full}", headers={"Authorization": f"token {tokens[amy]}"}, timeout=60)
        assert stop.status_code == 200, stop.text
        hub.wait_for(lambda: job(full)["state"] == "cancelled", 60, "amy's job to stop")
        end = time.monotonic() + 4  # several cycles and group checks (1 s each) with vision's GPUs free
        while time.monotonic() < end:
            assert job(queued)["state"] == "pending", job(queued)
            time.sleep(0.5)

        back = hub.api("POST", "groups/vision/users", {"users": [eve]})
        assert back.status_code == 200, back.text
        hub.wait_for(lambda: job(queued)["state"] in ("admitted", "running", "succeeded"), 60,
                     "the held job to start once eve is back in vision")
    finally:
        for job_id in (queued, full):
            if job_id:
                httpx.delete(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
