"""Authorization matrix: every route x method x caller, enumerated from the running app (issue 10 item 4).

Callers: anonymous (no token), another user (judy), the owner of the work (ivan, the server token)
and an admin (boss). Each row of ``MATRIX`` names the status every caller must get, and each 403/404
another user gets must leave a ``refused`` audit record (issue 15); the test
walks the live route table, so a route or method added without a row fails
(``test_the_matrix_has_a_row_for_every_live_route_and_method``). Then, beyond tests/web/test_auth.py
(which checks decorators, 403 without credentials and case 020): browser-style cookie requests
without the XSRF header are refused on every state-changing method, and the token in the URL works
like the header (a wrong one is refused).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import sys
from dataclasses import dataclass
from typing import Any

import pytest

from tests.web.conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, wait_for
from tests.web.test_auth import implemented_methods, sched_routes

CALLERS = {"anonymous": None, "other user": JUDY_TOKEN, "owner": IVAN_TOKEN, "admin": BOSS_TOKEN}
JOB = {"gpus": 1, "command": [sys.executable, "-c", "pass"], "name": "matrix"}
LEASE = {"gpus": 1, "kernel_id": "set by each test to a real kernel of its server (issue 20 (d))"}
# a script that exists (a definition of a missing one is refused, new user 5 #6); it never fires here
DEFINITION = {"name": "matrix", "script": __file__, "schedule": "0 3 * * *", "gpus": 1}
_NAMES = itertools.count(1)
OK, OK201, BAD, DENIED, HIDDEN = 200, 201, 400, 403, 404


@dataclass(frozen=True)
class Row:
    """One route and method: the status each caller gets (anonymous is always 403)."""

    route: str
    method: str
    other: int
    owner: int
    admin: int
    body: Any = None
    params: dict[str, str] | None = None
    why: str = ""

    @property
    def id(self) -> str:
        return f"{self.method} {self.route}{'?' + '&'.join(self.params) if self.params else ''}"


MATRIX = [
    Row("config", "GET", OK, OK, OK),
    Row("me", "GET", OK, OK, OK),
    Row("inventory", "GET", OK, OK, OK),
    Row("jobs", "GET", OK, OK, OK),
    Row("jobs", "GET", DENIED, DENIED, OK, params={"all": "true"}, why="everyone's jobs: admins only"),
    Row("jobs", "GET", DENIED, DENIED, OK, params={"user": "ivan-or-judy"}, why="another user's jobs: admins only"),
    Row("jobs", "POST", OK201, OK201, OK201, body=JOB),
    Row("jobs/{job_id}", "GET", DENIED, OK, OK,
        why="another user's live job: refused, 403 forbidden, as its words say it exists (newuser29 n5)"),
    Row("jobs/{job_id}", "PATCH", DENIED, OK, OK, body={"time_limit": "1h"},
        why="hubadmin25 B18: the owner and admins change a job (a shorter limit: the owner may, in any state)"),
    Row("jobs/{job_id}", "DELETE", DENIED, OK, OK),
    Row("jobs/cancel", "POST", OK, OK, OK, body={"mine": True}, why="bulk cancel of one's own work (issue 20 F2)"),
    Row("jobs/cancel", "POST", DENIED, DENIED, OK, body={"all": True}, why="everyone's work: admins only (audited)"),
    Row("jobs/{job_id}/logs", "GET", DENIED, OK, OK),
    Row("jobs/{job_id}/progress", "POST", DENIED, OK, DENIED, body={"done": 1, "total": 10},
        why="a running job's progress: its owner (or the job's own token) only; an admin reads, never reports"),
    Row("dryrun", "POST", OK, OK, OK, body=JOB),
    Row("leases", "GET", OK, OK, OK),
    Row("leases", "POST", OK201, OK201, OK201, body=LEASE),
    Row("leases/{lease_id}", "GET", DENIED, OK, OK),
    Row("leases/{lease_id}", "DELETE", DENIED, OK, OK),
    Row("leases/{lease_id}/keepalive", "POST", DENIED, OK, DENIED, body={},
        why="only the lease's own kernel/user keeps it alive; an admin releases instead"),
    Row("leases/{lease_id}/heartbeat", "POST", DENIED, OK, DENIED, body={},
        why="only the lease's own kernel says it lives (newuser41 N1, session 42); never activity; an admin releases"),
    Row("queue", "GET", OK, OK, OK),
    Row("quotas", "GET", OK, OK, OK),
    Row("quotas", "PUT", DENIED, DENIED, OK, body={"quotas": []}),
    Row("idle-policy", "GET", OK, OK, OK),
    Row("idle-policy", "PUT", DENIED, DENIED, OK, body={"default": {"threshold_pct": 5}},
        why="the idle policy is an admin's setting (audited)"),
    Row("profiles", "GET", OK, OK, OK),
    Row("zone-labels", "GET", OK, OK, OK, params={"zone": "Europe/Berlin"},
        why="the names of a time zone's offsets (newuser35 n12): no one's data"),
    Row("events", "GET", OK, OK, OK),
    Row("telemetry", "GET", OK, OK, OK),
    Row("telemetry", "GET", DENIED, OK, OK, params={"job": "{job_id}"}, why="another user's job telemetry"),
    Row("telemetry/history", "GET", DENIED, OK, OK, params={"job": "{job_id}"}, why="another user's job history"),
    Row("idle", "GET", OK, OK, OK, why="own idle work (admins: everyone's)"),
    Row("audit", "GET", DENIED, DENIED, OK),
    Row("usage", "GET", OK, OK, OK),
    Row("usage", "GET", DENIED, DENIED, OK, params={"all": "true"}),
    Row("usage", "GET", DENIED, DENIED, OK, params={"user": "ivan-or-judy"},
        why="another user's usage: admins only (never the caller's own figures instead)"),
    Row("usage/report", "GET", OK, OK, OK),
    Row("usage/report", "GET", DENIED, DENIED, OK, params={"all": "true"}, why="everyone's accounting: admins only"),
    Row("usage/report", "GET", DENIED, DENIED, OK, params={"user": "ivan-or-judy"},
        why="another user's accounting: admins only"),
    Row("usage/waste", "GET", DENIED, DENIED, OK, why="everyone's idle allocations: admins only"),
    Row("eta-accuracy", "GET", DENIED, DENIED, OK, why="predicted vs actual starts of everyone's jobs: admins only"),
    Row("metrics", "GET", OK, OK, OK),
    # job definitions (issue 19): owners and admins; others' definitions do not exist for you
    Row("definitions", "GET", OK, OK, OK),
    Row("definitions", "GET", DENIED, DENIED, OK, params={"all": "true"}, why="everyone's definitions: admins only"),
    Row("definitions", "GET", DENIED, DENIED, OK, params={"user": "ivan-or-judy"},
        why="another user's definitions: admins only"),
    Row("definitions", "POST", OK201, OK201, OK201, body=DEFINITION),
    Row("definitions/preview", "POST", OK, OK, OK, body={"schedule": "0 3 * * *"}),
    Row("definitions/{definition_id}", "GET", HIDDEN, OK, OK),
    Row("definitions/{definition_id}", "PATCH", HIDDEN, OK, OK, body={"name": "renamed"}),
    Row("definitions/{definition_id}", "DELETE", HIDDEN, OK, OK),
    Row("definitions/{definition_id}/{action}", "POST", HIDDEN, OK, OK, why="pause (resume is the same route)"),
    Row("definitions/{definition_id}/runs", "GET", HIDDEN, OK, OK),
    Row("definitions/{definition_id}/runs", "POST", HIDDEN, OK201, OK201, body={}),
    Row("jobs/{job_id}/notebook", "GET", DENIED, HIDDEN, HIDDEN,
        why="another user's live job: 403 (newuser29 n5); a command job keeps no executed notebook"),
    Row("jobs/{job_id}/notebook/open", "POST", DENIED, HIDDEN, HIDDEN,
        why="another user's live job: 403 (newuser29 n5); a command job keeps no executed notebook"),
    Row("teams/{team}/move", "POST", DENIED, DENIED, BAD, body={"to": "research", "dry_run": True},
        why="re-charging a team's work is an admin's act (audited); here the admin passes and is told "
            "team research does not exist (400 naming to)"),
    Row("quotas/what-if", "GET", DENIED, DENIED, OK, params={"team": "default", "guaranteed": "2"},
        why="a team's usage against a proposed line: admins only (hubadmin26 B7)"),
    Row("users/{user}/rename", "POST", DENIED, DENIED, OK, body={"to": "ivan.new", "dry_run": True},
        why="carrying a renamed user's work over is an admin's act (audited; hubadmin26 B10); a dry run changes nothing"),
    Row("usage/claimed-ends", "GET", DENIED, DENIED, OK,
        why="every user's ends claimed while the service was down: admins only (red33 R3's old rows)"),
    Row("jobs/{job_id}/end", "POST", DENIED, DENIED, BAD, body={"reason": "matrix"},
        why="correcting a job's recorded end is an admin's act (audited); here the admin passes and is told the "
            "fresh job is not settled (400 naming job_id)"),
    Row("nodes/{node}/cordon", "POST", DENIED, DENIED, OK, body={"reason": "matrix", "dry_run": True},
        why="cordoning a node for maintenance is an admin's act (audited; s25 drain); a dry run changes nothing"),
    Row("nodes/{node}/uncordon", "POST", DENIED, DENIED, OK, body={"dry_run": True},
        why="uncordoning a node is an admin's act (audited; s25 drain)"),
]


def route_key(pattern: str) -> str:
    """``.../api/sched/jobs/(?P<job_id>[^/]+)$`` → ``jobs/{job_id}``."""
    path = pattern[pattern.index("api/sched/") + len("api/sched/"):].rstrip("$")
    return re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)


def test_the_matrix_has_a_row_for_every_live_route_and_method(sched_app: Any, jp_serverapp: Any) -> None:
    live = {(route_key(p), m) for p, h in sched_routes(jp_serverapp) for m in implemented_methods(h)}
    rows = {(r.route, r.method) for r in MATRIX}
    assert live - rows == set(), "a route/method without a row in MATRIX: add one saying who may call it"
    assert rows - live == set(), "a row for a route/method the app does not serve"


async def fresh(api: Any, kind: str, *, running: bool) -> str:
    """A new job or lease of the owner (ivan); ``running``: wait until it holds its GPUs (a job then
    sleeps: ``-c pass`` may end before it is seen running)."""
    job = {**JOB, "command": [sys.executable, "-c", "import time; time.sleep(120)"]} if running else JOB
    status, body = await api("POST", kind, job if kind == "jobs" else LEASE, token=IVAN_TOKEN)
    assert status == 201, body
    job_id = str(body["id"])
    if running:  # a keepalive applies to a lease that holds its GPUs, a progress report to a running job
        async def holds() -> bool:
            return bool((await api("GET", f"{kind}/{job_id}"))[1]["state"] == "running")
        await wait_for(holds, timeout_s=30)
    return job_id


async def target(api: Any, route: str) -> tuple[str, dict[str, str]]:
    """A fresh object of the owner (ivan) for ``route``: its kind (``jobs``, ``leases``, ``definitions``)
    and the ids its path names."""
    if route.startswith("definitions"):
        # a name of its own: one owner's second definition of a name is refused (red team 6)
        status, body = await api("POST", "definitions", {**DEFINITION, "name": f"matrix-{next(_NAMES)}"},
                                 token=IVAN_TOKEN)
        assert status == 201, body
        return "definitions", {"definition_id": str(body["id"]), "action": "pause"}
    kind = "leases" if route.startswith("leases") else "jobs"
    job_id = await fresh(api, kind, running=route.endswith(("keepalive", "progress")))
    ids = {"job_id": job_id, "lease_id": job_id, "team": "default", "user": "ivan"}
    if route.startswith("nodes/"):  # the simulated inventory's one node (s25 drain)
        _, inventory = await api("GET", "inventory", token=BOSS_TOKEN)
        ids["node"] = str(inventory["nodes"][0]["name"])
    return kind, ids


async def stream_status(port: int, base_url: str, path: str, headers: dict[str, str]) -> int:
    """Status of a streaming GET (the body never ends): read the status line, then hang up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    writer.write(f"GET {base_url}api/sched/{path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{extra}\r\n".encode())
    await writer.drain()
    line = (await asyncio.wait_for(reader.readline(), 20)).decode()
    writer.close()
    return int(line.split()[1])


async def refusals(api: Any, user: str) -> int:
    """How many ``refused`` audit records ``user`` has (issue 15: each refusal is an audit record)."""
    status, records = await api("GET", "audit", params={"action": "refused", "user": user, "limit": "10000"},
                                token=BOSS_TOKEN)
    assert status == 200, records
    return len(records)


def reads_no_object(row: Row) -> bool:
    """A GET whose path and query name no object: it changes nothing, and which of the owner's objects
    exists beside it does not matter, only that one does (the refusal-leak check looks for its ids)."""
    return row.method == "GET" and "{" not in row.route and not any("{" in v for v in (row.params or {}).values())


def object_kind(route: str) -> str:
    """The kind of object :func:`target` makes for ``route``."""
    return "definitions" if route.startswith("definitions") else "leases" if route.startswith("leases") else "jobs"


async def test_every_route_method_and_caller_gets_exactly_the_expected_status(
        sched_app: Any, api: Any, kernel: Any, http_server_port: Any, jp_base_url: str) -> None:
    LEASE["kernel_id"] = await kernel()
    wrong = []
    # s41 speed: a run of GETs that name no object (reads_no_object) shares one fresh object of the owner,
    # made for the run's first row and deleted after its last, instead of one per row and caller (248
    # objects, most a job process, became 137); every other row still gets a fresh object per caller.
    shared: tuple[str, dict[str, str]] | None = None

    async def drop(kind: str, ids: dict[str, str]) -> None:
        object_id = ids.get("job_id") or ids["definition_id"]
        await api("DELETE", f"{kind}/{object_id}", token=BOSS_TOKEN)  # free its GPUs for the next row

    for row in MATRIX:
        if shared is not None and not (reads_no_object(row) and object_kind(row.route) == shared[0]):
            await drop(*shared)
            shared = None
        for caller, token in CALLERS.items():
            want = DENIED if caller == "anonymous" else {"other user": row.other, "owner": row.owner,
                                                          "admin": row.admin}[caller]
            if reads_no_object(row):
                shared = shared or await target(api, row.route)
                kind, ids = shared
            else:
                kind, ids = await target(api, row.route)
            path = row.route.format(**ids)
            params = {k: v.format(**ids) for k, v in (row.params or {}).items()} or None
            if caller == "other user" and want in (DENIED, HIDDEN):
                refused_before = await refusals(api, "judy")
            if row.route == "events":
                status = await stream_status(http_server_port[1], jp_base_url, path,
                                             {"Authorization": f"token {token}"} if token else {})
                body: Any = None
            else:
                status, body = await api(row.method, path, row.body, token=token, params=params)
            if status != want:
                wrong.append(f"{row.id} as {caller}: want {want}, got {status} {json.dumps(body)[:160]}")
            if status >= 400 and row.route != "events":
                error = body.get("error") if isinstance(body, dict) else None
                if not isinstance(error, dict) or not {"code", "message", "field", "hint"} <= set(error):
                    wrong.append(f"{row.id} as {caller}: {status} without the error shape: {body}")
            if caller == "other user" and want in (DENIED, HIDDEN) and status == want:
                refused = await refusals(api, "judy")
                if refused <= refused_before:
                    wrong.append(f"{row.id} as {caller}: refused with {status} but no 'refused' audit record")
            if status in (DENIED, HIDDEN) and caller != "admin":
                leaked = [name for name in ("ivan", *ids.values()) if name != "pause" and name in json.dumps(body)]
                if leaked and caller == "anonymous":
                    wrong.append(f"{row.id} as {caller}: the refusal leaks {leaked}")
            if not reads_no_object(row):
                await drop(kind, ids)
    if shared is not None:
        await drop(*shared)
    assert not wrong, "\n".join(wrong)


async def login_cookies(jp_fetch: Any) -> tuple[str, str]:
    """A browser session: the login cookie a ``?token=`` visit sets, plus an ``_xsrf`` cookie value."""
    first = await jp_fetch("api", "sched", "me", params={"token": IVAN_TOKEN}, headers={"Authorization": ""})
    login = [c.split(";", 1)[0] for c in first.headers.get_list("Set-Cookie") if c.startswith("username-")]
    assert login, "a ?token= visit logs the browser in with a cookie"
    xsrf = "2|deadbeef|" + "0" * 32 + "|1700000000"
    return "; ".join([*login, f"_xsrf={xsrf}"]), xsrf


async def observed(api: Any, job_id: str) -> tuple[Any, ...]:
    """What a refused request must not change: the job ids, whether ``job_id`` is cancelled, the quotas,
    the definitions (id, version)."""
    _, jobs = await api("GET", "jobs", params={"all": "true"}, token=BOSS_TOKEN)
    _, quotas = await api("GET", "quotas")
    _, definitions = await api("GET", "definitions", params={"all": "true"}, token=BOSS_TOKEN)
    cancelled = [j["state"] for j in jobs if j["id"] == job_id] == ["cancelled"]
    return sorted(j["id"] for j in jobs), cancelled, quotas, sorted((d["id"], d["version"]) for d in definitions)


@pytest.mark.parametrize("with_header", [False, True],
                         ids=["a cookie session without the XSRF header is refused on every unsafe method",
                              "the same session with the XSRF header gets the owner's answers"])
async def test_cookie_sessions_need_xsrf_on_every_unsafe_method(sched_app: Any, api: Any, kernel: Any, jp_fetch: Any,
                                                                jp_serverapp: Any, with_header: bool) -> None:
    LEASE["kernel_id"] = await kernel()
    cookies, xsrf = await login_cookies(jp_fetch)
    unsafe = [r for r in MATRIX if r.method != "GET" and not r.params]
    assert {(route_key(p), m) for p, h in sched_routes(jp_serverapp) for m in implemented_methods(h)
            if m != "GET"} == {(r.route, r.method) for r in unsafe}
    wrong = []
    for row in unsafe:
        kind, ids = await target(api, row.route)
        object_id = ids.get("job_id") or ids["definition_id"]
        path = row.route.format(**ids)
        headers = {"Authorization": "", "Cookie": cookies, **({"X-XSRFToken": xsrf} if with_header else {})}
        before = await observed(api, object_id) if not with_header else None  # compared only for a refusal
        response = await jp_fetch(*f"api/sched/{path}".split("/"), method=row.method, headers=headers,
                                   body=json.dumps(row.body) if row.body is not None else None,
                                   allow_nonstandard_methods=True, raise_error=False)
        want = row.owner if with_header else DENIED
        if response.code != want:
            wrong.append(f"{row.id} cookie xsrf={with_header}: want {want}, got {response.code} {response.body[:160]!r}")
        if not with_header:
            if before != await observed(api, object_id):
                wrong.append(f"{row.id}: a refused cookie request changed the jobs or the quotas")
            if b"_xsrf" not in response.body:
                wrong.append(f"{row.id}: the refusal does not name _xsrf: {response.body[:160]!r}")
        await api("DELETE", f"{kind}/{object_id}", token=BOSS_TOKEN)  # free its GPUs for the next row
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("token,want", [(IVAN_TOKEN, 200), ("wrong", 403), ("", 403)],
                         ids=["a good token in the URL authenticates like the header",
                              "a wrong token in the URL is refused",
                              "an empty token in the URL is refused"])
async def test_token_in_the_url(sched_app: Any, jp_fetch: Any, token: str, want: int) -> None:
    for path in ("jobs", "me", "queue"):
        response = await jp_fetch("api", "sched", path, params={"token": token}, headers={"Authorization": ""},
                                  raise_error=False)
        assert response.code == want, (path, response.code, response.body[:200])
        if want == 403:
            assert b"ivan" not in response.body


HUB_ONLY = {
    ("kernels", "PUT"): "a user server reports ITS OWN user's live kernels: any authenticated hub user (the user "
                        "comes from the hub token, never the body), so it can release only that user's leases; "
                        "anonymous 403 — walked end to end in tests/hub/test_hub_integration.py",
    ("refused-token", "POST"): "a user server hands over a token its hub auth refused: any authenticated hub user "
                               "(the reporter comes from the hub token); the record is written under the user the "
                               "HUB says owns the token, never a name from the body, so a caller can only report a "
                               "token it holds, with the reporter as the record's actor; answers the same for any token (red team 17, R13) — walked end to end in "
                               "tests/hub/test_newuser13_hub.py",
    ("squat-refused", "POST"): "a user server reports the squats of the service's port it refused while the service "
                               "was down: any authenticated hub user (the reporter comes from the hub token); the "
                               "records' actor and user are the reporter, never a name from the body; one report a "
                               "minute per reporter, 4 holders each (verify26 V8) — walked in "
                               "tests/hub/test_verify26_v8_squat_audited.py",
}
"""Routes only the central hub service serves (no embedded server to walk them here): who may call each."""


def test_the_central_services_own_routes_have_a_row_and_need_credentials() -> None:
    from jupyter_sched.extension.app import SchedApp
    from jupyter_sched.hub.central import HubSchedApp

    hub = HubSchedApp.__new__(HubSchedApp)  # routes() reads no settings
    extra = [(p, h) for p, h in HubSchedApp.routes(hub) if (p, h) not in SchedApp.routes(hub)]
    assert {(p, m) for p, h in extra for m in implemented_methods(h)} == set(HUB_ONLY)
    for pattern, handler in extra:
        for method in implemented_methods(handler):
            fn = getattr(handler, method.lower())
            assert fn.__code__.co_qualname.startswith("authenticated"), f"{method} {pattern}: no @web.authenticated"
            inner = fn.__wrapped__
            assert inner.__code__.co_filename.replace("\\", "/").endswith("jupyter_server/auth/decorator.py"), \
                f"{method} {pattern}: no @authorized"
