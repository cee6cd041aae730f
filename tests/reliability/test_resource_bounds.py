"""Resource bounds: clients that stop reading cannot grow the server's memory (issue 10 item 6).

* Event stream: a few SSE clients connect and then never read while the server publishes a large
  volume of events (submissions with a 32 KiB environment each). The hub drops each client once
  ``events_queue_size`` events are queued for it (the documented limit), so the server's RSS
  (psutil) grows by far less than the volume it would have buffered, and the Prometheus metrics
  count the dropped clients.
* Followed logs: clients ask for ``logs?follow=true`` of a job that wrote several MiB and never
  read the answer; each answer is capped at ``limit`` (at most 1 MiB, the documented maximum),
  so memory grows by at most about clients x limit, not the log size.

The store's leader lease is held by a non-scheduler (``fuzz.hold_leadership``) where jobs must
not run, so the measurements see the web layer only.
"""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from .fuzz import hold_leadership
from .harness import EmbeddedServer, wait_until

pytestmark = pytest.mark.timeout(300)

MIB = 1 << 20
QUEUE = 32  # events_queue_size for the server under test
STALLED = 16  # many stalled readers: unbounded buffering would grow ~STALLED x what the store itself keeps
EVENTS = 160
PAYLOAD = 32 * 1024


def stalled_client(server: EmbeddedServer, path: str) -> socket.socket:
    """Send a GET and never read the answer (tiny receive buffer: the server's writes back up fast)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(f"GET /api/sched/{path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token {server.token}\r\n"
                 "Accept: text/event-stream\r\n\r\n".encode())
    return sock


def metric(server: EmbeddedServer, name: str) -> float:
    text = httpx.get(server.api + "metrics", headers=server.headers(), timeout=30).text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    raise AssertionError(f"metric {name} not exported")


def test_sse_clients_that_stop_reading_are_dropped_and_memory_stays_bounded(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'sched.sqlite'}"
    hold_leadership(db_url)
    server = EmbeddedServer.start(tmp_path, db_url=db_url, events_queue_size=QUEUE)
    sockets = []
    try:
        with server.client() as c:
            def submit(n: int) -> None:
                r = c.post("jobs", json={"gpus": 1, "command": ["true"], "name": f"ev-{n}",
                                         "env": {"PAYLOAD": "x" * PAYLOAD}})
                assert r.status_code == 201, r.text

            for n in range(QUEUE):  # warm-up: caches, pools and the allocator reach their working size
                submit(n)
            sockets = [stalled_client(server, "events") for _ in range(STALLED)]
            wait_until(lambda: metric(server, "jupyter_sched_event_clients") == STALLED, "the stalled clients")
            before = server.rss_bytes()
            for n in range(EVENTS):
                submit(QUEUE + n)
            wait_until(lambda: metric(server, "jupyter_sched_event_clients_dropped_total") == STALLED,
                       "the hub to drop every stalled client")
            grown = server.rss_bytes() - before
            assert metric(server, "jupyter_sched_event_clients") == 0
            assert c.get("config").status_code == 200, "the server still answers"
    finally:
        for sock in sockets:
            sock.close()
        server.kill()
    would_buffer = STALLED * EVENTS * PAYLOAD
    # bounded: each stalled client holds at most its queue (plus what tornado had already buffered
    # and allocator slack): about 16 MiB here, measured 17.5-20.8 MiB. The limit sits halfway to
    # what unbounded buffering holds (80 MiB), so noise cannot fail it and a leak cannot pass it.
    bounded = STALLED * QUEUE * PAYLOAD
    print(f"\nSSE: {STALLED} stalled clients, {EVENTS} events of {PAYLOAD // 1024} KiB: RSS grew "
          f"{grown / MIB:.1f} MiB (bounded queues hold ~{bounded / MIB:.0f} MiB; unbounded buffering would hold "
          f"{would_buffer / MIB:.0f} MiB)")
    assert grown < (bounded + would_buffer) / 2


def test_followed_logs_answer_at_most_limit_bytes_to_clients_that_never_read(tmp_path: Path) -> None:
    server = EmbeddedServer.start(tmp_path)
    sockets = []
    try:
        with server.client() as c:
            script = "import sys\nfor _ in range(8):\n    sys.stdout.write('y' * (1 << 20))\n"
            job = c.post("jobs", json={"gpus": 1, "command": [sys.executable, "-c", script]}).json()
            wait_until(lambda: c.get(f"jobs/{job['id']}").json()["state"] == "succeeded", "the chatty job")
            size = c.get(f"jobs/{job['id']}/logs", params={"offset": 0, "limit": MIB}).json()["next_offset"]
            assert size == MIB, "one answer carries at most limit bytes"
            before = server.rss_bytes()
            sockets = [stalled_client(server, f"jobs/{job['id']}/logs?follow=true&limit={MIB}") for _ in range(8)]
            time.sleep(1.0)  # let the server read the log chunks and block on the stalled sockets
            grown = server.rss_bytes() - before
            with pytest.raises(httpx.HTTPStatusError):
                c.get(f"jobs/{job['id']}/logs", params={"limit": 8 * MIB}).raise_for_status()
            assert c.get("config").status_code == 200
    finally:
        for sock in sockets:
            sock.close()
        server.kill()
    print(f"\nlogs: 8 stalled followers of an 8 MiB log: RSS grew {grown / MIB:.1f} MiB")
    assert grown < 8 * 8 * MIB / 2, "memory tracks clients x limit, not clients x log size"
