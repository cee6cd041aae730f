"""red35 R5 (high): naming who holds a pending service's declared port ran psutil's host-wide ``net_connections()``
(a readlink of every descriptor of every process on the host, then the socket tables) once PER PORT on the engine's
thread: 60 pending services whose ports a user bound outside the scheduler, with 95,000 descriptors open in 5 of its
processes, held one cycle 97 s (2.5 s a port), again every 10 min. Now the holder's account and uid are read from the
host's table of listening sockets (its owner's uid is there), which is read up to its last listening socket only.
"""

from __future__ import annotations

import logging
import os
import pwd
import socket

import psutil
import pytest

from jupyter_sched.executors.bound_ports import HOLDER_NAMED_AFTER_S, BoundPorts


def test_red35_r5_bound_ports_name_their_holders_from_the_listening_table_not_a_host_scan(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Failed before: every newly bound port's log line (and its account, after ``HOLDER_NAMED_AFTER_S``) was a
    host-wide ``psutil.net_connections()``. Now neither scans any process: the line names the socket's account and
    uid (and how an admin names its process), the holder's account is the socket's owner."""
    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("a host-wide scan of every process's descriptors on the engine's thread")

    monkeypatch.setattr(psutil, "net_connections", never)
    me = pwd.getpwuid(os.geteuid()).pw_name
    with socket.create_server(("127.0.0.1", 0)) as held, socket.create_server(("127.0.0.1", 0)) as other:
        port, second = held.getsockname()[1], other.getsockname()[1]
        clock = [1000.0]
        ports = BoundPorts(monotonic=lambda: clock[0])
        with caplog.at_level(logging.WARNING, logger="jupyter_sched.executors.bound_ports"):
            assert ports([port, second]) == {port, second}
        said = [r.getMessage() for r in caplog.records if f"port {port}," in r.getMessage()]
        assert said and f"a socket of {me} (uid {os.geteuid()}; `ss -ltnp 'sport = :{port}'`" in said[0], said
        clock[0] += HOLDER_NAMED_AFTER_S
        assert ports([port, second]) == {port, second} and ports.holders() == {port: me, second: me}
