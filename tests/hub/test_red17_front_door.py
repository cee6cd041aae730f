"""Red team 17 (issue 20): the central service's HTTP front door.

R6: any local account held the service's file descriptors with idle half-sent requests (tornado kept
them an hour), so others' requests failed — with a "hub address" 500 and a 403 "no OS account"
audited against the victim — and the accept loop logged a traceback per try.

Real parts: ``jupyter-sched serve`` as a subprocess (root, SQLite, simulated GPUs, the hub's
service environment at a closed port: the API root answers without the hub), real TCP sockets;
the account lookup under fd exhaustion in a subprocess with a low ``RLIMIT_NOFILE``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY
from tests.accounts import shared_dir
from tests.runas_env import runas_venv

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="the central service with the local executor runs as root")


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def _wait(ready: Any, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


class Service:
    """``jupyter-sched serve`` on a free port (or ``port``); ``hub_api``: the hub API it asks (default: a closed
    port, so only the API root answers)."""

    def __init__(self, folder: Path, *options: str, hub_api: str | None = None, hub_token: str = "t",
                 port: int | None = None) -> None:
        self.port = port or _free_port()
        self.base = f"http://127.0.0.1:{self.port}/services/s/"
        self.log = folder / "service.log"
        (folder / "jobs").mkdir()
        env = {"PATH": "/usr/bin:/bin", "HOME": str(folder), "LANG": "C.UTF-8",
               "JUPYTERHUB_API_URL": hub_api or f"http://127.0.0.1:{_free_port()}/hub/api", "JUPYTERHUB_API_TOKEN": hub_token,
               "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{self.port}", "JUPYTERHUB_SERVICE_PREFIX": "/services/s/",
               "JUPYTER_SCHED_DB_URL": f"sqlite:///{folder / 'store.sqlite'}", "JUPYTER_DATA_DIR": str(folder / "data"),
               "JUPYTER_CONFIG_DIR": str(folder / "config"), "JUPYTER_RUNTIME_DIR": str(folder / "runtime")}
        for name in ("PYTHONPATH", ENV_REGISTRY):  # the session's host registry: tests/conftest.py
            if name in os.environ:
                env[name] = os.environ[name]
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyter_sched.cli.main", "serve", "--allow-root", "--allow-unprivileged-port",
             "--SchedApp.inventory_source=simulated", f"--SchedApp.log_dir={folder / 'jobs'}",
             f"--HubSchedApp.job_python={runas_venv() / 'bin' / 'python'}", *options],
            env=env, cwd=folder, stdout=self.log.open("wb"), stderr=subprocess.STDOUT)
        _wait(self.answers, 120, f"the service to answer (log: {self.log})")

    def answers(self) -> bool:
        assert self.process.poll() is None, self.log.read_text()[-3000:]
        try:
            return self.get_api().status_code == 200
        except httpx.HTTPError:
            return False

    def get_api(self) -> httpx.Response:
        return httpx.get(self.base + "api", timeout=10)

    def half_sent(self, n: int) -> list[socket.socket]:
        """``n`` connections that sent a request head without its blank line, as R6's probe did."""
        socks = []
        for _ in range(n):
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            sock.sendall(b"GET /services/s/api/sched/me HTTP/1.1\r\nHost: x\r\n")
            socks.append(sock)
        return socks

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)


def _closed(sock: socket.socket) -> bool:
    """Whether the service closed ``sock`` (EOF or reset); False while it is still open."""
    sock.setblocking(False)
    try:
        return sock.recv(1) == b""
    except BlockingIOError:
        return False
    except ConnectionError:
        return True


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with shared_dir() as folder:  # the job folder must be reachable by every account (0755 above it)
        running = Service(folder, "--FrontDoor.header_timeout_s=3", "--FrontDoor.max_connections=40",
                          "--FrontDoor.log_interval_s=1")
        try:
            yield running
        finally:
            running.stop()


def test_red17_r6_half_sent_requests_are_closed_after_the_header_timeout_while_others_answer(service: Service) -> None:
    # fails before the fix: tornado held them 3600 s (idle_connection_timeout's default)
    socks = service.half_sent(30)
    try:
        assert service.get_api().status_code == 200  # meanwhile, a whole request is answered
        assert not any(_closed(s) for s in socks)  # not cut at once: under the ceiling, inside the timeout
        _wait(lambda: all(_closed(s) for s in socks), 30, "the half-sent connections to be closed")
        assert service.get_api().status_code == 200
    finally:
        for sock in socks:
            sock.close()


def test_red17_r6_past_the_ceiling_the_oldest_half_sent_connection_is_closed_first(service: Service) -> None:
    # fails before the fix: no ceiling, every connection held its descriptor (20,000 exhausted the service)
    socks = service.half_sent(100)
    try:
        _wait(lambda: all(_closed(s) for s in socks[:55]), 15, "the oldest connections to be closed at the ceiling")
        newest = socks[-20:]
        assert not all(_closed(s) for s in newest), "the newest connections were closed, not the oldest"
        assert service.get_api().status_code == 200  # a whole request still gets in past 100 half-sent ones
        _wait(lambda: "closed at the ceiling" in service.log.read_text(), 15, "the summary line")
        lines = [line for line in service.log.read_text().splitlines() if "front door, last" in line]
        assert 1 <= len(lines) <= 10, lines  # a summary per interval, not a line per connection
        assert "c.FrontDoor.max_connections" in lines[0] and "ceiling 40" in lines[0], lines[0]
    finally:
        for sock in socks:
            sock.close()


def _answer(sock: socket.socket, timeout_s: float) -> bytes:
    sock.settimeout(timeout_s)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (TimeoutError, ConnectionError):
        pass
    return data


def test_red17_r11_a_body_over_the_cap_is_refused_413_from_its_head_before_it_is_read(service: Service) -> None:
    # fails before the fix: tornado waited for (and buffered) up to 100 MB per connection before any auth
    from jupyter_sched.hub.front_door import MAX_BODY_BYTES
    from jupyter_sched.model.validation import MAX_NOTEBOOK_JSON_BYTES
    assert MAX_NOTEBOOK_JSON_BYTES < MAX_BODY_BYTES < 100_000_000
    claimed = 94_371_913  # R11's 90 MB body; none of it is sent
    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
        sock.sendall(b"POST /services/s/api/sched/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n{\"gpus\": 0" % claimed)
        answer = _answer(sock, 10)
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413"), answer[:300]
    error = json.loads(body)["error"]
    assert error["field"] == "body" and f"{MAX_BODY_BYTES:,}" in error["message"], error
    assert f"{claimed:,}" in error["message"] and "c.FrontDoor.max_body_bytes" in error["hint"], error
    # a body the size of the largest carried notebook still reaches the service (here: refused for want of a token)
    notebook_sized = b'{"gpus": 0, "notebook_json": "' + b"x" * MAX_NOTEBOOK_JSON_BYTES + b'"}'
    response = httpx.post(service.base + "api/sched/jobs", content=notebook_sized, timeout=60)
    assert response.status_code in (401, 403), response.text[:300]
    assert service.get_api().status_code == 200


def test_red20_r1_a_chunked_body_over_the_cap_gets_the_same_json_413_from_the_service(service: Service) -> None:
    # fails before the fix: "Malformed HTTP message ... chunked body too large" in the log, the connection reset
    from jupyter_sched.hub.front_door import MAX_BODY_BYTES

    def pieces() -> Iterator[bytes]:  # no Content-Length: httpx sends a generator chunked (red20/a32_chunked.py)
        for _ in range(MAX_BODY_BYTES // (1 << 20) + 2):
            yield b"x" * (1 << 20)

    answer = httpx.post(service.base + "api/sched/jobs", content=pieces(), timeout=60,  # a token: without one, 401
                        headers={"Content-Type": "application/json", "Authorization": "token made-up"})  # past 64 KiB
    assert answer.status_code == 413, (answer.status_code, answer.text[:300])
    assert answer.headers["content-type"].startswith("application/json"), answer.headers
    error = answer.json()["error"]
    assert error["code"] == "too_large" and error["field"] == "body", error
    assert f"{MAX_BODY_BYTES:,}" in error["message"] and "chunked" in error["message"], error
    assert "chunked body too large" not in service.log.read_text()
    assert service.get_api().status_code == 200


_EXHAUSTED_LOOKUP = """
import os, resource, sys
from jupyter_sched.errors import OverloadedError, ExecutorError
from jupyter_sched.executors.runas import AccountMapping
resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
held = []
try:
    while True:
        held.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
try:
    AccountMapping(min_uid=0).resolve(sys.argv[1])
except OverloadedError as exc:
    print("overloaded", exc.message)
except ExecutorError as exc:
    print("executor", exc.message)
else:
    print("resolved")
"""


def test_red21_r4_a_body_in_one_byte_chunks_gets_the_json_400_from_the_service_and_ordinary_chunks_pass(
        service: Service) -> None:
    # fails before the fix: every chunk was read (~16 µs of the IO loop each) and the body reached the handlers
    # (red21/a5_tinychunks.py: 400 KB so took 25.8 s); now refused once its chunks fall below 512 bytes on average
    body = json.dumps({"gpus": 0, "command": ["true"], "name": "x", "pad": "y" * 3_000}).encode()
    wire = b"".join(b"1\r\n" + body[i:i + 1] + b"\r\n" for i in range(len(body))) + b"0\r\n\r\n"
    with socket.create_connection(("127.0.0.1", service.port), timeout=10) as sock:
        sock.sendall(b"POST /services/s/api/sched/dryrun HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Authorization: token not-a-hub-token\r\nTransfer-Encoding: chunked\r\n\r\n" + wire)
        answer = _answer(sock, 20)
    head, _, text = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer[:300]
    error = json.loads(text)["error"]
    assert error["field"] == "body" and "chunked" in error["message"] and "512" in error["message"], error
    assert "Content-Length" in error["hint"] and "c.FrontDoor.min_chunk_bytes" in error["hint"], error
    _wait(lambda: "c.FrontDoor.min_chunk_bytes" in service.log.read_text(), 15, "the summary line")

    def pieces() -> Iterator[bytes]:  # an ordinary chunked client: httpx sending a generator, KiB pieces
        yield body[:1]
        for i in range(1, len(body), 1_000):
            yield body[i:i + 1_000]

    passed = httpx.post(service.base + "api/sched/dryrun", content=pieces(), timeout=60,
                        headers={"Content-Type": "application/json"})
    assert passed.status_code in (401, 403), passed.text[:300]  # reached the handlers (no token here)
    assert service.get_api().status_code == 200


def test_red17_r6_an_account_lookup_without_file_descriptors_is_overload_not_no_such_account() -> None:
    # fails before the fix: glibc's "not found" under EMFILE became 403 "no OS account", audited against the user
    account = "nobody"
    done = subprocess.run([sys.executable, "-c", _EXHAUSTED_LOOKUP, account], capture_output=True, text=True,
                          timeout=60, env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("overloaded"), done.stdout
    assert "out of file descriptors" in done.stdout and "no OS account" not in done.stdout
    from jupyter_sched.errors import OverloadedError, http_status_for
    assert http_status_for(OverloadedError("x")) == 503
