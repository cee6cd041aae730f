"""hubadmin23 A18: a service restart (an upgrade, ~10 s) ended every user's `jupyter-sched wait` /
`submit --wait` with exit 1 ("refused"), where `wait --help` promises 3 for "no server answered".

A tiny HTTP server on loopback stands in for JupyterHub's proxy in front of the scheduler service:
while "restarting" it answers the proxy's HTML 503 page, then the job as the scheduler would. The
CLI is run as a user runs it; its pauses between polls are counted, not slept.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from jupyter_sched.cli.main import EXIT_JOB_FAILED, EXIT_NO_SERVER, EXIT_OK, main
from jupyter_sched.client import ride_out
from tests.hub_service_double import ServiceDoubleHandler, serve_service_double, step_the_ride_out_clock

PROXY_503 = (b"<!DOCTYPE HTML><html><head><title>Service Unavailable</title></head><body><h1>503 Service "
             b"Unavailable</h1><p>Your server appears to be down. Try restarting it from the hub</p></body></html>")
JOB = {"id": "j-a18", "name": "w-wait", "state": "running", "user": "ha23n", "gpus": 1, "kind": "job",
       "started_at": "2026-12-05T09:03:00+00:00", "time_limit_s": 300}


class _Hub(ServiceDoubleHandler):
    """The proxy: 503 for the first ``down`` job polls (the service restarting), then the job. The hub's own
    API (up while the service restarts) says the user's token is scoped to the scheduler already, so the client
    sends it as it is (verify25 V7: it asks the hub first, :mod:`jupyter_sched.client.hub_token`)."""

    down = 0
    state = "running"

    def do_GET(self) -> None:
        if self.path == "/hub/api/user":
            status, kind = 200, "application/json"
            body = json.dumps({"name": "ha23n", "scopes": ["access:services!service=jupyter-sched"]}).encode()
        elif type(self).down > 0:
            type(self).down -= 1
            status, body, kind = 503, PROXY_503, "text/html"
        else:
            state = type(self).state
            status, kind = 200, "application/json"
            body = json.dumps(dict(JOB, state=state, exit_code=0 if state == "succeeded" else None)).encode()
        self._send(status, body, kind)


@contextmanager
def hub(*, down: int, state: str) -> Iterator[str]:
    _Hub.down, _Hub.state = down, state
    with serve_service_double(_Hub) as url:
        yield url


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The ride-out's pauses, taken on a clock of its own instead of slept."""
    return step_the_ride_out_clock(monkeypatch)


def _wait(monkeypatch: pytest.MonkeyPatch, url: str, *argv: str) -> tuple[int, str, str]:
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", url)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "user-token")
    out, err = io.StringIO(), io.StringIO()
    rc = main(["wait", *argv, "j-a18"], out=out, err=err)
    return rc, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("state, rc", [("succeeded", EXIT_OK), ("failed", EXIT_JOB_FAILED)])
def test_s23_hubadmin23_a18_a_wait_rides_out_a_service_restart_and_exits_by_the_job(
        monkeypatch: pytest.MonkeyPatch, pauses: list[float], state: str, rc: int) -> None:
    with hub(down=4, state=state) as url:
        got, out, err = _wait(monkeypatch, url)
    assert got == rc, err
    assert out.startswith(f"job j-a18 (w-wait): {state}"), out
    assert err.count("still waiting for j-a18") == 1, err  # said once, not per poll
    assert "the scheduler service behind the hub is not answering (HTTP 503" in err, err
    assert "it is likely restarting; still waiting for j-a18 (for up to 10 min; Ctrl-C stops waiting" in err, err
    assert "[service_unavailable]" not in err, err  # no error line: the wait went on
    assert pauses == [1.0, 2.0, 4.0, 8.0], pauses  # backoff, not a tight loop


def test_s23_hubadmin23_a18_a_service_that_never_comes_back_exits_3_as_the_help_says(
        monkeypatch: pytest.MonkeyPatch, pauses: list[float]) -> None:
    with hub(down=10_000, state="running") as url:
        got, _, err = _wait(monkeypatch, url, "--json")
    assert got == EXIT_NO_SERVER, err
    assert err.count("still waiting for j-a18") == 1, err
    assert sum(pauses) == ride_out.RIDE_OUT_S and max(pauses) == ride_out.MAX_DELAY_S, pauses
    error = json.loads(err[err.index("{"):])["error"]
    assert error["code"] == "service_unavailable", error


def test_s23_hubadmin23_a18_any_command_the_hub_proxy_answers_for_exits_3_not_1(
        monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("JUPYTER_SCHED_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    with hub(down=10_000, state="running") as url:
        monkeypatch.setenv("JUPYTER_SCHED_HUB_URL", url)
        monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "user-token")
        err = io.StringIO()
        got = main(["jobs"], out=io.StringIO(), err=err)
    assert got == EXIT_NO_SERVER, err.getvalue()
    assert err.getvalue().rstrip().endswith("[service_unavailable]"), err.getvalue()
