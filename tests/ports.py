"""Free loopback ports for the servers the tests start, outside the kernel's ephemeral range.

Usage::

    from tests.ports import free_port

    port = free_port()        # free now; bind it soon (another process may take it meanwhile)

``bind(("127.0.0.1", 0))`` hands out a port of the ephemeral range (``/proc/sys/net/ipv4/ip_local_port_range``,
32768-60999 here), the range every outgoing connection of the machine also takes its local port from: a port
picked so and then given to a server that starts seconds later was taken in between by some client's
connection in a parallel test run (pytest-xdist run1, session 30: a hub's service, "port 37405 is not
available"). These ports come from below that range, at random, checked free by a bind: only another
caller of this function could take one, by drawing the same number in the same seconds.
"""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

__all__ = ["free_port"]

LOW, HIGH = 20000, 32767
"""The range drawn from: above the testers' fixed ranges (17900-19999), below the default ephemeral range."""


def _ephemeral() -> range:
    try:
        low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    except (OSError, ValueError):
        low, high = 32768, 60999
    return range(low, high + 1)


def _own_share() -> range:
    """This test process's share of :data:`LOW`-:data:`HIGH`: under pytest-xdist each worker draws from its own
    slice, so two workers never pick the same port in the same seconds (session 35, run B: a hub's proxy API port
    and another worker's listening test drew 31265 within a second — a hub that never started and a test that
    saw a connection it did not expect). The whole range outside xdist."""
    worker, count = os.environ.get("PYTEST_XDIST_WORKER", ""), os.environ.get("PYTEST_XDIST_WORKER_COUNT", "")
    if not (worker.startswith("gw") and worker[2:].isdigit() and count.isdigit() and int(count) > 1):
        return range(LOW, HIGH + 1)
    size = (HIGH - LOW + 1) // int(count)
    start = LOW + (int(worker[2:]) % int(count)) * size
    return range(start, start + size)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on or holds now, outside the ephemeral range (the kernel's
    own pick when that range covers all of :data:`LOW`-:data:`HIGH`), from this worker's share (:func:`_own_share`)."""
    ephemeral = _ephemeral()
    share = _own_share()
    for _ in range(200):
        port = random.choice(share)
        if port in ephemeral:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
