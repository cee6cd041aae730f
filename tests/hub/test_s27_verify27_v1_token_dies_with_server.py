"""verify27 V1 (medium): the spawn-minted scheduler token (verify26 V3's fix) outlived its server.

Found on the real hub: after amy's server was stopped (hub API DELETE users/amy/server), its
``$JUPYTER_SCHED_SERVICE_TOKEN`` still answered the hub (200) and the scheduler (GET me 200, POST jobs 201: a
job as amy's OS account) — for 30 days, or until her next spawn; the server's own token died at the stop.
Now the spawner's ``post_stop_hook`` (:func:`~jupyter_sched.hub.spawn_token.revoke_token_hook`, wired in
server/jupyterhub_config.py and the test hub) deletes the stopped server's scheduler token(s): the hub refuses
it at once, the scheduler after its token cache (``c.HubIdentityProvider.token_cache_s``; 2 s on this hub).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.hub.spawn_token import SERVICE_TOKEN_ENV, chain_hooks, revoke_token_hook
from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub
from .test_verify25_v7_proxy_squat import _server_environ
from .test_verify26_v3_spawn_token import _Spawner, _User

CACHE_S = 2


def test_verify27_v1_the_stop_hook_deletes_that_servers_scheduler_tokens_only() -> None:
    user = _User()  # tokens: the default server's, server "gpu"'s, the user's own ("my laptop")
    revoke_token_hook(_Spawner(user, {}, name="gpu"))
    assert sorted(t.note for t in user.api_tokens) == ["jupyter-sched: server (default)", "my laptop"]
    assert user.db.committed == 1
    seen: list[str] = []

    def admins(spawner: Any) -> None:
        seen.append(spawner.name)

    asyncio.run(chain_hooks(admins, revoke_token_hook)(_Spawner(user, {}, name="")))  # chained with an admin's
    assert seen == [""] and [t.note for t in user.api_tokens] == ["my laptop"]


def test_verify27_v1_the_hub_config_and_the_test_hub_wire_the_stop_hook() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for path in (root / "server" / "jupyterhub_config.py", root / "tests" / "hub" / "hub_harness.py"):
        text = path.read_text()
        assert "c.Spawner.post_stop_hook = revoke_token_hook" in text, path


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "verify27v1", service_args=(f"--HubIdentityProvider.token_cache_s={CACHE_S}",))


@pytest.mark.slow
def test_verify27_v1_a_stopped_servers_scheduler_token_is_refused_by_the_hub_and_the_scheduler(
        hub: Hub, users: dict[str, Account]) -> None:
    amy = users["amy"].name
    hub.start_servers(amy)
    token = _server_environ(amy)[SERVICE_TOKEN_ENV]
    me = f"{hub.service_url}api/sched/me"
    headers = {"Authorization": f"token {token}"}
    assert hub.api("GET", "user", token=token).status_code == 200
    assert httpx.get(me, headers=headers, timeout=30).status_code == 200  # in the service's cache now
    hub.stop_server(amy)
    # before: 200 (the token lived 30 days after the stop)
    refused = hub.api("GET", "user", token=token)
    assert refused.status_code == 403, (refused.status_code, refused.text[:300])
    tokens = hub.api("GET", f"users/{amy}/tokens").json()["api_tokens"]
    assert not [t for t in tokens if t.get("note") == "jupyter-sched: server (default)"], tokens
    time.sleep(CACHE_S + 1)  # past the service's token cache: it asks the hub again
    answer = httpx.get(me, headers=headers, timeout=30)
    assert answer.status_code in (401, 403), (answer.status_code, answer.text[:300])
    job = httpx.post(f"{hub.service_url}api/sched/jobs", headers=headers, timeout=30,
                     json={"gpus": 0, "command": ["id"], "name": "after-stop"})
    assert job.status_code in (401, 403), (job.status_code, job.text[:300])


@pytest.mark.slow
def test_verify27_v1_a_user_removed_from_the_hub_takes_the_scheduler_token_along(
        hub: Hub, users: dict[str, Account]) -> None:
    eve = users["eve"].name
    hub.start_servers(eve)
    token = _server_environ(eve)[SERVICE_TOKEN_ENV]
    headers = {"Authorization": f"token {token}"}
    assert httpx.get(f"{hub.service_url}api/sched/me", headers=headers, timeout=30).status_code == 200
    removed = hub.api("DELETE", f"users/{eve}")
    assert removed.status_code in (202, 204), (removed.status_code, removed.text[:300])
    hub.wait_for(lambda: hub.api("GET", f"users/{eve}").status_code == 404, 60, f"{eve} to be removed")
    assert hub.api("GET", "user", token=token).status_code == 403
    time.sleep(CACHE_S + 1)
    answer = httpx.get(f"{hub.service_url}api/sched/me", headers=headers, timeout=30)
    assert answer.status_code in (401, 403), (answer.status_code, answer.text[:300])
