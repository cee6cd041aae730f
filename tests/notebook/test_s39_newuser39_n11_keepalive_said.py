"""newuser39 n11: after ``%gpu keepalive`` nothing showed the lease was kept — ``%gpu status``, ``jobs``,
``queue --mine`` (and the panel) still said only "reclaimed after 30m idle", and a second keepalive's refusal
did not say until when the first one keeps the GPUs.

A real jupyter_server with jupyter_sched and a real kernel; the simulated inventory's telemetry drives idle
detection (this machine has no GPU), so the keepalive is the real REST call and the engine's idle ladder.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import pytest
from nb_harness import TOKEN, Kernel, wait_for

from jupyter_sched.client import AsyncSchedClient, Connection
from jupyter_sched.model.units import clock_text
from jupyter_sched.wording.jobs import ends_by, kept_alive_until

StartKernel = Callable[..., Awaitable[Kernel]]


@pytest.fixture
def api(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[AsyncSchedClient]:
    client = AsyncSchedClient(Connection(f"http://localhost:{jp_http_port}/", TOKEN))
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def test_newuser39_n11_a_kept_lease_says_until_when_on_every_line_and_in_the_second_refusal(
        start_kernel: StartKernel, api: AsyncSchedClient) -> None:
    k1 = await start_kernel()
    granted = await k1.run("%gpu request 1")
    assert granted.error is None, granted.text
    [lease] = [lease for lease in await api.leases() if lease.get("kernel_id") == k1.id]
    release = lease.get("idle_release") or {}
    assert release.get("action") == "release" and "keepalive_until" not in release, release

    kept = await k1.run("%gpu keepalive")
    assert kept.error is None and "keepalive recorded" in kept.stdout, kept.text

    async def said() -> bool:  # the engine's idle ladder takes the keepalive at its next cycle
        return kept_alive_until((await api.lease(lease["id"])).get("idle_release")) is not None

    await wait_for(said, timeout_s=20)
    row = await api.lease(lease["id"])
    until = kept_alive_until(row["idle_release"])
    assert until is not None and until > datetime.now(timezone.utc)
    now = datetime.now(timezone.utc)
    clock = clock_text(until, now)
    # `jupyter-sched jobs` / `queue --mine` (cli.commands._ends_by) render the REST row with this line
    line = ends_by(row, now, cancel="jupyter-sched cancel")
    assert f"not before {clock}: kept while idle until then (its keepalive)" in line, line
    queued = [r for r in await api.queue() if r.get("id") == lease["id"]]
    assert queued and kept_alive_until(queued[0].get("idle_release")) == until, queued

    status = await k1.run("%gpu status")
    assert f"Keepalive: kept while idle until {clock} (its keepalive); reclaimed after " in status.stdout, status.stdout
    assert "idle, not before then." in status.stdout, status.stdout

    again = await k1.run("%gpu keepalive")
    text = again.stdout + again.stderr + again.text
    assert "keepalive was already used for this allocation" in text, text
    assert f"it keeps its GPUs while idle until {clock}" in text, text
