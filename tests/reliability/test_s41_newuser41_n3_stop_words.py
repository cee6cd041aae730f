"""newuser41 n3: stopping ``jupyter lab`` (Ctrl-C → y, or SIGTERM) with jobs running and queued said nothing of them.

A newcomer about to press ``y`` could not tell whether it killed their training. The server now says, once, at INFO
as it stops: which jobs keep running (their wrappers outlive it) and are picked up when it starts again, and which
queued ones start only then (:func:`jupyter_sched.extension.stopping.say_what_stop_leaves`).

Real parts: a ``jupyter server`` subprocess with jupyter_sched (:class:`EmbeddedServer`: SQLite, one simulated GPU,
the local executor), real jobs, the server stopped by SIGTERM, started again on the same store (the running job is
re-adopted: what the words promise) with a pty as its stdin, as ``jupyter lab`` run in a terminal, and stopped by
Ctrl-C → y (SIGINT, then ``y`` typed into the pty at jupyter_server's "Shut down this Jupyter server (y/[n])?").
Without a terminal, jupyter_server takes SIGINT as a KeyboardInterrupt and stops no extension at all (nothing is
said, the engine does not resign): not this extension's to change.
"""

from __future__ import annotations

import functools
import os
import pty
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from jupyter_sched.extension.stopping import stop_leaves_text

from .harness import EmbeddedServer, no_strays, wait_until

ID = re.compile(r"\bj-[0-9a-z]+-[0-9a-z]+\b")
WAITS = "import os, sys, time\nwhile not os.path.exists(sys.argv[1]):\n    time.sleep(0.2)\n"
"""A job that runs until its go file appears (the file's path, in its command line, marks it for clean-up)."""


def test_newuser41_n3_stop_leaves_text_names_what_keeps_running_and_what_waits() -> None:
    run: list[dict[str, Any]] = [{"id": "j-1", "name": "run-a"}, {"id": "j-2", "name": None}]
    queued: list[dict[str, Any]] = [{"id": f"j-q{i}", "name": f"q{i}"} for i in range(7)]
    assert stop_leaves_text(run, queued) == (
        "jupyter_sched: 2 jobs keep running (run-a, j-2) and are picked up when jupyter lab starts again; "
        "7 queued jobs (q0, q1, q2, q3, q4 and 2 more) start only then")
    assert stop_leaves_text([], queued[:1]) == \
        "jupyter_sched: 1 queued job (q0) starts only when jupyter lab starts again"
    assert stop_leaves_text(run[:1], []) == \
        "jupyter_sched: 1 job keeps running (run-a) and is picked up when jupyter lab starts again"
    assert stop_leaves_text([], []) == ""  # nothing to say: nothing said


def _said(server: EmbeddedServer) -> list[str]:
    return [line for line in server.log_path.read_text(errors="replace").splitlines()
            if "jupyter_sched: " in line and ("keep running" in line or "keeps running" in line)]


def _state(server: EmbeddedServer, job_id: str) -> str:
    with server.client() as client:
        return str(client.get(f"jobs/{job_id}").json().get("state"))


def test_newuser41_N3_a_stopped_server_says_which_jobs_keep_running_and_which_wait(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    go = tmp_path / "go"
    master: int | None = None
    server = EmbeddedServer.start(tmp_path / "srv", simulated_gpus=1)
    with no_strays(go):
        try:
            ids = {}
            for name in ("run-a", "queued-b"):
                code, out, err = server.cli("submit", "--gpus", "1", "--name", name, "--", sys.executable, "-c",
                                            WAITS, str(go))
                assert code == 0 and ID.search(out + err), (code, out, err)
                ids[name] = ID.search(out + err).group(0)  # type: ignore[union-attr]
            wait_until(lambda: _state(server, ids["run-a"]) == "running", "run-a running")
            assert _state(server, ids["queued-b"]) == "pending"  # one GPU: it waits behind run-a
            assert server.proc is not None
            server.proc.send_signal(signal.SIGTERM)
            server.proc.wait(timeout=60)
            words = ("jupyter_sched: 1 job keeps running (run-a) and is picked up when jupyter lab starts again; "
                     "1 queued job (queued-b) starts only then")
            said = _said(server)
            assert len(said) == 1 and said[0].endswith(words), (said, server.log_tail())  # before: nothing
            alive = [p for p in psutil.process_iter(["cmdline"]) if str(go) in " ".join(p.info["cmdline"] or [])]
            assert alive, "run-a's process did not outlive the server, as the words say it does"
            master, terminal = pty.openpty()  # the next start in a terminal (its stdin), as `jupyter lab` is run
            popen = subprocess.Popen
            monkeypatch.setattr(subprocess, "Popen", functools.partial(popen, stdin=terminal))
            server.restart()  # the next start picks it up, as said
            monkeypatch.setattr(subprocess, "Popen", popen)
            os.close(terminal)
            wait_until(lambda: _state(server, ids["run-a"]) == "running" and "re-adopted" in server.log_tail(20000),
                       "run-a re-adopted")
            assert server.proc is not None
            server.proc.send_signal(signal.SIGINT)  # Ctrl-C: "Shut down this Jupyter server (y/[n])?"
            wait_until(lambda: "Shut down this Jupyter server" in server.log_tail(), "the Ctrl-C prompt")
            os.write(master, b"y\n")
            server.proc.wait(timeout=60)
            assert "Shutdown confirmed" in server.log_tail(20000), server.log_tail()
            said = _said(server)
            assert len(said) == 2 and said[1].endswith(words), (said, server.log_tail())
        finally:
            go.touch()
            server.kill()
            if master is not None:
                os.close(master)
