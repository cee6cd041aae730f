"""newuser25 N5: after a ``jupyter lab`` restart — a new token in its runtime file, as every plain
``jupyter lab`` start makes — ``jupyter-sched wait`` and ``logs -f`` rode the outage out and then
died "refused the token of its runtime file" (exit 1, read as a refusal) when the new server answered
the token they had found at their start. The README promises they go on where they were.

A real server (tests/reliability/harness.py, builtin token auth: its token is in its runtime file) is
killed and started again on the same port with another token while the CLI's ``wait`` and ``logs -f``
(real subprocesses that found the server through its runtime file) and a Python client wait on a job.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import psutil
import pytest

from jupyter_sched.cli.main import EXIT_OK, main
from jupyter_sched.client import connect
from tests.reliability.harness import EmbeddedServer, wait_until

ROOT = Path(__file__).resolve().parents[2]
CLI = str(Path(sys.executable).parent / "jupyter-sched")
JOB = ("import os, sys, time\nprint('before the restart', flush=True)\ndeadline = time.monotonic() + 120\n"
       "while not os.path.exists(sys.argv[1]) and time.monotonic() < deadline:\n    time.sleep(0.1)\n"
       "print('during the restart', flush=True)\n")
"""Runs until the test says the server is down (the file named by its argument): it ends in the outage however long
the start-up before it took, and nobody waits on it longer (it slept 12 s until session 41)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    """One server for the module: each test restarts it with a new token (one start less, session 41)."""
    # a 5-s leader lease: the restarted server leads (and sees the job end) without waiting out the 15-s default
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu25n5") / "lab", simulated_gpus=1, leader_lease_ttl_s=5)
    try:
        yield srv
    finally:
        srv.kill()


def _env(server: EmbeddedServer) -> dict[str, str]:
    """A shell of the lab's user: no JUPYTER_SCHED_* set, the lab's runtime dir (as `jupyter lab` uses)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    env.update(JUPYTER_RUNTIME_DIR=str(server.workdir / f"{server.name}-runtime"), PYTHONPATH=str(ROOT))
    return env


def _connected(pid: int, port: int) -> bool:
    """Whether process ``pid`` has a TCP connection open to ``127.0.0.1:port``."""
    try:
        return any(c.raddr and c.raddr.port == port and c.status == psutil.CONN_ESTABLISHED
                   for c in psutil.Process(pid).net_connections(kind="tcp"))
    except psutil.Error:
        return False


def test_newuser25_n5_waits_go_on_after_a_restart_that_made_a_new_token(
        server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    restarted = tmp_path / "restarting"
    with server.client() as api:
        made = api.post("jobs", json={"gpus": 1, "time_limit": "5m", "name": "rs-1",
                                      "command": [sys.executable, "-c", JOB, str(restarted)]})
        assert made.status_code == 201, made.text
        job_id = made.json()["id"]
        wait_until(lambda: api.get(f"jobs/{job_id}").json()["state"] == "running", "the job to run")
    env = _env(server)
    waiting = subprocess.Popen([CLI, "wait", job_id], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    following = subprocess.Popen([CLI, "logs", "-f", job_id], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    client = connect()  # the Python API finds the server the same way
    assert client.connection.token == server.token and client.connection.source == "runtime-file"
    # both commands have found the server (the old token) and poll it: each holds a connection to its port (a fixed
    # 3 s until session 41, which a loaded machine's start-up of the two commands could outlast)
    wait_until(lambda: all(_connected(p.pid, server.port) for p in (waiting, following)),
               "both commands connected to the server", timeout_s=120, poll_s=0.1)
    assert waiting.poll() is None and following.poll() is None, (waiting.stderr, following.stderr)

    server.owner_token = "a-new-token-as-every-jupyter-lab-start-makes"
    server.kill()
    restarted.touch()  # the job ends now, in the outage: the restarted server finds it ended
    server.restart(same_port=True)

    wait_out, wait_err = waiting.communicate(timeout=180)
    logs_out, logs_err = following.communicate(timeout=60)
    assert waiting.returncode == EXIT_OK, wait_err
    assert wait_out.startswith(f"job {job_id} (rs-1): succeeded"), wait_out
    assert following.returncode == EXIT_OK, logs_err
    assert "before the restart" in logs_out and "during the restart" in logs_out, logs_out
    assert logs_out.count("before the restart") == 1, logs_out  # went on where it was: nothing twice
    # whether a poll fell in the seconds the server was down (and said "it is likely restarting") is timing;
    # what matters is that the old token, refused by the new server, was replaced and nothing said refused
    for err in (wait_err, logs_err):
        assert "refused the token" not in err and "[forbidden]" not in err, err
    job = client.job(job_id)  # the Python client renews its token too
    assert job["state"] == "succeeded", job
    assert client.connection.token == server.token
    client.close()


def test_newuser25_n5_a_token_the_user_gave_is_still_reported_as_refused(
        server: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> None:
    old = server.token
    server.owner_token = "the-token-after-a-restart"
    server.restart(same_port=True)
    for name, value in _env(server).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", old)  # given by the user: never swapped for the runtime file's
    err = io.StringIO()
    assert main(["jobs"], out=io.StringIO(), err=err) == 1, err.getvalue()
    assert "refused the token in JUPYTER_SCHED_TOKEN" in err.getvalue(), err.getvalue()
    with httpx.Client(base_url=server.api, headers=server.headers(old)) as api:
        assert api.get("jobs").status_code in (401, 403)
