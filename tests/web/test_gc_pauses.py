"""A started scheduler server freezes its start-up heap and collects young objects less often, so
full collections stop walking the whole server every few seconds (issue 17: 620 ms pauses were
the tail of ``jupyter-sched status`` under load); and it shortens the interpreter's switch
interval, so a request that gave the GIL up for a SQL statement gets it back from the engine's
thread within half a millisecond instead of 5 (the submit tail, issue 17)."""

from __future__ import annotations

import gc
import sys
from typing import Any

import pytest

from jupyter_sched.extension import gc_pauses


async def test_a_started_server_has_settled_its_heap(sched_app: Any, api: Any) -> None:
    status, _ = await api("GET", "config")
    assert status == 200
    assert gc.get_freeze_count() > 0, "the start-up heap is in the permanent generation"
    assert gc.get_threshold()[0] >= gc_pauses.YOUNG_THRESHOLD
    assert sys.getswitchinterval() <= sched_app.gil_switch_interval_ms / 1000 == 0.0005, \
        "the engine's thread hands the GIL to a waiting request within 0.5 ms, not CPython's 5"


def test_settling_happens_once_and_never_lowers_a_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    before, interval = gc.get_threshold(), sys.getswitchinterval()
    monkeypatch.setattr(gc_pauses, "_settled", False)
    try:
        gc.set_threshold(50_000, 10, 10)
        sys.setswitchinterval(0.005)
        assert gc_pauses.settle_heap(0.5) is True
        assert gc.get_threshold() == (50_000, 10, 10), "a higher threshold the process chose stays"
        assert sys.getswitchinterval() == pytest.approx(0.0005), "CPython's 5 ms shortened to the setting"
        sys.setswitchinterval(0.002)
        assert gc_pauses.settle_heap(0.1) is False, "once per process"
        assert sys.getswitchinterval() == pytest.approx(0.002), "a second server changes nothing"
    finally:
        gc.set_threshold(*before)
        sys.setswitchinterval(interval)


@pytest.mark.parametrize("setting_ms", [0.0, 20.0])
def test_a_switch_interval_of_zero_or_longer_than_the_processs_is_left_alone(
        monkeypatch: pytest.MonkeyPatch, setting_ms: float) -> None:
    before, interval = gc.get_threshold(), sys.getswitchinterval()
    monkeypatch.setattr(gc_pauses, "_settled", False)
    try:
        sys.setswitchinterval(0.001)
        assert gc_pauses.settle_heap(setting_ms) is True
        assert sys.getswitchinterval() == pytest.approx(0.001), "0 = Python's own; never lengthened"
    finally:
        gc.set_threshold(*before)
        sys.setswitchinterval(interval)
