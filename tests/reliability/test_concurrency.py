"""100 concurrent clients submit and cancel against one server; then two servers on one PostgreSQL store.

Checked (issue 10 item 2): no answer is a 5xx (or missing), no job id is handed out twice, every
201 job exists, the team never held more GPUs than its quota at any instant (swept over the usage
intervals the engine records for every allocation), no GPU was ever held twice, and the store
passes ``check_integrity``. With two servers, both engines contend for the one leader lease.

Bounded: each client makes 5 requests; the jobs are 0.3 s sleeps.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from jupyter_sched.store import Store, check_integrity

from .harness import OWNER_TOKEN, EmbeddedServer, overlapping_allocations, wait_until
from .load import LoadOutcome, quota_overruns, run_load, team_peaks, user_tokens

pytestmark = pytest.mark.timeout(300)

CLIENTS = 100
TEAM_LIMIT = 3  # of 4 simulated GPUs: the quota, not the hardware, is what binds
QUOTAS = [{"team": "default", "guaranteed": TEAM_LIMIT, "borrowing_limit": 0}]


def start(tmp_path: Path, db_url: str | None = None, name: str = "server") -> EmbeddedServer:
    return EmbeddedServer.start(tmp_path, db_url=db_url, name=name, users=user_tokens(), admin_users=["boss"],
                                quotas=QUOTAS, simulated_gpus=4)


def settle_and_check(servers: list[EmbeddedServer], outcome: LoadOutcome) -> list[str]:
    """Cancel what is left, wait for it to stop, then gather every broken promise."""
    problems = list(outcome.errors)
    if len(set(outcome.job_ids)) != len(outcome.job_ids):
        problems.append(f"duplicate job ids: {len(outcome.job_ids) - len(set(outcome.job_ids))}")
    with httpx.Client(base_url=servers[0].api, headers={"Authorization": f"token {OWNER_TOKEN}"}, timeout=30) as c:
        found = {j["id"] for j in c.get("jobs", params={"all": "true"}).json()}
        problems += [f"201 job {j} is missing" for j in set(outcome.job_ids) - found]
        for job in c.get("jobs", params={"all": "true", "state": "pending,admitted,running"}).json():
            c.delete(f"jobs/{job['id']}")
        wait_until(lambda: not c.get("jobs", params={"all": "true", "state": "pending,admitted,running"}).json(),
                   "the leftover jobs to stop")
    store = Store(servers[0].db_url)
    try:
        intervals = store.usage_rows()
        problems += quota_overruns(intervals, {"default": TEAM_LIMIT})
        problems += overlapping_allocations(intervals)
        problems += list(check_integrity(store).problems)
        assert team_peaks(intervals).get("default", 0) >= 1, "jobs ran during the test"
    finally:
        store.close()
    return problems


def test_100_concurrent_clients_never_exceed_the_quota_or_duplicate_an_id(tmp_path: Path) -> None:
    server = start(tmp_path)
    try:
        outcome = run_load([server], clients=CLIENTS)
        assert outcome.requests == CLIENTS * 5
        problems = settle_and_check([server], outcome)
    finally:
        server.terminate()
    assert outcome.server_errors == 0
    assert not problems, "\n".join(problems[:30])
    print(f"\nload: {CLIENTS} clients, {outcome.requests} requests, {outcome.requests_per_s:.1f} req/s, "
          f"p99 {outcome.percentile_s(0.99) * 1000:.0f} ms, 5xx {outcome.server_errors}")


def test_100_clients_on_two_servers_sharing_postgresql_contend_for_one_leader(tmp_path: Path, pg_url: str) -> None:
    servers = [start(tmp_path, pg_url, name="a")]
    try:
        servers.append(start(tmp_path, pg_url, name="b"))
        outcome = run_load(servers, clients=CLIENTS)
        assert outcome.requests == CLIENTS * 5
        problems = settle_and_check(servers, outcome)
        with servers[1].client() as c:
            leaders = {e["actor"] for e in c.get("audit", params={"action": "leader_acquired"}).json()}
    finally:
        for server in servers:
            server.terminate()
    assert outcome.server_errors == 0
    assert not problems, "\n".join(problems[:30])
    assert len(leaders) >= 1
