"""hubadmin25 B21: a user the hub deleted whose token is still cached submits: the hub answers 404 to the
service's lookup of their groups — a definite answer, not an outage. It was a 503 "retry in 5 seconds"
(a script retried forever); it is a 403 saying they are no longer a user of this hub, and the CLI says it
as such (not as a refused token)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from tornado import web

from jupyter_sched.cli.main import error_line
from jupyter_sched.client import error_from_response
from jupyter_sched.errors import AuthenticationError
from jupyter_sched.extension.http_errors import http_error_body
from jupyter_sched.hub.hubapi import HubLookupError
from jupyter_sched.hub.identity import HubIdentityProvider
from jupyter_sched.wording.service_token import NO_LONGER_A_USER_HINT

GONE = "h259ff02f"


def test_hubadmin25_b21_a_deleted_users_request_is_a_403_saying_so() -> None:
    provider = HubIdentityProvider()

    async def no_such_user(method: str, path: str, body: Any = None) -> Any:
        raise HubLookupError("the hub answered 404 Not Found", status=404)  # what the service's hub client raises

    provider.hub_api = no_such_user  # the hub's own answer for a deleted user, at the wire of its client
    with pytest.raises(web.HTTPError) as refused:
        asyncio.run(provider._roles(GONE, {"name": GONE, "kind": "user"}, fresh=True))
    assert refused.value.status_code == 403
    message = refused.value.log_message
    assert message == f"{GONE} is no longer a user of this hub (the hub has no such user)"

    body, headers = http_error_body(403, message, method="POST", route="jobs", handler=web.RequestHandler)
    assert body["error"] == {"code": "forbidden", "message": message, "field": None, "hint": NO_LONGER_A_USER_HINT}
    assert "Retry-After" not in headers
    error = error_from_response(403, json.dumps(body))
    assert not isinstance(error, AuthenticationError)  # not "the server refused the token in …"
    assert error_line("submit", error) == (f"jupyter-sched submit: {message} — not fixed by retrying: nothing was "
                                           "done; a hub admin can add the user back on the hub (their held work may "
                                           "then start) [forbidden]")
