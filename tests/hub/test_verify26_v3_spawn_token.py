"""verify26 V3 (HIGH): the hub's ``server`` role held ``tokens!user`` (session 25's R5 fix), so ANY server
token (a terminal's ``$JUPYTERHUB_API_TOKEN``, a log, a printed environment) could mint a never-expiring token
with the user's full scopes. Now the hub mints the scheduler-only token at spawn
(:mod:`jupyter_sched.hub.spawn_token`), the ``server`` role holds no ``tokens`` scope, and the forwarder and the
clients in a server's terminal send that token — never the server's own (verify26 V2's first half).

The real-hub test (a server token mints nothing; the scheduler still works) runs in
tests/hub/test_verify25_v7_proxy_squat.py, on that module's hub (session 41: this module's own hub, ~20 s a run,
served that one test).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.client.discovery import ENV_SERVICE_TOKEN, discover
from jupyter_sched.client.hub_token import scoped
from jupyter_sched.hub import spawn_token
from jupyter_sched.hub.spawn_token import SERVICE_TOKEN_ENV, chain_hooks, scheduler_token_hook

from .test_verify25_v7_proxy_squat import CLI, FULL, SCOPE, _Hub, _sent_to_service, fake_hub  # noqa: F401

SERVER_ROLE = "server"


# ---- the hook, against a spawner double ------------------------------------------------------------------------
class _Token:
    def __init__(self, note: str) -> None:
        self.note = note


class _Db:
    def __init__(self, user: _User) -> None:
        self.user, self.committed = user, 0

    def delete(self, token: _Token) -> None:
        self.user.api_tokens.remove(token)

    def commit(self) -> None:
        self.committed += 1


class _User:
    def __init__(self) -> None:
        self.api_tokens = [_Token("jupyter-sched: server (default)"), _Token("jupyter-sched: server gpu"),
                           _Token("my laptop")]
        self.db = _Db(self)
        self.minted: list[dict[str, Any]] = []

    def new_api_token(self, **kwargs: Any) -> str:
        self.minted.append(kwargs)
        self.api_tokens.append(_Token(kwargs["note"]))
        return f"minted-{len(self.minted)}"


class _Spawner:
    def __init__(self, user: _User, environment: dict[str, str], name: str = "") -> None:
        self.user, self.environment, self.name = user, environment, name


def test_verify26_v3_the_spawn_hook_gives_the_server_a_scheduler_only_token_and_drops_its_older_ones() -> None:
    user = _User()
    shared = {"JUPYTER_SCHED_HUB_URL": "http://127.0.0.1:1010/services/sched-a/"}  # c.Spawner.environment: shared
    spawner = _Spawner(user, shared)
    scheduler_token_hook(spawner)
    assert user.minted == [{"scopes": ["access:services!service=sched-a"], "expires_in": spawn_token.EXPIRES_IN_S,
                            "note": "jupyter-sched: server (default)"}]
    assert spawner.environment[SERVICE_TOKEN_ENV] == "minted-1"
    assert SERVICE_TOKEN_ENV not in shared  # the configured dict is not written: other users' spawns share it
    # the default server's older token is gone; the named server's and the user's own are kept
    assert sorted(t.note for t in user.api_tokens) == ["jupyter-sched: server (default)", "jupyter-sched: server gpu",
                                                       "my laptop"]
    assert ENV_SERVICE_TOKEN == SERVICE_TOKEN_ENV  # the client reads what the hook writes


def test_verify26_v3_the_spawn_hook_chains_with_an_admins_own_hook() -> None:
    import asyncio

    seen: list[str] = []

    async def admins(spawner: Any) -> None:
        seen.append("admin")
        spawner.environment = {**spawner.environment, "MINE": "1"}

    spawner = _Spawner(_User(), {}, name="gpu")
    asyncio.run(chain_hooks(admins, scheduler_token_hook)(spawner))
    assert seen == ["admin"] and spawner.environment["MINE"] == "1"
    assert spawner.environment[SERVICE_TOKEN_ENV] == "minted-1"
    assert spawner.user.minted[0]["scopes"] == ["access:services!service=jupyter-sched"]
    assert spawner.user.minted[0]["note"] == "jupyter-sched: server gpu"


# ---- a terminal of the server: the CLI and the client --------------------------------------------------------
def test_verify26_v3_a_terminal_sends_the_servers_scheduler_token_never_the_servers_own(
        fake_hub: str, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """The server's environment: JUPYTER_SCHED_HUB_URL, its own JUPYTERHUB_API_TOKEN (FULL), the hub's spawn token."""
    _Hub.minted["spawned"] = [SCOPE, "read:users:name!user=amy"]
    env = {"JUPYTER_SCHED_HUB_URL": fake_hub, "JUPYTERHUB_API_TOKEN": FULL, ENV_SERVICE_TOKEN: "spawned",
           "JUPYTERHUB_API_URL": fake_hub.replace("/services/jupyter-sched/", "/hub/api")}
    connection = scoped(discover(env=env), env)
    assert connection.token == "spawned"
    assert _Hub.calls == []  # nothing asked of the hub either: the token is used as the hub made it
    done = subprocess.run([CLI, "status"], capture_output=True, text=True, timeout=120,
                          env={**{k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))},
                               "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env})
    assert _sent_to_service() and set(_sent_to_service()) == {"spawned"}, (_Hub.calls, done.stderr)
