"""newuser40 n5: ``submit --dry-run`` while the reader's own lease held a GPU it needed said "root holds 1 of 4 GPUs
(1 lease)" — read as someone else — while the queue line of the same job once submitted said "your own … lease l-…
holds 1 of … GPUs: run … to free it". A dry run is always the reader's own request: one sentence for both.

A real jupyter server (the reliability harness) and the real CLI; simulated GPUs (this machine has none).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("holder"), users={"tok-ann": "ann", OWNER_TOKEN: "carol"},
                               admin_users=["carol"], simulated_gpus=2)
    try:
        yield srv
    finally:
        srv.kill()


def _cli(server: EmbeddedServer, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def test_newuser40_n5_a_dry_run_says_the_readers_own_lease_as_the_queue_line_does(server: EmbeddedServer) -> None:
    ann = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-ann"}, timeout=30)
    job = ann.post("jobs", json={"gpus": 1, "name": "hold", "command": [sys.executable, "-c",
                                                                         "import time; time.sleep(600)"]}).json()
    lease = ann.post("leases", json={"gpus": 1}).json()
    try:
        deadline = time.monotonic() + 60
        while {ann.get(f"jobs/{job['id']}").json()["state"], ann.get(f"leases/{lease['id']}").json()["state"]} \
                != {"running"}:
            assert time.monotonic() < deadline, (ann.get(f"jobs/{job['id']}").text, lease)
            time.sleep(0.2)
        dry = _cli(server, "submit", "--dry-run", "--gpus", "1", "--", "true")
        assert dry.returncode == 0, dry.stderr
        own = re.search(rf"your own lease {lease['id']} \(held for no kernel\) holds 1 of 2 GPUs: run "
                        rf"`jupyter-sched cancel {lease['id']}` to free it", dry.stdout)
        assert own is not None and "ann holds" not in dry.stdout and "(1 lease)" not in dry.stdout, dry.stdout
        waiting = _cli(server, "submit", "--gpus", "1", "--name", "waits", "--", "true")
        assert waiting.returncode == 0, waiting.stderr
        queue = _cli(server, "queue")
        assert queue.returncode == 0, queue.stderr
        line = next(line for line in queue.stdout.splitlines() if line.startswith("    needs 1 "))
        # the queue line names the same lease, in the same words, and the same way to free it (its ETA sentence)
        assert f"your own lease {lease['id']} (held for no kernel)" in line, queue.stdout
        assert f"`jupyter-sched cancel {lease['id']}`" in line and "ann holds" not in line, queue.stdout
    finally:
        _cli(server, "cancel", "--mine", "--yes")


def test_newuser40_n9_a_job_failing_for_no_cuda_device_on_simulated_gpus_says_they_were_simulated(
        server: EmbeddedServer) -> None:
    """newuser40 n9: ``sys.exit('RuntimeError: No CUDA GPUs are available')`` on ``--gpus 1`` (simulated GPUs) ended
    "failed, exit code 1 … — RuntimeError: No CUDA GPUs are available" and nothing said the GPUs were simulated (only
    running lines carry "[simulated GPUs]"). ``jobs`` and ``status`` now lead its why with it; a failure for another
    reason says nothing of it."""
    ann = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-ann"}, timeout=30)
    ids = {}
    for name, said in (("nocuda", "RuntimeError: No CUDA GPUs are available"), ("other", "ValueError: bad input")):
        ids[name] = ann.post("jobs", json={"gpus": 1, "name": name, "command": [
            sys.executable, "-c", f"import sys; print('start'); sys.exit({said!r})"]}).json()["id"]
    try:
        deadline = time.monotonic() + 90
        while {ann.get(f"jobs/{i}").json()["state"] for i in ids.values()} != {"failed"}:
            assert time.monotonic() < deadline, [ann.get(f"jobs/{i}").text for i in ids.values()]
            time.sleep(0.2)
        status = _cli(server, "status", ids["nocuda"])
        assert status.returncode == 0, status.stderr
        assert (" — ran on simulated GPUs (no NVIDIA driver here): CUDA sees no device — RuntimeError: No CUDA GPUs "
                "are available") in status.stdout, status.stdout
        jobs = _cli(server, "jobs")
        assert jobs.returncode == 0 and "ran on simulated GPUs" in jobs.stdout, jobs.stdout
        other = _cli(server, "status", ids["other"])
        assert "ValueError: bad input" in other.stdout and "simulated GPUs" not in other.stdout, other.stdout
    finally:
        _cli(server, "cancel", "--mine", "--yes")


def test_red40_nit_a_valid_token_to_a_foreign_host_is_told_the_host_was_refused(server: EmbeddedServer) -> None:
    """red40 nit: a valid token with ``Host: x`` (a name the server does not answer to) was answered 403 "the server
    did not accept this request's credentials: no token, a wrong token …" — the token was fine. Now the 403 names the
    Host and the fix; a wrong token to the right Host is still told its credentials were refused."""
    foreign = httpx.get(f"{server.api}jobs", headers={"Authorization": "token tok-ann", "Host": "evil.example:80"},
                        timeout=30)
    assert foreign.status_code == 403, foreign.text
    error = foreign.json()["error"]
    assert error["message"] == "this server does not answer to Host 'evil.example:80'" and error["field"] == "Host"
    assert "c.ServerApp.allow_remote_access" in error["hint"] and "credentials" not in foreign.text, error
    wrong = httpx.get(f"{server.api}jobs", headers={"Authorization": "token not-a-token"}, timeout=30)
    assert wrong.status_code in (401, 403) and "credentials" in wrong.json()["error"]["message"], wrong.text
    assert httpx.get(f"{server.api}jobs", headers={"Authorization": "token tok-ann"}, timeout=30).status_code == 200
