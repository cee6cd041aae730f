"""A started scheduler server freezes its start-up heap and collects young objects less often, so
full collections stop walking the whole server every few seconds (issue 17: 620 ms pauses were
the tail of ``jupyter-sched status`` under load)."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from jupyter_sched.extension import gc_pauses


async def test_a_started_server_has_settled_its_heap(sched_app: Any, api: Any) -> None:
    status, _ = await api("GET", "config")
    assert status == 200
    assert gc.get_freeze_count() > 0, "the start-up heap is in the permanent generation"
    assert gc.get_threshold()[0] >= gc_pauses.YOUNG_THRESHOLD


def test_settling_happens_once_and_never_lowers_a_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    monkeypatch.setattr(gc_pauses, "_settled", False)
    try:
        gc.set_threshold(50_000, 10, 10)
        assert gc_pauses.settle_heap() is True
        assert gc.get_threshold() == (50_000, 10, 10), "a higher threshold the process chose stays"
        assert gc_pauses.settle_heap() is False, "once per process"
    finally:
        gc.set_threshold(*before)
