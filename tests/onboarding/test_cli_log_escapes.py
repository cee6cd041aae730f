"""``jupyter-sched logs``, ``jobs --all`` and ``wait`` as an admin reading a hostile user's job (red team 6).

Red team 5 left it: the CLI printed a job's output raw, so whatever the job wrote — escape
sequences that retitle the terminal, write its clipboard (OSC 52), clear the screen or hide a line
behind a carriage return — ran on the terminal of whoever read the log. Now the text and its
newlines and tabs are printed and the commands are dropped or shown; ``--raw`` keeps the bytes.
A failed job's message quoted its log's last lines raw too (the executor builds it, every client
prints it: ``jobs --all``, ``wait``), and the notebook runner's ``outcome.json`` — a file the job's
owner can write — was taken as the message whole, any length.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from jupyter_sched.executors.outcome import MESSAGE_MAX, describe_exit, describe_termination
from jupyter_sched.textsafe import printable_line, printable_log
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


def test_a_failed_jobs_message_shows_its_logs_last_lines_without_their_escapes(tmp_path: Path) -> None:
    log = tmp_path / "output.log"
    log.write_text(HOSTILE)
    said = describe_exit(3, job_dir=tmp_path, log=log)
    assert said == ("exited with code 3: plain line; earlier lines: red\tdone | rm -rf ~ | all good | "
                    "<U+009B>6n<U+202E>evil^G").replace("\t", " ")  # the last line first: newuser34 N2
    (tmp_path / "outcome.json").write_text(json.dumps({"status": "failed", "reason": "\x1b]0;x\x07cell 1\n" + "y" * 10**6}))
    forged = describe_exit(1, job_dir=tmp_path, log=log)
    assert forged.startswith("cell 1 y") and len(forged) == MESSAGE_MAX and "\x1b" not in forged
    container = describe_termination(1, "\x1b[2Jboom\n[jupyter_sched] failed: \x1b]52;c;eA==\x07cell 2 raised")
    assert container == "cell 2 raised"
    assert printable_line("a\nb\tc") == "a b c"


def test_an_admin_listing_a_hostile_users_failed_job_gets_no_escapes(server: EmbeddedServer) -> None:
    eve = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-eve"}, timeout=30)
    script = f"import sys; sys.stdout.write({HOSTILE!r}); sys.stdout.flush(); sys.exit(3)"
    job = eve.post("jobs", json={"gpus": 0, "command": [sys.executable, "-c", script]}).json()
    deadline = time.monotonic() + 60
    while eve.get(f"jobs/{job['id']}").json()["state"] != "failed":
        assert time.monotonic() < deadline, eve.get(f"jobs/{job['id']}").text
        time.sleep(0.2)
    assert "\x1b" not in eve.get(f"jobs/{job['id']}").json()["message"]  # stored without them: every client is safe
    for argv in (("jobs", "--all"), ("wait", job["id"])):
        read = _cli(server, "tok-carol", *argv).stdout.decode()
        assert "earlier lines: red done | rm -rf ~ | all good" in read, (argv, read)
        assert "\x1b" not in read and "\x07" not in read and "\u202e" not in read, (argv, read)


def test_newuser34_n2_a_failed_jobs_status_leads_with_its_error_line(server: EmbeddedServer) -> None:
    """newuser34 N2 end to end, on this file's server: a script ending ``sys.exit("error: …")``; its REST message (what
    the panel's My work and toast show) and ``jupyter-sched status JOB`` lead with that line, the earlier ones after."""
    eve = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-eve"}, timeout=30)
    error = "error: dataset not found at /data/train/shard-3.parquet — check --data-dir"
    script = f"import sys\nfor i in range(3): print(f'epoch {{i}}: loading shard {{i}}', flush=True)\nsys.exit({error!r})"
    job = eve.post("jobs", json={"gpus": 0, "name": "weird3", "command": [sys.executable, "-c", script]}).json()
    deadline = time.monotonic() + 60
    while (read := eve.get(f"jobs/{job['id']}").json())["state"] != "failed":
        assert time.monotonic() < deadline and read["state"] not in ("succeeded", "cancelled"), read
        time.sleep(0.2)
    want = f"{error}; earlier lines: epoch 0: loading shard 0 | epoch 1: loading shard 1 | epoch 2: loading shard 2"
    assert read["message"] == f"exited with code 1: {want}", read["message"]
    assert error in f"weird3 failed: {read['message']}"[:140]  # the panel's toast (notify.ts TOAST_CHARS) keeps it
    status = _cli(server, "tok-eve", "status", job["id"])
    assert status.returncode == 0 and "failed, exit code 1 · ended " in status.stdout.decode(), status
    assert status.stdout.decode().rstrip("\n").endswith(f" — {want}"), status


def test_newuser40_c0_controls_in_a_log_are_shown_not_sent(server: EmbeddedServer) -> None:
    """newuser40 (ok-with-a-but): a job printing NUL, ^A, ^B … (a binary line) had them pass raw to the reader's
    terminal in ``logs`` and ``logs -f`` while ESC was stripped; every C0 control but newline and tab is shown as
    ``^X`` in both, and ``--raw`` keeps the bytes."""
    eve = httpx.Client(base_url=server.api, headers={"Authorization": "token tok-eve"}, timeout=30)
    written = "head\n" + "".join(chr(c) for c in range(0x20) if c not in (0x0A, 0x0D, 0x1B)) + "|end\n"
    script = f"import sys; sys.stdout.write({written!r}); sys.stdout.flush()"
    job = eve.post("jobs", json={"gpus": 0, "command": [sys.executable, "-c", script]}).json()
    deadline = time.monotonic() + 60
    while eve.get(f"jobs/{job['id']}").json()["state"] != "succeeded":
        assert time.monotonic() < deadline, eve.get(f"jobs/{job['id']}").text
        time.sleep(0.2)
    want = "head\n" + "".join("\t" if c == 0x09 else "^" + chr(c + 0x40)
                              for c in range(0x20) if c not in (0x0A, 0x0D, 0x1B)) + "|end\n"
    for argv in (("logs", job["id"]), ("logs", "-f", job["id"]), ("logs", "--tail", "1", job["id"])):
        read = _cli(server, "tok-eve", *argv)
        assert read.returncode == 0, read.stderr
        out = read.stdout.decode()
        assert not [c for c in out if ord(c) < 0x20 and c not in "\n\t"], (argv, out)
        assert out == (want if argv[1] != "--tail" else want.split("\n", 1)[1]), (argv, out)
    raw = _cli(server, "tok-eve", "logs", "--raw", job["id"])
    assert raw.returncode == 0 and raw.stdout.decode() == written
