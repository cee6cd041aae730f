"""verify39 V2, V3, V4: more requests that name nobody, each a log line (or a traceback) per request.

- V2 (MEDIUM-HIGH): a method tornado does not know (PROPFIND, FOO) on any API path answered an empty 405 and wrote an
  18-line ``Uncaught exception in write_error`` traceback per request (~60 MB of log a minute, no token, through the
  hub's proxy too): tornado refuses it before setting ``path_kwargs``, which ``_template`` read unguarded.
- V3 (LOW-MEDIUM): a foreign ``Origin`` header: jupyter_server's "Blocking Cross Origin API request" line each.
- V4 (LOW-MEDIUM): a control character in the path: our own ``-> 400`` line each (~18 MB a minute).
Now V2 is a JSON 405 naming the method, and every such line is written once a minute
(:class:`jupyter_sched.extension.request_log.Repeats`), as red39 R7's kinds.

Real parts: ``jupyter-sched serve`` with the hub double, raw sockets, its log file.
"""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub

ROUNDS = 20


def _send(port: int, head: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20) as sock:
        sock.sendall(head.encode())
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
        return answer


def test_verify39_v2_v4_requests_that_name_nobody_write_no_traceback_and_a_line_a_minute() -> None:
    with shared_dir("jsched-v39-") as shared, _hub() as api:
        folder = shared / "svc"
        folder.mkdir()
        service = Service(folder, hub_api=api, hub_token=TOKEN)
        host = f"Host: 127.0.0.1:{service.port}\r\nConnection: close\r\n"
        try:
            answers = []
            for _ in range(ROUNDS):
                answers.append(_send(service.port, f"PROPFIND /services/s/api/sched/me HTTP/1.1\r\n{host}\r\n"))
                _send(service.port, f"FOO /services/s/api/sched/jobs/j-x HTTP/1.1\r\n{host}\r\n")
                _send(service.port, f"GET /services/s/api/sched/me HTTP/1.1\r\n{host}Origin: http://evil.example\r\n"
                                    "Authorization: token abc\r\n\r\n")
                _send(service.port, f"GET /services/s/api/sched/jobs/j%00x HTTP/1.1\r\n{host}\r\n")
        finally:
            service.stop()
        log = Path(service.log).read_text(errors="replace").splitlines()
    head, _, body = answers[0].partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 405"), head
    error = json.loads(body)["error"]  # was an empty body
    assert "PROPFIND" in error["message"], error
    assert not [line for line in log if "Traceback" in line or "Uncaught exception" in line], \
        [line for line in log if "Traceback" in line][:3]  # was 18 lines per request
    counts = {piece: sum(piece in line for line in log) for piece in (
        "Blocking Cross Origin API request for /services/s/api/sched/me",
        "-> 400 (nobody named): ",
        "405 PROPFIND /services/s/api/sched/me (@")}
    assert all(count == 1 for count in counts.values()), counts  # were 20 each
