"""Bad input is always a 4xx JSON error naming the field and the fix — never a 500 (case 020, issue 10)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import BOSS_TOKEN, IVAN_TOKEN


@dataclass(frozen=True)
class Bad:
    id: str
    method: str
    path: str
    body: Any = None
    raw: bytes | None = None
    params: dict[str, str] = field(default_factory=dict)
    token: str = IVAN_TOKEN
    want_field: str | None = None
    want_status: int = 400


def cmd(**extra: Any) -> dict[str, Any]:
    return {"command": ["python", "-c", "pass"], **extra}


CASES = [
    Bad("a body that is not JSON names the body", "POST", "jobs", raw=b"{gpus: 1", want_field="body"),
    Bad("an empty body names the body", "POST", "jobs", raw=b"", want_field="body"),
    Bad("a JSON array is not a request object", "POST", "jobs", raw=b"[1, 2]", want_field="body"),
    Bad("a JSON string is not a request object", "POST", "jobs", raw=b'"gpus"', want_field="body"),
    Bad("binary garbage names the body", "POST", "jobs", raw=b"\xff\xfe\x00", want_field="body"),
    Bad("gpus as a word names gpus", "POST", "jobs", cmd(gpus="two"), want_field="gpus"),
    Bad("negative gpus names gpus", "POST", "jobs", cmd(gpus=-1), want_field="gpus"),
    Bad("1.5 gpus names gpus", "POST", "jobs", cmd(gpus=1.5), want_field="gpus"),
    Bad("gpus null names gpus", "POST", "jobs", cmd(gpus=None), want_field="gpus"),
    Bad("an unknown field is named", "POST", "jobs", cmd(gpuz=1), want_field="gpuz"),
    Bad("the body cannot choose the user", "POST", "jobs", cmd(user="judy"), want_field="user"),
    Bad("an unknown priority names priority", "POST", "jobs", cmd(priority="urgent"), want_field="priority"),
    Bad("a command string instead of a list names command", "POST", "jobs", {"command": "python x.py"},
        want_field="command"),
    Bad("nothing to run names command", "POST", "jobs", {"gpus": 1}, want_field="command"),
    Bad("a time limit that is not a duration names time_limit", "POST", "jobs", cmd(time_limit="forever"),
        want_field="time_limit"),
    Bad("env that is not an object names env", "POST", "jobs", cmd(env=["A=1"]), want_field="env"),
    Bad("an out-of-range port names port", "POST", "jobs", cmd(kind="inference", port=70000), want_field="port"),
    Bad("a 300-character name names name", "POST", "jobs", cmd(name="x" * 300), want_field="name"),
    Bad("a lone surrogate in the name names name", "POST", "jobs",
        raw=b'{"gpus": 1, "name": "\\udc80\\ud800evil", "command": ["sleep", "1"]}', want_field="name"),
    Bad("a lone surrogate in a command argument names it", "POST", "jobs",
        raw=b'{"gpus": 0, "command": ["true", "\\ud800"]}', want_field="command[1]"),
    Bad("workers zero names workers", "POST", "jobs", cmd(workers=0), want_field="workers"),
    Bad("dry-run validates like submit", "POST", "dryrun", cmd(gpus="many"), want_field="gpus"),
    Bad("a lease with a malformed body names the body", "POST", "leases", raw=b"{", want_field="body"),
    Bad("log offset below zero names offset", "GET", "jobs/x/logs", params={"offset": "-1"}, want_field="offset"),
    Bad("a log offset beyond any file names offset", "GET", "jobs/x/logs", params={"offset": "99999999999999999999"},
        want_field="offset"),
    Bad("log limit that is not a number names limit", "GET", "jobs/x/logs", params={"limit": "lots"},
        want_field="limit"),
    Bad("log limit above 1 MiB names limit", "GET", "jobs/x/logs", params={"limit": str(1 << 30)},
        want_field="limit"),
    Bad("follow that is not a boolean names follow", "GET", "jobs/x/logs", params={"follow": "maybe"},
        want_field="follow"),
    Bad("all that is not a boolean names all", "GET", "jobs", params={"all": "perhaps"}, want_field="all"),
    Bad("audit limit zero names limit", "GET", "audit", params={"limit": "0"}, token=BOSS_TOKEN, want_field="limit"),
    Bad("telemetry limit zero names limit", "GET", "telemetry", params={"limit": "0"}, want_field="limit"),
    Bad("a naive telemetry since is refused", "GET", "telemetry", params={"since": "2026-01-01T10:00:00"},
        want_field="since"),
    Bad("two telemetry filters at once are refused", "GET", "telemetry", params={"gpu": "a", "job": "b"}),
    Bad("keepalive seconds below zero names seconds", "POST", "leases/x/keepalive", {"seconds": -5},
        want_field="seconds"),
    Bad("an unknown keepalive field is named", "POST", "leases/x/keepalive", {"minutes": 5}, want_field="minutes"),
    Bad("usage grouped by nonsense names by", "GET", "usage", params={"by": "colour"}, want_field="by"),
    Bad("an audit since without offset is refused", "GET", "audit", params={"since": "2026-01-01"},
        token=BOSS_TOKEN, want_field="since"),
    Bad("quotas that are not JSON name the body", "PUT", "quotas", raw=b"quotas=1", token=BOSS_TOKEN,
        want_field="body"),
    Bad("a quota with a negative guarantee names its place, quotas[0].guaranteed", "PUT", "quotas",
        {"quotas": [{"team": "a", "guaranteed": -1}]}, token=BOSS_TOKEN, want_field="quotas[0].guaranteed"),
    Bad("a quota line that is not an object is refused", "PUT", "quotas", {"quotas": ["a"]}, token=BOSS_TOKEN),
    # found by a fresh user trying to break the server:
    Bad("an astronomically long time limit names time_limit_s, as sent", "POST", "jobs", cmd(time_limit_s=1e308),
        want_field="time_limit_s"),
    Bad("Infinity is not JSON and names the body", "POST", "jobs",
        raw=b'{"command": ["python"], "time_limit_s": Infinity}', want_field="body"),
    Bad("a NUL byte in the command names command", "POST", "jobs", {"command": ["python", "-c", "print(1)\x00"]},
        want_field="command"),
    Bad("a NUL byte in the environment names env", "POST", "jobs", cmd(env={"A": "x\x00y"}), want_field="env"),
    Bad("a body nested thousands deep names the body", "POST", "jobs",
        raw=b'{"env": ' + b"[" * 5000 + b"]" * 5000 + b"}", want_field="body"),
    Bad("a misspelt quota field is refused, not dropped", "PUT", "quotas", {"quotas": [{"team": "t", "gpus": -3}]},
        token=BOSS_TOKEN, want_field="quotas[0].gpus"),
]


async def test_bad_input_is_a_4xx_json_error_with_field_and_hint(sched_app: Any, api: Any) -> None:
    """Every row of CASES against one server (a server per row would cost a second each)."""
    failures = []
    for case in CASES:
        status, body = await api(case.method, case.path, case.body, raw=case.raw, params=case.params or None,
                                 token=case.token)
        error = body.get("error") if isinstance(body, dict) else None
        if not 400 <= status < 500:
            failures.append(f"{case.id}: status {status}: {body}")
        elif not isinstance(error, dict) or not {"code", "message", "field", "hint"} <= set(error):
            failures.append(f"{case.id}: not the error shape: {body}")
        elif not (error["message"] and error["hint"]):
            failures.append(f"{case.id}: empty message or hint: {error}")
        elif case.want_field is not None and (error["field"] != case.want_field or status != case.want_status):
            failures.append(f"{case.id}: want {case.want_status} field {case.want_field!r}, got {status} {error}")
    assert not failures, "\n".join(failures)


def test_the_bad_input_table_has_unique_sentence_ids() -> None:
    assert len({c.id for c in CASES}) == len(CASES) >= 10


async def test_unknown_job_is_404_with_the_error_shape(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "jobs/no-such-job")
    assert status == 404 and body["error"]["code"] == "not_found"


@pytest.mark.parametrize(("method", "path"), [("GET", "nothing-here"), ("POST", "definitions/d-1/not-an-action"),
                                              ("DELETE", "jobs/j-1/logs/extra"), ("PATCH", "queue")])
async def test_unknown_route_under_the_namespace_is_404_json(sched_app: Any, api: Any, method: str, path: str) -> None:
    status, body = await api(method, path, {} if method in ("POST", "PATCH") else None)
    assert status in (404, 405), body
    if status == 404:  # a path no route matches: JSON naming the path, never the server's HTML page
        assert body["error"]["code"] == "not_found" and body["error"]["field"] == "path", body
    anonymous, _ = await api(method, path, {} if method in ("POST", "PATCH") else None, token=None)
    assert anonymous == 403, "unknown paths need authentication like the routes"


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12)
FIELDS = st.sampled_from(["gpus", "gpu_milli", "model", "mem_per_gpu", "priority", "kind", "cpu", "memory",
                          "workers", "nvlink", "time_limit", "env", "port", "team", "name", "resources",
                          "profile", "node_selector", "tolerations", "kernel_id", "args", "checkpointable"])
REQUEST_BODIES = st.dictionaries(FIELDS, JSON_VALUES, max_size=6) | JSON_VALUES


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=REQUEST_BODIES, route=st.sampled_from(["dryrun", "leases"]))
def test_fuzzed_request_bodies_never_get_a_5xx(sched_app: Any, api: Any, jp_asyncio_loop: Any, body: Any,
                                               route: str) -> None:
    # dry-run and leases only: an accepted fuzzed *job* would run its fuzzed command.
    status, payload = jp_asyncio_loop.run_until_complete(api("POST", route, raw=json.dumps(body).encode()))
    assert status < 500, payload
    if status >= 400:
        assert payload["error"]["message"] and "hint" in payload["error"], payload


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(params=st.dictionaries(st.sampled_from(["offset", "limit", "follow", "all", "state", "kind", "user", "by",
                                               "since", "until"]), st.text(max_size=12), max_size=3),
       path=st.sampled_from(["jobs", "leases", "usage", "audit", "jobs/x/logs"]))
def test_fuzzed_query_strings_never_get_a_5xx(sched_app: Any, api: Any, jp_asyncio_loop: Any,
                                              params: dict[str, str], path: str) -> None:
    status, payload = jp_asyncio_loop.run_until_complete(api("GET", path, params=params, token=BOSS_TOKEN))
    assert status < 500, (path, params, payload)


@pytest.mark.parametrize(("query", "field", "words"), [
    ("jobs?cursor=%00%ff", "cursor", "cursor is not a cursor this server gave out (not UTF-8)"),
    ("queue?limit=%ff", "limit", "query argument limit is not UTF-8 text"),
    ("usage?since=%fe", "since", "query argument since is not UTF-8 text"),
])
async def test_newuser18_n14_a_query_argument_that_is_not_utf8_is_a_validation_error_naming_it(
        sched_app: Any, http_server: Any, http_server_port: Any, jp_base_url: str, query: str, field: str,
        words: str) -> None:
    """tornado's ``Invalid unicode in cursor: b'\\x00\\xff'`` (code bad_request, no field, no hint) is
    gone: the bytes are sent raw, as curl sends them (a client library would re-encode them)."""
    from tornado.httpclient import AsyncHTTPClient

    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}api/sched/{query}"
    answer = await AsyncHTTPClient().fetch(url, headers={"Authorization": f"token {IVAN_TOKEN}"}, raise_error=False)
    assert answer.code == 400, answer.body
    error = json.loads(answer.body)["error"]
    assert error["code"] == "validation_error" and error["field"] == field, error
    assert error["message"] == words and error["hint"], error
    assert "b'" not in error["message"] and "Invalid unicode" not in error["message"], error


@pytest.mark.parametrize(("path", "field", "words"), [
    ("jobs/%ff", "job_id", "the job_id in the URL path is not UTF-8 text"),
    ("nodes/%fe/cordon", "node", "the node in the URL path is not UTF-8 text"),
    ("nodes/a%01b/cordon", "node", "the node in the URL path must not contain control characters (NUL, newline, …)"),
    ("jobs/j-%00x", "job_id", "the job_id in the URL path must not contain control characters (NUL, newline, …)"),
    ("jobs?state=%01", "state", "query argument state must not contain control characters (NUL, newline, …)"),
])
async def test_verify25_a_path_parameter_is_not_called_a_query_argument(
        sched_app: Any, http_server: Any, http_server_port: Any, jp_base_url: str, path: str, field: str,
        words: str) -> None:
    """verify25 (small): ``jobs/%ff`` was "query argument job_id is not UTF-8 text" — the id is part of
    the URL's path, not a query argument; query arguments keep their words."""
    from tornado.httpclient import AsyncHTTPClient

    url = f"http://127.0.0.1:{http_server_port[1]}{jp_base_url}api/sched/{path}"
    method = "POST" if path.endswith("cordon") else "GET"
    answer = await AsyncHTTPClient().fetch(url, method=method, body=b"{}" if method == "POST" else None,
                                           headers={"Authorization": f"token {IVAN_TOKEN}"}, raise_error=False)
    assert answer.code == 400, answer.body
    error = json.loads(answer.body)["error"]
    assert error["field"] == field and error["message"] == words and error["hint"], error


async def test_newuser18_n14_a_date_without_a_time_is_told_its_full_form(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "usage", params={"since": "2027-01-01"})
    assert status == 400, body
    error = body["error"]
    assert error["field"] == "since", error
    assert error["message"] == "since '2027-01-01' is a date without a time and a UTC offset", error
    assert "2027-01-01T00:00:00Z" in error["hint"] and "append Z" not in error["hint"], error
    status, body = await api("GET", "usage", params={"since": "2027-01-01T06:30"})
    assert status == 400 and "write 2027-01-01T06:30:00Z for UTC" in body["error"]["hint"], body
    status, _ = await api("GET", "usage", params={"since": "2027-01-01T00:00:00Z"})  # the form the hint shows works
    assert status == 200
