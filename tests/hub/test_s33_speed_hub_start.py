"""Session 33 speed, tests/hub/hub_harness.py: a test hub gives its central service 1 s to answer at the hub's
start, not JupyterHub 6's default 30 s; ``start_servers`` sends its spawn requests together.

JupyterHub 6 waits ``Service.timeout`` for each external service with a URL before it routes ``/hub/`` through
the proxy; the harness starts ``jupyter-sched serve`` after the hub (it needs the hub's API), so the wait always
ran out: every test hub (~30 starts a run) spent 30 s of its ~37 s start-up waiting for nothing (measured here:
the hub API answered after 37.5 s before, 5.8 s after). The hub routes the service either way.

No hub is started: the first test reads the config the harness writes, as JupyterHub's config loader does; the
second gives the harness a stand-in hub API (its docstring says why).
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

pytest.importorskip("jupyterhub", reason="hub mode needs jupyterhub (pip install jupyterhub)")

from jupyterhub.services.service import Service
from traitlets.config import Config

from .hub_harness import SERVICE, Hub


def test_s33_speed_a_test_hub_waits_one_second_not_thirty_for_its_service_at_start(tmp_path: Path) -> None:
    hub = Hub(base=tmp_path, db_url="postgresql://unused/none", venv=Path(sys.prefix), admins=("carol",),
              groups={"vision": ["amy"]}, proxy_port=1, hub_port=2, service_port=3)
    config = Config()
    exec(compile(hub.config_text("configurable-http-proxy", 4), "jupyterhub_config.py", "exec"),
         {"get_config": lambda: config})
    (service,) = [spec for spec in config.JupyterHub.services if spec["name"] == SERVICE]
    assert service["url"] == "http://127.0.0.1:3", service
    inputs = {name for name, trait in Service.class_traits().items() if trait.metadata.get("input")}
    assert set(service) <= inputs, ("JupyterHub refuses a service field it does not have", set(service) - inputs)
    if "timeout" in inputs:  # JupyterHub 6+: the field exists, its default is 30 s
        assert service["timeout"] == 1, service
    else:  # JupyterHub 5 waits 1 s, fixed
        assert "timeout" not in service, service


def test_s33_speed_start_servers_sends_the_spawn_requests_together(tmp_path: Path) -> None:
    """JupyterHub answers ``POST users/NAME/server`` only once that server is up (or after its 10-s
    ``slow_spawn_timeout``): one after the other, the second server's ~6-s start waited for the first's (measured:
    7.1 s + 6.2 s). What is under test is the harness, so the hub here is a stand-in speaking the hub's REST shapes:
    it answers no spawn until both spawn requests are in (each waits at most 30 s for the other)."""
    both_in = threading.Barrier(2, timeout=30)
    spawned: list[str] = []

    class FakeHubApi(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            user = self.path.split("/")[-2]
            try:
                both_in.wait()
                status, body = 201, b""
                spawned.append(user)
            except threading.BrokenBarrierError:
                status, body = 500, b"the other spawn request never came while this one was open"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            body = json.dumps({"servers": {"": {"ready": True}}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHubApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        hub = Hub(base=tmp_path, db_url="postgresql://unused/none", venv=Path(sys.prefix), admins=(), groups={},
                  proxy_port=server.server_address[1])
        hub.start_servers("amy", "eve")
    finally:
        server.shutdown()
        server.server_close()
    assert sorted(spawned) == ["amy", "eve"], spawned
