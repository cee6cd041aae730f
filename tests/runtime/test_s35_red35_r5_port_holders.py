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


def test_red35_r5_many_bound_ports_are_named_from_one_read_of_the_table_and_a_cut_table_never_reads_as_no_listener(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Sixty newly bound ports are named from ONE read of the listening sockets, not one each (a user may bind
    100,000 listening sockets on 127.x addresses: each read is up to its bound) — since red36 R1 from the kernel's
    answer for each port (no table read at all), the table read once a cycle only where the kernel cannot be asked.
    And a table cut at that bound never reads as "nothing of the job listens" (R4's look says "unknown": the port's
    answer decides, as before), so such a user cannot get another's service stopped as never listening."""
    from jupyter_sched import sock_diag
    from jupyter_sched.executors import port_owner
    from jupyter_sched.executors.port_owner import TABLE, PortOwner, listening_inodes

    reads = [0]
    real = port_owner._read_tables

    def counted(*args: object) -> object:
        reads[0] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(port_owner, "_read_tables", counted)
    monkeypatch.setattr(TABLE, "monotonic", lambda: 0.0)  # a cycle lasts until next_cycle(), however slow the host
    servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(60)]
    try:
        wanted = [s.getsockname()[1] for s in servers]
        clock = [1000.0]
        for asks_kernel in (True, False):
            if not asks_kernel:  # where sock_diag cannot be asked: the table, once a cycle
                monkeypatch.setattr(sock_diag, "listening_sockets", lambda port: None)
                monkeypatch.setattr(sock_diag, "listening_at", lambda address, port: None)  # its exact lookups too
                # uncut, whatever listeners other tests hold on the host meanwhile (the cut is the last part's)
                monkeypatch.setattr(port_owner, "CYCLE_BYTES", 64 << 20)
            TABLE.next_cycle()
            reads[0] = 0
            ports = BoundPorts(monotonic=lambda: clock[0])
            assert ports(wanted) == set(wanted) and reads[0] == (0 if asks_kernel else 1), reads[0]  # was 60 scans
            clock[0] += HOLDER_NAMED_AFTER_S
            TABLE.next_cycle()
            reads[0] = 0
            assert ports(wanted) == set(wanted) and len(ports.holders()) == 60, ports.holders()
            assert reads[0] == (0 if asks_kernel else 1), reads[0]
        monkeypatch.setattr(port_owner, "CYCLE_BYTES", 1)  # the table as cut by a host of many listeners
        TABLE.next_cycle()
        assert listening_inodes(os.getpid(), wanted[-1]) is None
        assert PortOwner().look(os.getpid(), lambda: (), wanted[-1]) == "unknown"  # never "no"
    finally:
        TABLE.next_cycle()
        for server in servers:
            server.close()
