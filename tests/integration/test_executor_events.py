"""The engine applies the events a cluster executor reports: ``Waiting`` (the cluster cannot place
the work yet, case 019) sets the job's reason; the first ``Started`` means "now running", not a
service restart.

The executor here is the real local executor (real processes) that additionally reports the two
events the Kubernetes executor emits for a pod that waits and then runs — a double of a cluster,
which cannot run on this machine, speaking the executor protocol's real event types.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle, Started, Waiting
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.inventory import SimulatedInventory
from jupyter_sched.model import Allocation, Job, PendingReason
from jupyter_sched.services import SchedulerService
from jupyter_sched.store import Store, sqlite_url

UNSCHEDULABLE = PendingReason(code="WaitingForCapacity",
                              message="pod pending: 0/3 nodes are available: 3 Insufficient nvidia.com/gpu",
                              details={"event": "FailedScheduling"})


class PodLikeExecutor(LocalExecutor):
    """Local processes, plus a pod's life as the Kubernetes executor reports it: first ``Waiting``
    (FailedScheduling), then ``Started`` with ``restarts == 0`` once the pod runs."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.script: list[ExecutorEvent] = []

    def start(self, job: Job, allocation: Allocation, run_as: RunAs | None = None) -> ExecutorHandle:
        handle = super().start(job, allocation)
        self.script = [Waiting(job.id, UNSCHEDULABLE), Started(job.id, handle, restarts=0)]
        return handle

    def poll(self) -> list[ExecutorEvent]:
        scripted = self.script[:1]
        self.script = self.script[1:]
        return scripted + super().poll()


def until(svc: SchedulerService, predicate: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not predicate():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        svc.tick()
        time.sleep(0.05)


def test_waiting_sets_the_reason_and_the_first_started_means_running(tmp_path: Path) -> None:
    executor = PodLikeExecutor(tmp_path / "jobs")
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "sched.sqlite")), inventory=SimulatedInventory(1, node="n1"),
                           executor=executor, cycle_interval_s=0.0, stop_grace_s=1.0)
    job = svc.submit({"gpus": 1, "command": [sys.executable, "-c", "import time; time.sleep(30)"]}, user="ana")

    def view() -> dict[str, Any]:
        return svc.get_job(job["id"], user="ana")

    until(svc, lambda: view()["state"] == "running", "the job to start")
    until(svc, lambda: (view()["reason"] or {}).get("message") == UNSCHEDULABLE.message, "the waiting reason")
    assert view()["message"] == UNSCHEDULABLE.message
    until(svc, lambda: view()["message"] == "running", "the pod to run")
    assert view()["reason"] is None
    actions = [r["action"] for r in svc.audit(job_id=job["id"])]
    assert "waiting" in actions and "started" in actions and "restarted" not in actions
    svc.cancel(job["id"], user="ana")
    until(svc, lambda: view()["state"] == "cancelled", "the cancel")
    svc.store.close()
