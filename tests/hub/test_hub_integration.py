"""Hub mode end to end: a real JupyterHub, two users' servers, one central scheduler on PostgreSQL.

Real parts only: JupyterHub 6 (PyPI) + configurable-http-proxy (npm), the dummy authenticator
and the simple local process spawner, ``jupyter-sched serve`` as a managed hub service on a
PostgreSQL server started by this test, user servers forwarding to it
(``JUPYTER_SCHED_HUB_URL``), the magics' client (``jupyter_sched.client.SchedClient``) over
HTTP through the proxy. GPUs are simulated (no GPU here; inventory_source=simulated, 2 GPUs).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.client.discovery import Connection
from jupyter_sched.client.sync import SchedClient
from jupyter_sched.errors import AuthorizationError, NotFoundError

from .hub_harness import Hub, skip_reason

pytestmark = pytest.mark.slow

SLEEP = ["python", "-c", "import time; time.sleep(120)"]


@pytest.fixture(scope="module")
def hub(pg_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    db_url = pg_server.create_database("hub_integration")
    running = Hub(base=Path(tmp_path_factory.mktemp("hub")), db_url=db_url, admins=("carol",),
                  groups={"ml": ["alice"], "cv": ["bob"]})
    try:
        running.start()
        created = running.api("POST", "users", {"usernames": ["alice", "bob", "carol"]})
        assert created.status_code in (201, 409), created.text
        yield running
    finally:
        running.stop()


def client(url: str, token: str) -> SchedClient:
    return SchedClient(Connection(url=url, token=token), timeout_s=60)


def wait_state(sched: SchedClient, job_id: str, states: set[str], timeout_s: float = 30) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    job = sched.job(job_id)
    while job["state"] not in states and time.monotonic() < deadline:
        time.sleep(0.25)
        job = sched.job(job_id)
    return job


def test_two_users_share_one_scheduler_through_the_hub(hub: Hub) -> None:
    tokens = {name: hub.token_for(name) for name in ("alice", "bob", "carol")}
    hub.start_servers("alice", "bob")
    alice = client(hub.server_url("alice"), tokens["alice"])
    bob = client(hub.server_url("bob"), tokens["bob"])
    central_bob = client(hub.service_url, tokens["bob"])
    carol = client(hub.service_url, tokens["carol"])

    # the user servers forward to the central service, which says it runs in hub mode
    assert alice.config()["mode"] == "hub"
    assert alice.me()["user"] == "alice" and not alice.me()["is_admin"]
    assert carol.me()["is_admin"]

    # two users submit through their own servers
    job_a = alice.submit({"gpus": 1, "command": SLEEP, "name": "alice-train"})
    kernel = httpx.post(f"{hub.server_url('alice')}api/kernels", json={},
                        headers={"Authorization": f"token {tokens['alice']}"}, timeout=60)
    assert kernel.status_code == 201, kernel.text
    lease = alice.request_lease({"gpus": 1, "kernel_id": kernel.json()["id"]})
    job_b = bob.submit({"gpus": 1, "command": SLEEP, "name": "bob-train"})
    assert wait_state(alice, job_a["id"], {"running"})["state"] == "running"
    assert wait_state(alice, lease["id"], {"running"})["state"] == "running"

    # running work is hub activity: the service posts it for alice's server (every second here;
    # her server's own reports come every 300 s, so a fresh timestamp is the service's)
    running_at = datetime.now(timezone.utc)
    hub.wait_for(lambda: server_activity(hub, "alice") > running_at, 30, "alice's running work to be hub activity")

    # each sees only their own jobs
    assert {j["id"] for j in alice.jobs()} == {job_a["id"], lease["id"]}
    assert {j["id"] for j in bob.jobs()} == {job_b["id"]}
    with pytest.raises(NotFoundError):
        bob.job(job_a["id"])

    # one queue: bob waits behind alice's two GPUs and sees her work without its details
    queue = {entry["id"]: entry for entry in bob.queue()}
    assert set(queue) == {job_a["id"], lease["id"], job_b["id"]}
    assert queue[job_b["id"]]["state"] == "pending" and queue[job_b["id"]]["mine"]
    assert not queue[job_a["id"]]["mine"] and "command" not in queue[job_a["id"]]

    # teams are the users' hub groups, read per request: identifying a user writes nothing into
    # the quota set (issue 15 item 6: identity never depends on quota validation)
    assert (alice.me()["team"], alice.me()["teams"]) == ("ml", ["ml"])
    assert (bob.me()["team"], bob.me()["teams"]) == ("cv", ["cv"])
    assert alice.quotas()["user_teams"] == {}

    # a non-admin may not change quotas, through the server or at the service
    new_quotas = {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 1},
                             {"team": "cv", "guaranteed": 1, "borrowing_limit": 0}],
                  "budgets": [{"team": "cv", "gpu_hours": 0, "period": "month"}]}
    with pytest.raises(AuthorizationError):
        bob.set_quotas(new_quotas)
    refused = httpx.put(f"{hub.service_url}api/sched/quotas", json=new_quotas,
                        headers={"Authorization": f"token {tokens['bob']}"}, timeout=30)
    assert refused.status_code == 403
    with pytest.raises(AuthorizationError):
        central_bob.audit()

    # the hub admin's change applies for everyone and is audited with who, when, old -> new
    before = carol.quotas()
    carol.set_quotas(new_quotas)
    shared = [(q["team"], q["guaranteed"]) for q in bob.quotas()["quotas"]]
    assert sorted(shared) == [("cv", 1.0), ("ml", 1.0)]
    change = next(e for e in carol.audit() if e["action"] == "quotas_changed" and e["actor"] == "carol")
    assert change["at"]
    assert change["details"]["old"]["quotas"] == before["quotas"]
    assert [q["team"] for q in change["details"]["new"]["quotas"]] == ["ml", "cv"]

    bob_kernel = httpx.post(f"{hub.server_url('bob')}api/kernels", json={},
                            headers={"Authorization": f"token {tokens['bob']}"}, timeout=60)
    bob_lease = bob.request_lease({"gpus": 1, "kernel_id": bob_kernel.json()["id"]})

    # stopping alice's server releases the lease of her kernel (her server does it, as alice)
    hub.stop_server("alice")
    released = carol.job(lease["id"])
    assert released["state"] == "cancelled", released
    assert [e["actor"] for e in carol.audit() if e.get("job_id") == lease["id"] and e["action"] == "cancel"] \
        == ["alice"]

    # a server killed without any cleanup: the service releases its leases once the hub reports it gone
    hub.kill_server("bob")
    assert wait_state(carol, bob_lease["id"], {"cancelled"})["state"] == "cancelled"
    assert any(e["actor"] == "jupyterhub" and e["action"] == "lease_released"
               for e in carol.audit() if e.get("job_id") == bob_lease["id"])
    assert alice_job_still_running(carol, job_a["id"])

    # the freed GPU does not go to bob: team cv's GPU-hour budget (set by carol) is used up
    def bob_reason() -> str | None:
        reason = central_bob.job(job_b["id"]).get("reason") or {}
        return reason.get("code")

    deadline = time.monotonic() + 30
    while bob_reason() != "BudgetExhausted" and time.monotonic() < deadline:
        time.sleep(0.25)
    blocked = central_bob.job(job_b["id"])
    assert blocked["state"] == "pending" and blocked["reason"]["code"] == "BudgetExhausted", blocked
    assert blocked["reason"]["details"]["budget_gpu_hours"] == 0

    # accounting: cost from the configured price (2.5 per GPU-hour), as JSON and CSV; admins only for all
    usage = httpx.get(f"{hub.service_url}api/sched/usage/report", params={"all": "true", "by": "user,kind"},
                      headers={"Authorization": f"token {tokens['carol']}"}, timeout=30).json()
    mine = {(r["user"], r["kind"]): r for r in usage}
    assert set(mine) == {("alice", "training"), ("alice", "lease")}  # bob's job never got a GPU
    for row in mine.values():
        assert row["allocated_gpu_seconds"] > 0 and row["utilized_gpu_seconds"] is None
        assert row["cost"] == pytest.approx(row["allocated_gpu_hours"] * 2.5, abs=1e-5)
    csv_text = httpx.get(f"{hub.service_url}api/sched/usage/report", params={"all": "true", "format": "csv"},
                         headers={"Authorization": f"token {tokens['carol']}"}, timeout=30).text
    assert csv_text.splitlines()[0].startswith("user,allocated_gpu_seconds,")
    assert csv_text.splitlines()[1].startswith("alice,")
    assert httpx.get(f"{hub.service_url}api/sched/usage/report", params={"all": "true"},
                     headers={"Authorization": f"token {tokens['bob']}"}, timeout=30).status_code == 403

    for job_id in (job_a["id"], job_b["id"]):
        carol.cancel(job_id)
    assert wait_state(carol, job_a["id"], {"cancelled"})["state"] == "cancelled"


def server_activity(hub: Hub, user: str) -> datetime:
    """The hub's ``last_activity`` of ``user``'s default server."""
    stamp = str(hub.api("GET", f"users/{user}").json()["servers"][""]["last_activity"])
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def alice_job_still_running(admin: SchedClient, job_id: str) -> bool:
    """Batch jobs do not belong to a server: they keep running when it stops."""
    return bool(admin.job(job_id)["state"] == "running")
