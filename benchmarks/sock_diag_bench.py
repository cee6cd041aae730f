"""red27 R6: the forwarder's two checks (who listens on the service's port; who accepted a new connection) with
many unrelated loopback connections held on the host — ``/proc/net`` read whole (the old path, still the fallback)
vs the kernel's ``sock_diag`` (the path taken now), in the same run.

    python benchmarks/sock_diag_bench.py [CONNECTIONS]   (default 9000: ~18,000 rows of /proc/net/tcp)
"""

from __future__ import annotations

import os
import resource
import socket
import sys
import time
from collections.abc import Callable

from jupyter_sched.hub import listener, peer


def _per_call(fn: Callable[[], object], n: int = 20) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        fn()
    return (time.perf_counter() - wall) / n * 1000, (time.process_time() - cpu) / n * 1000


def main(connections: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 2 * connections + 100), hard), hard))
    crowd = socket.socket()
    crowd.bind(("127.0.0.1", 0))
    crowd.listen(4096)
    held = []
    for _ in range(connections):
        held.append(socket.create_connection(crowd.getsockname()))
        held.append(crowd.accept()[0])
    service = socket.socket()
    service.bind(("127.0.0.1", 0))
    service.listen()
    port = service.getsockname()[1]
    conn = socket.create_connection(("127.0.0.1", port))
    with open("/proc/net/tcp") as rows:
        count = sum(1 for _ in rows) - 1
    proc = peer._PROC_NET
    said = {
        "connected check, /proc/net read": _per_call(lambda: peer.accepting_uid(conn, proc_net=proc)),
        "connected check, sock_diag": _per_call(lambda: peer.accepting_uid(conn)),
        "listener check, /proc/net read": _per_call(lambda: listener.listener_uids("127.0.0.1", port, proc_net=proc)),
        "listener check, sock_diag": _per_call(lambda: listener.listener_uids("127.0.0.1", port)),
    }
    print(f"{count} rows in /proc/net/tcp, load {os.getloadavg()[0]:.1f}")
    for what, (wall, cpu) in said.items():
        print(f"  {what:34s} {wall:8.3f} ms wall {cpu:8.3f} ms CPU per call")
    for sock in held:
        sock.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 9000)
