"""red36 R1 (high/medium): red35 R4's readiness look read the listening part of ``/proc/<pid>/net/tcp`` and ``tcp6``
(up to 4 MiB each, parsed in Python) per ready service job every 2 s, on the engine's thread — and any account makes
as many listening sockets as it likes (the whole of 127/8; any IPv6 address with ``IP_FREEBIND``): 56,000 of them made
each look 0.3-0.5 s, others' starts 0.27 → 2.7 s. Now a look asks the kernel (``sock_diag``) for the listeners of
the job's ONE port, with their inodes; ``/proc/net`` is read only where the kernel cannot be asked, once a cycle for
every service job and :class:`BoundPorts` together, at most ``CYCLE_BYTES`` a cycle.

The crowd of listeners is real (a child process of the test holding 5,000 listening sockets on 127.77.x.y, one port),
as are the service's listener and the table reads counted."""

from __future__ import annotations

import ipaddress
import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from jupyter_sched import sock_diag
from jupyter_sched.executors import port_owner
from jupyter_sched.executors.bound_ports import BoundPorts
from jupyter_sched.executors.port_owner import CYCLE_BYTES, TABLE, PortOwner, listening_inodes

CROWD = 5000
# another user's crowd: listening sockets on CROWD loopback addresses, one port (the first one free on 127.0.0.1)
CROWD_CODE = """
import resource, socket, sys, time
count = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, count + 64), hard))
first = socket.create_server(("127.0.0.1", 0))
port, held = first.getsockname()[1], [first]
for i in range(count - 1):
    s = socket.socket()
    s.bind((f"127.77.{i // 200}.{i % 200 + 1}", port))
    s.listen()
    held.append(s)
print(port, flush=True)
time.sleep(600)
"""
# a service job's process: its listener's port and inode; the listener closed at a line on its stdin
SERVICE_CODE = """
import os, socket, sys, time
s = socket.create_server(("127.0.0.1", 0))
print(s.getsockname()[1], os.fstat(s.fileno()).st_ino, flush=True)
sys.stdin.readline()
s.close()
print("closed", flush=True)
time.sleep(600)
"""


@pytest.fixture(scope="module")
def crowd() -> Iterator[int]:
    """A child process holding up to :data:`CROWD` listening sockets (its port yielded), killed after the module."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    proc = subprocess.Popen([sys.executable, "-c", CROWD_CODE, str(min(CROWD, hard - 64))], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        yield int(proc.stdout.readline())
    finally:
        proc.kill()
        proc.wait(30)


@pytest.fixture
def table_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ``/proc/*/net/tcp*`` files :mod:`.port_owner` opens from now on."""
    opened: list[str] = []
    real = port_owner.open_fd

    def counted(path: str, *args: object, **kwargs: object) -> int:
        if "/net/tcp" in str(path):
            opened.append(str(path))
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(port_owner, "open_fd", counted)
    monkeypatch.setattr(TABLE, "monotonic", lambda: 0.0)  # a cycle lasts until next_cycle(), however slow the host
    TABLE.next_cycle()
    yield opened
    TABLE.next_cycle()


def _rchar() -> int:
    """Bytes this thread has read (every ``read``), from ``/proc/thread-self/io`` — the looks and BoundPorts run on
    it; the process's count (``/proc/self/io``) took in whatever another thread of the xdist worker read meanwhile
    (s38-edges: 712,017 and 795,792 bytes, about 1 run in 4 under -n 2, on main as well)."""
    with open("/proc/thread-self/io") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("rchar:"))


@pytest.mark.skipif(not sock_diag.available(), reason="the kernel's sock_diag cannot be asked here")
def test_red36_r1_a_readiness_look_asks_the_kernel_for_its_port_and_reads_no_listening_table(
        crowd: int, table_reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: each look read ``/proc/<pid>/net/tcp`` and ``tcp6`` (the crowd's 5,000 rows among them). Now
    the kernel's answer for the job's port alone: no table opened, the job's own listener found by its inode; once
    found, a look is one lookup of that socket (no walk of the host's listeners); gone, it reads "no"."""
    service = subprocess.Popen([sys.executable, "-c", SERVICE_CODE], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert service.stdin is not None and service.stdout is not None
        port, inode = (int(n) for n in service.stdout.readline().split())
        assert sock_diag.listening_sockets(port) == [(ipaddress.IPv4Address("127.0.0.1"), os.geteuid(), inode)]
        assert listening_inodes(service.pid, port) == {inode}
        owner = PortOwner()
        assert owner.look(service.pid, lambda: (), port) == "yes"
        dumps = [0]
        real = sock_diag.listening_sockets

        def counted(port: int) -> object:
            dumps[0] += 1
            return real(port)

        monkeypatch.setattr(sock_diag, "listening_sockets", counted)
        assert owner.look(service.pid, lambda: (), port) == "yes" and dumps == [0]  # one lookup of its socket
        assert table_reads == [], table_reads
        service.stdin.write(b"close\n")
        service.stdin.flush()
        assert service.stdout.readline() == b"closed\n"
        # gone: nothing at this host's addresses, and the port's other listeners are not listed (s38-edges)
        assert owner.look(service.pid, lambda: (), port) == "no" and dumps == [0] and table_reads == []
    finally:
        service.kill()
        service.wait(30)


def test_red36_r1_where_the_kernel_cannot_be_asked_one_bounded_table_read_a_cycle_serves_every_service_job(
        crowd: int, table_reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: every look of every service job read both tables, up to 4 MiB each (8 jobs: 16 files a poll,
    BoundPorts' naming of a holder one more read). Now, where ``sock_diag`` cannot be asked, one read of the table a
    cycle — at most ``CYCLE_BYTES`` — answers them all and BoundPorts; a port not in what was read is "unknown",
    never "no" (the crowd cuts the table: nobody's listeners make another's service read as not listening)."""
    monkeypatch.setattr(sock_diag, "_NETLINK_SOCK_DIAG", 31)  # no such netlink family: as a sandbox refusing it
    assert sock_diag.listening_sockets(crowd) is None
    servers = [socket.create_server(("127.0.0.1", 0)) for _ in range(8)]
    try:
        ports = [s.getsockname()[1] for s in servers]
        owners = [PortOwner() for _ in ports]
        for _ in range(2):  # two cycles (two executor polls)
            TABLE.next_cycle()
            before, opened = _rchar(), len(table_reads)
            answers = [owner.look(os.getpid(), lambda: (), port) for owner, port in zip(owners, ports, strict=True)]
            assert BoundPorts()(ports) == set(ports)  # each port's holder named in the service log: the same read
            read = _rchar() - before
            assert set(answers) <= {"yes", "unknown"}, answers
            assert len(table_reads) - opened <= 2, table_reads  # tcp and tcp6 once, for all
            assert read <= CYCLE_BYTES + (64 << 10), read  # the cut, and a little of the test's own reads
    finally:
        for server in servers:
            server.close()


# another account's crowd at the job's own port: 200 listeners on other loopback addresses, as an unused uid
SMALL_CROWD_CODE = """
import os, socket, sys, time
port, uid = int(sys.argv[1]), int(sys.argv[2])
os.setgid(uid)
os.setuid(uid)
held = []
for i in range(200):
    s = socket.socket()
    s.bind((f"127.78.{i // 100}.{i % 100 + 1}", port))
    s.listen()
    held.append(s)
print("ready", flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sock_diag.available() or os.geteuid() != 0,
                    reason="needs the kernel's sock_diag and root (the crowd is another account's)")
def test_s36_left_the_readiness_look_and_bound_ports_ask_the_exact_addresses_not_the_ports_crowd(
        table_reads: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Session 36 left: the look's first answer and BoundPorts' holder listed every listener of the job's port (a
    crowd of another account's on 127.78.x.y at that port: 19-49 ms, each decoded). Now the kernel is asked for
    the one listener taking connections to each of this host's addresses (127.0.0.1, ::1, its interfaces'): the job's
    socket is found and its holder named with no dump of the port and none of the crowd decoded."""
    service = socket.create_server(("127.0.0.1", 0))
    port, inode = service.getsockname()[1], os.fstat(service.fileno()).st_ino
    uid = 3_950_000 + os.getpid() % 40_000  # no account has it
    crowd = subprocess.Popen([sys.executable, "-c", SMALL_CROWD_CODE, str(port), str(uid)], stdout=subprocess.PIPE)
    dumps: list[int] = []
    real = sock_diag.listening_sockets
    try:
        assert crowd.stdout is not None and crowd.stdout.readline() == b"ready\n"
        assert len(real(port) or ()) == 201  # the port's listeners: the crowd and the job's
        monkeypatch.setattr(sock_diag, "listening_sockets", lambda p: (dumps.append(p), real(p))[1])
        assert port_owner.reachable_sockets(os.getpid(), port) == [(ipaddress.IPv4Address("127.0.0.1"), os.geteuid(),
                                                                    inode)]
        owner = PortOwner()
        assert owner.look(os.getpid(), lambda: (), port) == "yes"
        assert owner.look(os.getpid(), lambda: (), port) == "yes"
        assert port_owner.listening_uids(port) == [os.geteuid()]
        assert f"(uid {os.geteuid()};" in BoundPorts().holder(port)
        assert dumps == [] and table_reads == [], (dumps, table_reads)
        service.close()  # gone: nothing of the job listens at the host's addresses, nor at the crowd's
        assert owner.look(os.getpid(), lambda: (), port) in ("no", "searching")
    finally:
        service.close()
        crowd.kill()
        crowd.wait(30)


@pytest.mark.skipif(not sock_diag.available() or os.geteuid() != 0, reason="needs sock_diag and SO_BINDTODEVICE")
def test_s36_left_a_client_bound_to_lo_is_found_by_the_connected_socket_check() -> None:
    """Session 36 left: the connected-socket lookup (the hub's front door: who opened this loopback connection) was
    asked with no device, and the kernel matches a socket bound to a device (``SO_BINDTODEVICE lo``) only to a lookup
    that names it: such a client read as "no such connection" and was refused. Asked with the loopback index, it is
    found (and a client bound to no device still is)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        with socket.socket() as bound, socket.create_connection(("127.0.0.1", port)) as plain:
            bound.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, b"lo")
            bound.connect(("127.0.0.1", port))
            ours = (ipaddress.IPv4Address("127.0.0.1"), port)
            for client in (bound, plain):
                theirs = (ipaddress.IPv4Address(client.getsockname()[0]), client.getsockname()[1])
                found = sock_diag.established(theirs, ours)
                assert found == os.geteuid() and not isinstance(found, bool), (client, found)
                assert sock_diag.owner(theirs, ours) == os.geteuid()
