"""New user 9, finding N1 (and new user 10, N19, on the same hub): the hub's central service granted a lease for a made-up kernel_id, for
another user's kernel_id, and to a user with no running server — GPUs held ~60 s until the hub
check noticed. Now refused at admission: 400 naming ``kernel_id``, audited, nothing stored.

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm),
real OS accounts whose servers JupyterHub's local spawner starts, ``jupyter-sched serve`` as root on
PostgreSQL, real kernels; requests with each user's own hub token straight at the central service
(as a user with curl would) and through the user's own server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

FAKE = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    # heartbeats every second, 5 missed: the one end-to-end check of newuser41 N1's hub half (its last test)
    yield from amy_and_eve_hub(pg_server, users, "newuser9", service_args=(
        "--SchedApp.lease_heartbeat_interval_s=1", "--SchedApp.lease_heartbeat_misses=5"))


def post(url: str, token: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(url, json=body, timeout=60, headers={"Authorization": f"token {token}"})


def test_newuser9_n1_a_lease_needs_a_running_server_of_the_caller_and_one_of_its_kernels(
        hub: Hub, users: dict[str, Account]) -> None:
    amy, eve = users["amy"].name, users["eve"].name
    tokens = {name: hub.token_for(name) for name in (amy, eve, "carol")}
    leases = f"{hub.service_url}api/sched/leases"

    # eve has no server: no lease, with a kernel id or without one
    for body in ({"gpus": 1}, {"gpus": 1, "kernel_id": FAKE}):
        answer = post(leases, tokens[eve], body)
        assert answer.status_code == 400, answer.text
        error = answer.json()["error"]
        assert error["field"] == "kernel_id" and "no running server" in error["message"], error

    # amy's real kernel; eve's server up too: neither a made-up id nor amy's kernel id is eve's
    hub.start_servers(amy, eve)
    kernel = post(f"{hub.server_url(amy)}api/kernels", tokens[amy], {})
    assert kernel.status_code == 201, kernel.text
    amys_kernel = kernel.json()["id"]
    # at once, as %gpu request in a new kernel does: her server reports the kernel before it forwards
    through = post(f"{hub.server_url(amy)}api/sched/leases", tokens[amy], {"gpus": 1, "kernel_id": amys_kernel})
    assert through.status_code == 201, through.text
    for url, body in ((leases, {"gpus": 1, "kernel_id": amys_kernel}), (leases, {"gpus": 1, "kernel_id": FAKE}),
                      (f"{hub.service_url}api/sched/jobs", {"kind": "lease", "gpus": 1, "kernel_id": FAKE})):
        answer = post(url, tokens[eve], body)
        if answer.status_code != 400:
            pytest.fail(f"{body} answered {answer.status_code} {answer.text[:300]}\n{hub.log_tail(4000)}")
        error = answer.json()["error"]
        assert error["field"] == "kernel_id" and "no kernel" in error["message"], error
    held = httpx.get(leases, params={"state": "pending,admitted,running"}, timeout=30,
                     headers={"Authorization": f"token {tokens[eve]}"})
    assert held.status_code == 200 and held.json() == [], held.text  # nothing was stored for eve

    audit = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 500}, timeout=30,
                      headers={"Authorization": f"token {tokens['carol']}"})
    refused = [e for e in audit.json() if e["action"] == "refused" and e.get("user") == eve
               and (e.get("details") or {}).get("field") == "kernel_id"]
    assert len(refused) >= 5, refused

    # amy's own kernel straight at the service (her server reported it)
    straight = post(leases, tokens[amy], {"gpus": 1, "kernel_id": amys_kernel})
    assert straight.status_code == 201, straight.text
    loose = post(leases, tokens[eve], {"gpus": 0.5})  # eve's server runs: GPUs bound to no kernel are hers
    assert loose.status_code == 201, loose.text
    for token, lease in ((tokens[amy], through), (tokens[amy], straight), (tokens[eve], loose)):
        gone = httpx.delete(f"{leases}/{lease.json()['id']}", timeout=30, headers={"Authorization": f"token {token}"})
        assert gone.status_code == 200, gone.text


def test_newuser9_n1_lease_refusal_rules() -> None:
    """The decision alone (the hub test above walks it end to end)."""
    from datetime import datetime, timezone

    from jupyter_sched.hub.liveness import KernelReport, lease_refusal

    now = datetime.now(timezone.utc)
    reports = {"": KernelReport(user="eve", server="", kernels=frozenset({"k-1"}), received_at=now),
               "old": KernelReport(user="eve", server="old", kernels=frozenset({"k-9"}), received_at=now)}
    assert lease_refusal("k-1", [""], reports) is None
    assert lease_refusal(None, [""], reports) is None
    for kernel, servers, words in (("k-1", [], "no running server"), (None, [], "no running server"),
                                   ("k-2", [""], "no kernel 'k-2'"), ("k-9", [""], "no kernel 'k-9'")):
        refusal = lease_refusal(kernel, servers, reports)  # k-9: reported by a server that is no longer running
        assert refusal is not None and refusal.field == "kernel_id" and words in refusal.message, refusal


def test_newuser10_n19_python_and_python3_both_run_the_hubs_job_python(hub: Hub, users: dict[str, Account]) -> None:
    """In a hub terminal ``submit -- python x.py`` ran the job Python silently while ``-- python3 x.py``
    ran the terminal's /usr/bin/python3 (no packages) with "note: runs python3 as /usr/bin/python3"."""
    eve = users["eve"]
    token = hub.token_for(eve.name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    env.update({"JUPYTER_SCHED_HUB_URL": hub.service_url, "JUPYTER_SCHED_TOKEN": token,
                "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    cli = str(Path(sys.executable).parent / "jupyter-sched")
    for program in ("python", "python3"):
        made = subprocess.run([cli, "submit", "--gpus", "0", "--json", "--", program, "-c",
                               "import sys; print('EXE', sys.executable)"], env=env, cwd=eve.home,
                              capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stdout + made.stderr
        assert "the scheduler's job Python" in made.stderr and "(the one on your PATH)" not in made.stderr, made.stderr
        job_id = json.loads(made.stdout)["id"]
        deadline = time.monotonic() + 90
        headers = {"Authorization": f"token {token}"}
        while (job := httpx.get(f"{hub.service_url}api/sched/jobs/{job_id}", headers=headers, timeout=30).json()
               )["state"] not in ("succeeded", "failed", "cancelled"):
            assert time.monotonic() < deadline, job
            time.sleep(0.5)
        log = httpx.get(f"{hub.service_url}api/sched/jobs/{job_id}/logs", headers=headers, timeout=30).text
        assert job["state"] == "succeeded" and f"EXE {hub.venv}/bin/" in log, (program, job, log)


def test_newuser9_n8_a_user_servers_log_names_the_hubs_scheduler_not_a_local_store(
        hub: Hub, users: dict[str, Account]) -> None:
    """A hub user server logged "jupyter_sched 0.1.0: store sqlite:////home/amy/…/sched.sqlite, inventory
    source auto, …" as if standalone, never naming the hub service it forwards to."""
    hub.start_servers(users["amy"].name)
    log = (hub.base / "hub.log").read_text(errors="replace")  # the user servers log there
    assert "forwards api/sched/ to the hub's scheduler at http" in log, log[-3000:]
    assert f"store sqlite:///{users['amy'].home}" not in log, log[-3000:]


def test_newuser41_N1_hub_a_kernel_elsewhere_keeps_its_lease_by_heartbeats_and_loses_it_when_they_stop(
        hub: Hub, users: dict[str, Account]) -> None:
    """A kernel on another host (its ``asking_process`` names another boot id / pid namespace, so the service
    cannot check its pid) asks through amy's own server; the kernel-side keeper (the thread ``%gpu request`` starts)
    sends its heartbeats through that server, forwarded to the central service. While it beats the lease stays;
    once the kernel is gone (the keeper stopped, as SIGKILL stops it) the service releases the lease with the words
    of the pid path. Another user's heartbeat is refused. Before: the lease stayed held until the idle rules."""
    from jupyter_sched.client.discovery import Connection
    from jupyter_sched.client.heartbeat import keep_lease
    from jupyter_sched.client.sync import SchedClient

    amy, eve = users["amy"].name, users["eve"].name
    hub.start_servers(amy)
    token = hub.token_for(amy)
    elsewhere = {"pid": 4242, "started": 7, "host": "another-boot-id/pid:[4026531836]"}
    made = post(f"{hub.server_url(amy)}api/sched/leases", token,
                {"gpus": 1, "released_at_exit": True, "asking_process": elsewhere})
    assert made.status_code == 201, made.text
    lease_id = made.json()["id"]
    client = SchedClient(Connection(url=hub.server_url(amy), token=token), notice=lambda _line: None)
    keeper = keep_lease(client, lease_id)
    assert keeper is not None
    url = f"{hub.service_url}api/sched/leases/{lease_id}"
    headers = {"Authorization": f"token {token}"}
    try:
        hub.wait_for(lambda: keeper.beats >= 12 or not keeper.running, 120, "12 heartbeats")
        assert keeper.running and keeper.stopped is None, keeper.stopped  # needed: the service cannot see it
        lease = httpx.get(url, headers=headers, timeout=30).json()
        # 12 s of heartbeats: longer than a granted lease's window (2 x 5 x 1 s) — kept
        assert lease["state"] in ("pending", "admitted", "running"), lease
        refused = post(f"{url}/heartbeat", hub.token_for(eve), {})
        assert refused.status_code == 403 and refused.json()["error"]["field"] == "lease_id", refused.text
    finally:
        keeper.stop(wait_s=15)
        client.close()
    hub.wait_for(lambda: httpx.get(url, headers=headers, timeout=30).json()["state"] == "cancelled", 120,
                 "the lease of a kernel that stopped answering to end")
    lease = httpx.get(url, headers=headers, timeout=30).json()
    assert "its kernel stopped answering (no heartbeat since " in lease["message"], lease
    assert lease["message"].endswith(") — killed?"), lease
    assert post(f"{url}/heartbeat", token, {}).status_code == 409  # a late keeper is told it ended
