"""``GET metrics`` scrapes are shared (red-team 3 finding 4): every user may scrape, and each
scrape reads every unfinished job, the inventory and the last admissions on the request threads
that also serve everyone's ``GET jobs`` / ``GET queue``. Concurrent scrapes wait for one
computation on the event loop, and its text serves again for ``min_interval_s``. Checked by
counting computations under a frozen clock, never by time."""

from __future__ import annotations

import asyncio
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from .conftest import EVE_TOKEN, JUDY_TOKEN


def _normal_pending(text: str) -> float:
    return next(s.value for family in text_string_to_metric_families(text) for s in family.samples
                if s.name == "jupyter_sched_queue_length" and s.labels.get("priority") == "normal")


async def test_redteam3_concurrent_metrics_scrapes_share_one_computation(sched_app: Any, api: Any, kernel: Any) -> None:
    registry = sched_app.metrics_registry
    now = [1000.0]
    registry.clock = lambda: now[0]  # frozen: every scrape below falls in one interval
    before = registry.computations
    answers = await asyncio.gather(*(api("GET", "metrics", token=EVE_TOKEN) for _ in range(12)))
    assert {status for status, _ in answers} == {200}, answers[:1]
    assert len({text for _, text in answers}) == 1
    assert registry.computations - before == 1, "twelve concurrent scrapes computed more than once"

    _, hold = await api("POST", "leases", {"gpus": 4, "kernel_id": await kernel()}, token=JUDY_TOKEN,
                        params={"wait_ms": "20000"})
    assert hold["allocation"], hold
    _, job = await api("POST", "jobs", {"gpus": 1, "command": ["true"]}, token=JUDY_TOKEN)
    assert job["state"] == "pending", job
    status, kept = await api("GET", "metrics", token=EVE_TOKEN)
    assert status == 200 and _normal_pending(kept) == 0, "inside the interval the last text is served"
    assert registry.computations - before == 1

    now[0] += registry.min_interval_s  # the interval has passed: the next scrape computes again
    status, fresh = await api("GET", "metrics", token=EVE_TOKEN)
    assert status == 200 and _normal_pending(fresh) == 1, fresh
    assert registry.computations - before == 2
