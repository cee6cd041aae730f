"""Red team 36, R5: refusing a service job on the server's own port parsed the host's whole socket tables (psutil's
``net_connections``: every socket of every account) on a request thread — another user's 56,000 listeners outside the
scheduler made each service submit 0.7-4 s and others' starts 0.31 → 2.6 s median under a flood of them. Now only the
server's own descriptors are asked; no host table is read."""

from __future__ import annotations

import builtins
import os
import socket
import subprocess
import sys
from typing import Any

import psutil
import pytest

from jupyter_sched.services.own_ports import own_listening_ports


def test_red36_r5_own_listening_ports_reads_no_host_socket_table(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(os.fsdecode(path))
        return real_os_open(path, *args, **kwargs)

    def no_psutil(*_: Any, **__: Any) -> Any:
        raise AssertionError("psutil's connections read the host's socket tables")

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(psutil.Process, "net_connections", no_psutil)
    monkeypatch.setattr(psutil, "net_connections", no_psutil)
    # another process's listener (another account's, as far as this process can tell) is never this server's
    other = subprocess.Popen([sys.executable, "-c", "import socket, sys, time; s = socket.create_server(('127.0.0.1', 0)); "
                              "print(s.getsockname()[1], flush=True); time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    assert other.stdout is not None
    theirs = int(other.stdout.readline())
    v4 = socket.create_server(("127.0.0.1", 0))
    v6 = socket.create_server(("::1", 0), family=socket.AF_INET6)
    bound = socket.socket()  # bound, not listening: no server port
    bound.bind(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    try:
        ports = own_listening_ports()
        assert {v4.getsockname()[1], v6.getsockname()[1]} <= ports
        assert theirs not in ports and bound.getsockname()[1] not in ports and udp.getsockname()[1] not in ports
        assert not [path for path in opened if "/net/" in path], opened
        count = len(os.listdir("/proc/self/fd"))
        v4.close()
        assert len(os.listdir("/proc/self/fd")) == count - 1  # no descriptor of the server left open by the look
    finally:
        for sock in (v6, bound, udp):
            sock.close()
        other.kill()
        other.wait(10)


def test_red36_r5_a_service_on_the_servers_own_port_is_refused_without_reading_host_tables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The submit path's check (``JobsService.refuse_own_port``) with psutil's host-wide reads made to fail: it still
    refuses the server's own port and lets another port through. (The whole route through a real server:
    tests/web/test_s31_newuser31_n16_own_port.py.)"""
    from types import SimpleNamespace

    from jupyter_sched.errors import ValidationError
    from jupyter_sched.executors.local import LocalExecutor
    from jupyter_sched.model import JobKind, JobSpec
    from jupyter_sched.services.jobs import JobsService

    def no_psutil(*_: Any, **__: Any) -> Any:
        raise AssertionError("psutil's connections read the host's socket tables")

    monkeypatch.setattr(psutil.Process, "net_connections", no_psutil)
    service = JobsService.__new__(JobsService)  # only the executor's kind is asked of the context
    service.ctx = SimpleNamespace(executor=LocalExecutor.__new__(LocalExecutor))  # type: ignore[assignment]
    with socket.create_server(("127.0.0.1", 0)) as server:
        own = server.getsockname()[1]
        with pytest.raises(ValidationError) as refused:
            service.refuse_own_port(JobSpec(name="s", user="u", kind=JobKind.INFERENCE, port=own))
        assert refused.value.field == "port" and f"port {own} is this Jupyter server's own port" in str(refused.value)
        service.refuse_own_port(JobSpec(name="s", user="u", kind=JobKind.INFERENCE, port=own + 1 if own < 65535 else 1024))
