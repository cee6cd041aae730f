"""newuser30 N3 (low): a stale ``JUPYTER_SCHED_URL`` / ``JUPYTER_SCHED_TOKEN`` (an older server's) was refused
without naming the variable as the source, while this account's running server — which discovery finds by
itself — was not mentioned; after a ``kill -9`` (its runtime file left behind) the CLI said only "no running
Jupyter server found". Now: the address's source and the running server to use (``unset JUPYTER_SCHED_URL``),
``unset JUPYTER_SCHED_TOKEN`` when the found server's own token is in its runtime file, and which server stopped.

Real parts: the CLI's main, real runtime files in a runtime dir (a live pid: this test's own process — the CLI
reads files here and connects to nothing but the stale address, where nothing listens); the refused-token words
are the function the CLI calls on the server's 403 (the flow itself: tests/onboarding/test_newuser11.py)."""

from __future__ import annotations

import argparse
import io
import json
import os
import socket
import subprocess
from pathlib import Path

import pytest

from jupyter_sched.cli.main import EXIT_NO_SERVER, main, token_refused_line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _runtime_file(folder: Path, pid: int, port: int, token: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"jpserver-{pid}.json").write_text(json.dumps(
        {"pid": pid, "port": port, "url": f"http://localhost:{port}/", "base_url": "/", "token": token,
         "root_dir": str(folder)}), encoding="utf-8")


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("JUPYTER_SCHED_URL", "JUPYTER_SCHED_TOKEN", "JUPYTER_SCHED_HUB_URL", "JUPYTERHUB_API_TOKEN",
                 "JUPYTER_SCHED_KERNEL_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    return tmp_path / "runtime"


def test_newuser30_n3_a_stale_url_variable_is_named_with_the_running_server_to_use(
        runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _runtime_file(runtime, os.getpid(), 18900, "new-token")  # the restarted lab, on another port
    stale = _free_port()
    monkeypatch.setenv("JUPYTER_SCHED_URL", f"http://127.0.0.1:{stale}/")
    err = io.StringIO()
    assert main(["--timeout", "5", "status"], out=io.StringIO(), err=err) == EXIT_NO_SERVER
    said = err.getvalue()
    assert f"http://127.0.0.1:{stale}/" in said and "(the address in JUPYTER_SCHED_URL)" in said, said
    assert ("a Jupyter server of yours runs at http://localhost:18900/: unset JUPYTER_SCHED_URL (and "
            "JUPYTER_SCHED_TOKEN) and the CLI finds it") in said, said
    # none of this account runs: start it again, or fix the variable
    (runtime / f"jpserver-{os.getpid()}.json").unlink()
    err = io.StringIO()
    assert main(["--timeout", "5", "status"], out=io.StringIO(), err=err) == EXIT_NO_SERVER
    assert "Start it again, or set JUPYTER_SCHED_URL to the address it prints" in err.getvalue(), err.getvalue()


def test_newuser30_n3_a_stale_token_variable_is_told_to_go_when_the_servers_own_token_is_found(
        runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _runtime_file(runtime, os.getpid(), 18900, "new-token")
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "killed-servers-token")
    args = argparse.Namespace(command="status", token=None, url=None, token_file=None)
    line = token_refused_line(args, "http://localhost:18900/", source="runtime-file")
    assert line == ("jupyter-sched status: the server at http://localhost:18900/ refused the token in "
                    "JUPYTER_SCHED_TOKEN (an older server's?) — unset JUPYTER_SCHED_TOKEN: this server's own token "
                    "is found without it, in its runtime file [forbidden]"), line
    # the variable holds this server's own token, yet refused: the old words (how to get the right one)
    monkeypatch.setenv("JUPYTER_SCHED_TOKEN", "new-token")
    assert "set JUPYTER_SCHED_TOKEN=TOKEN" in token_refused_line(args, "http://localhost:18900/",
                                                                 source="runtime-file")


def test_newuser30_n3_a_killed_servers_left_file_names_the_server_that_stopped(runtime: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    _runtime_file(runtime, gone.pid, 18977, "t")
    err = io.StringIO()
    assert main(["--timeout", "5", "status"], out=io.StringIO(), err=err) == EXIT_NO_SERVER
    said = err.getvalue()
    assert f"the Jupyter server at http://localhost:18977/, pid {gone.pid}, is no longer running: start it again" \
        in said, said
