"""``GET metrics`` scrapes are shared (red-team 3 finding 4): every user may scrape, and each
scrape reads every unfinished job, the inventory and the last admissions on the request threads
that also serve everyone's ``GET jobs`` / ``GET queue``. Concurrent scrapes wait for one
computation on the event loop, and its text serves again for ``min_interval_s``. Checked by
counting computations under a frozen clock, never by time."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
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


def _value(text: str, name: str) -> float:
    return next(s.value for family in text_string_to_metric_families(text) for s in family.samples if s.name == name)


async def test_red21_r5_metrics_say_while_etas_or_ticks_fail(sched_app: Any, api: Any,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """An admin's monitoring sees a failing ETA pass or failing ticks (the log names the cause once)."""
    from jupyter_sched.engine.apply import DecisionApplier

    registry = sched_app.metrics_registry
    now = [5000.0]
    registry.clock = lambda: now[0]
    _, text = await api("GET", "metrics", token=EVE_TOKEN)
    assert _value(text, "jupyter_sched_eta_failing") == 0 and _value(text, "jupyter_sched_engine_tick_failures") == 0
    services = sched_app.services
    # the state a failing ETA pass and seven failed ticks leave (kept: the live engine's cycles would reset it)
    monkeypatch.setattr(DecisionApplier, "_note_eta_failure", lambda self, cause: None)
    monkeypatch.setattr(services.engine.applier, "eta_failure", "OverflowError: … (at eta.py:443 in order)")
    monkeypatch.setattr(services, "runner", SimpleNamespace(failing=("OverflowError at eta.py:443 in order", 7)))
    now[0] += registry.min_interval_s
    _, text = await api("GET", "metrics", token=EVE_TOKEN)
    assert _value(text, "jupyter_sched_eta_failing") == 1
    assert _value(text, "jupyter_sched_engine_tick_failures") == 7
    assert "eta.py" not in text  # the cause is in the admins' log, not shown to every scraper
