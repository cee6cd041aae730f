"""hubadmin22 H1: what a user is told when the hub's scheduler service is down or restarting.

A real (tiny) HTTP server on loopback stands in for JupyterHub's proxy: it answers what the proxy
answers for a service that is not running (an HTML 503 page), and what a user's server answers when
the central service does not (502 ``hub_service_unreachable``). The CLI is run as a user runs it.
"""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import pytest
from tornado import web

from jupyter_sched.cli.main import main
from jupyter_sched.client._wire import error_from_response
from jupyter_sched.extension.http_errors import RETRY_AFTER_S, http_error_body
from tests.hub_service_double import ServiceDoubleHandler

PROXY_503 = (b"<!DOCTYPE HTML><html><head><title>Service Unavailable</title></head><body><h1>503 Service "
             b"Unavailable</h1><p>Your server appears to be down. Try restarting it from the hub</p></body></html>")
UNREACHABLE = json.dumps({"error": {
    "code": "hub_service_unreachable", "field": None,
    "message": "the scheduler service does not answer: reconnecting to the central service (attempt 1, next in 1 s)",
    "hint": "requests work again once it answers; if it keeps failing, tell your hub admin"}}).encode()

class _Proxy(ServiceDoubleHandler):
    """JupyterHub's proxy as a user meets it with the scheduler down: the service path answers the
    proxy's HTML 503, a user's server path its own JSON 502."""

    def do_GET(self) -> None:
        if self.path.startswith("/user/"):
            status, body, kind = 502, UNREACHABLE, "application/json"
        else:
            status, body, kind = 503, PROXY_503, "text/html"
        self._send(status, body, kind)


@contextmanager
def proxy() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Proxy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _cli(monkeypatch: pytest.MonkeyPatch, argv: list[str], **env: str) -> tuple[int, str]:
    for name in ("JUPYTER_SCHED_URL", "JUPYTER_SCHED_HUB_URL", "JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "user-token")
    out, err = io.StringIO(), io.StringIO()
    rc = main(argv, out=out, err=err)
    return rc, err.getvalue()


def test_s22_hubadmin22_h1_the_hub_proxy_s_503_page_says_the_service_is_down_not_a_store_error(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with proxy() as host:
        rc, said = _cli(monkeypatch, ["status"], JUPYTER_SCHED_HUB_URL=f"http://{host}/services/jupyter-sched/")
    assert rc != 0
    assert "store_error" not in said, said
    assert f"the scheduler service behind the hub is not answering (HTTP 503 from {host})" in said, said
    assert "it is down or restarting; ask your hub admin" in said, said
    assert said.rstrip().endswith("[service_unavailable]"), said


def test_s22_hubadmin22_h1_an_unknown_code_keeps_its_own_code_not_the_status_fallback_s(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with proxy() as host:
        rc, said = _cli(monkeypatch, ["--url", f"http://{host}/user/ha22b/", "status"])
    assert rc != 0
    assert "executor_error" not in said, said
    assert said.rstrip().endswith("[hub_service_unreachable]"), said
    assert "tell your hub admin" in said, said


def test_s22_hubadmin22_h1_a_hub_service_that_does_not_answer_names_the_admin_not_url(
        monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as sock:  # a port nothing listens on: bound, never listening
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        rc, said = _cli(monkeypatch, ["status"], JUPYTER_SCHED_HUB_URL=f"http://127.0.0.1:{port}/services/jupyter-sched/")
    assert rc != 0
    assert "cannot reach the hub's scheduler service" in said, said
    assert "ask your hub admin" in said, said
    assert "--url" not in said and "Start it again" not in said, said


def test_s22_hubadmin22_h1_the_hub_not_answering_a_token_check_says_retry_once_and_no_store_error() -> None:
    body, headers = http_error_body(503, "the scheduler could not ask the hub who you are (no connection, or no "
                                         "answer within 10 s); retry in a moment", method="GET", route="jobs",
                                    handler=web.RequestHandler)
    said = error_from_response(503, json.dumps(body), url="http://hub/services/jupyter-sched/")
    assert said.code == "unavailable"
    assert f"{said.message} — {said.hint}".count("retry") == 1, (said.message, said.hint)
    assert said.hint == f"retry in {RETRY_AFTER_S} seconds" and headers == {"Retry-After": str(RETRY_AFTER_S)}


@pytest.mark.parametrize(("status", "url", "want"), [
    pytest.param(502, "http://hub.example/services/jupyter-sched/", "the scheduler service behind the hub",
                 id="a hub service's 502 page is the service down"),
    pytest.param(504, "http://hub.example/user/amy/", "your Jupyter server on the hub is not answering",
                 id="a user's server's 504 page is that server down"),
    pytest.param(503, "http://127.0.0.1:8888/", "the jupyter_sched server is not answering (HTTP 503 from "
                 "127.0.0.1:8888)", id="a plain server behind a proxy is said as that server"),
])
def test_s22_hubadmin22_h1_every_non_scheduler_5xx_page_is_service_unavailable(status: int, url: str,
                                                                              want: str) -> None:
    said = error_from_response(status, "<html>Bad Gateway</html>", url=url)
    assert said.code == "service_unavailable" and want in said.message, said.message
