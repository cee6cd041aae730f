"""red31 R3 (high): while the service's PostgreSQL was down, a local account that took its loopback port
(``127.0.0.1:5432`` in the README's example: any account may bind it) became the store — libpq logged in to
its password-less server, ``pool_pre_ping`` reconnected on its own, and the service started the jobs that
account's database listed, as their owners' accounts. The store now refuses a loopback address another
account holds: before connecting (the port's listeners) and on each connection made (who accepted it).

The squatter here is a real process of a real other OS account speaking PostgreSQL's wire protocol
(startup, trust login, ready for query) on a free port; it records every byte it is sent. The real
server (``tests/pg.py``, run as ``postgres``) is accepted as before."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.errors import StoreError
from jupyter_sched.store import Store
from jupyter_sched.store.server_check import allowed_server_uids, tcp_address
from tests import accounts
from tests.ports import free_port

pytestmark = pytest.mark.skipif(accounts.skip_reason() is not None, reason=accounts.skip_reason() or "")

FAKE_SERVER = textwrap.dedent('''
    import socket, struct, sys
    port, record = int(sys.argv[1]), sys.argv[2]
    listener = socket.socket(); listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port)); listener.listen(8)
    print("listening", flush=True)
    while True:
        conn, _ = listener.accept()
        with conn, open(record, "ab") as out:
            def exact(n):
                data = b""
                while len(data) < n:
                    more = conn.recv(n - len(data))
                    if not more:
                        raise EOFError
                    data += more
                return data
            try:
                while True:  # SSLRequest / GSSENCRequest: "N", then the startup message
                    head = exact(8)
                    length, code = struct.unpack("!ii", head)
                    if code in (80877103, 80877104):
                        conn.sendall(b"N")
                        continue
                    out.write(b"STARTUP " + head + exact(length - 8) + b"\\n"); out.flush()
                    break
                conn.sendall(b"R" + struct.pack("!ii", 8, 0))  # trust: AuthenticationOk
                for key, value in ((b"server_version", b"16.0"), (b"client_encoding", b"UTF8"),
                                   (b"standard_conforming_strings", b"on"), (b"DateStyle", b"ISO, MDY")):
                    body = key + b"\\0" + value + b"\\0"
                    conn.sendall(b"S" + struct.pack("!i", len(body) + 4) + body)
                conn.sendall(b"K" + struct.pack("!iii", 12, 1, 2) + b"Z" + struct.pack("!i", 5) + b"I")
                while True:
                    data = conn.recv(65536)
                    if not data:
                        break
                    out.write(b"AFTER-LOGIN " + data + b"\\n"); out.flush()
                    if data[:1] != b"X":  # any query: an error, then ready again (the believed case ends there)
                        fields = b"SERROR\\0C08P01\\0Mfake server\\0\\0"
                        conn.sendall(b"E" + struct.pack("!i", len(fields) + 4) + fields + b"Z" + struct.pack("!i", 5) + b"I")
            except (EOFError, OSError):
                pass
''')


@pytest.fixture
def squatter(tmp_path: Path) -> Iterator[tuple[accounts.Account, int, Path]]:
    """A password-less "PostgreSQL" of another account on a free loopback port: (account, port, record)."""
    with accounts.shared_dir() as shared, accounts.os_accounts(1) as (mallory,):
        script, record = shared / "fake_pg.py", shared / "received"
        script.write_text(FAKE_SERVER)
        record.touch()
        record.chmod(0o666)
        port = free_port()
        proc = subprocess.Popen(["runuser", "-u", mallory.name, "--", accounts.account_python() or sys.executable,
                                 str(script), str(port), str(record)], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "listening"
            yield mallory, port, record
        finally:
            proc.kill()
            proc.wait(timeout=30)


def test_red31_r3_a_store_port_another_account_holds_is_refused_before_connecting(
        squatter: tuple[accounts.Account, int, Path]) -> None:
    mallory, port, record = squatter
    with pytest.raises(StoreError) as refused:
        Store(f"postgresql+psycopg://sched@127.0.0.1:{port}/sched")
    said = str(refused.value)
    assert f"the store's address 127.0.0.1:{port} is held by uid {mallory.uid} ({mallory.name})" in said, said
    assert "c.SchedApp.db_server_uids" in said and "Unix socket" in said
    assert record.read_bytes() == b"", "nothing at all reached the squatter (no user name, no password)"


def test_red31_r3_a_connection_a_stranger_accepted_is_never_used(
        squatter: tuple[accounts.Account, int, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """The squatter that opens its listener just after the first look (the look is blinded here, the one
    stand-in of this test: a race a test cannot win on purpose) logs libpq in, and still no query reaches it."""
    from jupyter_sched.hub import listener

    mallory, port, record = squatter
    monkeypatch.setattr(listener, "listener_uids", lambda host, port, **_: [])
    with pytest.raises(StoreError) as refused:
        Store(f"postgresql+psycopg://sched@127.0.0.1:{port}/sched")
    assert f"is held by uid {mallory.uid} ({mallory.name}), not the database server" in str(refused.value)
    deadline = time.monotonic() + 5
    while b"STARTUP" not in record.read_bytes() and time.monotonic() < deadline:
        time.sleep(0.05)
    received = record.read_bytes()
    assert b"STARTUP" in received, "libpq did log in (the look before connecting was blinded)"
    assert b"AFTER-LOGIN Q" not in received and b"AFTER-LOGIN P" not in received, received  # no query, no parse


def test_red31_r3_the_uid_a_setting_names_is_believed(squatter: tuple[accounts.Account, int, Path]) -> None:
    mallory, port, record = squatter
    assert mallory.uid in allowed_server_uids([mallory.uid]) and mallory.uid not in allowed_server_uids()
    # believed: the look lets libpq through to the (fake) server, which fails later for its own reasons
    with pytest.raises(StoreError) as failed:
        Store(f"postgresql+psycopg://sched@127.0.0.1:{port}/sched", db_server_uids=[mallory.uid])
    assert "held by uid" not in str(failed.value)
    assert b"STARTUP" in record.read_bytes()


@pytest.mark.parametrize(("url", "want"), [
    ("postgresql+psycopg://sched@127.0.0.1/sched", ("127.0.0.1", 5432)),
    ("postgresql+psycopg://sched@localhost:6543/sched", ("localhost", 6543)),
    ("postgresql+psycopg://sched@[::1]:5433/sched", ("::1", 5433)),
    ("postgresql+psycopg://sched@/sched?host=/var/run/postgresql", None),
    ("postgresql+psycopg://sched@db.example.org/sched", ("db.example.org", 5432)),  # looked up: another host
    ("postgresql+psycopg://sched@db/sched?hostaddr=127.0.0.1", ("127.0.0.1", 5432)),  # red32 R1: libpq's address
    ("sqlite:////tmp/x.sqlite", None),
], ids=["loopback", "localhost", "ipv6", "unix socket", "remote", "hostaddr", "sqlite"])
def test_red31_r3_which_store_urls_are_looked_at(url: str, want: tuple[str, int] | None) -> None:
    assert tcp_address(url) == want
