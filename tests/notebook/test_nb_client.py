"""The client without a Jupyter server: error mapping, discovery order, SSE parsing, log following.

The HTTP double is httpx's own ``MockTransport`` answering in the REST API's wire format
(``{"error": {"code", "message", "field", "hint"}}``); the end-to-end tests against a real
server are in test_kernels.py and test_notebooks.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched import errors
from jupyter_sched.client import (
    AsyncSchedClient,
    Connection,
    NoServerError,
    SchedClient,
    ServerUnreachableError,
    discover,
    error_from_response,
)
from jupyter_sched.client._wire import SseParser


def _error_body(code: str, message: str = "bad", field: str | None = None, hint: str | None = None) -> str:
    return json.dumps({"error": {"code": code, "message": message, "field": field, "hint": hint}})


ERRORS = [
    pytest.param(400, _error_body("validation_error", "gpus must be >= 0", "gpus", "use 1"), errors.ValidationError,
                 id="a 400 validation error keeps its field and hint"),
    pytest.param(400, _error_body("invalid_timestamp"), errors.TimestampError, id="a timestamp error keeps its class"),
    pytest.param(403, _error_body("forbidden"), errors.AuthorizationError, id="a 403 is an authorization error"),
    pytest.param(404, _error_body("not_found"), errors.NotFoundError, id="a 404 is not found"),
    pytest.param(409, _error_body("conflict"), errors.ConflictError, id="a 409 is a conflict"),
    pytest.param(409, _error_body("not_leader"), errors.NotLeaderError, id="not_leader is a conflict subclass"),
    pytest.param(422, _error_body("quota_exceeded"), errors.QuotaError, id="a quota 422 is a quota error"),
    pytest.param(422, _error_body("unschedulable"), errors.UnschedulableError, id="an unschedulable 422 stays so"),
    pytest.param(502, _error_body("executor_error"), errors.ExecutorError, id="a 502 executor error"),
    pytest.param(502, _error_body("telemetry_error"), errors.TelemetryError, id="a 502 telemetry error"),
    pytest.param(503, _error_body("store_error"), errors.StoreError, id="a 503 store error"),
    pytest.param(404, _error_body("some_future_code"), errors.NotFoundError,
                 id="an unknown code falls back to the status"),
    pytest.param(403, '{"message": "Forbidden", "reason": null}', errors.AuthenticationError,
                 id="jupyter_server's own 403 is a refused token (an authorization error) with a token hint"),
    pytest.param(403, json.dumps({"error": {"code": "forbidden", "message": "no", "field": None, "hint": None,
                                            "details": {"credentials": "refused"}}}), errors.AuthenticationError,
                 id="the extension's answer for Jupyter's auth refusal is a refused token"),
    pytest.param(500, "<html>oops</html>", errors.SchedError, id="an HTML 500 is a plain SchedError"),
]


@pytest.mark.parametrize(("status", "text", "want"), ERRORS)
def test_server_errors_become_the_error_classes(status: int, text: str, want: type[errors.SchedError]) -> None:
    err = error_from_response(status, text)
    assert type(err) is want


def _client(handler: Callable[[httpx.Request], httpx.Response]) -> SchedClient:
    return SchedClient(Connection("http://sched.test/base/", token="t0k", kernel_id="k-1"),
                       transport=httpx.MockTransport(handler))


def test_requests_carry_the_token_and_errors_carry_field_and_hint() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(400, text=_error_body("validation_error", "gpus must be >= 0 (got -1)", "gpus",
                                                   "use 0 or more"), headers={"content-type": "application/json"})

    with _client(handler) as client, pytest.raises(errors.ValidationError) as info:
        client.submit({"gpus": -1, "command": ["x"]})
    assert (info.value.field, info.value.hint) == ("gpus", "use 0 or more")
    assert seen[0].url == "http://sched.test/base/api/sched/jobs"
    assert seen[0].headers["authorization"] == "token t0k"
    assert json.loads(seen[0].content) == {"gpus": -1, "command": ["x"]}


def test_lists_are_accepted_bare_or_wrapped_and_usage_is_a_dataframe() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/usage"):
            return httpx.Response(200, json={"usage": [{"user": "ana", "gpu_seconds": 7.5}]})
        return httpx.Response(200, json=[{"id": "1"}, {"id": "2"}])

    with _client(handler) as client:
        assert [j["id"] for j in client.queue()] == ["1", "2"]
        frame = client.usage()
    assert list(frame["gpu_seconds"]) == [7.5]


def test_follow_logs_reads_until_finished() -> None:
    pages = {0: ("hello ", 6, False), 6: ("world\n", 12, False), 12: ("", 12, True)}

    def handler(request: httpx.Request) -> httpx.Response:
        offset = int(request.url.params["offset"])
        assert request.url.params["follow"] == "true"
        text, nxt, finished = pages[offset]
        return httpx.Response(200, json={"text": text, "offset": offset, "next_offset": nxt, "finished": finished})

    with _client(handler) as client:
        assert "".join(client.follow_logs("7")) == "hello world\n"


def test_an_unreachable_server_says_where_and_what_to_do() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with _client(handler) as client, pytest.raises(ServerUnreachableError) as info:
        client.inventory()
    assert "http://sched.test/base/" in str(info.value)


def test_the_async_client_maps_errors_the_same_way() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": {"code": "not_found", "message": "no job 9", "field": "id",
                                                   "hint": None}})

    async def scenario() -> None:
        async with AsyncSchedClient(Connection("http://sched.test/"),
                                    transport=httpx.MockTransport(handler)) as client:
            await client.job("9")

    with pytest.raises(errors.NotFoundError, match="no job 9"):
        asyncio.run(scenario())


def test_sse_events_are_parsed_with_their_types() -> None:
    lines = [": jupyter_sched event stream", "retry: 3000", "", "id: 1", "event: lease",
             'data: {"id": "5", "state": "running"}', "", ": keepalive", "", 'data: {"type": "job", "data": {}}', ""]
    assert list(SseParser().feed(lines)) == [
        {"type": "lease", "data": {"id": "5", "state": "running"}}, {"type": "job", "data": {}}]


# ---- discovery -----------------------------------------------------------------------------

class _ConfigOnly(BaseHTTPRequestHandler):
    """A loopback HTTP double of a server that has jupyter_sched: answers GET .../api/sched/config."""

    def do_GET(self) -> None:
        ok = self.path.endswith("/api/sched/config") and self.headers.get("Authorization") == "token good"
        body = b'{"api": "v1"}' if ok else b"{}"
        self.send_response(200 if ok else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def config_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ConfigOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _runtime_file(runtime: Path, name: str, url: str, token: str, root: Path) -> None:
    runtime.mkdir(parents=True, exist_ok=True)
    (runtime / f"jpserver-{name}.json").write_text(json.dumps({
        "url": url, "base_url": "/", "token": token, "root_dir": str(root), "pid": os.getpid()}))


def test_explicit_url_wins_over_the_environment(tmp_path: Path) -> None:
    env = {"JUPYTER_SCHED_URL": "http://a/", "JUPYTER_SCHED_TOKEN": "x", "JUPYTER_SCHED_KERNEL_ID": "k"}
    conn = discover("http://e:1", "tok", env=env, runtime_dir=str(tmp_path))
    assert (conn.url, conn.token, conn.kernel_id, conn.source) == ("http://e:1/", "tok", "k", "explicit")


def test_a_url_of_a_server_in_the_runtime_dir_uses_its_token(tmp_path: Path) -> None:
    """New user 5, finding 12: the CLI said "pass --url to use another: http://localhost:8889/", and
    following that was refused for want of a token the CLI had read a moment earlier."""
    runtime = tmp_path / "runtime"
    _runtime_file(runtime, "a", "http://127.0.0.1:8889/", "tok-b", tmp_path)
    conn = discover("http://localhost:8889/", env={}, runtime_dir=str(runtime))
    # localhost is 127.0.0.1, and the token goes to the address the server wrote, not to "localhost" (which
    # may resolve to ::1, where another account can listen on the same port: red-team 5 finding 5)
    assert (conn.url, conn.token) == ("http://127.0.0.1:8889/", "tok-b")
    v6 = discover("http://[::1]:8889/", env={}, runtime_dir=str(runtime))
    assert (v6.url, v6.token) == ("http://127.0.0.1:8889/", "tok-b")
    assert discover("http://localhost:8890/", env={}, runtime_dir=str(runtime)).token == ""  # another server
    assert discover("http://other-host:8889/", env={}, runtime_dir=str(runtime)).token == ""
    assert discover("http://localhost:8889/", "mine", env={}, runtime_dir=str(runtime)).token == "mine"


def test_newuser18_n2_a_jupyter_sched_url_without_a_token_uses_its_servers_runtime_file_token(tmp_path: Path) -> None:
    """New user 18, N2: ``JUPYTER_SCHED_URL=http://127.0.0.1:18980/ jupyter nbconvert --execute …``: the
    CLI found the token of that server (this account's runtime file) by itself, the kernel's client
    sent none and was refused. Now it reads it as ``--url`` does: sent only to the address the
    server wrote, and only for that server."""
    runtime = tmp_path / "runtime"
    _runtime_file(runtime, "a", "http://127.0.0.1:8889/", "tok-b", tmp_path)
    conn = discover(env={"JUPYTER_SCHED_URL": "http://localhost:8889/"}, runtime_dir=str(runtime))
    assert (conn.url, conn.token, conn.source) == ("http://127.0.0.1:8889/", "tok-b", "kernel-env")
    other = discover(env={"JUPYTER_SCHED_URL": "http://localhost:8890/"}, runtime_dir=str(runtime))
    assert (other.url, other.token) == ("http://localhost:8890/", "")
    given = discover(env={"JUPYTER_SCHED_URL": "http://localhost:8889/", "JUPYTER_SCHED_TOKEN": "mine"},
                     runtime_dir=str(runtime))
    assert (given.url, given.token) == ("http://localhost:8889/", "mine")  # a token given is the one sent


def test_newuser18_n2_no_token_for_jupyter_sched_url_is_said_so() -> None:
    """Refused without a token, the kernel's client said "give the token JupyterLab printed" beside
    tornado's '_xsrf' words; it says which variable is missing (sync and async clients alike)."""
    refused = json.dumps({"error": {"code": "forbidden", "field": None, "hint": "send the server token",
                                    "message": "the server did not accept this request's credentials: no token, a "
                                               "wrong token, or a browser request without its _xsrf value",
                                    "details": {"credentials": "refused"}}})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, text=refused, headers={"content-type": "application/json"})

    from_env = Connection("http://127.0.0.1:18980/", source="kernel-env")
    with SchedClient(from_env, transport=httpx.MockTransport(handler)) as client, \
            pytest.raises(errors.AuthenticationError) as info:
        client.submit({"gpus": 1, "command": ["true"]})
    assert info.value.hint is not None and info.value.hint.startswith(
        "no token was sent: JUPYTER_SCHED_URL is set but JUPYTER_SCHED_TOKEN is not"), info.value.hint

    async def scenario() -> None:
        async with AsyncSchedClient(from_env, transport=httpx.MockTransport(handler)) as client:
            await client.me()

    with pytest.raises(errors.AuthenticationError) as async_info:
        asyncio.run(scenario())
    assert async_info.value.hint == info.value.hint
    with SchedClient(from_env._replace(token="wrong"), transport=httpx.MockTransport(handler)) as client, \
            pytest.raises(errors.AuthenticationError) as wrong:
        client.me()
    assert wrong.value.hint == ("the token in JUPYTER_SCHED_TOKEN was refused — set JUPYTER_SCHED_TOKEN=TOKEN (the "
                                "token in the URL JupyterLab printed, or from `jupyter server list`) or call "
                                "connect(url, token)")


def test_newuser42_n12_the_clients_no_token_error_on_a_hub_says_the_clis_words() -> None:
    """newuser42 n12: with only JUPYTER_SCHED_HUB_URL set, ``connect().me()`` said "give the token JupyterLab
    printed" (a hub prints none) and could not tell "none given" from "refused"; the CLI said it right. The
    client now says it in the CLI's words (wording.tokens, one source). The server's 403 is a MockTransport
    speaking its wire body (a hub with its service is another module's fixture; the rule is the client's)."""
    from jupyter_sched.wording.tokens import token_source, unset_token

    refused = json.dumps({"error": {"code": "unauthorized", "field": None, "hint": "send the hub token",
                                    "message": "the server did not accept this request's credentials: no token, a "
                                               "wrong token, or a browser request without its _xsrf value",
                                    "details": {"credentials": "refused"}}})

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(403, text=refused, headers={"content-type": "application/json"})

    hub = "http://127.0.0.1:21710/services/jupyter-sched/"
    page = "http://127.0.0.1:21710/hub/token"
    found = discover(env={"JUPYTER_SCHED_HUB_URL": hub}, runtime_dir="/nonexistent")
    assert (found.source, found.token) == ("hub-service", "")
    hints = []
    for connection in (found, found._replace(token="stale")):
        with SchedClient(connection, transport=httpx.MockTransport(handler)) as client, \
                pytest.raises(errors.AuthenticationError) as info:
            client.me()
        hints.append(str(info.value.hint))
    none_given, wrong = hints
    assert "JupyterLab" not in none_given + wrong, hints
    assert none_given == (f"no token was sent: {unset_token('JUPYTER_SCHED_HUB_URL')} — set JUPYTER_SCHED_TOKEN=TOKEN "
                          f"({token_source(page)}) or call connect(url, token)"), none_given
    assert token_source(page) == f"a token from your hub's token page, {page}"  # the CLI's words (its refusal)
    assert wrong.startswith("the token sent was refused — set JUPYTER_SCHED_TOKEN=TOKEN (a token from your hub's "
                            "token page, http://127.0.0.1:21710/hub/token)"), wrong


def test_the_kernel_environment_comes_before_the_hub(tmp_path: Path) -> None:
    env = {"JUPYTER_SCHED_URL": "http://127.0.0.1:9/lab", "JUPYTER_SCHED_TOKEN": "x",
           "JUPYTER_SCHED_KERNEL_ID": "k-9", "JUPYTER_SCHED_HUB_URL": "http://hub/services/sched/",
           "JUPYTERHUB_API_TOKEN": "h"}
    conn = discover(env=env, runtime_dir=str(tmp_path))
    assert (conn.url, conn.kernel_id, conn.source) == ("http://127.0.0.1:9/lab/", "k-9", "kernel-env")
    assert conn.api_url == "http://127.0.0.1:9/lab/api/sched/"


def test_hub_mode_uses_the_central_service_then_the_users_server(tmp_path: Path) -> None:
    hub = discover(env={"JUPYTER_SCHED_HUB_URL": "http://hub:8081/services/sched",
                        "JUPYTERHUB_API_TOKEN": "h"}, runtime_dir=str(tmp_path))
    assert (hub.url, hub.token, hub.source) == ("http://hub:8081/services/sched/", "h", "hub-service")
    user = discover(env={"JUPYTERHUB_API_TOKEN": "h", "JUPYTERHUB_SERVICE_URL": "http://127.0.0.1:41000",
                         "JUPYTERHUB_SERVICE_PREFIX": "/user/ana/"}, runtime_dir=str(tmp_path))
    assert (user.url, user.source) == ("http://127.0.0.1:41000/user/ana/", "hub-user")


def test_runtime_files_find_the_server_that_answers(tmp_path: Path, config_server: str) -> None:
    runtime = tmp_path / "runtime"
    _runtime_file(runtime, "1", config_server, "bad", tmp_path)   # answers 404: no extension for this token
    _runtime_file(runtime, "2", config_server, "good", tmp_path)
    conn = discover(env={}, runtime_dir=str(runtime), cwd=str(tmp_path))
    assert (conn.url, conn.token, conn.source) == (config_server, "good", "runtime-file")


def test_newuser4_finding_1_of_two_answering_servers_the_one_serving_here_or_started_last_is_used_and_said(
        tmp_path: Path, config_server: str) -> None:
    """New user 4, finding 1: with two Jupyter servers of one account, the CLI took whichever
    runtime file sorted first (the pid as text) and said nothing — a job went to the other
    server. Now: the one whose root holds the current directory, else the one started last, and
    the others are named (the CLI prints the note). Two real HTTP servers answer here."""
    from jupyter_sched.cli.main import several_servers_note

    other = ThreadingHTTPServer(("127.0.0.1", 0), _ConfigOnly)
    thread = threading.Thread(target=other.serve_forever, daemon=True)
    thread.start()
    try:
        second = f"http://127.0.0.1:{other.server_address[1]}/"
        runtime, mine, theirs, elsewhere = (tmp_path / d for d in ("runtime", "mine", "theirs", "elsewhere"))
        for folder in (mine, theirs, elsewhere):
            folder.mkdir()
        _runtime_file(runtime, "10348", config_server, "good", theirs)  # sorts first as text, started last
        _runtime_file(runtime, "9999", second, "good", mine)
        os.utime(runtime / "jpserver-9999.json", (1_000, 1_000))
        here = discover(env={}, runtime_dir=str(runtime), cwd=str(mine / "project"))
        assert (here.url, here.root, here.others) == (second, str(mine), (config_server,))
        latest = discover(env={}, runtime_dir=str(runtime), cwd=str(elsewhere))
        assert (latest.url, latest.others) == (config_server, (second,))
        note = several_servers_note(latest.url, latest.root, latest.others, str(elsewhere))
        assert note == (f"jupyter-sched: 2 Jupyter servers with jupyter_sched run here; using {config_server} "
                        f"(root {theirs}: the one started last) — pass --url to use another: {second}")
        assert "it serves this directory" in several_servers_note(here.url, here.root, here.others, str(mine))
        (runtime / "jpserver-9999.json").unlink()
        assert discover(env={}, runtime_dir=str(runtime), cwd=str(elsewhere)).others == ()  # one: nothing to say
    finally:
        other.shutdown()
        other.server_close()
        thread.join()


def test_no_server_says_so_and_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(NoServerError) as info:
        discover(env={}, runtime_dir=str(tmp_path / "empty"))
    assert "No jupyter_sched server found" in info.value.message
    assert "connect(url, token)" in str(info.value.hint)


def test_the_public_surface_is_pinned() -> None:
    import jupyter_sched.client as client
    import jupyter_sched.magics as magics

    assert sorted(client.__all__) == [  # JobFailed, WaitTimeout: what wait() raises (newuser42 N1, session 42)
        "AsyncSchedClient", "Connection", "JobFailed", "NoServerError", "SchedClient", "ServerUnreachableError",
        "WaitTimeout", "connect", "connect_async", "discover", "error_from_response"]
    assert sorted(magics.__all__) == ["load_ipython_extension", "unload_ipython_extension"]


def test_sync_and_async_clients_offer_the_same_routes() -> None:
    def public(cls: type) -> set[str]:
        return {name for name in vars(cls) if not name.startswith("_")} - {"close", "aclose"}

    assert public(SchedClient) == public(AsyncSchedClient)


def test_both_clients_read_the_queue_heads_total_from_x_total_count() -> None:
    """``queue_head`` (the CLI's "N more pending jobs wait behind these") answers the same from both clients:
    the rows and the ``X-Total-Count`` header, None from a server that does not send it."""
    def handler(request: httpx.Request) -> httpx.Response:
        total = {"X-Total-Count": "7"} if request.url.params.get("limit") == "2" else {}
        return httpx.Response(200, headers=total, json={"queue": [{"id": "j1", "position": 1}]})

    assert _client(handler).queue_head(2) == ([{"id": "j1", "position": 1}], 7)
    assert _client(handler).queue_head(3) == ([{"id": "j1", "position": 1}], None)

    async def both() -> list[tuple[list[dict[str, Any]], int | None]]:
        api = AsyncSchedClient(Connection("http://sched.test/base/", token="t0k"), transport=httpx.MockTransport(handler))
        try:
            return [await api.queue_head(2), await api.queue_head(3)]
        finally:
            await api.aclose()

    assert asyncio.run(both()) == [([{"id": "j1", "position": 1}], 7), ([{"id": "j1", "position": 1}], None)]


def test_the_event_stream_reconnects_by_itself_and_resumes_after_its_last_event_id() -> None:
    """Issue 17: a 503 (a hub user server whose central is away) and a stream that ends are
    retried with backoff; the reconnect sends Last-Event-ID; a server that says it resumed
    (X-Jupyter-Sched-Resume) gets no made-up ``lagged``, one that could not resume does."""
    asked: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        asked.append(request.headers.get("Last-Event-ID"))
        sse = {"Content-Type": "text/event-stream"}
        if len(asked) == 1:
            return httpx.Response(503, json={"error": {"code": "store_unavailable", "message": "reconnecting",
                                                       "field": None, "hint": None}})
        if len(asked) == 2:  # not resumed: the client says it may have missed events
            return httpx.Response(200, headers=sse, content=b'retry: 3000\n\nid: ep-1\nevent: job\ndata: {"id": "j1"}\n\n')
        return httpx.Response(200, headers={**sse, "X-Jupyter-Sched-Resume": "1"},
                              content=b'id: ep-2\nevent: job\ndata: {"id": "j2"}\n\n')

    stream = _client(handler).events()
    got = [next(stream) for _ in range(3)]
    stream.close()
    assert [e["type"] for e in got] == ["lagged", "job", "job"], got
    assert got[0]["data"] == {"reconnected": True, "attempts": 1}
    assert got[1]["data"] == {"id": "j1"} and got[2]["data"] == {"id": "j2"}  # no lagged before j2: resumed
    assert asked[:3] == [None, None, "ep-1"]


class _SlowConfig(_ConfigOnly):
    """A busy server: it answers the discovery probe, but only after 1.5 s (a server on a loaded host;
    real HTTP on loopback, the answer a jupyter_sched server gives)."""

    def do_GET(self) -> None:
        import time

        time.sleep(1.5)
        try:
            super().do_GET()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the probe gave up first: what the test is about


def test_newuser23_n14_a_running_but_slow_server_is_asked_again_with_the_request_timeout(tmp_path: Path) -> None:
    """New user 23, N14: under load the CLI said "no jupyter_sched server found … start JupyterLab" while
    it ran — the discovery probe waited 2 s whatever --timeout said."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowConfig)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        _runtime_file(tmp_path / "rt", "1", url, "good", tmp_path)
        conn = discover(env={}, runtime_dir=str(tmp_path / "rt"), cwd=str(tmp_path), probe_timeout_s=0.3,
                        retry_timeout_s=10)
        assert conn.url == url and conn.token == "good"
        with pytest.raises(NoServerError) as slow:  # no second try: it says the server was slow
            discover(env={}, runtime_dir=str(tmp_path / "rt"), cwd=str(tmp_path), probe_timeout_s=0.3)
        assert f"{url} did not answer within 0.3 s" in slow.value.message, slow.value.message
        assert "start JupyterLab" not in slow.value.hint and "--timeout 60" in slow.value.hint, slow.value.hint
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_newuser23_n14_the_cli_takes_timeout_after_the_command_too() -> None:
    from jupyter_sched.cli.main import build_parser

    assert build_parser("jobs").parse_args(["jobs", "--timeout", "60"]).timeout == 60.0
    assert build_parser("wait").parse_args(["wait", "j-1", "--timeout", "5m"]).wait_timeout  # wait's own stays


class _SlowerConfig(_SlowConfig):
    def do_GET(self) -> None:
        import time

        time.sleep(1.6)  # with _SlowConfig's 1.5 s: past the CLI's 2 s probe
        super().do_GET()


def test_newuser23_n14_the_cli_says_a_slow_server_was_slow_not_start_jupyterlab(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from jupyter_sched.cli.main import main

    server = ThreadingHTTPServer(("127.0.0.1", 0), _SlowerConfig)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    try:
        _runtime_file(tmp_path / "rt", "1", url, "good", tmp_path)
        for name in ("JUPYTER_SCHED_URL", "JUPYTER_SCHED_HUB_URL", "JUPYTER_SCHED_TOKEN", "JPY_SESSION_NAME"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "rt"))
        monkeypatch.chdir(tmp_path)
        out, err = io.StringIO(), io.StringIO()
        code = main(["--timeout", "0.5", "jobs"], out=out, err=err)  # probe 2 s < the server's 3 s; no retry at 0.5 s
        said = err.getvalue()
        assert code != 0 and "did not answer within" in said and "start JupyterLab" not in said, said
        assert "--timeout 60" in said, said
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_s26_the_async_client_pages_jobs_upto_as_the_sync_one() -> None:
    """``jobs_upto`` (hubadmin25 B19's paging of ``jobs --all``) answers the same from both clients."""
    import asyncio

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params.get("cursor") == "c2":
            return httpx.Response(200, json={"jobs": [{"id": "j3"}]})
        return httpx.Response(200, json={"jobs": [{"id": "j1"}, {"id": "j2"}]},
                              headers={"Link": '</api/sched/jobs?cursor=c2>; rel="next"'})

    assert _client(handler).jobs_upto(2) == ([{"id": "j1"}, {"id": "j2"}], True)

    async def both() -> tuple[list[dict[str, Any]], bool]:
        async with AsyncSchedClient(Connection("http://sched.test/base/", token="t0k"),
                                    transport=httpx.MockTransport(handler)) as client:
            return await client.jobs_upto(5)

    assert asyncio.run(both()) == ([{"id": "j1"}, {"id": "j2"}, {"id": "j3"}], False)


def test_s30_red30_r8_both_clients_follow_every_page_of_a_paged_answer() -> None:
    """``pages`` (red30 R8: ``GET usage/report`` answers a page at a time) follows each ``Link: rel=next`` cursor,
    keeping the request's own parameters, on the sync and the async client alike."""
    from jupyter_sched.client._wire import Req

    seen: list[dict[str, str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        params = dict(request.url.params)
        seen.append(params)
        after = {"": "c2", "c2": "c3"}.get(params.get("cursor", ""))
        link = {"Link": f'<{request.url.copy_merge_params({"cursor": after})}>; rel="next"'} if after else {}
        return httpx.Response(200, headers=link, json=[{"page": params.get("cursor", "first")}])

    req = Req("GET", "usage/report", params={"by": "job_id"})
    assert list(_client(handler).pages(req)) == [[{"page": "first"}], [{"page": "c2"}], [{"page": "c3"}]]
    assert seen == [{"by": "job_id"}, {"by": "job_id", "cursor": "c2"}, {"by": "job_id", "cursor": "c3"}]
    seen.clear()

    async def both() -> list[Any]:
        api = AsyncSchedClient(Connection("http://sched.test/base/", token="t0k"), transport=httpx.MockTransport(handler))
        try:
            return [page async for page in api.pages(req)]
        finally:
            await api.aclose()

    assert asyncio.run(both()) == [[{"page": "first"}], [{"page": "c2"}], [{"page": "c3"}]]
    assert seen == [{"by": "job_id"}, {"by": "job_id", "cursor": "c2"}, {"by": "job_id", "cursor": "c3"}]
