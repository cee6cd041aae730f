"""New user 13's hub findings N13 and N14 (/work/coord/notes/newuser13.md, step 4): a refused token is
told where a hub user's token comes from (the hub's token page), and a token used on another user's
server is told whose server it is and where the caller's own scheduler is — on the CLI and in the REST
body alike.

Real parts, as tests/hub/test_hub_integration.py: JupyterHub (PyPI) + configurable-http-proxy (npm),
real OS accounts whose servers JupyterHub's local spawner starts, ``jupyter-sched serve`` as root on
PostgreSQL; requests with each user's own hub token, through the hub's proxy, as a user with curl or
the CLI in a hub terminal would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.cli.main import EXIT_REFUSED
from tests.accounts import Account

from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

CLI = str(Path(sys.executable).parent / "jupyter-sched")


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "newuser13")


def _cli(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JPY_", "JUPYTERHUB"))}
    return subprocess.run([CLI, *argv], env={**clean, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), **env},
                          capture_output=True, text=True, timeout=120)


def test_newuser13_n13_a_refused_token_on_a_hub_is_sent_to_the_hubs_token_page(hub: Hub) -> None:
    """N13: ``JUPYTER_SCHED_HUB_URL=…/services/jupyter-sched/ JUPYTER_SCHED_TOKEN=wrong jupyter-sched status``
    said to take "the token in the URL JupyterLab printed, or from `jupyter server list`" — a hub prints
    no such URL — and the REST 403 hinted at "the server token … or the _xsrf cookie". Both now send the
    user to the hub's token page."""
    page = f"{hub.url}/hub/token"
    said = _cli({"JUPYTER_SCHED_HUB_URL": hub.service_url, "JUPYTER_SCHED_TOKEN": "wrongtoken"}, "status")
    assert said.returncode == EXIT_REFUSED, said.stdout + said.stderr
    line = said.stderr.strip().splitlines()[-1]
    assert f"refused the token in JUPYTER_SCHED_TOKEN — set JUPYTER_SCHED_TOKEN=TOKEN (a token from your hub's " \
           f"token page, {page}) or give --token-file FILE" in line, line
    assert "JupyterLab" not in line and "jupyter server list" not in line, line

    refused = httpx.get(f"{hub.service_url}api/sched/me", headers={"Authorization": "token wrongtoken"}, timeout=30)
    assert refused.status_code == 403, refused.text
    error = refused.json()["error"]
    assert error["details"] == {"credentials": "refused"}, error
    assert "hub's token page, /hub/token" in error["hint"], error
    assert "_xsrf" not in error["hint"] and "server token" not in error["hint"], error


def test_newuser13_n14_another_users_token_at_a_server_is_told_whose_server_and_where_its_own_is(
        hub: Hub, users: dict[str, Account]) -> None:
    """N14: eve's token at amy's server (``/user/amy/api/sched/me``) got ``403 {"message": "request
    refused", "field": null, "hint": null}`` — no rule, no fix (the CLI alone said whose server it was).
    The body now names the server's owner and where eve's own scheduler is; the CLI keeps its line."""
    amy, eve = users["amy"].name, users["eve"].name
    hub.start_servers(amy)
    tokens = {name: hub.token_for(name) for name in (amy, eve)}
    mine = httpx.get(f"{hub.server_url(amy)}api/sched/me", headers={"Authorization": f"token {tokens[amy]}"},
                     timeout=60)
    assert mine.status_code == 200 and mine.json()["user"] == amy, mine.text  # her own token goes through
    for token in (tokens[eve], "wrongtoken"):
        refused = httpx.get(f"{hub.server_url(amy)}api/sched/me", headers={"Authorization": f"token {token}"},
                            timeout=60)
        assert refused.status_code == 403, refused.text
        error = refused.json()["error"]
        assert error["message"].startswith(f"this is {amy}'s Jupyter server: the request's token may not use it"), error
        assert "request refused" not in error["message"], error
        assert "/user/<you>/api/sched/" in error["hint"] and "/services/jupyter-sched/ on the hub" in error["hint"], error
        assert f"hub's token page, {hub.url}/hub/token" in error["hint"], error
    said = _cli({"JUPYTER_SCHED_TOKEN": tokens[eve], "JUPYTERHUB_USER": eve}, "--url", hub.server_url(amy), "status")
    assert said.returncode == EXIT_REFUSED, said.stdout + said.stderr
    assert f"{hub.server_url(amy)} is {amy}'s Jupyter server: your token may not use it" in said.stderr, said.stderr
