"""red32 R1 (high): the store's squatter check (red31 R3) keyed off how the URL SPELLED the host. A URL naming this host
by its hostname (``@vm:5432``: Debian maps it to a loopback address), its LAN address, or ``hostaddr=`` was not looked
at; a squatter that asked for the password in clear got it at the first reconnect of a PostgreSQL restart, then logged
in to the REAL store with it and planted a job run as another user.

Now the address is resolved and a connection to ANY address of this host is checked (before connecting: the port's
listeners; after: who accepted it), and a URL carrying a password makes libpq send it by SCRAM only
(``require_auth``), so a squatter that wins the race between the look and libpq's connect learns nothing.

The squatter is a real process of a real other OS account speaking PostgreSQL's wire protocol far enough to ask for
the password in clear; it records every byte it is sent.
"""

from __future__ import annotations

import ipaddress
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import StoreError
from jupyter_sched.hub.peer import is_local_address
from jupyter_sched.store import Store
from tests import accounts
from tests.ports import free_port

pytestmark = pytest.mark.skipif(accounts.skip_reason() is not None, reason=accounts.skip_reason() or "")

ASKS_IN_CLEAR = textwrap.dedent('''
    import socket, struct, sys
    address, port, record = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if address.startswith("/"):  # a Unix socket folder: PostgreSQL's socket file name in it
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(address + "/.s.PGSQL.%d" % port); listener.listen(8)
    else:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        listener = socket.socket(family); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((address, port)); listener.listen(8)
    print("listening", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn, open(record, "ab") as out:
            try:
                while True:
                    head = conn.recv(8)
                    if len(head) < 8:
                        break
                    length, code = struct.unpack("!ii", head)
                    if code in (80877103, 80877104):
                        conn.sendall(b"N")
                        continue
                    out.write(b"STARTUP " + conn.recv(length - 8) + b"\\n"); out.flush()
                    conn.sendall(b"R" + struct.pack("!ii", 8, 3))  # AuthenticationCleartextPassword
                    answer = conn.recv(65536)
                    if answer:
                        out.write(b"ANSWER " + answer + b"\\n"); out.flush()
                    break
            except OSError:
                pass
''')

PASSWORD = "s3cret-store-pw"


def _lan_address() -> str | None:
    """One of this host's own non-loopback IPv4 addresses (its LAN address), or None."""
    import psutil

    for found in (a for addresses in psutil.net_if_addrs().values() for a in addresses):
        if found.family == socket.AF_INET and not ipaddress.ip_address(found.address).is_loopback:
            return str(found.address)
    return None


def _hostname_address() -> str | None:
    """The address this host's own name resolves to, where that is an address of this host."""
    try:
        text = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except (OSError, IndexError):
        return None
    return str(text) if is_local_address(ipaddress.ip_address(text)) else None


@pytest.fixture(scope="module")
def mallory() -> Iterator[tuple[accounts.Account, Path]]:
    with accounts.shared_dir() as shared, accounts.os_accounts(1) as (account,):
        script = shared / "asks_in_clear.py"
        script.write_text(ASKS_IN_CLEAR)
        yield account, shared


def _squat(mallory: tuple[accounts.Account, Path], address: str, name: str) -> tuple[subprocess.Popen[str], int, Path]:
    account, shared = mallory
    record = shared / f"received-{name}"
    record.touch()
    record.chmod(0o666)
    port = free_port()
    proc = subprocess.Popen(["runuser", "-u", account.name, "--", accounts.account_python() or sys.executable,
                             str(shared / "asks_in_clear.py"), address, str(port), str(record)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
    return proc, port, record


@pytest.mark.parametrize("spelling", ["hostname", "lan address", "hostaddr"])
def test_red32_r1_a_store_url_naming_this_host_any_way_is_looked_at(
        mallory: tuple[accounts.Account, Path], spelling: str) -> None:
    address = _hostname_address() if spelling == "hostname" else _lan_address()
    if address is None:
        pytest.skip(f"this host has no {spelling} of its own to spell the store's host with")
    proc, port, record = _squat(mallory, address, spelling.replace(" ", "-"))
    try:
        host = {"hostname": socket.gethostname(), "lan address": address, "hostaddr": "db.invalid"}[spelling]
        query = f"?hostaddr={address}" if spelling == "hostaddr" else ""
        with pytest.raises(StoreError) as refused:
            Store(f"postgresql+psycopg://sched:{PASSWORD}@{host}:{port}/sched{query}")
    finally:
        proc.kill()
        proc.wait(timeout=30)
    said = str(refused.value)
    assert f"the store's address {address}:{port} is held by uid {mallory[0].uid} ({mallory[0].name})" in said, said
    assert record.read_bytes() == b"", "nothing reached the squatter: no user name, no password"


def test_red32_r1_the_password_never_goes_in_clear_even_to_a_listener_that_passed_the_look(
        mallory: tuple[accounts.Account, Path]) -> None:
    """The squatter that takes the port between the look and libpq's connect (a race; here its account is believed,
    ``db_server_uids``, the one way a test wins it on purpose) asks for the password in clear: libpq refuses to send
    it (``require_auth=scram-sha-256``)."""
    import psycopg

    if psycopg.pq.version() < 160000:
        pytest.skip("require_auth takes libpq 16 or later")
    proc, port, record = _squat(mallory, "127.0.0.1", "clear")
    try:
        with pytest.raises(StoreError) as refused:
            Store(f"postgresql+psycopg://sched:{PASSWORD}@127.0.0.1:{port}/sched", db_server_uids=[mallory[0].uid])
    finally:
        proc.kill()
        proc.wait(timeout=30)
    received = record.read_bytes()
    assert b"STARTUP" in received, "libpq did connect (the listener was believed)"
    assert PASSWORD.encode() not in received, received
    assert "scram-sha-256" in str(refused.value), refused.value


def test_red32_r1_which_addresses_are_this_hosts() -> None:
    assert is_local_address(ipaddress.ip_address("127.0.0.1")) and is_local_address(ipaddress.ip_address("::1"))
    assert is_local_address(ipaddress.ip_address("127.0.1.1"))  # Debian's hostname line
    assert not is_local_address(ipaddress.ip_address("198.51.100.7"))  # TEST-NET-2: nobody's here
    lan = _lan_address()
    if lan is not None:
        assert is_local_address(ipaddress.ip_address(lan))


def test_red32_r1_a_connection_to_this_hosts_lan_address_is_checked_like_loopback(
        mallory: tuple[accounts.Account, Path]) -> None:
    """The same check guards the hub API, the telemetry exporters and users' servers' calls to the service
    (:func:`jupyter_sched.hub.peer.loopback_refusal`): at the host's LAN address (``hub_connect_ip``, a node's own
    IP) another account's listener was believed because the address is not a loopback one."""
    from jupyter_sched.hub.peer import loopback_refusal

    lan = _lan_address()
    if lan is None:
        pytest.skip("this host has no LAN address of its own")
    proc, port, _record = _squat(mallory, lan, "peer")
    try:
        with socket.create_connection((lan, port), timeout=10) as sock:
            said = loopback_refusal(sock, allowed_uids=(), held=lambda where: f"the hub API's address {where}",
                                    doing="not sending the token", service="the hub", gone_fix="restart it",
                                    held_fix=lambda uid: f"stop uid {uid}'s process")
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert said is not None and said.uid == mallory[0].uid, said
    assert f"the hub API's address {lan}:{port} is held by uid {mallory[0].uid}" in said, said


def test_red32_r1b_a_socket_folder_anyone_may_write_is_looked_at(mallory: tuple[accounts.Account, Path]) -> None:
    """red32 R1b: a store over a Unix socket in a folder any account may write (PostgreSQL's upstream default, /tmp):
    while PostgreSQL was down another account's socket there got the password in clear. The socket file's owner is
    looked at before connecting (and the connected server's uid, SO_PEERCRED, after)."""
    folder = mallory[1] / "pgsock"
    folder.mkdir()
    folder.chmod(0o1777)
    proc, port, record = _squat(mallory, str(folder), "unix")
    try:
        with pytest.raises(StoreError) as refused:
            Store(f"postgresql+psycopg://sched:{PASSWORD}@/sched?host={folder}&port={port}")
    finally:
        proc.kill()
        proc.wait(timeout=30)
    said = str(refused.value)
    assert f"the store's address {folder}/.s.PGSQL.{port} is held by uid {mallory[0].uid}" in said, said
    assert record.read_bytes() == b"", "nothing reached the squatter: no user name, no password"
