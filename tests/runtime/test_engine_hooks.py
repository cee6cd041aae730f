"""The engine's extension points: leader hooks (once per leading tick) and inventory observers.

Other parts (job definitions firing due runs, inventory-change events for the panel) hook into
the engine here; a broken hook must never stop scheduling.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.model import Inventory
from jupyter_sched.store import Store
from tests.runtime.builders import T0


def make_service(url: str, tmp_path: Path, owner: str, clock: ManualClock) -> SchedulerService:
    return SchedulerService(store=Store(url), inventory=SimulatedInventory(1, node="n1"),
                            executor=LocalExecutor(tmp_path / owner), clock=clock, owner_id=owner,
                            cycle_interval_s=0.0)


def test_leader_hooks_run_once_per_leading_tick_and_a_failing_one_stops_nothing(sqlite_db: str,
                                                                                tmp_path: Path) -> None:
    clock = ManualClock(T0)
    leader, follower = make_service(sqlite_db, tmp_path, "a", clock), make_service(sqlite_db, tmp_path, "b", clock)
    calls: list[str] = []

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("a definitions bug")

    leader.engine.leader_hooks.extend([broken, lambda: calls.append("fine")])
    follower.engine.leader_hooks.append(lambda: calls.append("follower"))
    job = leader.submit({"gpus": 1, "kernel_id": "k-1"}, user="ana", kind="lease")
    report = leader.tick()
    follower.tick()
    assert report.leader and report.admitted == [job["id"]]  # the cycle ran despite the broken hook
    assert calls == ["broken", "fine"]  # the follower leads nothing, so its hook never runs


def test_inventory_observers_see_each_cycles_inventory_but_not_dry_runs(sqlite_db: str, tmp_path: Path) -> None:
    svc = make_service(sqlite_db, tmp_path, "a", ManualClock(T0))
    seen: list[Inventory] = []
    svc.engine.decider.inventory_observers.append(seen.append)

    def broken(_: Any) -> None:
        raise ValueError("publisher bug")

    svc.engine.decider.inventory_observers.append(broken)
    svc.tick()
    assert [gpu.uuid for node in seen[0].nodes for gpu in node.gpus] == ["GPU-sim-n1-0"]
    svc.engine.snapshot()  # a dry run's snapshot is not the engine's cycle
    assert len(seen) == 1
