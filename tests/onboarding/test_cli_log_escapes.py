"""``jupyter-sched logs`` as an admin reading a hostile user's log (red team 6).

Red team 5 left it: the CLI printed a job's output raw, so whatever the job wrote — escape
sequences that retitle the terminal, write its clipboard (OSC 52), clear the screen or hide a line
behind a carriage return — ran on the terminal of whoever read the log. Now the text and its
newlines and tabs are printed and the commands are dropped or shown; ``--raw`` keeps the bytes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupyter_sched.cli.terminal import printable_log
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-eve": "eve", "tok-carol": "carol", OWNER_TOKEN: "carol"}

# what eve's job prints: a title, the clipboard, a screen clear, a colour, a hidden line, a C1 CSI,
# a right-to-left override, a bell, and plain text with a tab
HOSTILE = ("\x1b]0;carol@hub: ~\x07"
           "\x1b]52;c;cm0gLXJmIH4K\x07"
           "\x1b[2J\x1b[H"
           "\x1b[31mred\x1b[0m\tdone\n"
           "rm -rf ~\rall good\n"
           "\u009b6n\u202eevil\a\n"
           "plain line\r\n")


@pytest.mark.parametrize("raw, want", [
    pytest.param("hello\tworld\n", "hello\tworld\n", id="plain text, tabs and newlines are kept"),
    pytest.param("\x1b[1;31mbold red\x1b[0m", "bold red", id="colours are left out, their text kept"),
    pytest.param("\x1b]0;owned\x07x", "x", id="a window title is left out"),
    pytest.param("\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\", "docs", id="a hyperlink keeps its text only"),
    pytest.param("\x1b]52;c;Y3VybCBldmls", "", id="an unterminated clipboard write is left out"),
    pytest.param("secret\rcover\n", "secret\ncover\n", id="a lone carriage return cannot hide a line"),
    pytest.param("a\r\nb", "a\nb", id="CRLF is a newline"),
    pytest.param("\x1b", "^[", id="a stray ESC is shown"),
    pytest.param("\x07\x08\x7f", "^G^H^?", id="bell, backspace and DEL are shown"),
    pytest.param("\u009b2J", "<U+009B>2J", id="an 8-bit CSI is shown"),
    pytest.param("\u202ecod.exe", "<U+202E>cod.exe", id="a bidirectional override is shown"),
    pytest.param("日本語 ✓ café", "日本語 ✓ café", id="text in any script is kept"),
])
def test_a_logs_control_sequences_are_never_obeyed(raw: str, want: str) -> None:
    assert printable_log(raw) == want


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("logesc"), users=USERS, admin_users=["carol"],
                               simulated_gpus=1)
    try:
        yield srv
    finally:
        srv.kill()


def _cli(server: EmbeddedServer, token: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": token, "PYTHONPATH": str(ROOT)})
    return subprocess.run([CLI, *argv], env=env, capture_output=True, timeout=120)


def test_an_admin_reading_a_hostile_users_log_gets_its_text_not_its_escapes(server: EmbeddedServer) -> None:
    eve = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-eve"}, timeout=30)
    script = f"import sys; sys.stdout.write({HOSTILE!r}); sys.stdout.flush()"
    job = eve.post("jobs", json={"gpus": 0, "command": [sys.executable, "-c", script]}).json()
    deadline = time.monotonic() + 60
    while eve.get(f"jobs/{job['id']}").json()["state"] != "succeeded":
        assert time.monotonic() < deadline, eve.get(f"jobs/{job['id']}").text
        time.sleep(0.2)

    for argv in (("logs", job["id"]), ("logs", "-f", job["id"])):
        read = _cli(server, "tok-carol", *argv)
        assert read.returncode == 0, read.stderr
        out = read.stdout.decode()
        assert "\x1b" not in out and "\x07" not in out and "\u009b" not in out and "\u202e" not in out
        assert "\r" not in out  # the hidden line is on a line of its own
        assert out == "red\tdone\nrm -rf ~\nall good\n<U+009B>6n<U+202E>evil^G\nplain line\n", argv

    raw = _cli(server, "tok-carol", "logs", "--raw", job["id"])
    assert raw.returncode == 0 and raw.stdout.decode() == HOSTILE
