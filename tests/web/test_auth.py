"""Case 020 and the route-auth inventory: every jupyter_sched endpoint needs credentials.

Users (see conftest): ivan holds the server token, judy another token, boss is an admin.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest
from jupyter_server.base.handlers import APIHandler
from tornado import web

from jupyter_sched.extension.handlers import SchedHandler, UnknownRouteHandler
from jupyter_sched.extension.routes import ROUTES

from .conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN

SCRIPT_JOB = {"gpus": 1, "command": [sys.executable, "-c", "pass"]}
PROBE_ID = "does-not-matter"


def sched_routes(serverapp: Any) -> list[tuple[str, type]]:
    """Every (pattern, handler) the running server routes under api/sched/ (enumerated from the app)."""
    found = []

    def walk(router: Any) -> None:
        for rule in getattr(router, "rules", []):
            if hasattr(rule.target, "rules"):  # a nested router (per-host handler groups)
                walk(rule.target)
                continue
            pattern = getattr(rule.matcher, "regex", None)
            if pattern is not None and "api/sched/" in pattern.pattern and rule.target is not UnknownRouteHandler:
                found.append((pattern.pattern, rule.target))  # the JSON 404 for other paths is no route

    walk(serverapp.web_app.default_router)
    walk(serverapp.web_app.wildcard_router)
    return found


def implemented_methods(handler: type) -> list[str]:
    return [m for m in handler.SUPPORTED_METHODS  # type: ignore[attr-defined]
            if m != "OPTIONS" and getattr(handler, m.lower()) is not web.RequestHandler._unimplemented_method]


def concrete_path(pattern: str) -> str:
    """Turn a route regex into a request path with a sample id."""
    path = re.sub(r"\(\?P<\w+>[^)]*\)", PROBE_ID, pattern).rstrip("$")
    return path[path.index("api/sched/") + len("api/sched/"):]


def test_every_registered_sched_handler_requires_authentication_and_authorization(sched_app: Any,
                                                                                  jp_serverapp: Any) -> None:
    routes = sched_routes(jp_serverapp)
    assert len(routes) == len(ROUTES), "every route of the table is registered, nothing else"
    problems = []
    for pattern, handler in routes:
        if not (isinstance(handler, type) and issubclass(handler, APIHandler) and issubclass(handler, SchedHandler)):
            problems.append(f"{pattern}: {handler} is not a SchedHandler/APIHandler")
            continue
        if getattr(handler, "auth_resource", None) != "sched":
            problems.append(f"{pattern}: auth_resource is not 'sched'")
        for method in implemented_methods(handler):
            fn = getattr(handler, method.lower())
            outer = fn.__code__.co_qualname
            inner = getattr(fn, "__wrapped__", None)
            if not outer.startswith("authenticated"):
                problems.append(f"{method} {pattern}: not wrapped by @web.authenticated")
            if inner is None or not inner.__code__.co_filename.replace("\\", "/").endswith(
                    "jupyter_server/auth/decorator.py"):
                problems.append(f"{method} {pattern}: no @authorized under @web.authenticated")
    assert not problems, "\n".join(problems)


async def test_every_route_and_method_answers_403_without_credentials(sched_app: Any, jp_serverapp: Any,
                                                                      api: Any) -> None:
    leaks = []
    for pattern, handler in sched_routes(jp_serverapp):
        for method in implemented_methods(handler):
            for token in (None, "wrong-token"):
                status, body = await api(method, concrete_path(pattern), {} if method in ("POST", "PUT") else None,
                                         token=token)
                if status != 403 or "ivan" in json.dumps(body) or "GPU-" in json.dumps(body):
                    leaks.append(f"{method} {concrete_path(pattern)} token={token}: {status} {body}")
    assert not leaks, "\n".join(leaks)


@pytest.mark.parametrize("token", [None, "wrong"], ids=["no token is refused", "a bad token is refused"])
async def test_case_020_listing_without_valid_token_reveals_nothing(sched_app: Any, api: Any, token: str | None) -> None:
    status, _ = await api("POST", "jobs", SCRIPT_JOB)
    assert status == 201
    status, body = await api("GET", "jobs", token=token)
    text = json.dumps(body)
    assert status == 403
    assert "ivan" not in text and "GPU-" not in text and "command" not in text
    assert body["error"]["code"] == "forbidden"


async def test_case_020_good_token_sees_own_jobs_only(sched_app: Any, api: Any) -> None:
    status, ivans = await api("POST", "jobs", SCRIPT_JOB, token=IVAN_TOKEN)
    assert status == 201
    status, judys = await api("POST", "jobs", SCRIPT_JOB, token=JUDY_TOKEN)
    assert status == 201
    status, listing = await api("GET", "jobs", token=IVAN_TOKEN)
    assert status == 200
    assert [j["id"] for j in listing] == [ivans["id"]]
    assert {j["user"] for j in listing} == {"ivan"}
    status, everyone = await api("GET", "jobs", token=BOSS_TOKEN, params={"all": "true"})
    assert status == 200 and {ivans["id"], judys["id"]} <= {j["id"] for j in everyone}
    status, body = await api("GET", "jobs", token=IVAN_TOKEN, params={"all": "true"})
    assert status == 403 and body["error"]["field"] == "all"


async def test_case_020_other_users_job_is_404_and_untouched(sched_app: Any, api: Any) -> None:
    _, judys = await api("POST", "jobs", SCRIPT_JOB, token=JUDY_TOKEN)
    for method, path in (("DELETE", f"jobs/{judys['id']}"), ("GET", f"jobs/{judys['id']}"),
                         ("GET", f"jobs/{judys['id']}/logs")):
        status, body = await api(method, path, token=IVAN_TOKEN)
        assert status in (403, 404), (method, path, status, body)
        assert "judy" not in json.dumps(body)
    status, after = await api("GET", f"jobs/{judys['id']}", token=JUDY_TOKEN)
    assert status == 200 and after["state"] not in ("cancelled",)


async def test_case_020_cookie_post_without_xsrf_is_403_and_creates_nothing(sched_app: Any, jp_fetch: Any,
                                                                            api: Any) -> None:
    # A browser session: log in once with ?token=, keep the login cookie the server sets, plus
    # the page's _xsrf cookie (double-submit: the server compares it with the X-XSRFToken header).
    first = await jp_fetch("api", "sched", "me", params={"token": IVAN_TOKEN}, headers={"Authorization": ""})
    login = [c.split(";", 1)[0] for c in first.headers.get_list("Set-Cookie") if c.startswith("username-")]
    assert login, "the token login sets a session cookie"
    cookies = "; ".join([*login, "_xsrf=5f7872662d746f6b656e2d6f662d746869732d62726f77736572"])
    response = await jp_fetch("api", "sched", "jobs", method="POST", body=json.dumps({"gpus": 1, "command": ["true"]}),
                              headers={"Authorization": "", "Cookie": cookies}, raise_error=False)
    assert response.code == 403
    assert "_xsrf" in json.loads(response.body)["error"]["message"]
    _, listing = await api("GET", "jobs")
    assert listing == []
    # The same session WITH the XSRF header is accepted: the cookie itself is valid.
    xsrf = next(c.split("=", 1)[1] for c in cookies.split("; ") if c.startswith("_xsrf="))
    response = await jp_fetch("api", "sched", "jobs", method="POST", body=json.dumps({"gpus": 1, "command": ["true"]}),
                              headers={"Authorization": "", "Cookie": cookies, "X-XSRFToken": xsrf},
                              raise_error=False)
    assert response.code == 201, response.body


async def test_case_020_event_stream_without_token_is_rejected_before_streaming(sched_app: Any, api: Any) -> None:
    for headers in ({}, {"Upgrade": "websocket", "Connection": "Upgrade"}):
        status, body = await api("GET", "events", token=None, headers=headers)
        assert status == 403, headers
        assert body["error"]["code"] == "forbidden"


async def test_admin_endpoints_refuse_plain_users(sched_app: Any, api: Any) -> None:
    status, body = await api("PUT", "quotas", {"quotas": []}, token=JUDY_TOKEN)
    assert status == 403 and body["error"]["code"] == "forbidden" and body["error"]["hint"]
    status, _ = await api("GET", "audit", token=JUDY_TOKEN)
    assert status == 403
    status, _ = await api("GET", "audit", token=BOSS_TOKEN)
    assert status == 200


async def test_me_names_the_caller_and_admin_flag(sched_app: Any, api: Any) -> None:
    status, me = await api("GET", "me", token=JUDY_TOKEN)
    assert status == 200 and me["user"] == "judy" and me["is_admin"] is False
    status, me = await api("GET", "me", token=BOSS_TOKEN)
    assert status == 200 and me["user"] == "boss" and me["is_admin"] is True
