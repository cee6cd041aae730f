"""s31-n8's next step: a submit whose answer was lost in a restart is sent again with the same submit key, so
what the CLI and the magics say is exact — the job the key made (it had arrived) or the job made now (it had
not) — and never two jobs. The lookup by name, command and time (s31-n8) stays for a scheduler without keys.

Before: (1) a job of the same name and command submitted just before the lost send was taken for it ("it had
arrived … not sent twice"), and the submit was never made; (2) after a proxy's 504 (the scheduler may still be
taking it) a submit that had not arrived ended exit 3 "may or may not have reached the scheduler".

Real parts: a jupyter server with jupyter_sched, SIGKILLed and started again on the same port and store
mid-submit, behind the loopback relay of the s31 N8 tests (it stands in for the hub's proxy, so the lost answer
is timed to the request); for the 504 the relay answers as JupyterHub's proxy does when the service does not.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import pytest

from jupyter_sched.cli.main import EXIT_OK
from tests.hub_service_double import serve_service_double
from tests.reliability.harness import EmbeddedServer
from tests.reliability.test_s31_newuser31_n8_submit_answer_lost_in_restart import _cli_submit, _named, _Relay


class _Relay504(_Relay):
    """The first ``POST …/jobs`` is passed on (or not) and answered 504 by the relay, with no restart: the
    proxy gave up waiting while the scheduler may still be taking it."""

    gateway_timeout: ClassVar[bool] = True

    def _relay(self, method: str) -> None:
        if method == "POST" and self.path.split("?")[0].endswith("/jobs") and type(self).posts == 0:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            type(self).posts += 1
            if type(self).deliver:
                self._pass(method, body)
            type(self).lost += 1
            page = b"<html><body><h1>504 Gateway Timeout</h1></body></html>"
            self.send_response(504)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        super()._relay(method)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One real server for the module (each test its own job names); restarted by the relay mid-submit."""
    started = EmbeddedServer.start(tmp_path_factory.mktemp("srv"), simulated_gpus=1)
    try:
        yield started
    finally:
        started.kill()


@contextlib.contextmanager
def _behind(handler: type[_Relay], server: EmbeddedServer, *, deliver: bool) -> Iterator[str]:
    handler.server_under, handler.deliver, handler.lost, handler.posts = server, deliver, 0, 0
    with serve_service_double(handler) as url:
        yield url.split("/services/")[0] + "/"


def test_s32_submit_key_a_same_named_job_just_before_is_not_taken_for_the_lost_send(
        server: EmbeddedServer, tmp_path: Path) -> None:
    with _behind(_Relay, server, deliver=False) as url:
        rc, out, err = server.cli("submit", "--gpus", "0", "--time-limit", "1m", "--name", "twin", "--",
                                  sys.executable, "-c", "print(1)")  # the same submit, a moment before
        assert rc == EXIT_OK, (out, err)
        rc, out, err = _cli_submit(server, url, tmp_path, "twin")  # its POST never arrives; the answer is lost
        jobs = _named(server, "twin")
    assert _Relay.lost == 1 and _Relay.posts == 2, err
    assert rc == EXIT_OK, (out, err)
    # before: "submitted after the service restarted … not sent twice" naming the earlier job; one job in all
    assert len(jobs) == 2 and f"submitted {jobs[0]['id']} (twin)" in out, (jobs, out)
    assert "the scheduler did not get it before the restart; sent again once it answered" in err, err


def test_s32_submit_key_after_a_504_it_is_sent_again_with_its_key_and_made_once(
        server: EmbeddedServer, tmp_path: Path) -> None:
    with _behind(_Relay504, server, deliver=False) as url:
        # not arrived: before, exit 3 "may or may not have reached the scheduler"; now made, and said so
        rc, out, err = _cli_submit(server, url, tmp_path, "late")
        late = _named(server, "late")
        assert _Relay504.lost == 1 and _Relay504.posts == 2, err
        assert rc == EXIT_OK and len(late) == 1 and f"submitted {late[0]['id']} (late)" in out, (rc, late, out, err)
        assert "sent again once it answered" in err and "may or may not" not in err, err
        # arrived: the resend with its key is answered with that job (200), not a second one
        _Relay504.deliver, _Relay504.lost, _Relay504.posts = True, 0, 0
        rc, out, err = _cli_submit(server, url, tmp_path, "taken")
        taken = _named(server, "taken")
    assert _Relay504.posts == 2, err
    assert rc == EXIT_OK and len(taken) == 1 and f"submitted {taken[0]['id']} (taken)" in out, (rc, taken, out, err)
    assert "the job had arrived, so it was not sent twice" in err, err
