"""A token an admin revokes on the hub stops working at the central service within half a minute
(red-team finding 15): the scheduler trusts the hub's answer about a token 30 s, not JupyterHub's
default 300 s, unless the admin set HubOAuth/HubAuth.cache_max_age themselves. (The hub itself is not
needed: HubOAuth reads its settings from the environment a hub gives its services.)"""

from __future__ import annotations

import pytest
from traitlets.config import Config

from jupyter_sched.hub.identity import HubIdentityProvider

HUB_ENV = {"JUPYTERHUB_API_TOKEN": "service-token", "JUPYTERHUB_API_URL": "http://127.0.0.1:8081/hub/api",
           "JUPYTERHUB_SERVICE_PREFIX": "/services/jupyter-sched/", "JUPYTERHUB_CLIENT_ID": "service-jupyter-sched"}


@pytest.mark.parametrize(("config", "want"), [
    pytest.param({}, 30, id="by default a token's answer is trusted 30 s"),
    pytest.param({"HubIdentityProvider": {"token_cache_s": 5}}, 5, id="the scheduler's setting"),
    pytest.param({"HubOAuth": {"cache_max_age": 120}}, 120, id="an admin's explicit HubOAuth setting wins"),
    pytest.param({"HubAuth": {"cache_max_age": 90}}, 90, id="an admin's explicit HubAuth setting wins"),
])
def test_how_long_a_revoked_token_keeps_working(monkeypatch: pytest.MonkeyPatch, config: dict[str, dict[str, int]],
                                                 want: int) -> None:
    for name, value in HUB_ENV.items():
        monkeypatch.setenv(name, value)
    assert HubIdentityProvider(config=Config(config)).hub_auth.cache_max_age == want
