"""Verify 24, V2: every large request body left ~15 MiB in the service for good.

A 7.5 MB body sent to ``POST api/sched/jobs`` — refused 400 (unknown field), or 403 with a made-up token
through the hub proxy, no account needed — grew ``jupyter-sched serve``'s memory by 14-21 MiB that never
came back: 190 requests took it to 3.5 GB, linearly. Three reference cycles held each body until a full
garbage collection, which large bodies (bytes, not containers) never prompt:

* the front door's map of requests to callers (a weak-key dictionary) held a value that held its key:
  tornado's delegate, with the body twice (``chunks`` and ``request.body``), was never freed;
* a connection's stream and its chunk-line reader (red team 21, R4) held each other: the stream's read
  buffer kept the body;
* JupyterHub's per-request ``get_login_url`` closure holds the handler: the handler, its request and
  its body.

Now the service's memory after the first few large bodies stays flat: it is measured (VmRSS of the
real process) over 16 more, with a bound of a few bodies in all, far under the 7-15 MiB each used to leave.

Real parts: ``jupyter-sched serve`` as a subprocess (tests/hub/test_red17_front_door.py's service)
asking the hub double (tests/hub/hub_double.py) about tokens, real TCP connections, /proc.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub

BODY_BYTES = 7_500_000
"""verify 24's body: about a carried notebook's size."""


@pytest.fixture(scope="module")
def service() -> Iterator[Service]:
    with shared_dir() as folder, _hub() as api:
        running = Service(folder, hub_api=api, hub_token=TOKEN)
        try:
            yield running
        finally:
            running.stop()


def _rss_mib(pid: int) -> float:
    """The resident memory of process ``pid`` (``VmRSS`` of /proc/PID/status), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmRSS in /proc/{pid}/status")


def _large_posts(service: Service, n: int, body: bytes) -> set[int]:
    """``n`` large ``POST jobs`` (alternately alice's unknown field: 400, and a made-up token: 401 from the head,
    the body unread — the front door asks the hub about a token not seen before first: verify 26, V11; it was a
    403 after the body was read), each on its own connection, answers read: their statuses."""
    statuses = set()
    for i in range(n):
        token = "token-of-alice" if i % 2 == 0 else secrets.token_hex(16)
        answer = httpx.post(service.base + "api/sched/jobs", content=body, timeout=60,
                            headers={"Content-Type": "application/json", "Authorization": f"token {token}"})
        statuses.add(answer.status_code)
    return statuses


def test_verify24_v2_large_refused_bodies_do_not_stay_in_the_services_memory(service: Service) -> None:
    # fails before the fix: +14 MiB per body (230 MiB over the 16 measured), never returned
    body = json.dumps({"junk": "x" * BODY_BYTES}).encode()
    assert _large_posts(service, 8, body) == {400, 401}  # the first few: buffers and caches settle
    before = _rss_mib(service.process.pid)
    assert _large_posts(service, 16, body) == {400, 401}
    grown = _rss_mib(service.process.pid) - before
    one_body = BODY_BYTES / (1 << 20)
    assert grown < 5 * one_body, (f"the service grew {grown:.0f} MiB over 16 refused {one_body:.1f} MiB bodies "
                                  f"({grown / 16:.1f} MiB each): bodies are kept after their answers")
