"""Hub admin 22's unconcluded probe: ``jupyter-sched serve`` with a WRONG hub API token served ~45 s
without a word (users' own tokens identify them, so reads worked; every submit and lease was answered
503 "could not ask the hub for amy's groups (HTTPClientError); retry in 5 seconds", for ever).

On a real JupyterHub (tests/hub/hub_harness.py), which answers 403 to ``GET /hub/api/user`` with a
token it does not know: the service refuses to start with one line naming ``JUPYTERHUB_API_TOKEN`` and
the service's ``api_token`` in jupyterhub_config.py; and when the hub stops taking the token of a
running service (here: the hub redeployed on a fresh database with a new token), one ERROR says so and
users get a 503 naming the admin's fix instead of "retry".
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from jupyter_sched.wording.service_token import TOKEN_REFUSED_HINT, TOKEN_REFUSED_MESSAGE
from tests.accounts import Account

from . import hub_harness
from .hub_harness import Hub, amy_and_eve, amy_and_eve_hub

pytestmark = pytest.mark.slow

REFUSED = ("refuses this service's API token (403 to GET user): JUPYTERHUB_API_TOKEN is not the api_token of the "
           "service 'jupyter-sched' in the hub's jupyterhub_config.py (c.JupyterHub.services)")


@pytest.fixture(scope="module")
def users() -> Iterator[dict[str, Account]]:
    yield from amy_and_eve()


@pytest.fixture(scope="module")
def hub(pg_server: Any, users: dict[str, Account]) -> Iterator[Hub]:
    yield from amy_and_eve_hub(pg_server, users, "s23token")


def _log(hub: Hub) -> str:
    return (hub.base / "service.log").read_text(errors="replace")


def test_s23_hubadmin22_a_service_whose_token_the_hub_refuses_does_not_start(hub: Hub) -> None:
    right = hub.service_token
    hub.kill_service()
    mark = len(_log(hub))
    wrong = secrets.token_hex(16)  # not the service's api_token in the hub's jupyterhub_config.py
    hub.service_token = wrong
    try:
        with pytest.raises(RuntimeError, match=r"exited \(2\)"):
            hub.start_service()
    finally:
        hub.service_token = right
    said = _log(hub)[mark:]
    assert REFUSED in said, said
    assert "Fix: give both the same value" in said and "; not starting" in said, said
    assert wrong not in said, "the token itself is never written to the log"
    hub.start_service()  # the right token: it starts, without a word about its token
    assert "API token" not in _log(hub)[mark + len(said):]


def test_s23_hubadmin22_a_token_the_hub_stops_taking_is_one_error_and_a_503_naming_the_fix(
        hub: Hub, users: dict[str, Account], monkeypatch: pytest.MonkeyPatch) -> None:
    """The hub is redeployed on a fresh database with a new token for the service while the service runs
    with the old one (JupyterHub keeps an old config token valid while its database does)."""
    amy = users["amy"].name
    mark = len(_log(hub))
    hub._stop_hub()
    (hub.base / "hub.sqlite").unlink()
    hub.service_token = secrets.token_hex(16)
    ports = iter([hub.proxy_port, hub.service_port, hub.hub_port])  # the service keeps pointing at the same hub
    fresh = hub_harness._free_port
    monkeypatch.setattr(hub_harness, "_free_port", lambda: next(ports, None) or fresh())
    monkeypatch.setattr(hub, "start_service", lambda: None)  # the hub alone restarts
    hub.start()
    assert hub.api("POST", "users", {"usernames": [amy, "carol"]}).status_code in (201, 409)
    token = hub.token_for(amy)

    hub.wait_for(lambda: REFUSED in _log(hub)[mark:], 60, "the service's ERROR about its token")
    api = f"{hub.service_url}api/sched/"
    submit = httpx.post(api + "jobs", json={"command": ["sleep", "5"], "gpus": 1, "time_limit": 60},
                        headers={"Authorization": f"token {token}"}, timeout=60)
    assert submit.status_code == 503, submit.text
    error = submit.json()["error"]
    assert error["message"] == TOKEN_REFUSED_MESSAGE and error["hint"] == TOKEN_REFUSED_HINT, error
    assert "Retry-After" not in submit.headers, "retrying cannot fix it"
    reads = httpx.get(api + "queue", headers={"Authorization": f"token {token}"}, timeout=60)
    assert reads.status_code == 200, reads.text  # the hub checks amy's own token with amy's token
    time.sleep(3)  # three more hub polls (1 s in the harness)
    said = _log(hub)[mark:]
    assert said.count(REFUSED) == 1, "one ERROR, not one per poll or per request"
    assert "[E " in said.split(REFUSED)[0].rsplit("\n", 1)[-1], "logged as an ERROR"
    assert "could not list" not in said and "Traceback" not in said, "no traceback per hub poll"
