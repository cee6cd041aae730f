"""newuser31 n16: ``%schedule serve app.py --port 18900`` on the lab's own port 18900 was accepted with "port 18900 is
bound on this host by a process outside the scheduler: the job waits until it is free" — that process is the
Jupyter server the user types into. A service's port that this server itself listens on is now refused at submit
and in the dry run, naming the field. Through the real server (pytest-jupyter, in this process)."""

from __future__ import annotations

import sys
from typing import Any


async def test_newuser31_n16_a_service_on_this_servers_own_port_is_refused(
        sched_app: Any, api: Any, jp_http_port: int) -> None:
    service = {"gpus": 0, "kind": "inference", "port": jp_http_port, "name": "on-the-lab",
               "command": [sys.executable, "-c", "import time; time.sleep(60)"]}
    for route in ("jobs", "dryrun"):
        status, body = await api("POST", route, service)
        assert status == 400, (route, body)
        assert body["error"]["field"] == "port", body
        assert f"port {jp_http_port} is this Jupyter server's own port" in body["error"]["message"], body
        assert f"e.g. {jp_http_port + 50}" in body["error"]["hint"], body
    status, jobs = await api("GET", "jobs")
    assert not [j for j in jobs if j.get("name") == "on-the-lab"], "nothing was submitted"
