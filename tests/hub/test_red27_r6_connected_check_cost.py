"""red27 R6: the connected-socket check (verify26 V5) split and decoded every row of ``/proc/net/tcp`` on each
connection; another account holding 9,000 loopback connections (18,000 rows) made each check ~350 ms and every
user's forwarded request slower. The accepting row is now found by its text: no row but the match is decoded.

A ``/proc/net`` written as the kernel writes it (the real one cannot be filled with 20,000 rows of another account
in a test); the real one is read in test_verify26_v5_connected_check.py."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from jupyter_sched.hub import peer

HEADER = ("  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n")


def _row(n: int, local: str, remote: str, uid: int, state: str = "01") -> str:
    return (f"{n:4d}: {local} {remote} {state} 00000000:00000000 00:00000000 00000000 {uid:5d}        0 "
            f"{100000 + n} 1 0000000000000000 20 4 30 10 -1\n")


def test_red27_r6_the_check_decodes_only_the_matching_row_of_twenty_thousand(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    loop = peer.proc_hex(ipaddress.IPv4Address("127.0.0.1"), six=False)
    rows = [_row(i, f"{loop}:{20000 + i // 2:04X}", f"{loop}:{40000 + i:04X}", 1234) for i in range(20_000)]
    rows.insert(12_345, _row(99_999, f"{loop}:{8081:04X}", f"{loop}:{51000:04X}", 4321))  # the service's side
    (tmp_path / "tcp").write_text(HEADER + "".join(rows))
    (tmp_path / "tcp6").write_text(HEADER)
    decoded: list[str] = []
    real = peer.proc_address
    monkeypatch.setattr(peer, "proc_address", lambda text: decoded.append(text) or real(text))
    ours = (ipaddress.IPv4Address("127.0.0.1"), 51000)
    theirs = (ipaddress.IPv4Address("127.0.0.1"), 8081)
    assert peer._once(ours, theirs, tmp_path) == 4321
    assert peer._once((ours[0], 51001), theirs, tmp_path) is False  # no such connection
    assert decoded == []  # before: 40,002 addresses decoded per check


def test_red27_r6_an_ipv4_connection_to_a_dual_stack_listener_is_found_in_tcp6(tmp_path: Path) -> None:
    mapped = peer.proc_hex(ipaddress.IPv4Address("127.0.0.1"), six=True)
    assert mapped == "0000000000000000FFFF00000100007F"
    assert peer.proc_address(mapped) == ipaddress.IPv6Address("::ffff:127.0.0.1")
    (tmp_path / "tcp").write_text(HEADER)
    (tmp_path / "tcp6").write_text(HEADER + _row(0, f"{mapped}:1F91", f"{mapped}:C738", 777))
    assert peer._once((ipaddress.IPv4Address("127.0.0.1"), 0xC738), (ipaddress.IPv4Address("127.0.0.1"), 0x1F91),
                      tmp_path) == 777
    six = peer.proc_hex(ipaddress.IPv6Address("::1"), six=True)
    (tmp_path / "tcp6").write_text(HEADER + _row(0, f"{six}:1F91", f"{six}:C738", 778))
    assert peer._once((ipaddress.IPv6Address("::1"), 0xC738), (ipaddress.IPv6Address("::1"), 0x1F91), tmp_path) == 778
    assert peer._once((ipaddress.IPv6Address("::1"), 1), (ipaddress.IPv6Address("::1"), 0x1F91), tmp_path) is False
    assert peer._once((ipaddress.IPv6Address("::1"), 1), (ipaddress.IPv6Address("::1"), 2), tmp_path / "none") is None
