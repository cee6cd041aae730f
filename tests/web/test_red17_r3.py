"""Red team 17, R3: a port bound by a process outside the scheduler (a terminal's ``http.server``)
was not seen at submit or admission: the service was admitted, charged, and failed "port in use".
Now the submit warns, the job pends ``PortInUse`` saying the port is bound by a process outside
the scheduler (re-checked each cycle, nothing started or failed meanwhile), and it starts once the
port is free. Through the real server (pytest-jupyter), SQLite, simulated GPUs, the local
executor, and a real listening socket of this test process."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from .conftest import BOSS_TOKEN, wait_for

SERVE = ("import socket, sys, time; s = socket.create_server(('127.0.0.1', int(sys.argv[1]))); "
         "time.sleep(60)")


async def test_red17_r3_a_port_bound_outside_is_warned_at_submit_and_pends_until_free(
        sched_app: Any, api: Any) -> None:
    """Failed before the fix: 201 without a warning, admitted at once, then failed 'port … in use'."""
    # a process of its own: a socket this (in-process) server's process listens on is the server's own port,
    # refused outright (newuser31 n16)
    outside = subprocess.Popen([sys.executable, "-c", "import socket, sys, time; s = socket.create_server(('127.0.0.1', 0)); "
                                "print(s.getsockname()[1], flush=True); time.sleep(600)"], stdout=subprocess.PIPE, text=True)
    assert outside.stdout is not None
    port = int(outside.stdout.readline())
    try:
        status, job = await api("POST", "jobs", {"gpus": 1, "kind": "inference", "port": port, "name": "a-serve",
                                                 "command": [sys.executable, "-c", SERVE, str(port)]})
        assert status == 201, job
        assert any(f"port {port} is bound on this host by a process outside the scheduler" in w
                   for w in job.get("warnings", [])), job.get("warnings")

        async def pends_port_in_use() -> Any:
            _, now = await api("GET", f"jobs/{job['id']}")
            reason = now.get("reason") or {}
            return now if reason.get("code") == "PortInUse" and "outside the scheduler" in reason["message"] else None

        seen = await wait_for(pends_port_in_use, timeout_s=20)
        assert seen["state"] == "pending" and seen["reason"]["details"]["port"] == port, seen
        _, again = await api("GET", f"jobs/{job['id']}")
        assert again["state"] == "pending" and not again.get("started_at"), "no burnt start meanwhile"
    finally:
        outside.kill()
        outside.wait(timeout=30)

    async def running() -> bool:
        _, now = await api("GET", f"jobs/{job['id']}")
        return bool(now["state"] == "running")

    await wait_for(running, timeout_s=30)  # the next cycle binds it free: started
    _, audit = await api("GET", "audit", params={"job_id": job["id"]}, token=BOSS_TOKEN)
    assert not [r for r in audit if r["action"] in ("failed", "start_failed")], audit
    await api("DELETE", f"jobs/{job['id']}", token=BOSS_TOKEN)
