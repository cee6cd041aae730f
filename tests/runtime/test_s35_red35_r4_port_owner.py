"""red35 R4 (high): a service job's readiness check (the engine's thread, every 2 s for a ready service) ran psutil's
``net_connections()`` for each process of the job's tree — every descriptor read and the host's socket tables parsed
once per process: a 0-GPU job of 1,000 processes holding 800 sockets each, its listener in its last child, held every
start on the hub 55 to 122 s. Now one look reads the listening sockets once and at most ``FDS_PER_LOOK`` descriptors, the
search going on at the next look, and the holder found is checked first (one ``readlink``) from then on.
"""

from __future__ import annotations

import os
import subprocess
import sys

import psutil
import pytest

from jupyter_sched.executors import port_owner
from jupyter_sched.executors.port_owner import PortOwner, listening_inodes
from tests.runtime.test_local_executor import wait_until

# a service: a listener, many descriptors (socket pairs), 4 children keeping them all; only the LAST child keeps the
# listener (the others and the parent close it)
SERVICE = """
import os, socket, sys, time
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
pairs = [socket.socketpair() for _ in range(75)]
kids = []
for i in range(4):
    pid = os.fork()
    if pid == 0:
        if i != 3:
            listener.close()
        time.sleep(600)
        os._exit(0)
    kids.append(pid)
port = listener.getsockname()[1]
listener.close()
print(port, *kids, flush=True)
time.sleep(600)
"""


def test_red35_r4_a_service_jobs_readiness_look_is_bounded_by_descriptors_not_its_processes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before (no bounded look existed: ``net_connections()`` per process, host tables parsed each time). Now a
    look reads at most ``FDS_PER_LOOK`` descriptors and says "searching" until the holder is found; then one
    ``readlink`` a look; never psutil's per-process connections."""
    proc = subprocess.Popen([sys.executable, "-c", SERVICE], stdout=subprocess.PIPE)
    kids: list[int] = []
    try:
        assert proc.stdout is not None
        port, *kids = (int(n) for n in proc.stdout.readline().split())
        holder = kids[3]
        assert listening_inodes(proc.pid, port)  # the listener, seen in the namespace's table
        links = [0]
        real = os.readlink

        def counted(path: str, *args: object, **kwargs: object) -> str:
            links[0] += 1
            return real(path, *args, **kwargs)  # type: ignore[arg-type]

        def never(*args: object, **kwargs: object) -> None:
            raise AssertionError("psutil's per-process connections on the engine's thread")

        monkeypatch.setattr(port_owner, "FDS_PER_LOOK", 100)
        monkeypatch.setattr(os, "readlink", counted)
        monkeypatch.setattr(psutil.Process, "net_connections", never)
        owner = PortOwner()
        answers = []
        for _ in range(20):
            links[0] = 0
            answers.append(owner.look(proc.pid, lambda: kids, port))
            assert links[0] <= 100, links[0]
            if answers[-1] == "yes":
                break
        assert answers[0] == "searching" and answers[-1] == "yes", answers  # ~5 processes x 150+ descriptors
        links[0] = 0
        assert owner.look(proc.pid, lambda: kids, port) == "yes" and links[0] == 1  # where it was found last time
        os.kill(holder, 9)  # the holder goes (a zombie of its parent: its sockets closed): nothing listens any more
        wait_until(lambda: owner.look(proc.pid, lambda: kids, port) == "no", "the listener gone")
    finally:
        monkeypatch.undo()
        for pid in kids:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        proc.kill()
        proc.wait()
