"""red27 R6 (verify28: partly fixed): every forwarded request read ``/proc/net/tcp`` whole — the listener check
before the request (:func:`.listener.listener_uids`) and the check of each new connection (:func:`.peer.accepting_uid`).
The kernel generates that file whole at each read: another account holding 9,000 loopback connections made each
check 150-350 ms. Both questions now go to the kernel's ``sock_diag`` (:mod:`jupyter_sched.sock_diag`): one
lookup of the accepted socket, the listeners of one port — no file is read; the file is the fallback where
``sock_diag`` cannot be asked, and the last word (read once) before a connection is refused as gone."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched import sock_diag
from jupyter_sched.hub import listener, peer


@pytest.fixture
def served() -> Iterator[tuple[socket.socket, socket.socket, int]]:
    """A dual-stack listener on a free port and one IPv4 connection to it (accepted by the kernel, not yet by us)."""
    server = socket.socket(socket.AF_INET6)
    server.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    server.bind(("::", 0))
    server.listen(4)
    port = server.getsockname()[1]
    client = socket.create_connection(("127.0.0.1", port))
    with server, client:
        yield server, client, port


def _uid(found: int | bool | None) -> int | None:
    """``found`` when it is a uid (False == 0 for root: compared as a uid it would pass)."""
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def _no_file(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    read: list[str] = []
    monkeypatch.setattr(peer, "_once", lambda *a: read.append("tcp (connected check)") or False)
    monkeypatch.setattr(listener, "tcp_rows", lambda *a: read.append("tcp (listener check)") or [])
    return read


def test_red27_r6_the_forwarders_checks_ask_the_kernel_and_read_no_file(
        served: tuple[socket.socket, socket.socket, int], monkeypatch: pytest.MonkeyPatch) -> None:
    _, client, port = served
    read = _no_file(monkeypatch)
    me = os.geteuid()
    assert _uid(peer.accepting_uid(client)) == me
    assert peer.connected_refusal(client, allowed_uids=()) is None
    assert listener.listener_uids("127.0.0.1", port) == [me]
    assert listener.listener_uids("localhost", port) == [me]  # [::] takes both
    assert listener.listener_uids("127.0.0.1", port + 1 if port < 65535 else port - 1) in ([], [me])
    assert read == []  # before: /proc/net/tcp and tcp6 read whole on every check


def test_red27_r6_only_the_ports_listeners_and_the_exact_connection_are_answered(
        served: tuple[socket.socket, socket.socket, int]) -> None:
    _, client, port = served
    loop = ipaddress.IPv4Address("127.0.0.1")
    mine = client.getsockname()[1]
    assert _uid(sock_diag.established((loop, port), (loop, mine))) == os.geteuid()
    assert _uid(sock_diag.established((loop, mine), (loop, port))) == os.geteuid()  # the client's own end
    # no such connection: the kernel's lookup falls back to the port's listener, which is not an accepted socket
    assert sock_diag.established((loop, port), (loop, 1)) is False
    held = sock_diag.listeners(port)
    assert held == [(ipaddress.IPv6Address("::"), os.geteuid())]


def test_red27_r6_a_connection_nobody_accepted_is_refused_after_one_read_of_the_file(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Gone:
        def getsockname(self) -> tuple[str, int]:
            return ("127.0.0.1", 1)

        def getpeername(self) -> tuple[str, int]:
            return ("127.0.0.1", 2)

    read = _no_file(monkeypatch)
    monkeypatch.setattr(peer.time, "sleep", lambda s: None)
    said = peer.connected_refusal(Gone(), allowed_uids=())
    assert said is not None and said.gone and "was not accepted by a live socket" in said
    assert read == ["tcp (connected check)"]  # 20 kernel lookups, the file once (before: 20 whole reads)


def test_red27_r6_where_sock_diag_cannot_be_asked_the_file_answers(
        served: tuple[socket.socket, socket.socket, int], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _, client, port = served
    monkeypatch.setattr(sock_diag, "_NETLINK_SOCK_DIAG", 31)  # no such netlink family: as a sandbox refusing it
    assert sock_diag.listeners(port) is None
    assert sock_diag.established((ipaddress.IPv4Address("127.0.0.1"), port),
                                 (ipaddress.IPv4Address("127.0.0.1"), client.getsockname()[1])) is None
    assert _uid(peer.accepting_uid(client)) == os.geteuid()  # /proc/net/tcp6 (the dual-stack listener's row)
    assert listener.listener_uids("127.0.0.1", port) == [os.geteuid()]
    assert peer.accepting_uid(client, proc_net=tmp_path) is None  # neither: nothing to ask


def test_red27_r6_a_kernel_without_inet_diag_is_read_from_the_file(
        served: tuple[socket.socket, socket.socket, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a TCP handler every sock_diag request is ENOENT: a lookup must not read that as "no such socket"
    (20 tries, 40 ms of pauses, a refused connection) nor a listeners' dump as "nobody listens"."""
    _, client, port = served
    real = sock_diag._request
    monkeypatch.setattr(sock_diag, "_request", lambda family, **kw: real(3, **kw))  # a family no handler serves
    monkeypatch.setattr(sock_diag, "_ANSWERS", False)
    assert sock_diag.listeners(port) is None
    assert sock_diag.established((ipaddress.IPv4Address("127.0.0.1"), port),
                                 (ipaddress.IPv4Address("127.0.0.1"), client.getsockname()[1])) is None
    slept: list[float] = []
    monkeypatch.setattr(peer.time, "sleep", slept.append)
    assert _uid(peer.accepting_uid(client)) == os.geteuid() and slept == []  # the file, at the first try
    assert listener.listener_uids("127.0.0.1", port) == [os.geteuid()]
