"""red40 R2, R2b, R3: more requests that name nobody, each a log line or a traceback per request.

- R2 (MEDIUM-LOW): jupyterhub's oauth callback wrote ``oauth state argument '…' != cookie …`` quoting the caller's own
  state (30,000 characters: ~4 KB a line, 28 MB of log a minute), and jupyter_server's ``wrote error: 'Forbidden'``
  a line per refused ``api/status``.
- R2b (LOW-MEDIUM): a made-up job token naming another job each request: one "job token that does not verify" line each
  (the line was said once per claimed job, which the forger chooses).
- R3 (MEDIUM): ``favicon.ico``/``robots.txt`` under the service: jupyter_server's route built its static-file handler
  without ``path``: an 18-line "Uncaught exception" per request and the connection closed unanswered (the proxy said
  503); redirects of nobody to the login (``files/x``, ``logout``) an access line each.
Now favicon/robots are JSON 404s, a handler that cannot be built is answered 500 JSON with one line a minute, and every
such line is written once a minute with its count (:class:`jupyter_sched.extension.request_log.Repeats`).

Real parts: ``jupyter-sched serve`` with the hub double, raw sockets, its log file.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub
from tests.hub.test_verify39_v2_v4_lines_of_nobody import _send

ROUNDS = 15
STATE = "y" * 30_000


def test_red40_r2_r3_favicon_oauth_state_and_redirects_of_nobody_write_no_traceback_and_a_line_a_minute() -> None:
    with shared_dir("jsched-r40-") as shared, _hub() as api:
        (shared / "svc").mkdir()
        service = Service(shared / "svc", hub_api=api, hub_token=TOKEN)
        host = f"Host: 127.0.0.1:{service.port}\r\nConnection: close\r\n"
        try:
            icons, robots = [], []
            for _ in range(ROUNDS):
                icons.append(_send(service.port, f"GET /services/s/favicon.ico HTTP/1.1\r\n{host}\r\n"))
                robots.append(_send(service.port, f"GET /services/s/robots.txt HTTP/1.1\r\n{host}\r\n"))
                _send(service.port, f"GET /services/s/oauth_callback?code=x&state={STATE} HTTP/1.1\r\n{host}\r\n")
                _send(service.port, f"GET /services/s/api/status HTTP/1.1\r\n{host}\r\n")
                _send(service.port, f"GET /services/s/logout HTTP/1.1\r\n{host}\r\n")
                forged = f"jsjob1.j-{secrets.token_hex(6)}.1.AAAA"  # R2b: a made-up job token, another each request
                _send(service.port, f"GET /services/s/api/sched/me HTTP/1.1\r\n{host}Authorization: token {forged}\r\n\r\n")
        finally:
            service.stop()
        text = Path(service.log).read_text(errors="replace")
    log = text.splitlines()
    for answer in (icons[0], robots[-1]):
        head, _, body = answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 404"), head  # was no answer at all (the proxy's 503)
        assert json.loads(body)["error"]["code"] == "not_found", body
    assert "favicon.ico" not in "".join(line for line in log if "Uncaught" in line)  # was 18 lines per request
    counts = {piece: sum(piece in line for line in log) for piece in (
        "oauth state argument ", "wrote error: ", "404 GET /services/s/favicon.ico (@",
        # jupyterhub's logout of a service with no oauth client id (the hub double sets none): 25 lines a request
        "Uncaught exception GET /services/s/logout", "500 GET /services/s/logout (@", "Traceback",
        "refused: a job token that does not verify")}
    assert {piece: count for piece, count in counts.items() if count != 1} == {}  # were 15 each
    assert max(len(line) for line in log) <= 4_200  # the 30,000-character state is never written whole
