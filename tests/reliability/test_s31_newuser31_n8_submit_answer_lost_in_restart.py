"""newuser31 N8: a submit during a restart of the hub's service said "sending it again (for up to 2 min)", then
stopped 16 s later on "the connection was closed before an answer … ask your hub admin" (exit 3) — right not to
send twice (the request may have arrived), but the job was not there and the user could not tell.

Now a send whose answer was lost is looked for once the scheduler answers (the user's newest jobs: same name,
same command, submitted since just before it was sent) and sent again only when it is not there; the last lines
say which. Where the scheduler never answers again in time, the error says it may or may not have arrived and
how to look before submitting again (exit 3, no "ask your hub admin").

Real parts (first three tests): a jupyter server with jupyter_sched in its own process (one for the three), SIGKILLed and started
again on the same port and store mid-submit. In front of it a loopback HTTP relay (stdlib) stands in for the
hub's proxy: it passes every request through, except the first ``POST jobs``, which it passes on (or not) and
then answers by closing the connection after the server's restart — the lost answer cannot be timed to the
millisecond against a real restart otherwise. Last test: a proxy double that stays down (its 503 page), the
ride-out's pauses counted, not slept.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_NO_SERVER, EXIT_OK, main
from jupyter_sched.client import connect
from jupyter_sched.magics.core import SchedMagics
from tests.hub_service_double import ServiceDoubleHandler, serve_service_double, step_the_ride_out_clock
from tests.reliability.harness import EmbeddedServer


class _Relay(ServiceDoubleHandler):
    """Passes requests to ``server``; the first ``POST …/jobs`` is passed on when ``deliver``, then the
    server is restarted and the connection closed without an answer."""

    server_under: ClassVar[EmbeddedServer | None] = None
    deliver: ClassVar[bool] = True
    lost: ClassVar[int] = 0
    posts: ClassVar[int] = 0

    def _pass(self, method: str, body: bytes | None) -> httpx.Response:
        assert type(self).server_under is not None
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length", "connection")}
        url = type(self).server_under.url.rstrip("/") + self.path
        return httpx.request(method, url, headers=headers, content=body, timeout=60)

    def _relay(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)) if method != "GET" else None
        if method == "POST" and self.path.split("?")[0].endswith("/jobs"):
            type(self).posts += 1
            if type(self).posts == 1:
                if type(self).deliver:
                    self._pass(method, body)  # the scheduler takes it …
                server = type(self).server_under
                assert server is not None
                server.restart(same_port=True)  # … and is killed before it answers; a new one starts
                type(self).lost += 1
                self.close_connection = True  # the answer is lost: the connection closes with nothing sent
                return
        answer = self._pass(method, body)
        self.send_response(answer.status_code)
        for key, value in answer.headers.items():
            if key.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(answer.content)))
        self.end_headers()
        self.wfile.write(answer.content)

    def do_GET(self) -> None:
        self._relay("GET")

    def do_POST(self) -> None:
        self._relay("POST")



@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One real server for the module's first three tests (each its own job names), restarted by the relay
    mid-submit (s41 speed: one start, not one per test)."""
    # a 5-s leader lease: the restarted server leads without waiting out the 15-s default (session 34)
    started = EmbeddedServer.start(tmp_path_factory.mktemp("srv"), simulated_gpus=1, leader_lease_ttl_s=5)
    try:
        yield started
    finally:
        started.kill()


@contextlib.contextmanager
def relayed(server: EmbeddedServer, *, deliver: bool) -> Iterator[str]:
    """The relay in front of ``server``: its URL (the hub proxy's stand-in)."""
    _Relay.server_under, _Relay.deliver, _Relay.lost, _Relay.posts = server, deliver, 0, 0
    with serve_service_double(_Relay) as url:
        yield url.split("/services/")[0] + "/"


def _named(server: EmbeddedServer, name: str) -> list[dict[str, Any]]:
    with server.client() as api:
        answer = api.get("jobs", params={"limit": 500})
        answer.raise_for_status()
        body = answer.json()
        jobs = body["jobs"] if isinstance(body, dict) else body
        return [job for job in jobs if job.get("name") == name]


def _cli_submit(server: EmbeddedServer, url: str, tmp_path: Path, name: str) -> tuple[int, str, str]:
    token = tmp_path / "cli-token"
    token.write_text(server.token, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    rc = main(["--url", url, "--token-file", str(token), "submit", "--gpus", "0", "--time-limit", "1m",
               "--name", name, "--", sys.executable, "-c", "print(1)"], out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


def test_newuser31_n8_a_submit_that_arrived_before_the_restart_is_found_not_sent_twice(
        server: EmbeddedServer, tmp_path: Path) -> None:
    # before: exit 3, "the connection was closed before an answer … ask your hub admin", while the job was there
    with relayed(server, deliver=True) as url:
        rc, out, err = _cli_submit(server, url, tmp_path, "n8-arrived")
        jobs = _named(server, "n8-arrived")
    assert _Relay.lost == 1, err
    assert rc == EXIT_OK, (out, err)
    assert len(jobs) == 1 and f"submitted {jobs[0]['id']} (n8-arrived)" in out, (jobs, out)
    assert "submitted after the service restarted" in err and "not sent twice" in err, err
    assert "ask your hub admin" not in err, err


def test_newuser31_n8_a_submit_the_restart_lost_is_sent_again_once_and_says_so(
        server: EmbeddedServer, tmp_path: Path) -> None:
    # before: exit 3, "… ask your hub admin", and nothing was submitted (newuser31's repro)
    with relayed(server, deliver=False) as url:
        rc, out, err = _cli_submit(server, url, tmp_path, "n8-lost")
        jobs = _named(server, "n8-lost")
    assert _Relay.lost == 1 and _Relay.posts == 2, err
    assert rc == EXIT_OK, (out, err)
    assert len(jobs) == 1 and f"submitted {jobs[0]['id']} (n8-lost)" in out, (jobs, out)
    assert "the scheduler did not get it before the restart; sent again once it answered" in err, err


def test_newuser31_n8_the_schedule_magic_finds_or_resends_a_submit_whose_answer_was_lost(
        server: EmbeddedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "n8.py").write_text("print('n8')\n")
    printed = io.StringIO()
    with relayed(server, deliver=True) as url:
        magics = SchedMagics(None, client_factory=lambda: connect(url, server.token))
        with contextlib.redirect_stdout(printed):
            magics.schedule("run n8.py --gpus 0 --time-limit 1m --name n8-magic")
        jobs = _named(server, "n8-magic")
    said = printed.getvalue()
    assert _Relay.lost == 1 and len(jobs) == 1, (jobs, said)
    assert f"Submitted job {jobs[0]['id']} (n8-magic)" in said, said
    assert "Submitted after the service restarted" in said, said


class _Down(ServiceDoubleHandler):
    """Answers GETs as a hub service would, until the first POST: that one's connection closes without an
    answer, and from then on every request gets the hub proxy's 503 page (the service does not come back)."""

    posted: ClassVar[bool] = False


    def do_GET(self) -> None:
        if type(self).posted:
            self._send(503, b"<html><h1>Service Unavailable</h1></html>", "text/html")
        else:
            self._send(200, json.dumps({"mode": "hub", "executors": ["local"]}).encode(), "application/json")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).posted = True
        self.close_connection = True



def test_newuser31_n8_when_it_cannot_tell_it_says_how_to_look_before_submitting_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "… the connection was closed before an answer — … ask your hub admin", not a word of whether it arrived
    pauses = step_the_ride_out_clock(monkeypatch)
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    _Down.posted = False
    with serve_service_double(_Down) as url:
        monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", url)
        monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "user-token")
        monkeypatch.setenv("JUPYTER_SCHED_SERVICE_TOKEN", "user-token")
        out, err = io.StringIO(), io.StringIO()
        rc = main(["submit", "--gpus", "1", "--name", "retry-me", "--", "/bin/sleep", "5"], out=out, err=err)
    said = err.getvalue()
    assert rc == EXIT_NO_SERVER, said
    assert "the submit may or may not have reached the scheduler" in said, said
    assert "`jupyter-sched jobs` shows whether your job \"retry-me\" is there once the service answers; submit again " \
           "only if not" in said, said
    assert "ask your hub admin" not in said, said
    assert 0 < sum(pauses) <= 120, pauses
