"""New user 20: what the event stream says of a preemption (N20). Real store, core, engine and
subprocesses, as tests/runtime/test_engine.py; the events are read at the engine's publish sink."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.scheduling import SchedulingProfile
from tests.runtime.test_engine import gated, make_service, state_of, wait_until


def test_newuser20_n20_each_preempted_event_names_its_own_preemptor_with_its_name_and_why(
        sqlite_db: str, tmp_path: Path) -> None:
    """N20: the panel's Preempted toast paired the new preemptor's id with the previous preemptor's
    name — the ``preempted`` event carried only ``preempted_by``, and the panel kept the name a read
    had given for the one before. The event now names its preemptor (``preempted_by_name``) and says
    who and why in one clause (``preempted_by_text``), another user's work by its owner and quoted name."""
    # no minimum runtime: lowml, running again after its first eviction, may be preempted again at once
    svc = make_service(sqlite_db, tmp_path, gpus=1, priority_grants={"users": {"bob": ["high"], "cy": ["high"]}},
                       scheduling_profile=SchedulingProfile(min_runtime_s=0))
    seen: list[dict[str, Any]] = []
    sink = svc.engine.writer.publish

    def spy(event: dict[str, Any]) -> None:
        seen.append(event)
        sink(event)

    svc.engine.writer.publish = spy
    low = svc.submit({"name": "lowml", "priority": "low", "command": gated(tmp_path, "never")}, user="ana")
    wait_until(lambda: state_of(svc, low["id"]) == "running", "lowml to run", tick=svc.tick)
    hi = svc.submit({"name": "hi", "priority": "high", "command": gated(tmp_path, "never-hi")}, user="bob")
    wait_until(lambda: state_of(svc, hi["id"]) == "running", "hi to run", tick=svc.tick)
    svc.cancel(hi["id"], user="bob")
    wait_until(lambda: state_of(svc, low["id"]) == "running", "lowml to run again", tick=svc.tick)
    norm1 = svc.submit({"name": "norm1", "priority": "high", "command": gated(tmp_path, "never-norm1")}, user="cy")
    wait_until(lambda: state_of(svc, norm1["id"]) == "running", lambda: f"norm1 to run: {svc.get_job(norm1['id'], user='cy')['reason']}", tick=svc.tick)
    svc.cancel(norm1["id"], user="cy")
    svc.cancel(low["id"], user="ana")
    first, second = (e["data"] for e in seen if e["type"] == "preempted")
    assert (first["preempted_by"], first["preempted_by_name"]) == (hi["id"], "hi"), first
    assert first["preempted_by_text"] == f'by bob\'s job "hi" ({hi["id"]}), a higher-priority high job of team default'
    assert (second["preempted_by"], second["preempted_by_name"]) == (norm1["id"], "norm1"), second
    assert second["preempted_by_text"] == f'by cy\'s job "norm1" ({norm1["id"]}), a higher-priority high job of team default'

