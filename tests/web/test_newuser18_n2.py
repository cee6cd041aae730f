"""New user 18, N2: one sentence for every refused credential, whatever the method.

A GET with no token (or a wrong one) was answered "the server did not accept this request's
credentials: …"; a POST or DELETE with the same credentials got tornado's "'_xsrf' argument
missing from POST" — naming a browser cookie to someone who sent a token, and POST for a DELETE.
Through the real server (pytest-jupyter): every method, no token or a wrong one, and a browser
session without its _xsrf value, answer the same 403 sentence with ``details.credentials``.
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_sched.extension.http_errors import CREDENTIALS_REFUSED

from .conftest import IVAN_TOKEN


async def test_newuser18_n2_every_method_refuses_credentials_in_the_same_sentence(sched_app: Any, api: Any,
                                                                                  jp_fetch: Any) -> None:
    answers = {}
    for method, path in (("GET", "me"), ("POST", "jobs"), ("DELETE", "jobs/j-x"), ("PUT", "quotas"),
                         ("PATCH", "definitions/d-x")):
        for token in (None, "wrong"):
            status, body = await api(method, path, {"gpus": 1, "command": ["true"]}, token=token)
            answers[(method, path, token)] = (status, body["error"]["message"], json.dumps(body["error"]["details"]))
    assert set(answers.values()) == {(403, CREDENTIALS_REFUSED, '{"credentials": "refused"}')}, answers

    # a browser session (the login cookie) without its _xsrf value: the same sentence, which names it
    first = await jp_fetch("api", "sched", "me", params={"token": IVAN_TOKEN}, headers={"Authorization": ""})
    login = [c.split(";", 1)[0] for c in first.headers.get_list("Set-Cookie") if c.startswith("username-")]
    response = await jp_fetch("api", "sched", "jobs", method="POST", body=json.dumps({"gpus": 1, "command": ["true"]}),
                              headers={"Authorization": "", "Cookie": "; ".join(login)}, raise_error=False)
    error = json.loads(response.body)["error"]
    assert (response.code, error["message"]) == (403, CREDENTIALS_REFUSED), error
    _, listing = await api("GET", "jobs")
    assert listing == []
