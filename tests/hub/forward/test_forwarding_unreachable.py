"""A forwarding user server whose central service does not answer: 502 with the API's error shape."""

from __future__ import annotations

import json
from typing import Any

import pytest


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyter_sched": True}, "reraise_server_extension_failures": True},
        "IdentityProvider": {"token": "user-server-token"},
        # nothing listens on the discard port
        "SchedApp": {"hub_service_url": "http://127.0.0.1:9/", "hub_service_token": "hub-token"},
    }




async def test_an_unreachable_central_service_answers_502_naming_it(sched_app: Any, jp_fetch: Any) -> None:
    for method, body in (("GET", None), ("POST", json.dumps({"gpus": 1, "command": ["true"]}))):
        response = await jp_fetch("api", "sched", "jobs", method=method, body=body, raise_error=False)
        error = json.loads(response.body)["error"]
        assert response.code == 502
        assert error["code"] == "hub_service_unreachable" and "127.0.0.1:9" in error["message"]
