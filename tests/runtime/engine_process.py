"""An engine in its own process, for the kill -9 test: ``python engine_process.py DB_URL JOBS_DIR GPUS``.

Runs a :class:`SchedulerService` on the store (1 s leader lease, simulated GPUs, local executor)
and ticks it until killed. Prints ``ready`` once it leads.
"""

from __future__ import annotations

import sys
import time

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.store import Store


def main() -> None:
    url, jobs_dir, gpus = sys.argv[1], sys.argv[2], int(sys.argv[3])
    service = SchedulerService(store=Store(url), inventory=SimulatedInventory(gpus, node="n1"),
                               executor=LocalExecutor(jobs_dir), lease_ttl_s=1.0, cycle_interval_s=0.2,
                               owner_id="engine-doomed")
    announced = False
    while True:
        report = service.tick()
        if report.leader and not announced:
            print("ready", flush=True)
            announced = True
        time.sleep(0.05)


if __name__ == "__main__":
    main()
