"""Red team 24, R5: ``GET jobs/{id}/notebook`` is streamed from the file, a few per user at once.

It read the run's ``executed.ipynb`` (a file the job's owner writes, up to 64 MiB) whole, decoded
it with ``errors="replace"`` (each invalid byte three bytes) and answered it in one piece: six slow
readers of one user held +1.15 GiB and every other request waited ~13 s. Real parts: the Jupyter
server with the extension, a finished job of ivan's, its job directory, raw sockets that stop
reading.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any

from jupyter_sched.extension.notebook_answer import MAX_NOTEBOOK_ANSWERS_PER_USER

from .conftest import IVAN_TOKEN, JUDY_TOKEN, wait_for


async def finished_job_dir(sched_app: Any, api: Any) -> tuple[str, Path]:
    """A finished 0-GPU command job of ivan's and its job directory (where a run leaves executed.ipynb)."""
    status, job = await api("POST", "jobs", {"command": ["true"], "gpus": 0})
    assert status == 201, job

    async def ended() -> bool:
        _, seen = await api("GET", f"jobs/{job['id']}")
        return bool(seen["state"] == "succeeded")

    await wait_for(ended)
    return str(job["id"]), Path(sched_app.services.ctx.executor.job_dir(job["id"]))


async def test_red24_r5_the_notebook_is_answered_with_the_files_own_bytes_never_decoded(
        sched_app: Any, api: Any, jp_fetch: Any) -> None:
    job_id, job_dir = await finished_job_dir(sched_app, api)
    written = b'{"cells": [], "x": "' + b"\xff" * (1 << 20) + b'"}'  # invalid UTF-8 was made three bytes each
    (job_dir / "executed.ipynb").write_bytes(written)
    response = await jp_fetch("api", "sched", "jobs", job_id, "notebook", headers={"Authorization": f"token {IVAN_TOKEN}"})
    assert response.code == 200
    assert response.headers["Content-Type"] == "application/x-ipynb+json"
    assert response.body == written


async def slow_reader(port: int, path: str) -> socket.socket:
    """A connection that asks for ``path`` as ivan, reads the answer's first bytes and then no more."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, ("127.0.0.1", port))
    await loop.sock_sendall(sock, f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token {IVAN_TOKEN}"
                                  "\r\n\r\n".encode())
    head = await asyncio.wait_for(loop.sock_recv(sock, 1024), 60)
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return sock


async def test_red24_r5_a_user_has_at_most_two_notebook_answers_under_way_then_429_with_retry_after(
        sched_app: Any, api: Any, jp_fetch: Any, jp_http_port: int, jp_base_url: str) -> None:
    job_id, job_dir = await finished_job_dir(sched_app, api)
    (job_dir / "executed.ipynb").write_bytes(b'{"cells": [], "x": "' + b"a" * (48 << 20) + b'"}')
    path = f"{jp_base_url.rstrip('/')}/api/sched/jobs/{job_id}/notebook"
    readers = [await slow_reader(jp_http_port, path) for _ in range(MAX_NOTEBOOK_ANSWERS_PER_USER)]
    try:
        busy = await jp_fetch("api", "sched", "jobs", job_id, "notebook", raise_error=False,
                              headers={"Authorization": f"token {IVAN_TOKEN}"})
        assert busy.code == 429, busy.body[:200]
        assert busy.headers["Retry-After"] == "2"
        error = json.loads(busy.body)["error"]
        assert error["code"] == "busy" and "wait for those downloads" in error["hint"]
        assert (await api("GET", "me"))[0] == 200  # the server answers others meanwhile
        assert (await api("GET", "me", token=JUDY_TOKEN))[0] == 200
    finally:
        for sock in readers:
            sock.close()

    async def free_again() -> bool:  # the slots are given back once the hung-up answers notice
        status, _ = await api("GET", f"jobs/{job_id}/notebook")
        return status == 200

    await wait_for(free_again)
