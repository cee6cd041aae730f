"""hubadmin23 A18, what session 23 left: `jupyter-sched logs -f`, `%schedule wait`, `%schedule logs -f` and
`%gpu request`'s wait for its GPUs did not ride out a restart of the service (the CLI's `wait` and `submit
--wait` did): the first refused connection or proxy 503 ended them with an error, the job running on.

Now each reads again through the outage (backoff 1, 2, 4, 8, 15 s, for up to 10 minutes), says once that the
service is likely restarting, and goes on where it was: a log from the last offset read, nothing shown twice
and nothing lost.

Real parts (first test): a jupyter server with jupyter_sched in its own process, stopped (SIGKILL, its jobs
running on) and started again on the same port and store while the CLI and a notebook's `%schedule logs -f`
follow one job's log and `%schedule wait` waits for another; the jobs are real processes. Second test: JupyterHub's proxy in front of
the service, a loopback HTTP double that answers its "503 Service Unavailable" page while the service
restarts, for `%gpu request`'s wait (its pauses counted, not slept).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.client import connect, ride_out
from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.magics.core import SchedMagics
from tests.hub_service_double import ServiceDoubleHandler, serve_service_double
from tests.reliability.harness import EmbeddedServer, wait_until

LINES = 60
NOTICE = "it is likely restarting; still "


def _job(server: EmbeddedServer, name: str, script: Path) -> str:
    with server.client() as api:
        answer = api.post("jobs", json={"gpus": 0, "name": name, "time_limit_s": 300,
                                        "command": [sys.executable, str(script)]})
        assert answer.status_code in (200, 201), answer.text
        return str(answer.json()["id"])


def _log(server: EmbeddedServer, job_id: str) -> str:
    with server.client() as api:
        answer = api.get(f"jobs/{job_id}/logs")
        return str(answer.json().get("text") or "") if answer.status_code == 200 else ""


class _Worker(threading.Thread):
    """Runs ``target`` and keeps its answer (or error) for the test to read."""

    def __init__(self, target: Any) -> None:
        super().__init__(daemon=True)
        self.target, self.answer, self.error = target, None, None  # type: Any, Any, BaseException | None

    def run(self) -> None:
        try:
            self.answer = self.target()
        except BaseException as exc:  # said by the test
            self.error = exc


def test_s24_hubadmin23_a18_logs_follow_and_the_magics_wait_and_logs_ride_out_a_real_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # before: `logs -f` ended with "cannot reach the jupyter_sched server at …: nothing is listening there"
    # (exit 3) at the stop, and `%schedule wait` / `%schedule logs -f` raised the same as a MagicError, the jobs
    # running on
    lines = tmp_path / "lines.py"
    lines.write_text(f"import time\nfor i in range(1, {LINES + 1}):\n    print(f'line {{i}}', flush=True)\n"
                     "    time.sleep(0.3)\n")
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text("import time\ntime.sleep(15)\nprint('slept', flush=True)\n")
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
    # a 5-s leader lease: the restarted server leads without waiting out the 15-s default (session 34)
    server = EmbeddedServer.start(tmp_path / "srv", simulated_gpus=1, leader_lease_ttl_s=5)
    try:
        follow_id, wait_id = _job(server, "ride-log", lines), _job(server, "ride-wait", sleeper)
        following = _Worker(lambda: server.cli("logs", "-f", follow_id))
        printed = io.StringIO()  # what the two cells print (one notebook's output, as two kernels' would be)

        def magic(line: str) -> Any:
            return lambda: SchedMagics(None, client_factory=lambda: connect(server.url, server.token)).schedule(line)

        waiting, tailing = _Worker(magic(f"wait {wait_id}")), _Worker(magic(f"logs {follow_id} -f"))
        with contextlib.redirect_stdout(printed):
            for worker in (following, waiting, tailing):
                worker.start()
            wait_until(lambda: _log(server, follow_id).count("\n") >= 5, "the followed job's first lines",
                       timeout_s=120)
            served_before = _log(server, follow_id).count("\n")
            server.restart(same_port=True)  # SIGKILL, then a new process on the same port and store
            for worker in (following, waiting, tailing):
                worker.join(timeout=240)
        assert not any(w.is_alive() for w in (following, waiting, tailing)), (server.log_tail(), printed.getvalue())
    finally:
        with contextlib.suppress(Exception), server.client() as api:
            for job_id in (follow_id, wait_id):
                api.delete(f"jobs/{job_id}")
        server.kill()
    assert (following.error, waiting.error, tailing.error) == (None, None, None)
    code, out, err = following.answer
    assert served_before < LINES, "the job ended before the restart: nothing was ridden out"
    assert out == "".join(f"line {i}\n" for i in range(1, LINES + 1)), out  # each line once, in order
    assert err.count(NOTICE) == 1 and f"still following {follow_id}'s log (for up to 10 min; Ctrl-C stops " \
                                       "following, the job goes on)" in err, err
    assert code == 0 and f"job {follow_id} (ride-log): succeeded" in err, (code, err)
    said = printed.getvalue()
    assert said.count(f"still waiting for {wait_id} (for up to 10 min; interrupt the kernel to stop waiting; the job "
                      "goes on)") == 1, said
    assert f"job {wait_id} (ride-wait): succeeded" in said, said
    # %schedule logs -f: each line once, in order, and its own notice once
    assert [line for line in said.splitlines() if line.startswith("line ")] == \
        [f"line {i}" for i in range(1, LINES + 1)], said
    assert said.count(f"still following {follow_id}'s log (for up to 10 min; interrupt the kernel to stop following; "
                      "the job goes on)") == 1, said
    assert said.count(NOTICE) == 2, said  # the wait's and the log's, each once


PROXY_503 = (b"<!DOCTYPE HTML><html><head><title>Service Unavailable</title></head><body><h1>503 Service "
             b"Unavailable</h1><p>Your server appears to be down. Try restarting it from the hub</p></body></html>")
LEASE = {"id": "l-a18", "kind": "lease", "state": "pending", "user": "ha23n", "gpus": 1, "kernel_id": "k-a18",
         "reason": {"code": "QuotaExceeded", "message": "ml has 0 of 1 GPUs free (1 in use), job needs 1",
                    "position": 1, "eta": None, "details": {}}}
GRANTED = {**LEASE, "state": "running", "reason": None, "allocation": {"node": "vm", "gpus": ["GPU-sim-0"]},
           "simulated": True}


class _Hub(ServiceDoubleHandler):
    """The hub's proxy before the scheduler service: the lease pending, then ``down`` polls answered 503 (the
    service restarting), then the lease granted."""

    down = 0


    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path.endswith("/inventory"):
            self._send(200, json.dumps({"gpus": [{"node": "vm", "index": 0, "model": "sim", "uuid": "GPU-sim-0",
                                                  "memory_mib": 1024, "health": "healthy"}]}).encode())
        elif path.endswith("/leases"):
            self._send(200, json.dumps([]).encode())
        elif path.endswith("/leases/l-a18"):
            if type(self).down > 0:
                type(self).down -= 1
                self._send(503, PROXY_503, "text/html")
            else:
                self._send(200, json.dumps(GRANTED).encode())
        else:
            self._send(404, json.dumps({"error": {"code": "not_found", "message": path}}).encode())

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self._send(201, json.dumps(LEASE).encode())



@contextlib.contextmanager
def _hub(down: int) -> Iterator[str]:
    _Hub.down = down
    with serve_service_double(_Hub) as url:
        yield url


def test_s24_hubadmin23_a18_gpu_request_rides_out_the_service_restarting(monkeypatch: pytest.MonkeyPatch) -> None:
    # before: "jupyter_sched: the scheduler service behind the hub is not answering (HTTP 503 …)" at the first
    # poll, the request left pending on the hub
    taken: list[float] = []
    monkeypatch.setattr(ride_out, "_clock", lambda: time.monotonic() + sum(taken))
    monkeypatch.setattr(ride_out, "_sleep", taken.append)
    for name in ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "JUPYTER_SCHED_GPU_MILLI"):
        monkeypatch.delenv(name, raising=False)  # set by the grant, put back after the test
    printed = io.StringIO()
    with _hub(down=4) as url:
        client = SchedClient(Connection(url=url, token="user-token", kernel_id="k-a18", source="kernel-env"))
        magics = SchedMagics(None, client_factory=lambda: client)
        monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")
        with contextlib.redirect_stdout(printed):
            magics.gpu("request 1 --timeout 10m")
    said = printed.getvalue()
    assert said.count(NOTICE) == 1, said
    assert ("the scheduler service behind the hub is not answering (HTTP 503 from 127.0.0.1" in said
            and "still waiting for GPUs for lease request l-a18 (for up to 10 min; interrupt the kernel to stop "
                "waiting and withdraw the request)" in said), said
    assert "Allocated" in said and "(lease l-a18)" in said, said
    assert taken == [1.0, 2.0, 4.0, 8.0], taken  # backoff, not a tight loop
    assert magics.lease is not None and magics.lease["state"] == "running"
