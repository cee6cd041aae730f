"""The CLI's HTTP over a plain socket, and where it finds the runtime dir, without the modules
that made each call slow to start (issue 20: ``status``, ``queue`` and ``cancel`` ≤ 0.5 s).

:class:`jupyter_sched.client._http.StdlibHttp` speaks HTTP/1.1 itself to an ``http://`` server
(``http.client`` brought ``email`` and ``ssl`` to every call). Here it talks to a real socket
server that answers with scripted bytes — every way an HTTP/1.1 answer can end (length, chunks,
close), interim answers, a kept-alive connection the server closed, something that is not HTTP,
no answer at all — and the discovery's runtime dir is compared with jupyter_core's own.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_sched.client._http import HttpUnreachable, StdlibHttp
from jupyter_sched.client.discovery import jupyter_runtime_dir
from jupyter_sched.client.sync import why_unreachable

Answer = Callable[[socket.socket, bytes], bool]
"""Writes the answer to one request (its raw bytes given); returns False to close the connection."""


class ScriptedServer:
    """A loopback TCP server: each request (head, and a body by Content-Length) is recorded and
    answered by the next of ``answers``; ``connections`` counts the connections accepted."""

    def __init__(self, answers: list[Answer]) -> None:
        self.answers = list(answers)
        self.requests: list[bytes] = []
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/base/api/sched/"
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                buffer = b""
                while self.answers:
                    while b"\r\n\r\n" not in buffer:
                        more = conn.recv(65536)
                        if not more:
                            break
                        buffer += more
                    if b"\r\n\r\n" not in buffer:
                        break
                    head, _, buffer = buffer.partition(b"\r\n\r\n")
                    length = 0
                    for line in head.split(b"\r\n")[1:]:
                        name, _, value = line.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    while len(buffer) < length:
                        buffer += conn.recv(65536)
                    request, buffer = head + b"\r\n\r\n" + buffer[:length], buffer[length:]
                    self.requests.append(request)
                    if not self.answers.pop(0)(conn, request):
                        break

    def close(self) -> None:
        self.sock.close()


def send(raw: bytes, *, keep: bool = True) -> Answer:
    def answer(conn: socket.socket, request: bytes) -> bool:
        conn.sendall(raw)
        return keep
    return answer


def ok(body: bytes, *extra: str) -> bytes:
    headers = "".join(f"{line}\r\n" for line in extra)
    return (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n{headers}\r\n"
            ).encode() + body


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    servers: list[ScriptedServer] = []

    def start(*answers: Answer) -> ScriptedServer:
        servers.append(ScriptedServer(list(answers)))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def test_answers_by_length_chunks_and_close_are_read_whole_on_one_kept_alive_connection(
        scripted: Callable[..., ScriptedServer]) -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
               b"4;ext=1\r\n{\"a\"\r\n3\r\n: 1\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n")
    server = scripted(send(ok(b'{"n": 1}', 'Link: <queue?limit=2&cursor=c1>; rel="next"', "Link: <x>; rel=prev")),
                      send(chunked),
                      send(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"),
                      send(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end", keep=False))
    http = StdlibHttp(server.url, {"Authorization": "token t", "Accept": "application/json"}, 5)
    first = http.request("GET", "queue", params={"limit": "2"})
    assert (first.status, first.content_type, first.body) == (200, "application/json", b'{"n": 1}')
    assert first.link == '<queue?limit=2&cursor=c1>; rel="next", <x>; rel=prev'  # repeats joined, as http.client
    assert http.request("POST", "jobs", body={"gpus": 1}).body == b'{"a": 1}'
    assert http.request("DELETE", "jobs/j-1").status == 204
    last = http.request("GET", "jobs/j-1/logs")
    assert (last.status, last.text) == (200, "until the end")
    http.close()
    assert server.connections == 1  # one kept-alive connection carried all four
    get, post, delete, logs = server.requests
    assert get.startswith(b"GET /base/api/sched/queue?limit=2 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port)
    assert b"\r\nAuthorization: token t\r\n" in get and b"Content-Length" not in get
    assert post.startswith(b"POST /base/api/sched/jobs HTTP/1.1\r\n")
    assert b"\r\nContent-Type: application/json\r\nContent-Length: 11\r\n" in post and post.endswith(b'{"gpus": 1}')
    assert delete.startswith(b"DELETE /base/api/sched/jobs/j-1 HTTP/1.1\r\n") and logs.startswith(b"GET ")


def test_a_kept_alive_connection_the_server_closed_is_retried_once_for_a_get_never_for_a_post(
        scripted: Callable[..., ScriptedServer]) -> None:
    server = scripted(send(ok(b"1"), keep=False), send(ok(b"2"), keep=False), send(ok(b"3")))
    http = StdlibHttp(server.url, {}, 5)
    assert http.request("GET", "config").body == b"1"
    assert http.request("GET", "config").body == b"2"  # the closed connection found out, a new one opened
    with pytest.raises(HttpUnreachable) as err:
        http.request("POST", "jobs", body={})  # not sent twice: the server may have acted on it
    assert isinstance(err.value.cause, ConnectionResetError)
    assert why_unreachable(err.value) == "the connection was closed before an answer"
    assert http.request("POST", "jobs", body={}).body == b"3"
    assert server.connections == 3


@pytest.mark.parametrize("raw, words", [
    (b"SSH-2.0-OpenSSH_9.6\r\n", "what answers there does not speak HTTP"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", "what answers there does not speak HTTP"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "what answers there does not speak HTTP"),
    (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "what answers there does not speak HTTP"),
], ids=["not HTTP", "body cut short", "bad chunk size", "bad header line"])
def test_an_answer_that_is_not_http_is_unreachable_in_words(scripted: Callable[..., ScriptedServer], raw: bytes,
                                                             words: str) -> None:
    server = scripted(send(raw, keep=False), send(ok(b"fine")))
    http = StdlibHttp(server.url, {}, 5)
    with pytest.raises(HttpUnreachable) as err:
        http.request("GET", "config")
    assert why_unreachable(err.value) == words
    assert http.request("GET", "config").body == b"fine"  # the broken connection is not reused


def test_no_answer_within_the_timeout_and_nothing_listening_are_said_as_such(
        scripted: Callable[..., ScriptedServer]) -> None:
    server = scripted(lambda conn, request: conn.recv(1) == b"never")  # reads on, never answers
    with pytest.raises(HttpUnreachable) as err:
        StdlibHttp(server.url, {}, 0.3).request("GET", "config")
    assert why_unreachable(err.value) == "no answer within the request timeout"
    free = socket.create_server(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    with pytest.raises(HttpUnreachable) as err:
        StdlibHttp(f"http://127.0.0.1:{port}/", {}, 5).request("GET", "config")
    assert why_unreachable(err.value) == "nothing is listening there (connection refused)"


def test_a_space_or_line_break_in_the_path_or_a_header_is_refused_before_anything_is_sent(
        scripted: Callable[..., ScriptedServer]) -> None:
    server = scripted(send(ok(b"1")))
    for path, headers in (("jobs/j 1", {}), ("jobs/j\r\nX: 1", {}), ("config", {"Authorization": "token a\r\nX: 1"})):
        with pytest.raises(ValueError, match="space or control character"):
            StdlibHttp(server.url, headers, 5).request("GET", path)
    assert server.requests == [] and server.connections == 0


@pytest.mark.parametrize("env", [
    {},
    {"XDG_DATA_HOME": "/srv/xdg"},
    {"JUPYTER_DATA_DIR": "/srv/data"},
    {"JUPYTER_RUNTIME_DIR": "/srv/runtime"},
    {"JUPYTER_PLATFORM_DIRS": "0", "XDG_DATA_HOME": "/srv/xdg"},
    {"JUPYTER_PLATFORM_DIRS": "1"},
    {"JUPYTER_PLATFORM_DIRS": "1", "JUPYTER_DATA_DIR": "/srv/data"},
    {"JUPYTER_PLATFORM_DIRS": "off", "HOME": "/srv/home"},
], ids=["default", "XDG_DATA_HOME", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "platform dirs 0", "platform dirs 1",
        "platform dirs with a data dir", "platform dirs off, another home"])
def test_the_runtime_dir_is_the_one_jupyter_core_names(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """The CLI reads the runtime dir itself (jupyter_core and platformdirs were ~40 ms of each
    call's CPU); wherever it does, the answer is jupyter_core's."""
    from jupyter_core.paths import jupyter_runtime_dir as jupyter_cores

    for name in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "XDG_DATA_HOME", "JUPYTER_PLATFORM_DIRS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert jupyter_runtime_dir() == jupyter_cores()


def test_the_server_found_through_its_runtime_file_is_asked_for_config_once_on_one_connection(
        scripted: Callable[..., ScriptedServer], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery asks each runtime-file server for ``config``; the client keeps that connection and
    that answer (``status`` connected twice and asked for ``config`` twice)."""
    from jupyter_sched.client import connect

    server = scripted(send(ok(b'{"version": "9.9"}')), send(ok(b'{"user": "ann"}')),
                      send(ok(b'{"version": "9.9"}')), send(ok(b'{"user": "ann"}')))
    (tmp_path / f"jpserver-{os.getpid()}.json").write_text(json.dumps(
        {"pid": os.getpid(), "url": f"http://127.0.0.1:{server.port}/base/", "token": "tok", "root_dir": str(tmp_path)}))
    for name in ("JUPYTER_SCHED_URL", "JUPYTER_SCHED_TOKEN", "JUPYTERHUB_API_TOKEN", "JUPYTER_SCHED_HUB_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path))
    with connect() as client:
        assert client.config() == {"version": "9.9"} and client.me() == {"user": "ann"}
        assert client.connection.token == "tok"
    assert server.connections == 1
    assert [r.split(b" HTTP/1.1")[0] for r in server.requests] == [b"GET /base/api/sched/config",
                                                                   b"GET /base/api/sched/me"]
    with connect(token="another") as client:  # a token of one's own: the probe spoke with the file's, so not kept
        assert client.me() == {"user": "ann"}
    assert server.connections == 3 and b"Authorization: token another" in server.requests[-1]
