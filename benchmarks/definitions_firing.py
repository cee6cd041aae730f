"""Cost of the definitions' firing loop per engine tick, with many definitions and nothing due.

The leading engine calls ``DefinitionsService.fire_due`` once per tick (every second by default).
With ``--definitions`` active definitions (a mix of daily, weekday, hourly and quarter-hourly cron
lines in several time zones) on a real SQLite store, this script times ``--ticks`` passes in which
nothing is due — the steady state — beside a baseline measured in the same run: the same passes
planning every definition's firings from scratch (schedules parsed once, as the loop does) (``plan_firings`` per definition per tick, what
the loop did before it cached each definition's next firing by row version). Prints the median
per tick of both, their ratio, and the load average while it ran.

Run: ``.venv/bin/python benchmarks/definitions_firing.py [--definitions 1000] [--ticks 20]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jupyter_sched.definitions.schedule import parse_schedule, plan_firings
from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import parse
from jupyter_sched.services.models.definitions import CreateDefinitionRequest
from jupyter_sched.store import SortableIds, Store
from jupyter_sched.store.definitions import list_definitions

SCHEDULES = [("0 12 * * 1-5", "Europe/Berlin"), ("30 2 * * *", "America/New_York"), ("0 * * * *", "UTC"),
             ("*/15 * * * *", "Asia/Tokyo"), ("0 7 1 * *", "Australia/Sydney")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--definitions", type=int, default=1000)
    parser.add_argument("--ticks", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock(datetime(2026, 12, 1, 12, 0, 30, tzinfo=timezone.utc))
        store = Store(f"sqlite:///{Path(tmp) / 'bench.sqlite'}", now=clock.now)
        services = Services(store=store, inventory=SimulatedInventory(4, node="n1"),
                            executor=LocalExecutor(Path(tmp) / "jobs"), clock=clock, ids=SortableIds(clock.now))
        service = services.definitions  # the real service: definitions saved through the admission step
        for i in range(args.definitions):
            expression, zone = SCHEDULES[i % len(SCHEDULES)]
            request = parse(CreateDefinitionRequest, {"name": f"d{i}", "notebook": f"n{i}.ipynb",
                                                      "schedule": expression, "timezone": zone, "gpus": 0})
            service.create(services.caller(f"user{i % 20}", admin=False), request)
        clock.advance(1)  # now: 1 s after creation, nothing due before 12:15
        load_before = os.getloadavg()[0]
        cached, planned = [], []
        parsed = {(e, z): parse_schedule(e, z, min_interval_s=0) for e, z in SCHEDULES}
        service.fire_due()  # the first pass fills the cache
        for _ in range(args.ticks):
            started = time.perf_counter()
            report = service.fire_due()
            cached.append(time.perf_counter() - started)
            assert not report.created
            started = time.perf_counter()
            with store.transaction(write=False) as tx:
                rows = list_definitions(tx, active_only=True)
            for d in rows:
                assert d.schedule is not None and d.cursor is not None
                plan_firings(parsed[(d.schedule, d.timezone)], cursor=d.cursor,
                             now=clock.now(), grace_s=60, run_missed_once=True)
            planned.append(time.perf_counter() - started)
            clock.advance(timedelta(seconds=1).total_seconds())
        store.close()
    load_after = os.getloadavg()[0]
    c, p = statistics.median(cached), statistics.median(planned)
    print(f"{args.definitions} active definitions, nothing due, {args.ticks} ticks "
          f"(load average {load_before:.1f} -> {load_after:.1f} on {os.cpu_count()} CPUs)")
    print(f"  fire_due per tick (cached next firing):     {c * 1000:8.1f} ms")
    print(f"  baseline: planning every definition a tick: {p * 1000:8.1f} ms")
    print(f"  ratio fire_due / baseline:                  {c / p:8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
