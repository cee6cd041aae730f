"""red27 R3 (low): a raw U+2028 / U+2029 reached the service log through the 404 "did you mean" hint.

Found: ``POST definitions/<x U+2028 [I …] jupyter_sched audit: preempt by scheduler …>/run`` answered 404 with
the hint ``did you mean definitions/<x raw U+2028 …>/run?``, and that log line carried the raw separator: a
Unicode-aware reader (``str.splitlines()``, JSON/JS viewers, log shippers) showed a forged audit line of its
own. Now every log line the service writes escapes Unicode's line and paragraph separators as it does the
C0/C1 controls (``\\x0b`` ``\\x0c`` ``\\x1c``-``\\x1e`` ``\\x85``): the one log filter
(:func:`~jupyter_sched.extension.request_log.escape_log_controls`, through :func:`~jupyter_sched.textsafe.
escaped_controls`), and the hint quotes the guess escaped as the message quotes the path.

Real parts: an embedded ``jupyter lab`` server with the extension, its log file.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

import pytest

from jupyter_sched.textsafe import escaped_controls, printable_line
from tests.onboarding.test_cli_firsthour import USERS, api, module_server
from tests.onboarding.test_red19_r1 import service_log
from tests.reliability.harness import EmbeddedServer

BREAKS = {"LS": "\u2028", "PS": "\u2029", "NEL": "\x85", "VT": "\x0b", "FF": "\x0c", "FS": "\x1c", "GS": "\x1d",
          "RS": "\x1e"}
FORGED = "[I 2026-12-05 22:10:12.337 HubSchedApp] jupyter_sched audit: preempt by scheduler (job j-1, user eve): FORGED"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "red27r3", USERS)


def test_red27_r3_every_unicode_line_break_is_escaped_in_a_log_line() -> None:
    for name, char in BREAKS.items():
        said = escaped_controls(f"x{char}{FORGED}")
        assert len(said.splitlines()) == 1 and char not in said, (name, said)
        assert char not in printable_line(f"x{char}y"), name
    with service_log("red27-r3-test") as (log, out):
        log.warning("no route %s", "x\u2028" + FORGED)
    assert out.getvalue().splitlines() == ["no route x\\u2028" + FORGED], out.getvalue()


def test_red27_r3_the_404_hint_writes_no_raw_line_separator_to_the_log_or_the_answer(server: EmbeddedServer) -> None:
    before = server.log_path.stat().st_size
    for name, char in (("LS", "\u2028"), ("PS", "\u2029")):
        carrier = urllib.parse.quote(f"x{char}{FORGED}", safe="")
        answer = api(server, "tok-ann").post(f"definitions/{carrier}/run", json={})
        assert answer.status_code == 404, (name, answer.text[:300])
        hint = answer.json()["error"]["hint"]
        assert "did you mean definitions/" in hint and char not in hint, (name, hint)  # before: raw in the hint
        assert char.encode() not in answer.content, name
    with open(server.log_path, "rb") as log:
        log.seek(before)
        written = log.read()
    assert b"did you mean definitions/" in written, written[-2000:]
    # before: 2 log lines with raw E2 80 A8 / E2 80 A9
    assert "\u2028".encode() not in written and "\u2029".encode() not in written, written[-2000:]
    assert not any(line.lstrip().startswith("[I 2026-12-05 22:10:12.337") for line in written.decode().splitlines())
