"""The TCP ports this process itself listens on, from its own descriptors (red36 R5).

``refuse_own_port`` asked psutil for this process's connections, which parses the host's whole
``/proc/net/tcp{,6}`` and ``udp{,6}`` in Python — every socket of every account: 56,000 listeners
another user made outside the scheduler cost 0.7 s a submit of a service job, on a request thread
holding the GIL, and a flood of such submits slowed every start (others' median 0.31 → 2.6 s).
Here only this process's descriptors are looked at (its own: their number is the service's, each user's
connections capped), each listening socket asked its address (``getsockname``) — nothing another
account makes is read. A few microseconds a descriptor; not kept, so a server that starts listening is
seen at once.
"""

from __future__ import annotations

import os
import socket

__all__ = ["own_listening_ports"]


def own_listening_ports() -> frozenset[int]:
    """TCP ports (IPv4 and IPv6) a socket of this process listens on; empty where ``/proc/self/fd`` cannot
    be read."""
    ports: set[int] = set()
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return frozenset()
    for name in names:
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            copy = os.dup(int(name))  # the socket object closes its own descriptor, never the server's
        except (OSError, ValueError):
            continue  # closed since the listing
        try:
            with socket.socket(fileno=copy) as sock:
                if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
                    continue
                if sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                    ports.add(int(sock.getsockname()[1]))
        except OSError:
            continue
    return frozenset(ports)
