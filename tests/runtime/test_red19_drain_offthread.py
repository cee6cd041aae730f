"""Red team 19, R7: the drain check of a released lent lease read every ``/proc/<pid>/maps`` line of
the owner's processes ON THE ENGINE THREAD — 10 s of scheduler freeze per release with 40 processes of
60,000 mappings each, everyone's admissions, exits and preemptions waiting.

The executor's probe (``gpus_open``) now runs in a worker; the lease stays "draining" (its owner's cost)
until a scan answers, and the engine goes on. The slow scan is a blocking fake (an event the test
opens), not a timing; the maps reading itself is checked to parse only lines that may name a GPU.

Real parts: SQLite store, the engine, the local executor (its probe replaced by the blocking fake).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors import limits
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url
from tests.runtime.builders import T0


class SlowProbe:
    """``gpus_open`` that blocks until :attr:`gate` opens (at most 60 s), then says ``pid`` holds the GPU
    (or, once :attr:`free`, nothing does); records the threads it ran on."""

    def __init__(self, pid: int) -> None:
        self.gate = threading.Event()
        self.started = threading.Event()
        self.free = False
        self.pid = pid
        self.threads: list[int] = []

    def __call__(self, job_id: str, gpu_uuids: Sequence[str]) -> dict[str, list[int]]:
        self.threads.append(threading.get_ident())
        self.started.set()
        self.gate.wait(60)
        return {} if self.free else {gpu_uuids[0]: [self.pid]}


def test_red19_r7_a_slow_drain_scan_does_not_hold_the_engine_another_users_job_is_admitted(tmp_path: Path) -> None:
    """Failed before: the tick ran the probe itself (the fake blocked the engine thread for its 60 s,
    ran on the engine's thread, and bob's job waited behind it)."""
    clock = ManualClock(T0)
    executor = LocalExecutor(tmp_path / "jobs")
    services = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now),
                        inventory=SimulatedInventory(4, node="vm"), executor=executor, clock=clock)
    ana, bob = services.caller("ana", admin=False), services.caller("bob", admin=False)
    job = services.jobs.submit(ana, SubmitJobRequest(gpus=1, name="train", command=["sleep", "60"]))
    services.engine.tick()
    lease = services.leases.request(ana, SubmitJobRequest(gpus=1, parent_job_id=job.id))
    services.engine.tick()
    assert services.jobs.get(ana, lease.id).state == "running"
    probe = SlowProbe(pid=os.getpid())
    executor.gpus_open = probe  # type: ignore[method-assign]
    services.engine.stops.scans.wait_s = 0.0  # the fake never answers within a wait: no wait spent on it
    try:
        services.jobs.cancel(ana, lease.id)
        clock.advance(1)
        services.engine.tick()  # starts the scan; must come back while it blocks
        assert probe.started.wait(60), "the scan was started"
        assert not probe.gate.is_set()
        engine_thread = threading.get_ident()
        assert probe.threads and engine_thread not in probe.threads, "the scan ran on the engine's thread"
        seen = services.jobs.get(ana, lease.id)
        assert seen.state == "running", "held (the owner's cost) until a scan answers"
        assert seen.message.startswith(f"releasing: checking which processes of job {job.id} and of ana's account "
                                       f"still hold GPU"), seen.message
        other = services.jobs.submit(bob, SubmitJobRequest(gpus=1, name="bob", command=["sleep", "60"]))
        clock.advance(1)
        services.engine.tick()
        assert services.jobs.get(bob, other.id).state == "running", "bob's job admitted while ana's scan runs"
    finally:
        probe.free = True
        probe.gate.set()
    for _ in range(50):  # the scan answers (free) at a later tick: the lease ends
        clock.advance(1)
        services.engine.tick()
        if services.jobs.get(ana, lease.id).state == "cancelled":
            break
        threading.Event().wait(0.05)
    assert services.jobs.get(ana, lease.id).state == "cancelled"
    for j in (job.id, other.id):
        services.jobs.cancel(services.caller("boss", admin=True), j)
    services.engine.tick()
    services.store.close()


def test_red19_r7_maps_reading_parses_only_lines_that_may_name_a_gpu(tmp_path: Path) -> None:
    """A maps file of many mappings of the user's own files: only the line of the node's inode and the
    ``/dev`` line are split (the others are skipped by byte search); the node's mapping is still found."""
    node = tmp_path / "nvidia1"
    node.write_bytes(b"x")
    st = os.stat(node)
    dev = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}"
    own = [f"7f{i:010x}-7f{i + 1:010x} r--p 00000000 fd:01 {900000 + i}    /home/ana/sparse" for i in range(5000)]
    lines = [*own[:2500], f"7f0000000000-7f0000001000 rw-s 00000000 {dev} {st.st_ino}    /somewhere/else",
             "7f0000002000-7f0000003000 rw-s 00000000 00:05 77    /dev/zero", *own[2500:]]
    maps = tmp_path / "maps"
    maps.write_text("\n".join(lines) + "\n")
    picked = limits._candidate_lines(maps.read_bytes(), {st.st_ino})
    assert len(picked) == 2 and str(st.st_ino) in picked[0] and picked[1].endswith("/dev/zero"), picked
    assert limits._mapped_minors(maps, {(st.st_dev, st.st_ino): 1}, {1}) == {1}
