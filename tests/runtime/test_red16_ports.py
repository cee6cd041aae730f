"""Red team 16, R4: a service's exit was not restarted when its log tail read "EADDRINUSE" — text
any client of the service writes (``GET /EADDRINUSE`` lands in an http.server's log). "Port
already in use" is decided by a real bind of the port once nothing of the job is left; a log
that says it with the port free is restarted as before."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from jupyter_sched import sock_diag
from jupyter_sched.executors.base import ExecutorEvent, Exited, Started
from jupyter_sched.executors.local import LocalExecutor, _port_bound
from jupyter_sched.model import Allocation, JobKind
from tests.runtime.test_local_executor import job_for, wait_until

SAYS_IN_USE = """
print('"GET /EADDRINUSE HTTP/1.1" 404 -', flush=True)
print("OSError: [Errno 98] Address already in use", flush=True)
sys.exit(1)
"""


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, outside the ephemeral range (:mod:`tests.ports`)."""
    from tests import ports

    return ports.free_port()


def test_red16_r4_a_log_saying_eaddrinuse_with_the_port_free_is_restarted(tmp_path: Path) -> None:
    port = _free_port()
    assert not _port_bound(port)
    ex = LocalExecutor(tmp_path / "jobs", max_service_restarts=1)
    job = job_for(tmp_path, SAYS_IN_USE, job_id="a-serve", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ("GPU-0",)))
    seen: list[ExecutorEvent] = []

    def restarted() -> ExecutorEvent | None:
        seen.extend(ex.poll())
        return next((e for e in seen if isinstance(e, Started) and e.restarts >= 1), None)

    wait_until(restarted, "a restart")
    ended = wait_until(lambda: (seen.extend(ex.poll()), next((e for e in seen if isinstance(e, Exited)), None))[1],
                       "the restarted service's end")
    assert isinstance(ended, Exited) and "choose another port" not in ended.message, ended  # its own log, quoted


def test_red16_r4_the_probe_sees_a_listener_on_any_address_and_a_signal_exit_is_no_port_clash(tmp_path: Path) -> None:
    held = socket.create_server(("127.0.0.1", 0))
    port = int(held.getsockname()[1])
    try:
        assert _port_bound(port)
        ex = LocalExecutor(tmp_path / "jobs", max_service_restarts=1)
        body = SAYS_IN_USE.replace("sys.exit(1)", "os.kill(os.getpid(), signal.SIGKILL)")
        job = job_for(tmp_path, body, job_id="b-serve", kind=JobKind.INFERENCE, port=port)
        ex.start(replace(job, spec=replace(job.spec, name="b-serve")), Allocation("vm", ("GPU-0",)))
        seen: list[ExecutorEvent] = []

        def restarted() -> ExecutorEvent | None:
            seen.extend(ex.poll())
            return next((e for e in seen if isinstance(e, Started) and e.restarts >= 1), None)

        wait_until(restarted, "a restart after a signal exit")
    finally:
        held.close()
    assert not _port_bound(port)


def test_red16_r8_a_service_that_never_listens_on_its_port_is_stopped_and_says_so(tmp_path: Path) -> None:
    """R8: ``sleep`` declared as an inference job on port 6006 held that port on its node forever.
    A service that has not listened within ``listen_s`` of its start is stopped, not restarted, and
    its end says why — its port no longer blocks others."""
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=1.0)
    job = job_for(tmp_path, "time.sleep(600)\n", job_id="squat", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    ended = wait_until(lambda: (seen.extend(ex.poll()), next((e for e in seen if isinstance(e, Exited)), None))[1],
                       "the squatter's end")
    assert isinstance(ended, Exited) and ended.message.startswith(f"never listened on port {port} within 1 s"), ended
    assert not any(isinstance(e, Started) and e.restarts for e in seen), seen


def test_red16_r8_a_service_listening_on_another_address_is_not_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only 127.0.0.1 is probed for "ready"; where the kernel cannot be asked (no sock_diag: the namespace's table
    is read), a service bound to another address of the host still listens on its port (its own socket, read from
    /proc), so the start-up window keeps it. Where the kernel can be asked, only this host's reachable addresses are
    looked at, and such a service is told it listens nowhere reachable (s38-edges,
    test_s38_edges_nowhere_reachable.py)."""
    monkeypatch.setattr(sock_diag, "_NETLINK_SOCK_DIAG", 31)  # no such netlink family: as a sandbox refusing it
    port = _free_port()
    ex = LocalExecutor(tmp_path / "jobs", listen_s=0.5)
    body = (f"server = __import__('socket').create_server(('127.0.0.2', {port}))\n"
            "open('listening', 'w').close()\ntime.sleep(600)\n")
    job = job_for(tmp_path, body, job_id="elsewhere", kind=JobKind.INFERENCE, port=port)
    ex.start(job, Allocation("vm", ()))
    seen: list[ExecutorEvent] = []
    try:
        wait_until(lambda: (tmp_path / "listening").exists(), "the service's socket")
        deadline = __import__("time").monotonic() + 2.0
        while __import__("time").monotonic() < deadline:
            seen.extend(ex.poll())
        assert not any(isinstance(e, Exited) for e in seen), seen
    finally:
        ex.stop("elsewhere", grace_s=1)
        wait_until(lambda: (seen.extend(ex.poll()), next((e for e in seen if isinstance(e, Exited)), None))[1],
                   "its end")
