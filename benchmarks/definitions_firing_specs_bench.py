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

Second line (session 38, s38-defs item 3): firings skipped over their owner's rate. ``--rate-definitions`` (100)
such minutely definitions of one owner, all due each minute, the owner past ``definition_max_firings_per_user_hour``
(60) after the first minute: every firing of ``--passes`` minutes is skipped. Timed per pass beside, in the same run,
the baseline — the same service whose pass decides nothing from memory (``RateSkips(0, …)``: each skip read the whole
row, the previous run and its job, and wrote the row in a transaction of its own, as before) — with the store
transactions each pass opened.

Run: ``.venv/bin/python benchmarks/definitions_firing_specs_bench.py [--definitions 1500] [--passes 5]
[--rate-definitions 100]``.
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
from typing import Any

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

BIG = {"schedule": "0 3 1 1 *", "gpus": 0, "env": {f"K{i}": "v" * 1000 for i in range(60)},
       "args": ["a" * 1000] * 60, "parameters": {f"p{i}": "w" * 1000 for i in range(60)}}
"""A ~180 KB spec (red29 R3's: env, args and parameters under their caps)."""


def rate_arm(tmp: Path, *, from_memory: bool, definitions: int, passes: int) -> tuple[float, float, int]:
    """Median seconds and store transactions of a pass whose ``definitions`` due firings are all over their owner's
    rate, and the firings skipped in all; ``from_memory`` False: the pass as before (:mod:`.rate_skips` off)."""
    from jupyter_sched.definitions.rate_skips import RateSkips

    clock = ManualClock(datetime(2026, 12, 7, 10, 0, 30, tzinfo=timezone.utc))
    store = Store(f"sqlite:///{tmp / 'rate.sqlite'}", now=clock.now)
    services = Services(store=store, inventory=SimulatedInventory(4, node="n1"), executor=LocalExecutor(tmp / "jobs"),
                        clock=clock, ids=SortableIds(clock.now),
                        definitions=DefinitionSettings(limit_per_user=0, max_firings_per_user_hour=60))
    body = {**BIG, "name": "r0", "script": "rate.py", "schedule": "* * * * *", "overlap": "allow"}
    first = services.definitions.create(services.caller("mal", admin=False), parse(CreateDefinitionRequest, body)).id
    with store.transaction(write=False) as tx:
        model = stored.get_definition(tx, first)
    assert model.created_at is not None
    with store.transaction() as tx:
        for i in range(1, definitions):
            stored.insert_definition(tx, replace(model, id=f"d-rate{i:04d}", name=f"r{i}",
                                                 created_at=model.created_at + timedelta(microseconds=i)))
    firing = services.definitions.firing
    firing.max_due_per_pass = definitions
    if not from_memory:
        firing._rate_skips = RateSkips(0, 60.0)  # decides nothing: every skip on the full path, as before
    opened = [0]
    transaction = store.transaction

    def counted(*args: Any, **kwargs: Any) -> Any:
        opened[0] += 1
        return transaction(*args, **kwargs)

    store.transaction = counted  # type: ignore[method-assign]
    clock.advance(60)
    firing.fire_due()  # 10:01: 60 runs, the rest skipped (each row written once: the pass knows them)
    times, counts, skipped = [], [], 0
    for _ in range(passes):
        clock.advance(60)
        opened[0] = 0
        started = time.perf_counter()
        report = firing.fire_due()
        times.append(time.perf_counter() - started)
        counts.append(opened[0])
        assert not report.created and report.skipped == definitions, report
        skipped += report.skipped
    store.close()
    return statistics.median(times), statistics.median(counts), skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1500)
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--rate-definitions", type=int, default=100)
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
    with tempfile.TemporaryDirectory() as tmp:
        arms = {}
        for name, memory in (("baseline", False), ("new", True)):
            folder = Path(tmp) / name
            folder.mkdir()
            arms[name] = rate_arm(folder, from_memory=memory, definitions=args.rate_definitions, passes=args.passes)
    (new_s, new_tx, _), (old_s, old_tx, _) = arms["new"], arms["baseline"]
    print(f"{args.rate_definitions} due minutely definitions of one owner over the rate (60/h), every firing skipped, "
          f"{args.passes} passes")
    print(f"  pass, skips told from memory:               {new_s * 1000:8.1f} ms ({new_tx:.0f} store transactions)")
    print(f"  baseline: each skip reads the row and runs: {old_s * 1000:8.1f} ms ({old_tx:.0f} store transactions)")
    print(f"  ratio new / baseline:                       {new_s / old_s:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
