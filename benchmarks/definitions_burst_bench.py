"""Engine stall while one user's burst of due definitions fires (red36, s37-defs).

red36: 100 minutely definitions of one user (the per-user cap), an 8.5 MiB notebook each, fired in one
burst on the engine's thread (~128 ms a firing: the notebook read and checked, the job admitted) — ~13 s
in which nothing was scheduled for anyone; another user's submit → start went from ~0.5 s to 1.4-3.6 s.
The engine's hook now starts the pass on its own thread and returns. (On this version a firing does
not read its notebook again, so the notebook's size barely matters here: the burst is the firings'
store transactions and admission, red36's 43 ms a firing.)

Each arm builds real services on a fresh SQLite store with a manual clock: one GPU held by a running
job (so the burst's 1-GPU runs wait and no notebook starts), ``--definitions`` minutely definitions of
``fay`` whose notebook is ``--notebook-mib`` MiB of markdown, all due. The engine then ticks in a loop
(as its runner does, ``--poll-s`` apart) while, ``--probe-after-s`` into the burst, another user submits a
0-GPU job; the arm ends when that job is admitted and the burst's runs all exist. Printed per arm: the
longest engine tick (the stall), the probe's submit → admitted time, the burst's length; the baseline
arm runs the pass inline in the tick (the hook as it was), the new arm the real hook; and the ratios.

Run: ``.venv/bin/python benchmarks/definitions_burst_bench.py [--definitions 100] [--notebook-mib 8.5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.definitions import DefinitionSettings
from jupyter_sched.services.models import CancelJobsRequest, SubmitJobRequest, parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.store import SortableIds, Store
from jupyter_sched.store import definitions as stored

T0 = datetime(2026, 12, 7, 7, 0, 30, tzinfo=timezone.utc)


@dataclass
class Arm:
    longest_tick_s: float
    probe_s: float
    burst_s: float
    runs: int


def write_notebook(path: Path, mib: float) -> None:
    """A notebook of markdown cells, ``mib`` MiB of JSON (as red36's)."""
    line = "lorem ipsum dolor sit amet " * 37 + "\n"  # ~1 KB
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [line] * 64}
             for _ in range(max(1, int(mib * 1024 / 64)))]
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                            "language": "python"}},
                                "nbformat": 4, "nbformat_minor": 5}))


def arm(tmp: Path, *, inline: bool, definitions: int, notebook: Path, poll_s: float, probe_after_s: float) -> Arm:
    clock = ManualClock(T0)
    store = Store(f"sqlite:///{tmp / 'bench.sqlite'}", now=clock.now)
    services = Services(store=store, inventory=SimulatedInventory(1, node="n1"), executor=LocalExecutor(tmp / "jobs"),
                        clock=clock, ids=SortableIds(clock.now),
                        definitions=DefinitionSettings(limit_per_user=0, max_firings_per_user_hour=0))
    engine, jobs, defs = services.engine, services.jobs, services.definitions
    holder, fay, gil = (services.caller(u, admin=False) for u in ("holder", "fay", "gil"))
    held = jobs.submit(holder, SubmitJobRequest(gpus=1, name="holds", command=["sleep", "600"]))
    while jobs.get(holder, held.id).state != "running":
        engine.tick()
        time.sleep(0.02)
    body = {"notebook": str(notebook), "schedule": "* * * * *", "timezone": "UTC", "gpus": 1, "overlap": "allow"}
    first = defs.create(fay, parse(CreateDefinitionRequest, {**body, "name": "m0"})).id
    with store.transaction(write=False) as tx:
        model = stored.get_definition(tx, first)
    assert model.created_at is not None
    from dataclasses import replace

    with store.transaction() as tx:  # the rest as copies: creating each reads the notebook too (setup, not measured)
        for i in range(1, definitions):
            stored.insert_definition(tx, replace(model, id=f"d-burst{i:04d}", name=f"m{i}",
                                                 created_at=model.created_at + timedelta(microseconds=i)))
    if inline:  # the hook as it was: the whole pass inside the engine's tick
        engine.leader_hooks[engine.leader_hooks.index(defs.on_leader_tick)] = defs.fire_due
    engine.tick()  # the pass before the minute: nothing due
    defs.wait_firing(60)
    clock.set(T0 + timedelta(seconds=35))  # 07:01:05: every definition is due
    probe: list[str] = []
    submitted_at: list[float] = []

    def submit_probe() -> None:
        time.sleep(probe_after_s)
        submitted_at.append(time.perf_counter())
        probe.append(jobs.submit(gil, SubmitJobRequest(gpus=0, name="probe", command=["sleep", "60"])).id)

    prober = threading.Thread(target=submit_probe, daemon=True)
    longest, admitted_at, started = 0.0, None, time.perf_counter()
    prober.start()
    burst_end = None
    while admitted_at is None or burst_end is None:
        tick_at = time.perf_counter()
        engine.tick()
        now = time.perf_counter()
        longest = max(longest, now - tick_at)
        if admitted_at is None and probe and jobs.get(gil, probe[0]).state != "pending":
            admitted_at = now
        if burst_end is None and not defs.firing_running and store.count_jobs(user="fay") >= definitions:
            burst_end = now
        time.sleep(poll_s)
    runs = store.count_jobs(user="fay")
    jobs.cancel_many(services.caller("root", admin=True), CancelJobsRequest(all=True))
    for _ in range(20):
        engine.tick()
        if not services.executor.tracked():
            break
        time.sleep(0.1)
    store.close()
    return Arm(longest, admitted_at - submitted_at[0], burst_end - started, runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=100)
    parser.add_argument("--notebook-mib", type=float, default=8.5)
    parser.add_argument("--poll-s", type=float, default=0.05)
    parser.add_argument("--probe-after-s", type=float, default=0.3)
    args = parser.parse_args()
    results: dict[str, Arm] = {}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        notebook = Path(tmp) / "report.ipynb"
        write_notebook(notebook, args.notebook_mib)
        for name, inline in (("baseline", True), ("new", False)):
            folder = Path(tmp) / name
            folder.mkdir()
            results[name] = arm(folder, inline=inline, definitions=args.definitions, notebook=notebook,
                                poll_s=args.poll_s, probe_after_s=args.probe_after_s)
        size = notebook.stat().st_size / 2**20
    load_after = os.getloadavg()[0]
    base, new = results["baseline"], results["new"]
    print(f"{args.definitions} due minutely definitions of one user, a {size:.1f} MiB notebook each; another user's "
          f"0-GPU submit {args.probe_after_s:g} s into the burst (load average {load_before:.1f} -> {load_after:.1f} "
          f"on {os.cpu_count()} CPUs)")
    for name, r in results.items():
        print(f"  {name:8}: longest engine tick {r.longest_tick_s:7.2f} s · probe submit -> admitted "
              f"{r.probe_s:7.2f} s · burst {r.burst_s:6.2f} s ({r.runs} runs)")
    print(f"  ratio new / baseline: longest tick {new.longest_tick_s / base.longest_tick_s:.3f}, "
          f"probe {new.probe_s / base.probe_s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
