"""red31 R6: ``GET queue`` showed every pending service's declared ``port`` to every user (and its ``PortInUse``
reason said the number), so another account could bind that port first — from a terminal, outside the
scheduler — and keep the service pending for as long as it liked. Now another user's waiting service shows no
port (not in ``port``, not in its reason's details or words); its owner and admins still read it.

Through the real server (pytest-jupyter), SQLite, simulated GPUs, the local executor and a real listening socket
of another process (the port bound outside the scheduler)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from .conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, wait_for

HOLD = ("import socket, time; s = socket.create_server(('127.0.0.1', 0)); "
        "print(s.getsockname()[1], flush=True); time.sleep(600)")


async def test_red31_r6_another_users_pending_service_shows_no_port_in_the_queue(sched_app: Any, api: Any) -> None:
    outside = subprocess.Popen([sys.executable, "-c", HOLD], stdout=subprocess.PIPE, text=True)
    assert outside.stdout is not None
    port = int(outside.stdout.readline())
    try:
        status, job = await api("POST", "jobs", {"gpus": 1, "kind": "inference", "port": port, "name": "serve",
                                                 "command": [sys.executable, "-c", "import time; time.sleep(60)"]})
        assert status == 201, job

        async def line_of(token: str) -> Any:
            _, queue = await api("GET", "queue", token=token)
            line = next((e for e in queue if e["id"] == job["id"]), None)
            return line if line is not None and (line.get("reason") or {}).get("code") == "PortInUse" else None

        other = await wait_for(lambda: line_of(JUDY_TOKEN), timeout_s=30)  # judy: another user
        assert "port" not in other or other["port"] is None, other
        words = str(other["reason"])
        assert str(port) not in words and "its declared port" in words, words
        for token in (IVAN_TOKEN, BOSS_TOKEN):  # its owner and an admin read the number
            seen = await line_of(token)
            assert seen is not None and seen["port"] == port and seen["reason"]["details"]["port"] == port, seen
            assert f"port {port}" in seen["reason"]["text"]["summary"], seen["reason"]["text"]
    finally:
        outside.kill()
        outside.wait(timeout=30)
    await api("DELETE", f"jobs/{job['id']}", token=BOSS_TOKEN)
