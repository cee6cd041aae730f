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
    hub.start_server("alice")
    hub.start_server("bob")
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

    # teams are the users' hub groups
    assert alice.quotas()["user_teams"] == {"alice": "ml", "bob": "cv"}

    # a non-admin may not change quotas, through the server or at the service
    new_quotas = {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 1},
                             {"team": "cv", "guaranteed": 1, "borrowing_limit": 0}]}
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

    # stopping alice's server releases the lease of her kernel
    hub.stop_server("alice")
    released = carol.job(lease["id"])
    assert released["state"] == "cancelled", released
    assert alice_job_still_running(carol, job_a["id"])

    for job_id in (job_a["id"], job_b["id"]):
        carol.cancel(job_id)
    assert wait_state(carol, job_a["id"], {"cancelled"})["state"] == "cancelled"


def alice_job_still_running(admin: SchedClient, job_id: str) -> bool:
    """Batch jobs do not belong to a server: they keep running when it stops."""
    return bool(admin.job(job_id)["state"] == "running")
