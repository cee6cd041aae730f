"""Red team 18, R6 (security, by code reading): red17 R2's drain check saw only the open fds of the
processes *in the job's devices group*, so a GPU opened while lent survived the lease's release
(1) through an fd the job passed by ``SCM_RIGHTS`` to a process of the same account outside its
group, then closed, or (2) through a mapping of the device kept after ``close()``. The scan now
reads ``maps`` as well as ``fd/``, over every process of the owner's account on the host; the
kill at the grace still hits only the job's group, and a holder outside it keeps the lease held,
named with the words to end it (audited).

No NVIDIA driver here (``open()`` of a 195:N node is ENXIO, as in red17 R2's test): the fd
passed is an ``O_PATH`` fd on a real 195:1 node made with mknod, and — since an ``O_PATH`` fd
cannot be mapped — the mapping is of a regular file standing in for ``/dev/nvidia1``
(``LocalExecutor.gpu_nodes``), matched by device and inode in ``/proc/<pid>/maps`` as the node is.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.limits import LocalLimits, minor_resolver
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model import Allocation
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer
from tests.runtime.test_local_isolation import _gpu_nodes, _job, needs_v1
from tests.runtime.test_red17_r2 import _wait

# A process outside any job (started by the test, same account): takes one fd by SCM_RIGHTS on
# <folder>/sock and keeps it.
RECEIVER = """
import os, socket, sys, time
folder = sys.argv[1]
server = socket.socket(socket.AF_UNIX)
server.bind(os.path.join(folder, "sock"))
server.listen(1)
conn, _ = server.accept()
_, fds, _, _ = socket.recv_fds(conn, 16, 4)
open(os.path.join(folder, "got"), "w").write(str(fds))
time.sleep(600)
"""

# The job: once "open" exists, opens <dev>/nvidia1 (O_PATH: no driver), passes it to the receiver
# and closes its own copy; goes on until "end" exists.
PASSER = """
import socket
dev, folder = sys.argv[1], sys.argv[2]
while not os.path.exists(os.path.join(dev, "open")):
    time.sleep(0.05)
fd = os.open(os.path.join(dev, "nvidia1"), os.O_PATH)
sock = socket.socket(socket.AF_UNIX)
sock.connect(os.path.join(folder, "sock"))
socket.send_fds(sock, [b"x"], [fd])
os.close(fd)
open(os.path.join(folder, "sent"), "w").close()
while not os.path.exists(os.path.join(dev, "end")):
    time.sleep(0.05)
"""

# The job: maps the stand-in of /dev/nvidia1, closes the fd, keeps the mapping until "end" exists.
MAPPER = """
import mmap
standin, folder = sys.argv[1], sys.argv[2]
fd = os.open(standin, os.O_RDWR)
mapped = mmap.mmap(fd, 4096)
os.close(fd)
open(os.path.join(folder, "mapped"), "w").close()
while not os.path.exists(os.path.join(folder, "end")):
    time.sleep(0.05)
mapped.close()
"""


def _receiver(folder: Path) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen([sys.executable, "-c", RECEIVER, str(folder)])
    _wait("receiver listening", lambda: (folder / "sock").exists())
    return proc


def _executor(tmp_path: Path) -> tuple[LocalExecutor, list[str]]:
    snapshot = SimulatedInventory(4, node="n1").current()
    ex = LocalExecutor(tmp_path / "jobs", limits=LocalLimits(), gpu_minor=minor_resolver(lambda: snapshot))
    return ex, [g.uuid for g in snapshot.gpus()]


@needs_v1
def test_red18_r6_an_fd_passed_outside_the_jobs_group_is_seen_and_never_killed(tmp_path: Path) -> None:
    """Before: ``gpus_open`` read only the group's ``fd/`` — {} once the job had passed the fd on
    and closed its copy. Now the receiver (same account, outside the group) is named; ``kill_pids``
    still refuses it (not the job's)."""
    dev, box = tmp_path / "dev", tmp_path / "box"
    _gpu_nodes(dev)
    box.mkdir()
    receiver = _receiver(box)
    ex, uuids = _executor(tmp_path)
    job = _job(tmp_path, "j-passer", PASSER, gpus=1, args=(str(dev), str(box)))
    try:
        ex.start(job, Allocation("n1", (uuids[0],)))
        ex.lend_gpus({job.id: [uuids[1]]})
        (dev / "open").touch()
        _wait("passed", lambda: (box / "got").exists() and (box / "sent").exists())
        held = _wait("seen", lambda: ex.gpus_open(job.id, [uuids[1]]))
        assert isinstance(held, dict) and list(held) == [uuids[1]] and receiver.pid in held[uuids[1]], held
        assert not set(held[uuids[1]]) & ex.job_pids(job.id), held  # the job's own copy is closed
        assert receiver.pid not in ex.job_pids(job.id)
        assert ex.kill_pids(job.id, [receiver.pid]) == [] and receiver.poll() is None  # never signalled
    finally:
        (dev / "end").touch()
        receiver.kill()
        receiver.wait()
    _wait("closed", lambda: ex.gpus_open(job.id, [uuids[1]]) == {})


@needs_v1
def test_red18_r6_a_mapping_kept_after_close_is_seen(tmp_path: Path) -> None:
    """Before: a process that mapped the node and closed the fd held nothing in ``fd/``; now its
    ``maps`` line (the stand-in's device and inode) names it."""
    standin = tmp_path / "nvidia1-standin"
    standin.write_bytes(b"\0" * 4096)
    ex, uuids = _executor(tmp_path)
    ex.gpu_nodes = {1: standin}
    job = _job(tmp_path, "j-mapper", MAPPER, gpus=1, args=(str(standin), str(tmp_path)))
    try:
        ex.start(job, Allocation("n1", (uuids[0],)))
        ex.lend_gpus({job.id: [uuids[1]]})
        _wait("mapped", lambda: (tmp_path / "mapped").exists())
        held = _wait("seen", lambda: ex.gpus_open(job.id, [uuids[1]]))
        assert isinstance(held, dict) and list(held) == [uuids[1]], held
        assert set(held[uuids[1]]) <= ex.job_pids(job.id) and len(held[uuids[1]]) == 1, held
        assert ex.gpus_open(job.id, [uuids[2]]) == {}  # only the mapped node's GPU
    finally:
        (tmp_path / "end").touch()
    _wait("unmapped", lambda: ex.gpus_open(job.id, [uuids[1]]) == {})


STOP_GRACE_S = 3.0
"""The server's stop grace (the default is 10 s; session 34: the test below waited it out)."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("r18r6"),
                               users={"tok-ann": "ann", "tok-bea": "bea", "tok-boss": "boss", OWNER_TOKEN: "boss"},
                               admin_users=["boss"], simulated_gpus=2, stop_grace_s=STOP_GRACE_S)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


@needs_v1
def test_red18_r6_a_holder_outside_the_job_keeps_the_lease_held_past_the_grace_named(
        server: EmbeddedServer, tmp_path: Path) -> None:
    """Through the service: ann's job passes the lent GPU's fd to ann's process outside the job and
    releases the lease. Before: the lease ended at once. Now it stays running past the stop grace
    (STOP_GRACE_S here) — the holder is not the job's, so it is not killed — its message names the pid and says
    to end it (the admin sees it in the audit), bea's job waits; once it is ended the lease ends."""
    ann, bea, boss = api(server, "tok-ann"), api(server, "tok-bea"), api(server, "tok-boss")
    dev, box = tmp_path / "dev", tmp_path / "box"
    _gpu_nodes(dev)
    box.mkdir()
    tmp_path.chmod(0o755)
    receiver = _receiver(box)
    try:
        code = tmp_path / "passer.py"
        code.write_text("import os, sys, time\n" + PASSER)
        made = ann.post("jobs", json={"gpus": 1, "command": [sys.executable, str(code), str(dev), str(box)],
                                      "name": "parent"})
        assert made.status_code == 201, made.text
        job_id = made.json()["id"]
        _wait("job running", lambda: ann.get(f"jobs/{job_id}").json()["state"] == "running")
        lease = ann.post("leases", json={"gpus": 1, "parent_job_id": job_id})
        assert lease.status_code == 201, lease.text
        lease_id = lease.json()["id"]
        _wait("lease running", lambda: ann.get(f"jobs/{lease_id}").json()["state"] == "running")
        (dev / "open").touch()
        _wait("passed", lambda: (box / "got").exists() and (box / "sent").exists())
        released = ann.delete(f"leases/{lease_id}")
        assert released.status_code == 200, released.text
        words = _wait("outside holder said", lambda: f"process(es) {receiver.pid} of ann's account, outside job"
                      in (m := ann.get(f"jobs/{lease_id}").json()["message"] or "") and m)
        assert f"end them (kill {receiver.pid})" in str(words), words
        other = bea.post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "name": "b-after"})
        assert other.status_code == 201, other.text
        other_id = other.json()["id"]
        time.sleep(STOP_GRACE_S + 4)  # past the stop grace: nothing of the job to kill, the receiver is not killed
        assert receiver.poll() is None
        assert ann.get(f"jobs/{lease_id}").json()["state"] == "running"
        assert bea.get(f"jobs/{other_id}").json()["state"] == "pending"  # the GPU is nobody else's yet
        audited = _wait("audited", lambda: [r for r in boss.get("audit", params={"job_id": lease_id, "limit": 100})
                                            .json() if r.get("action") == "lease_draining"
                                            and str(receiver.pid) in r["message"]])
        assert isinstance(audited, list) and "outside job" in audited[0]["message"], audited
    finally:
        receiver.kill()
        receiver.wait()
    _wait("lease ended", lambda: ann.get(f"jobs/{lease_id}").json()["state"] == "cancelled", timeout=40)
    _wait("bea's job started", lambda: bea.get(f"jobs/{other_id}").json()["state"] == "running", timeout=40)
    assert ann.get(f"jobs/{job_id}").json()["state"] == "running"
    (dev / "end").touch()
    bea.delete(f"jobs/{other_id}")
