"""New user 13's hub findings N13 and N14 (/work/coord/notes/newuser13.md, step 4): a refused token is
told where a hub user's token comes from (the hub's token page), and a token used on another user's
server is told whose server it is and where the caller's own scheduler is — on the CLI and in the REST
body alike.

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm),
real OS accounts whose servers JupyterHub's local spawner starts, ``jupyter-sched serve`` as root on
PostgreSQL; requests with each user's own hub token, through the hub's proxy, as a user with curl or
the CLI in a hub terminal would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_REFUSED
from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).parent / "jupyter-sched")


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "newuser13")


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    return subprocess.run([CLI, *argv], env={**clean, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env},
                          capture_output=True, text=True, timeout=120)


def test_newuser13_n13_a_refused_token_on_a_hub_is_sent_to_the_hubs_token_page(hub: Hub) -> None:
    """N13: ``JUPYTER_SCHED_HUB_URL=…/services/jupyter-sched/ JUPYTER_SCHED_TOKEN=wrong jupyter-sched status``
    said to take "the token in the URL JupyterLab printed, or from `jupyter server list`" — a hub prints
    no such URL — and the REST 403 hinted at "the server token … or the _xsrf cookie". Both now send the
    user to the hub's token page."""
    page = f"{hub.url}/hub/token"
    said = _cli({"JUPYTER_SCHED_HUB_URL": hub.service_url, "JUPYTER_SCHED_TOKEN": "wrongtoken"}, "status")
    assert said.returncode == EXIT_REFUSED, said.stdout + said.stderr
    line = said.stderr.strip().splitlines()[-1]
    assert f"refused the token in JUPYTER_SCHED_TOKEN — set JUPYTER_SCHED_TOKEN=TOKEN (a token from your hub's " \
           f"token page, {page}) or give --token-file FILE" in line, line
    assert "JupyterLab" not in line and "jupyter server list" not in line, line

    refused = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": "token wrongtoken"}, timeout=30)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["details"] == {"credentials": "refused"}, error
    assert "hub's token page, /hub/token" in error["hint"], error
    assert "_xsrf" not in error["hint"] and "server token" not in error["hint"], error


def test_newuser13_n14_another_users_token_at_a_server_is_told_whose_server_and_where_its_own_is(
        hub: Hub, users: dict[str, Account]) -> None:
    """N14: eve's token at amy's server (``/user/amy/api/sched/me``) got ``403 {"message": "request
    refused", "field": null, "hint": null}`` — no rule, no fix (the CLI alone said whose server it was).
    The body now names the server's owner and where eve's own scheduler is; the CLI keeps its line."""
    amy, eve = users["amy"].name, users["eve"].name
    hub.start_servers(amy)
    tokens = {name: hub.token_for(name) for name in (amy, eve)}
    mine = httpx.get(f"{hub.server_url(amy)}api/sched/me", headers={"Authorization": f"token {tokens[amy]}"},
                     timeout=60)
    assert mine.status_code == 200 and mine.json()["user"] == amy, mine.text  # her own token goes through
    for token in (tokens[eve], "wrongtoken"):
        refused = httpx.get(f"{hub.server_url(amy)}api/sched/me", headers={"Authorization": f"token {token}"},
                            timeout=60)
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["message"].startswith(f"this is {amy}'s Jupyter server: the request's token may not use it"), error
        assert "request refused" not in error["message"], error
        assert "/user/<you>/api/sched/" in error["hint"] and "/services/jupyter-sched/ on the hub" in error["hint"], error
        assert f"hub's token page, {hub.url}/hub/token" in error["hint"], error
    said = _cli({"JUPYTER_SCHED_TOKEN": tokens[eve], "JUPYTERHUB_USER": eve}, "--url", hub.server_url(amy), "status")
    assert said.returncode == EXIT_REFUSED, said.stdout + said.stderr
    assert f"{hub.server_url(amy)} is {amy}'s Jupyter server: your token may not use it" in said.stderr, said.stderr


def test_newuser13_n10_a_program_its_owner_cannot_run_is_refused_at_a_hub_submit(
        hub: Hub, users: dict[str, Account]) -> None:
    """N10 on a hub: ``jupyter-sched submit --gpus 1 -- nosuchprogram`` was accepted and failed after its
    wait for GPUs with exit code 127. The program is now looked up at submit as the job will: as the
    owner's account (a path only another account can reach is not there for them), on the PATH of the
    clean environment jobs run in (the job venv, /usr/local/bin, /usr/bin, /bin: not the service's — a
    program of /usr/sbin, on root's PATH, is refused), or on the job's own env PATH."""
    amy, eve = users["amy"], users["eve"]
    tokens = {account.name: hub.token_for(account.name) for account in (amy, eve)}
    os.chmod(eve.home, 0o700)
    tools = Path(eve.home) / "bin"
    tools.mkdir(exist_ok=True)
    (tools / "tool").write_text("#!/bin/sh\necho tool\n")
    (tools / "tool").chmod(0o755)
    notes = Path(amy.home) / "notes.txt"
    notes.write_text("not a program\n")
    for path, owner in ((tools, eve), (tools / "tool", eve), (notes, amy)):
        os.chown(path, owner.uid, owner.gid)
    sbin_only = next((name for name in ("useradd", "groupadd", "sshd", "ldconfig") if os.path.exists(f"/usr/sbin/{name}")
                      and not any(os.path.exists(f"{d}/{name}") for d in ("/usr/local/bin", "/usr/bin", "/bin"))), None)
    made: list[tuple[str, str]] = []

    def submit(who: Account, **body: Any) -> httpx.Response:
        answer = httpx.post(f"{hub.service_url}api/sched/jobs", json={"gpus": 0, **body}, timeout=60,
                            headers={"Authorization": f"token {tokens[who.name]}"})
        if answer.status_code == 201:
            made.append((who.name, answer.json()["id"]))
        return answer

    def refused(who: Account, program: str, problem: str, **body: Any) -> None:
        answer = submit(who, **body)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["field"] == "command", error
        # a path behind eve's closed home is "cannot be found or run … (a folder on its path may be closed
        # to you)" (new user 15, N1): never "does not exist", which amy cannot know
        assert error["message"].startswith(f"command: {program!r} {problem} on this server"), error
        if "PATH" in problem and "PATH" in body.get("env", {}):  # the PATH sent, said as such (newuser28 n1)
            assert "the job runs with the PATH sent with it (" in error["hint"], error
        elif "PATH" in problem:
            assert "the job runs as your account with a clean environment's PATH, not your shell's" in error["hint"], \
                error

    try:
        job_path = f"{Path(hub.python).parent}:/usr/local/bin:/usr/bin:/bin"
        refused(amy, "nosuchprogram-n10", f"is not a program {amy.name} can run from the job's PATH ({job_path})",
                command=["nosuchprogram-n10", "--flag"])
        if sbin_only is not None:  # on the service's (root's) PATH, not on the job's
            refused(amy, sbin_only, f"is not a program {amy.name} can run from the job's PATH ({job_path})",
                    command=[sbin_only])
        # a path only eve can reach: not there for amy, without saying that it exists; eve's own is fine
        refused(amy, str(tools / "tool"), f"cannot be found or run as {amy.name}", command=[str(tools / "tool")])
        refused(amy, "tool", f"is not a program {amy.name} can run from the job's PATH ({tools})",
                command=["tool"], env={"PATH": str(tools)})
        refused(amy, str(notes), f"is not a file {amy.name} can execute", command=["./notes.txt"])
        for who, body in ((eve, {"command": [str(tools / "tool")]}), (eve, {"command": ["tool"], "env": {"PATH": str(tools)}}),
                          (eve, {"command": ["bin/tool"]}), (amy, {"command": ["python", "-c", "pass"]}),
                          (amy, {"command": ["true"]})):
            accepted = submit(who, **body)
            assert accepted.status_code == 201, (who.name, body, accepted.text)
    finally:
        for name, job_id in made:
            httpx.delete(f"{hub.service_url}api/sched/jobs/{job_id}", timeout=60,
                         headers={"Authorization": f"token {tokens[name]}"})


def test_newuser13_n14_a_token_refused_at_another_users_server_is_audited_at_the_central_service(
        hub: Hub, users: dict[str, Account]) -> None:
    """N14, its audit: eve's token at amy's server was refused by the hub auth inside amy's server and
    written to no audit log an admin reads (every other refusal of eve is on the central one). Amy's
    server now hands the refused token to the central service, which asks the hub whose it is and
    audits the refusal under eve (a name from amy's server could be forged; the token cannot). A
    token the hub does not know names nobody and is not audited, also when amy sends one herself."""
    amy, eve = users["amy"].name, users["eve"].name
    hub.start_servers(amy)
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    path = "queue?mine=true"
    refused = httpx.get(f"{hub.server_url(amy)}api/sched/{path}", headers={"Authorization": f"token {tokens[eve]}"},
                        timeout=60)
    assert refused.status_code == 403, refused.text
    made_up = httpx.post(f"{hub.service_url}api/sched/refused-token", json={"token": "n14-not-a-token",
                                                                            "request": "GET me"},
                         headers={"Authorization": f"token {tokens[amy]}"}, timeout=60)
    assert made_up.status_code == 200 and made_up.json() == {"received": True}, made_up.text  # as a live one (R13)

    def refusals(user: str) -> list[dict[str, Any]]:
        rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"user": user, "action": "refused", "limit": 200},
                         headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert rows.status_code == 200, rows.text
        return [row for row in rows.json() if f"at {amy}'s Jupyter server" in str(row["details"].get("request"))
                and row["user"] == user]  # ?user= also lists the records amy wrote as reporter (R13)

    # written just after the refusal, by a report in the background: waited for, not read in the same instant
    hub.wait_for(lambda: bool(refusals(eve)), 30, "the central audit record of eve's token refused at amy's server")
    row = refusals(eve)[0]
    assert row["user"] == eve and row["action"] == "refused", row
    assert row["actor"] == amy, row  # the reporter wrote it (red team 17, R13)
    assert row["message"].startswith(f"{eve}'s token was refused at {amy}'s Jupyter server"), row
    assert row["details"]["request"] == f"GET queue at {amy}'s Jupyter server", row
    assert row["details"]["error_details"]["reported_by"] == f"{amy}'s Jupyter server", row
    assert tokens[eve] not in str(row), row  # the token itself is not kept
    assert not refusals(amy), refusals(amy)  # the made-up token named nobody


def test_red17_r13_refused_token_reports_are_the_reporters_rate_limited_and_no_token_oracle(
        hub: Hub, users: dict[str, Account]) -> None:
    """R13: amy, holding eve's token, wrote unlimited refusal rows in eve's name (actor eve) with her own
    words, and ``{"audited": true/false}`` told whether any string was a live token. Fails before the
    fix: 50 rows with actor eve, and a made-up token answered differently from eve's."""
    amy, eve = users["amy"].name, users["eve"].name
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}

    def report(token: str, words: str) -> httpx.Response:
        return httpx.post(f"{hub.service_url}api/sched/refused-token", timeout=60,
                          json={"token": token, "request": words, "why": "token_refused"},
                          headers={"Authorization": f"token {tokens[amy]}"})

    answers = {report(tokens[eve], f"DELETE jobs/all r13 #{i}").text for i in range(30)}
    answers |= {report("0123456789abcdef0123456789abcdef", "GET me").text}
    assert len(answers) == 1 and '"received": true' in answers.pop()  # live, dead, over the rate: one answer

    def rows() -> list[dict[str, Any]]:
        got = httpx.get(f"{hub.service_url}api/sched/audit", params={"user": eve, "action": "refused", "limit": 200},
                        headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert got.status_code == 200, got.text
        return [r for r in got.json() if "r13 #" in str(r["details"].get("request"))]

    hub.wait_for(lambda: bool(rows()), 30, "the audit record of the first report")
    written = rows()
    assert len(written) == 1, written  # once a minute per (reporter, token, why), not 30 rows
    assert written[0]["actor"] == amy and written[0]["user"] == eve, written[0]
    assert written[0]["details"]["error_details"]["request_words_by"] == amy, written[0]
