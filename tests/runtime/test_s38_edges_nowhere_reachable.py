"""Session 37 left: a service job's readiness look, when none of the listeners at this host's addresses (127.0.0.1,
::1, its interfaces') was the job's, asked the kernel for every listener of the job's port (their inodes and uids:
other accounts' among them) to find the job listening at some other address such as 127.0.0.2 — and its end said
only "never listened on port P". Now the look stops at this host's addresses: the job listens nowhere its clients
reach, no other listener of the port is listed, and its end says so and what to do (listen on 0.0.0.0:P or
127.0.0.1:P), naming nobody else's socket.

Real parts: the local executor runs the service (a Python script), another account (an unused uid) holds the port at
127.0.0.1, the kernel's ``sock_diag`` answers; the port's dump is counted at its one entry point.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_sched import sock_diag
from jupyter_sched.executors.base import ExecutorEvent, Exited
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation, JobKind
from tests import ports
from tests.runtime.test_local_executor import job_for, wait_until

# another account's listener at 127.0.0.1 on the job's port
OTHER_CODE = """
import os, socket, sys, time
port, uid = int(sys.argv[1]), int(sys.argv[2])
os.setgid(uid)
os.setuid(uid)
s = socket.socket()
s.bind(("127.0.0.1", port))
s.listen()
print("ready", flush=True)
time.sleep(600)
"""

pytestmark = pytest.mark.skipif(not sock_diag.available() or os.geteuid() != 0,
                                reason="needs the kernel's sock_diag and root (the other listener is another account's)")


def _ended(ex: LocalExecutor, seen: list[ExecutorEvent]) -> Exited:
    def end() -> Exited | None:
        seen.extend(ex.poll())
        return next((e for e in seen if isinstance(e, Exited)), None)

    ended = wait_until(end, "the service's end")
    assert isinstance(ended, Exited)
    return ended


def test_s38_edges_a_service_listening_only_where_no_client_reaches_it_is_told_so_and_nobody_is_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: the port's listeners were dumped (another account's among them) and the job's socket at
    127.0.0.2 read as serving — 'not answering on port P yet' for as long as it ran, the port held. Now: stopped at
    the end of its start-up window, its words say where clients reach it and what to do, and name no other socket."""
    port = ports.free_port()
    uid = 3_960_000 + os.getpid() % 30_000  # no account has it
    other = subprocess.Popen([sys.executable, "-c", OTHER_CODE, str(port), str(uid)], stdout=subprocess.PIPE)
    dumps: list[int] = []
    real = sock_diag.listening_sockets

    def counted(port: int) -> list[sock_diag.Listening] | None:
        dumps.append(port)
        return real(port)

    monkeypatch.setattr(sock_diag, "listening_sockets", counted)
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0)
    try:
        assert other.stdout is not None and other.stdout.readline() == b"ready\n"
        body = (f"server = __import__('socket').create_server(('127.0.0.2', {port}))\n"
                "open('listening', 'w').close()\ntime.sleep(600)\n")
        job = job_for(tmp_path, body, job_id="elsewhere", kind=JobKind.INFERENCE, port=port)
        ex.start(job, Allocation("vm", ()))
        seen: list[ExecutorEvent] = []
        ended = _ended(ex, seen)
    finally:
        ex.stop("elsewhere", grace_s=1)
        other.kill()
        other.wait(30)
    assert (tmp_path / "listening").exists()  # it did listen — at 127.0.0.2 only
    assert ended.message.startswith(
        f"never listened on port {port} within 1 s of its start where this host's clients reach it (127.0.0.1, ::1 "
        f"or this host's own addresses); a process that is not the job's listens there — make it listen on "
        f"0.0.0.0:{port} (every address) or 127.0.0.1:{port}"), ended.message
    assert dumps == [], dumps  # the port's listeners were never listed
    for leak in (str(uid), "127.0.0.2", str(other.pid)):
        assert leak not in ended.message, ended.message


def test_s38_edges_a_service_that_never_listens_is_told_where_to_listen(tmp_path: Path) -> None:
    """Failed before: 'never listened on port P within 1 s of its start' and no word of where or what to do."""
    port = ports.free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0)
    job = job_for(tmp_path, "time.sleep(600)\n", job_id="squat", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    try:
        ended = _ended(ex, seen)
    finally:
        ex.stop("squat", grace_s=1)
    assert ended.message.startswith(
        f"never listened on port {port} within 1 s of its start where this host's clients reach it (127.0.0.1, ::1 "
        f"or this host's own addresses) — make it listen on 0.0.0.0:{port} (every address) or 127.0.0.1:{port}; so "
        "it stopped holding the port others wait for"), ended.message
