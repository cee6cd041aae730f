"""Cost of one firing pass with many active definitions whose specs are big, nothing due (red29 R3).

red29 R3: 1,500 active definitions (env, args and parameters 60 x 1 KB each, under their caps: ~180 KB
a spec) made every firing pass (every 5 s on the leading engine's thread, and after each definition
write) read and decode every spec: ~1.2 s a pass, another user's submit -> start 1.4 -> 6.0 s median.
Now the pass reads only the columns that say what is due, from the index ix_definitions_firing alone (store
version 25), and the whole row of due definitions only.

This script writes one such definition through the real service and ``--definitions - 1`` copies of it
straight into a real SQLite store (as the red team's SQL did; the per-user cap is 100), then times
``--passes`` passes of the new ``fire_due`` beside, in the same run, the baseline: the old pass's read,
every active row decoded whole (``list_definitions(active_only=True)``) plus the same cached due check.
Prints the median of both, their ratio and the load average.

Run: ``.venv/bin/python benchmarks/definitions_firing_specs_bench.py [--definitions 1500] [--passes 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.definitions import DefinitionSettings
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.store import SortableIds, Store
from jupyter_sched.store import definitions as stored


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1500)
    parser.add_argument("--passes", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock(datetime(2026, 12, 6, 5, 30, tzinfo=timezone.utc))
        store = Store(f"sqlite:///{Path(tmp) / 'bench.sqlite'}", now=clock.now)
        services = Services(store=store, inventory=SimulatedInventory(4, node="n1"),
                            executor=LocalExecutor(Path(tmp) / "jobs"), clock=clock, ids=SortableIds(clock.now),
                            definitions=DefinitionSettings(limit_per_user=0))
        service = services.definitions
        body = {"name": "big", "script": "report.py", "schedule": "0 3 1 1 *", "gpus": 0,
                "env": {f"K{i}": "v" * 1000 for i in range(60)}, "args": ["a" * 1000] * 60,
                "parameters": {f"p{i}": "w" * 1000 for i in range(60)}}
        first = service.create(services.caller("mal", admin=False), parse(CreateDefinitionRequest, body)).id
        with store.transaction(write=False) as tx:
            model = stored.get_definition(tx, first)
        with store.transaction() as tx:
            for i in range(args.definitions - 1):
                assert model.created_at is not None
                stored.insert_definition(tx, replace(model, id=f"d-syn{i:05d}", name=f"syn{i}",
                                                     created_at=model.created_at + timedelta(seconds=i + 1)))
        clock.advance(1)
        firing = service.firing
        firing.fire_due()  # the first pass fills the next-firing cache (both sides use it)
        load_before = os.getloadavg()[0]
        new, old = [], []
        for _ in range(args.passes):
            started = time.perf_counter()
            report = firing.fire_due()
            new.append(time.perf_counter() - started)
            assert not report.created
            started = time.perf_counter()
            with store.transaction(write=False) as tx:
                rows = stored.list_definitions(tx, active_only=True)  # the old pass's read: every spec decoded
            due = [d for d in rows if (at := firing._due(d)) is not None and clock.now() >= at]
            old.append(time.perf_counter() - started)
            assert not due and len(rows) == args.definitions
            clock.advance(5)
        store.close()
    load_after = os.getloadavg()[0]
    n, o = statistics.median(new), statistics.median(old)
    print(f"{args.definitions} active definitions (~180 KB spec each), nothing due, {args.passes} passes "
          f"(load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs)")
    print(f"  fire_due per pass (firing index only):       {n * 1000:8.1f} ms")
    print(f"  baseline: every spec read and decoded:      {o * 1000:8.1f} ms")
    print(f"  ratio fire_due / baseline:                  {n / o:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
