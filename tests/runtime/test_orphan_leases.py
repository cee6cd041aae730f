"""Embedded: at start, leases are checked against the kernels that still run (issue 15, item 5).

Real parts: a ``SchedulerService`` on SQLite with simulated GPUs, leases granted by its engine, a
kernel "elsewhere" that is a real listening socket named by a real connection file in the runtime
dir. The server's kernel manager is represented by the one method the check calls on it,
``list_kernel_ids()`` (the real one is exercised by the web tests' kernel hooks).
"""

from __future__ import annotations

import json
import socket
import time
from datetime import datetime, timezone
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.extension.kernels import kernel_alive_elsewhere, release_orphan_leases
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store, sqlite_url


class ThisServersKernels:
    def __init__(self, ids: list[str]) -> None:
        self.ids = ids

    def list_kernel_ids(self) -> list[str]:
        return list(self.ids)


def connection_file(runtime: Path, kernel_id: str, port: int) -> None:
    (runtime / f"kernel-{kernel_id}.json").write_text(json.dumps({
        "ip": "127.0.0.1", "transport": "tcp", "shell_port": port, "key": "x"}))


def test_at_start_leases_of_gone_kernels_are_released_and_live_ones_kept(tmp_path: Path) -> None:
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=SimulatedInventory(3, node="n1"),
                           executor=LocalExecutor(tmp_path / "jobs"), clock=ManualClock(datetime.now(timezone.utc)),
                           cycle_interval_s=0.0)
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    elsewhere = socket.create_server(("127.0.0.1", 0))
    connection_file(runtime, "k-elsewhere", int(elsewhere.getsockname()[1]))
    with socket.create_server(("127.0.0.1", 0)) as closed:
        dead_port = int(closed.getsockname()[1])
    connection_file(runtime, "k-died-with-its-server", dead_port)
    try:
        ids = {kernel: svc.submit({"gpus": 1, "kernel_id": kernel}, user="ana", kind="lease")["id"]
               for kernel in ("k-mine", "k-elsewhere", "k-died-with-its-server")}
        deadline = time.monotonic() + 30
        while {svc.get_job(i, user="ana")["state"] for i in ids.values()} != {"running"}:
            assert time.monotonic() < deadline, "the leases were not granted"
            svc.tick()
        assert kernel_alive_elsewhere("k-elsewhere", str(runtime))
        assert not kernel_alive_elsewhere("k-died-with-its-server", str(runtime))
        released = release_orphan_leases(svc, ThisServersKernels(["k-mine"]), str(runtime))
        assert released == [ids["k-died-with-its-server"]]
        svc.tick()
        states = {kernel: svc.get_job(i, user="ana")["state"] for kernel, i in ids.items()}
        assert states == {"k-mine": "running", "k-elsewhere": "running", "k-died-with-its-server": "cancelled"}
        audit = [e for e in svc.audit(limit=50) if e.get("job_id") == ids["k-died-with-its-server"]]
        assert any(e["action"] == "lease_released" and "gone" in e["message"] for e in audit)
    finally:
        elsewhere.close()
        svc.store.close()
