"""red36 R1: one service job's readiness look (``PortOwner.look``) with a crowd of listening sockets another account
made (IPv4 on 127.100.x.y, IPv6 on fd00::x with ``IP_FREEBIND``, ports 20200-20249), in the same run for each tree
named: the tree's own look (this tree: the kernel's ``sock_diag`` for the one port) and, for this tree, the fallback
(``sock_diag`` refused: one bounded table read a cycle).

    python benchmarks/port_owner_bench.py [LISTENERS] [OTHER_TREE ...]   (default 56000; e.g. /work/main: before)
"""

from __future__ import annotations

import os
import subprocess
import sys

PER_PROCESS = 14000
CROWD = """
import resource, socket, sys, time
count, six = int(sys.argv[1]), sys.argv[2] == "6"
resource.setrlimit(resource.RLIMIT_NOFILE, (count + 64, max(count + 64, resource.getrlimit(resource.RLIMIT_NOFILE)[1])))
held, n = [], int(sys.argv[3])
while len(held) < count:
    for port in range(20200, 20250):
        s = socket.socket(socket.AF_INET6 if six else socket.AF_INET)
        if six:
            s.setsockopt(socket.IPPROTO_IP, 15, 1)  # IP_FREEBIND: any address, no privilege
            s.bind((f"fd00::{n:x}", port))
        else:
            s.bind((f"127.100.{n // 250}.{n % 250 + 1}", port))
        s.listen()
        held.append(s)
    n += 1
print("ready", flush=True)
time.sleep(3600)
"""
TIMING = """
import os, socket, statistics, sys, time
from jupyter_sched.executors import port_owner
fallback = sys.argv[1] == "fallback"
if fallback:
    from jupyter_sched import sock_diag
    sock_diag._NETLINK_SOCK_DIAG = 31  # as a host where it cannot be asked
service = socket.create_server(("127.0.0.1", 20299))
owner, took, cpu = port_owner.PortOwner(), [], []
for _ in range(16):
    if hasattr(port_owner, "TABLE"):
        port_owner.TABLE.next_cycle()  # one look a cycle (an executor poll): the worst case
    t, c = time.perf_counter(), time.process_time()
    answer = owner.look(os.getpid(), lambda: (), 20299)
    took.append((time.perf_counter() - t) * 1000)
    cpu.append((time.process_time() - c) * 1000)
print(f"first look {took[0]:7.2f} ms wall {cpu[0]:7.2f} ms CPU; the next 15: wall median {statistics.median(took[1:]):7.2f}"
      f" ms max {max(took[1:]):7.2f} ms, CPU median {statistics.median(cpu[1:]):7.2f} ms max {max(cpu[1:]):7.2f} ms; "
      f"answer {answer}")
"""


def main(listeners: int, trees: list[str]) -> None:
    crowd = []
    try:
        processes = max(1, listeners // PER_PROCESS)
        for i in range(processes):
            crowd.append(subprocess.Popen([sys.executable, "-c", CROWD, str(listeners // processes),
                                           "6" if i % 2 else "4", str(i * 1000)], stdout=subprocess.PIPE))
        for proc in crowd:
            assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
        with open("/proc/net/tcp") as four, open("/proc/net/tcp6") as six:
            rows = sum(1 for _ in four) + sum(1 for _ in six) - 2
        print(f"{rows} rows in /proc/net/tcp and tcp6, load {os.getloadavg()[0]:.1f}")
        here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for tree, mode in [(here, "kernel"), (here, "fallback"), *((t, "kernel") for t in trees)]:
            said = subprocess.run([sys.executable, "-c", TIMING, mode], env={**os.environ, "PYTHONPATH": tree},
                                  cwd=tree, capture_output=True, text=True, check=True).stdout.strip()
            print(f"  {tree} ({mode if tree == here else 'its own look'}): {said}")
    finally:
        for proc in crowd:
            proc.kill()
            proc.wait()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 56000, sys.argv[2:])
