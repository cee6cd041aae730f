"""Per-user server as a client: ``c.SchedApp.hub_service_url`` forwards ``api/sched/*`` (no hub needed).

Real parts: the "central" service is a real jupyter_server with the jupyter_sched extension in
a subprocess (embedded mode: it authenticates the forwarded token as its owner, as the hub
service authenticates a user server's hub token as its user); the user server is pytest-jupyter's
``jp_serverapp`` with ``hub_service_url`` set; real kernels. GPUs are simulated.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
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

CENTRAL_TOKEN = "central-token-0123"
SERVER_TOKEN = "user-server-token-4567"


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real embedded jupyter_sched server (subprocess) acting as the central service."""
    with running_central(tmp_path_factory.mktemp("central")) as url:
        yield url


@contextlib.contextmanager
def running_central(base: Path, *settings: str) -> Iterator[str]:
    """A central service in ``base`` (its URL), with extra command-line ``settings``."""
    (base / "config").mkdir()
    (base / "config" / "jupyter_server_config.json").write_text(json.dumps({"ServerApp": {"jpserver_extensions": {
        "jupyterlab": False, "jupyter_lsp": False, "notebook_shim": False, "jupyter_server_terminals": False,
        "jupyter_sched": True}}}))
    port = _free_port()
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(base / "config"), "JUPYTER_DATA_DIR": str(base / "data"),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    env.pop("JUPYTER_SCHED_HUB_URL", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={CENTRAL_TOKEN}", "--ServerApp.open_browser=False",
         "--allow-root", f"--SchedApp.db_url=sqlite:///{base / 'central.sqlite'}",
         "--SchedApp.inventory_source=simulated", "--SchedApp.simulated_gpus=2", f"--SchedApp.log_dir={base / 'logs'}",
         "--SchedApp.cycle_interval=0.2", *settings],
        cwd=base, env=env, stdout=subprocess.DEVNULL, stderr=(base / "central.log").open("wb"))
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{url}api/sched/config", headers={"Authorization": f"token {CENTRAL_TOKEN}"},
                             timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("central server did not start:\n" + (base / "central.log").read_text()[-4000:])
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(30)


def forwarding_server_config(central: str) -> dict[str, Any]:
    """A user's server (pytest-jupyter's ``jp_server_config``) that forwards api/sched/ to the central at ``central``."""
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": SERVER_TOKEN},
        "SchedApp": {"hub_service_url": central, "hub_service_token": CENTRAL_TOKEN, "activity_interval_s": 1.0},
    }


@pytest.fixture
def jp_server_config(central: str) -> dict[str, Any]:
    return forwarding_server_config(central)




def central_get(central: str, path: str) -> Any:
    return httpx.get(f"{central}api/sched/{path}", headers={"Authorization": f"token {CENTRAL_TOKEN}"},
                     timeout=30).json()


async def fetch(jp_fetch: Any, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
    args = {"method": method, "raise_error": False, **kwargs}
    if body is not None:
        args["body"] = json.dumps(body)
    response = await jp_fetch(*path.split("/"), **args)
    text = response.body.decode() if response.body else ""
    return response.code, (json.loads(text) if text and text[0] in "[{" else text)


async def test_a_forwarding_server_is_a_client_of_the_central_service(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    status, config = await fetch(jp_fetch, "GET", "api/sched/config")
    assert status == 200 and config["mode"] == "embedded"  # the central's answer, unchanged

    status, job = await fetch(jp_fetch, "POST", "api/sched/jobs",
                              {"gpus": 1, "command": [sys.executable, "-c", "print('hello from the central')"]})
    assert status == 201, job
    assert any(j["id"] == job["id"] for j in central_get(central, "jobs"))  # it lives on the central service

    status, error = await fetch(jp_fetch, "POST", "api/sched/jobs", {"gpus": "many"})
    assert status == 400 and error["error"]["field"] == "gpus"  # the central's error, status and body

    for _ in range(200):
        _, current = await fetch(jp_fetch, "GET", f"api/sched/jobs/{job['id']}")
        if current["state"] == "succeeded":
            break
        await asyncio.sleep(0.1)
    status, logs = await fetch(jp_fetch, "GET", f"api/sched/jobs/{job['id']}/logs", params={"follow": "true"})
    assert status == 200 and "hello from the central" in logs["text"]


async def test_events_are_streamed_from_the_central_service(sched_app: Any, jp_fetch: Any) -> None:
    chunks: list[bytes] = []
    done = asyncio.Event()

    def on_chunk(chunk: bytes) -> None:
        chunks.append(chunk)
        if b"event: job" in b"".join(chunks):
            done.set()

    stream = asyncio.ensure_future(jp_fetch("api", "sched", "events", streaming_callback=on_chunk,
                                            request_timeout=60, raise_error=False))
    await asyncio.sleep(1.0)
    status, job = await fetch(jp_fetch, "POST", "api/sched/jobs", {"gpus": 0, "command": ["true"]})
    assert status == 201
    await asyncio.wait_for(done.wait(), 30)
    stream.cancel()
    text = b"".join(chunks).decode()
    assert "event: job" in text and job["id"] in text


async def test_a_lease_for_a_kernel_of_this_server_is_taken_and_a_mistyped_kernel_is_refused_here(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    """Issue 20 (d) through a forwarding server (CI on 58c298d: the central judged the user
    server's kernel by its own kernel manager and refused every %gpu request of a hub user)."""
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    status, lease = await fetch(jp_fetch, "POST", "api/sched/leases", {"gpus": 1, "kernel_id": kernel_id})
    assert status == 201 and lease["kernel_id"] == kernel_id, lease
    before = len(central_get(central, "leases?all=true"))
    status, error = await fetch(jp_fetch, "POST", "api/sched/leases", {"gpus": 1, "kernel_id": "k-typo"})
    assert status == 400, error
    assert error["error"]["field"] == "kernel_id" and "no kernel 'k-typo' runs on this server" in error["error"]["message"]
    assert len(central_get(central, "leases?all=true")) == before  # nothing reached the central service
    await fetch(jp_fetch, "DELETE", f"api/sched/leases/{lease['id']}")


async def wait_on_central(central: str, job_id: str, state: str, seconds: float = 30.0) -> dict[str, Any]:
    """The central service's answer for ``job_id`` once its state is ``state`` (asserted within ``seconds``).

    A lease POST answers ``pending``: the central admits it on its next tick (a few ms, longer on a
    loaded machine), so a test about a granted lease waits for the grant instead of racing it (CI on
    60e9487: a server stopped before the grant read "request withdrawn ... before any GPU was granted")."""
    deadline = time.monotonic() + seconds
    while True:
        current = central_get(central, f"jobs/{job_id}")
        if current["state"] == state or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.1)
    assert current["state"] == state, current
    return dict(current)


async def test_running_work_on_the_central_service_is_this_servers_activity_and_an_idle_lease_is_not(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    """Busy work on the central service counts as this server's activity (polled each second here);
    a lease the central's idle rules list (``GET idle``) does not (red team 15, R6 addendum). The
    old form of this check asserted an idle lease as activity and passed only while the poll beat
    the central's first idle sample (CI on 60e9487 lost the race)."""
    spin = "import time\nend = time.time() + 60\nwhile time.time() < end:\n    pass"
    status, job = await fetch(jp_fetch, "POST", "api/sched/jobs", {"gpus": 1, "command": [sys.executable, "-c", spin]})
    assert status == 201, job
    status, lease = await fetch(jp_fetch, "POST", "api/sched/leases", {"gpus": 1})
    assert status == 201, lease
    try:
        await wait_on_central(central, job["id"], "running")
        await wait_on_central(central, lease["id"], "running")
        seen: set[str] = set()
        for _ in range(300):
            seen = {item["id"] for item in sched_app.current_activity()}
            if job["id"] in seen:
                break
            await asyncio.sleep(0.1)
        assert job["id"] in seen  # the busy job is this server's activity
        for _ in range(300):  # once the central lists the lease as idle, the next poll leaves it out
            if any(c["job_id"] == lease["id"] for c in central_get(central, "idle")):
                break
            await asyncio.sleep(0.1)
        assert any(c["job_id"] == lease["id"] for c in central_get(central, "idle"))
        await asyncio.sleep(2.5)  # two polls of this server (activity_interval_s = 1)
        assert lease["id"] not in {item["id"] for item in sched_app.current_activity()}
    finally:
        await fetch(jp_fetch, "DELETE", f"api/sched/jobs/{job['id']}")
        await fetch(jp_fetch, "DELETE", f"api/sched/leases/{lease['id']}")


async def test_a_kernel_shutdown_releases_its_lease_on_the_central_service(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    status, lease = await fetch(jp_fetch, "POST", "api/sched/leases", {"gpus": 1, "kernel_id": kernel_id})
    assert status == 201, lease
    await wait_on_central(central, lease["id"], "running")
    await jp_fetch("api", "kernels", kernel_id, method="DELETE")
    ended = await wait_on_central(central, lease["id"], "cancelled")
    # said as the personal server says it, not "released by <owner>" like a %gpu release (new user 5 #16), and as
    # the owner's server, not "the server" (red40 R4: the owner's own token says it)
    assert ended["message"] == "released by root's Jupyter server: its kernel was shut down", ended["message"]


async def test_newuser5_finding_16_leases_released_when_the_server_stops_say_the_server_stopped(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    """New user 5 #16: the hub stopped alice's server and her lease read "released by alice", as if
    she had run ``%gpu release``."""
    response = await jp_fetch("api", "kernels", method="POST", body=json.dumps({"name": "python3"}))
    kernel_id = json.loads(response.body)["id"]
    _, lease = await fetch(jp_fetch, "POST", "api/sched/leases", {"gpus": 1, "kernel_id": kernel_id})
    await wait_on_central(central, lease["id"], "running")
    await sched_app.stop_extension()
    ended = central_get(central, f"jobs/{lease['id']}")
    assert ended["state"] == "cancelled"
    assert ended["message"] == "released by root's Jupyter server: the Jupyter server running its kernel was stopped", \
        ended


# ---- what is never forwarded -------------------------------------------------------------------

ATTACKS = [
    "http://127.0.0.1:{port}/steal",
    "http:%2F%2F127.0.0.1:{port}/steal",
    "https://127.0.0.1:{port}/steal",
    "//127.0.0.1:{port}/steal",
    "/127.0.0.1:{port}/steal",
    "../../../api/kernels",
    "jobs/../../../api/kernels",
    "%2e%2e/%2e%2e/api/kernels",
    "%2E%2E%2F%2E%2E%2Fapi%2Fkernels",
    "jobs%2F..%2F..%2Fx",
    "%252e%252e/%252e%252e/x",
    "..\\..\\api\\kernels",
    "%5c%5c127.0.0.1:{port}%5csteal",
    "\\\\127.0.0.1:{port}\\steal",
    "jobs/./x",
    "jobs/..",
    "jobs//x",
    "no-such-route",
    "jobs/x/y/z",
]
"""Paths after ``api/sched/`` that must be refused with a 4xx before anything is sent."""


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection (the place a leaked token would go)."""

    def __init__(self) -> None:
        import threading

        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1.0)
                try:
                    self.received.append(conn.recv(65536) or b"(connected)")
                except OSError:
                    self.received.append(b"(connected)")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


async def raw_get(port: int, path: str, token: str) -> tuple[int, str]:
    """Send ``GET path`` byte for byte (no client normalizes it); the status and body."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: token {token}\r\n"
                 "Connection: close\r\n\r\n".encode("latin-1"))
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


async def test_no_attack_form_is_forwarded_and_the_token_goes_nowhere_else(
        sched_app: Any, http_server: Any, jp_http_port: int, jp_base_url: str,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    listener = Listener()
    try:
        for attack in ATTACKS:
            path = jp_base_url + "api/sched/" + attack.format(port=listener.port)
            status, body = await raw_get(jp_http_port, path, SERVER_TOKEN)
            assert 400 <= status < 500, (attack, status, body)
            assert CENTRAL_TOKEN not in body
        ok, _ = await raw_get(jp_http_port, jp_base_url + "api/sched/config", SERVER_TOKEN)
        assert ok == 200  # a route of the table still goes through
        await asyncio.sleep(0.5)
    finally:
        listener.close()
    assert listener.received == []
    # each refusal is one warning line; a lured click must not write an "Uncaught exception" traceback. asyncio's
    # "Task was destroyed but it is pending!" is the garbage collector's, of a task an earlier test's server left when
    # its loop closed: it lands in whichever test the collector runs in (run B of session 37), not this test's
    assert [r.getMessage()[:80] for r in caplog.records if r.levelno >= logging.ERROR
            and not (r.name == "asyncio" and r.getMessage().startswith("Task was destroyed but it is pending"))] == []
    assert sum("refused to forward" in r.getMessage() for r in caplog.records) >= len(ATTACKS) - 2


async def test_a_malformed_path_is_a_400_naming_the_path_and_an_unknown_route_a_404(
        sched_app: Any, http_server: Any, jp_http_port: int, jp_base_url: str) -> None:
    status, body = await raw_get(jp_http_port, jp_base_url + "api/sched/%2e%2e/x", SERVER_TOKEN)
    assert status == 400 and json.loads(body)["error"]["field"] == "path"
    status, body = await raw_get(jp_http_port, jp_base_url + "api/sched/nothing-here", SERVER_TOKEN)
    assert status == 404 and json.loads(body)["error"]["field"] == "path"


async def test_someone_other_than_the_owner_cannot_act_through_a_shared_server(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    before = {j["id"] for j in central_get(central, "jobs")}
    sched_app.services.owner = "the-owner"  # as $JUPYTERHUB_USER says in a hub-spawned server
    try:
        for method, path, body in (("GET", "api/sched/jobs", None), ("POST", "api/sched/jobs",
                                                                      {"gpus": 0, "command": ["true"]})):
            status, error = await fetch(jp_fetch, method, path, body)
            assert status == 403 and error["error"]["code"] == "not_the_owner", error
            assert "the-owner" in error["error"]["message"]
    finally:
        sched_app.services.owner = None
    assert {j["id"] for j in central_get(central, "jobs")} == before  # nothing reached the central service


async def test_a_bulk_cancel_goes_through_a_forwarding_server_and_only_for_its_owner(
        sched_app: Any, jp_fetch: Any, central: str) -> None:
    """``POST jobs/cancel`` (issue 20 F2) is forwarded like any route: the central service cancels
    the named jobs of the server's owner and answers each outcome; a visitor of a shared server
    reaches nothing."""
    ids = []
    for _ in range(3):
        status, job = await fetch(jp_fetch, "POST", "api/sched/jobs", {"gpus": 2, "command": ["sleep", "300"]})
        assert status == 201, job
        ids.append(job["id"])
    sched_app.services.owner = "the-owner"
    try:
        status, error = await fetch(jp_fetch, "POST", "api/sched/jobs/cancel", {"ids": ids})
        assert status == 403 and error["error"]["code"] == "not_the_owner", error
    finally:
        sched_app.services.owner = None
    assert all(j["state"] != "cancelled" for j in central_get(central, "jobs") if j["id"] in ids)
    status, answer = await fetch(jp_fetch, "POST", "api/sched/jobs/cancel", {"ids": ids})
    assert status == 200 and answer["cancelled"] == 3, answer
    assert [j["id"] for j in answer["jobs"]] == ids
    assert {j["outcome"] for j in answer["jobs"]} <= {"removed", "stopping"}
    status, error = await fetch(jp_fetch, "POST", "api/sched/jobs/cancel", {"ids": ids, "mine": True})
    assert status == 400 and error["error"]["field"] == "mine"  # the central's error, status and body
    for _ in range(300):
        if all(j["state"] == "cancelled" for j in central_get(central, "jobs") if j["id"] in ids):
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError("the forwarded bulk cancel did not end the jobs on the central service")


async def test_job_definitions_and_executed_notebooks_go_through_a_forwarding_server(
        sched_app: Any, jp_fetch: Any, central: str, tmp_path: Any) -> None:
    """Issue 19 in hub mode: the panel's "Scheduled notebooks" and ``%schedule define`` talk to the
    user's own server, which forwards every definitions route (PATCH included) and the executed
    notebook (its media type and download name) to the central service."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    params = new_code_cell("region = 'us'")
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[params, new_code_cell("print('report for', region)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "report.ipynb"
    nbformat.write(nb, str(path))

    status, preview = await fetch(jp_fetch, "POST", "api/sched/definitions/preview",
                                  {"schedule": "0 12 * * 1-5", "timezone": "Europe/Berlin"})
    assert status == 200 and preview["description"] == "At 12:00 on Monday through Friday", preview
    status, created = await fetch(jp_fetch, "POST", "api/sched/definitions",
                                  {"name": "fwd-report", "notebook": str(path), "schedule": "0 12 * * 1-5",
                                   "gpus": 0, "parameters": {"region": "eu"}})
    assert status == 201, created
    assert created["id"] in {d["id"] for d in central_get(central, "definitions")}  # it lives on the central
    status, edited = await fetch(jp_fetch, "PATCH", f"api/sched/definitions/{created['id']}", {"schedule": None})
    assert status == 200 and edited["schedule"] is None and edited["next_run_at"] is None, edited
    status, run = await fetch(jp_fetch, "POST", f"api/sched/definitions/{created['id']}/runs", {})
    assert status == 201, run
    job_id = run["job_id"]
    for _ in range(600):
        _, job = await fetch(jp_fetch, "GET", f"api/sched/jobs/{job_id}")
        if job["state"] in ("succeeded", "failed"):
            break
        await asyncio.sleep(0.1)
    assert job["state"] == "succeeded", job
    response = await jp_fetch("api", "sched", "jobs", job_id, "notebook", params={"download": "true"})
    assert response.headers["Content-Type"].startswith("application/x-ipynb+json")
    assert 'filename="' in response.headers["Content-Disposition"]
    executed = nbformat.reads(response.body.decode(), as_version=4)
    assert "report for eu" in executed.cells[-1].outputs[0]["text"]
    status, deleted = await fetch(jp_fetch, "DELETE", f"api/sched/definitions/{created['id']}")
    assert status == 200 and deleted["deleted"] is True
