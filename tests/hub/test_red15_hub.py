"""Red team 15's hub-only findings R10, R6 and R9 (/work/coord/notes/red15.md), on a real hub.

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm),
real OS accounts whose servers JupyterHub's local spawner starts, ``jupyter-sched serve`` as root on
PostgreSQL (``hub_poll_interval_s`` 1 s); requests with each user's own hub token through the hub's
proxy. What the service writes after a request (audit rows, reasons after a tick) is polled for
with a deadline, never read in the same instant (CI's hub host is slower).

R9 deletes eve from the hub, so it is the module's last test.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub
from .kernel_ws import execute

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "red15")


def _audit(hub: Hub, admin_token: str, **params: Any) -> list[dict[str, Any]]:
    rows = httpx.get(f"{hub.service_url}api/sched/audit", params={"limit": 500, **params}, timeout=60,
                     headers={"Authorization": f"token {admin_token}"})
    assert rows.status_code == 200, rows.text
    return list(rows.json())


def test_red15_r10_a_refusal_at_a_shared_server_reaches_the_central_audit(hub: Hub, users: dict[str, Account]) -> None:
    """amy's server, shared with eve by JupyterHub, refuses to forward eve's requests (not_the_owner):
    the refusal is on the central audit under eve (her own token, handed over by amy's server)."""
    amy, eve = users["amy"].name, users["eve"].name
    hub.start_servers(amy)
    tokens = {name: hub.token_for(name) for name in (eve, "carol")}
    shared = hub.api("POST", f"shares/{amy}/", {"user": eve})
    assert shared.status_code in (200, 201), shared.text
    try:
        refused = httpx.get(f"{hub.server_url(amy)}api/sched/me", headers={"Authorization": f"token {tokens[eve]}"},
                            timeout=60)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "not_the_owner", refused.text
    finally:
        hub.api("DELETE", f"shares/{amy}/")

    def rows() -> list[dict[str, Any]]:
        return [r for r in _audit(hub, tokens["carol"], user=eve, action="refused")
                if r["details"].get("code") == "not_the_owner"]

    hub.wait_for(lambda: bool(rows()), 30, "the central audit record of eve refused at amy's shared server")
    row = rows()[0]
    assert row["message"].startswith(f"{eve} asked {amy}'s Jupyter server, shared with them, to forward"), row
    assert row["details"]["request"] == f"GET me at {amy}'s Jupyter server", row
    assert tokens[eve] not in str(row), row


def test_red15_r6_an_idle_kernels_lease_is_released_by_the_normal_idle_rule_on_a_hub(
        hub: Hub, users: dict[str, Account]) -> None:
    """R6: the central service had no kernel states, so every hub lease counted as "kernel busy" and got
    only the busy-kernel rule (notify after 4 h). amy's server now reports its kernels' states; her idle
    kernel's lease is released by the normal window (a test-sized 10 s here; the busy-kernel rule is an hour)."""
    amy = users["amy"].name
    hub.start_servers(amy)
    tokens = {name: hub.token_for(name) for name in (amy, "carol")}
    boss = {"Authorization": f"token {tokens['carol']}"}
    mine = {"Authorization": f"token {tokens[amy]}"}
    before = httpx.get(f"{hub.service_url}api/sched/idle-policy", headers=boss, timeout=60).json()
    policy = {"default": {"enabled": True, "threshold_pct": 5, "window_s": 10, "warning_s": 2, "grace_s": 0,
                          "busy_kernel_window_s": 3600, "lease_mode": "release", "busy_kernel_mode": "notify"}}
    changed = httpx.put(f"{hub.service_url}api/sched/idle-policy", json=policy, headers=boss, timeout=60)
    assert changed.status_code == 200, changed.text
    try:
        kernel = httpx.post(f"{hub.server_url(amy)}api/kernels", json={"name": "python3"}, headers=mine, timeout=90)
        assert kernel.status_code == 201, kernel.text
        kernel_id = kernel.json()["id"]
        ran = execute(hub.server_url(amy), tokens[amy], kernel_id, "x = 1")  # amy ran a cell, then walked away
        assert ran.status == "ok", ran.text

        def kernels() -> list[dict[str, Any]]:
            return list(httpx.get(f"{hub.server_url(amy)}api/kernels", headers=mine, timeout=60).json())

        hub.wait_for(lambda: [k["execution_state"] for k in kernels()] == ["idle"], 60, "amy's kernel to be idle")
        lease = httpx.post(f"{hub.server_url(amy)}api/sched/leases", json={"gpus": 1, "kernel_id": kernel_id},
                           headers=mine, timeout=60)
        assert lease.status_code == 201, lease.text
        lease_id = lease.json()["id"]

        def state() -> str:
            return str(httpx.get(f"{hub.service_url}api/sched/leases/{lease_id}", headers=boss,
                                 timeout=60).json()["state"])

        try:
            hub.wait_for(lambda: state() == "cancelled", 120, "amy's idle kernel's lease to be released")
        except RuntimeError:
            idle = httpx.get(f"{hub.service_url}api/sched/idle", headers=boss, timeout=60).text
            raise AssertionError(f"not released; GET idle: {idle}; amy's kernels: {kernels()}") from None
        reclaims = [r for r in _audit(hub, tokens["carol"], job_id=lease_id) if r["action"] == "idle_reclaim"]
        assert reclaims and reclaims[-1]["details"]["evidence"]["rule"] == "kernel_and_gpu", reclaims
        assert "kernel idle and GPU < 5 %" in reclaims[-1]["message"], reclaims[-1]
    finally:
        restored = {k: before[k] for k in ("default", "by_priority", "by_kind") if k in before}
        httpx.put(f"{hub.service_url}api/sched/idle-policy", json=restored, headers=boss, timeout=60)


def test_red15_r9_a_user_deleted_from_the_hub_has_their_queued_job_held_and_is_reported_once(
        hub: Hub, users: dict[str, Account]) -> None:
    eve = users["eve"].name
    tokens = {name: hub.token_for(name) for name in (eve, "carol")}
    api = f"{hub.service_url}api/sched/"

    def submit(body: dict[str, Any]) -> str:
        made = httpx.post(f"{api}jobs", json=body, headers={"Authorization": f"token {tokens[eve]}"}, timeout=60)
        assert made.status_code == 201, made.text
        return str(made.json()["id"])

    def job(job_id: str) -> dict[str, Any]:
        got = httpx.get(f"{api}jobs/{job_id}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert got.status_code == 200, got.text
        return dict(got.json())

    running = submit({"gpus": hub.gpus, "command": ["sleep", "300"], "name": "r9-running"})
    hub.wait_for(lambda: job(running)["state"] == "running", 60, "eve's job to run")
    queued = submit({"gpus": 1, "command": ["true"], "name": "r9-queued"})
    deleted = hub.api("DELETE", f"users/{eve}")
    assert deleted.status_code == 204, deleted.text
    try:
        def reported() -> list[dict[str, Any]]:
            return _audit(hub, tokens["carol"], user=eve, action="owner_removed")

        hub.wait_for(lambda: bool(reported()), 60, "the owner_removed record of eve")
        hub.wait_for(lambda: (job(queued).get("reason") or {}).get("code") == "OwnerRemoved", 60,
                     "eve's queued job to be held")
        assert "held: owner no longer a user of this hub" in job(queued)["reason"]["message"]
        (row,) = reported()
        assert row["details"]["held"] == [queued] and row["details"]["running"] == [running], row
        # the admin stops eve's running work: the GPUs free, and the held job still never starts as eve
        stop = httpx.delete(f"{api}jobs/{running}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        assert stop.status_code == 200, stop.text
        hub.wait_for(lambda: job(running)["state"] == "cancelled", 60, "eve's running job to stop")
        end = time.monotonic() + 5  # several cycles and offboarding checks (1 s each) with the GPUs free
        while time.monotonic() < end:
            assert job(queued)["state"] == "pending", job(queued)
            time.sleep(0.5)
        assert len(reported()) == 1, reported()  # told once, not every check
    finally:
        httpx.delete(f"{api}jobs/{queued}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
        httpx.delete(f"{api}jobs/{running}", headers={"Authorization": f"token {tokens['carol']}"}, timeout=60)
