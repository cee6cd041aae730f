"""The simulator decides exactly what the engine decides: a 200-pod slice of the openb trace.

Both sides run the production ``run_cycle``: the simulator on its virtual clock, the engine
(``SchedulerService`` with a real SQLite store) on a :class:`ManualClock` advanced to the same
instants, with the same pods submitted in the same order. Every admission (time, node, GPUs,
milli-GPUs) and every job left pending must match.

The executor is a double: openb pods are Kubernetes pods and no Kubernetes API server can run
here. It implements the real :class:`~jupyter_sched.executors.base.Executor` protocol: start
returns a handle, the pods never exit (the FGD protocol never deletes pods).
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine import ManualClock, SchedulerService
from jupyter_sched.errors import UnschedulableError
from jupyter_sched.executors.base import ExecutorEvent, ExecutorHandle
from jupyter_sched.executors.runas import RunAs
from jupyter_sched.model import Allocation, Inventory, Job, ResourceRequest
from jupyter_sched.sim.simulator import SimJob, Simulator
from jupyter_sched.sim.traces import openb_inventory, read_openb_nodes, read_openb_pods
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.ids import SequentialIds
from tests.trace_data import FIXTURES

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
BATCH = 10
EVERY_S = 60.0


class PodExecutor:
    """Executor double for pods that run until deleted (never, in this protocol)."""

    def __init__(self) -> None:
        self.started: dict[str, Allocation] = {}

    def start(self, job: Job, allocation: Allocation, run_as: RunAs | None = None) -> ExecutorHandle:
        self.started[job.id] = allocation
        return ExecutorHandle(executor="pods", data={"pod": job.id})

    def poll(self) -> list[ExecutorEvent]:
        return []

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        raise AssertionError(f"no pod is ever stopped in this protocol ({job_id})")

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        return "", offset

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        return None

    def tracked(self) -> frozenset[str]:
        return frozenset(self.started)

    def detach(self) -> None:
        return None


class FixedInventory:
    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory

    def current(self) -> Inventory:
        return self.inventory


def where(node: str, uuids: list[str] | tuple[str, ...], milli: int) -> str:
    return f"{node}:{','.join(uuids)}@{milli}"


def test_a_200_pod_openb_slice_gets_identical_decisions_in_simulator_and_engine(tmp_path: Path) -> None:
    # the committed slice (tests/fixtures/traces): every 20th openb GPU node, the first 200 pods
    nodes = read_openb_nodes(FIXTURES / "openb" / "openb_node_list_gpu_node.csv")
    inventory = openb_inventory(nodes.iloc[::2])  # every 40th node of the trace: 31 nodes of every kind, contention
    pods = read_openb_pods(path=FIXTURES / "openb" / "openb_pod_list_default.csv")
    requests = [ResourceRequest(gpus=p.shape.gpus, gpu_milli=p.shape.gpu_milli or 1000, gpu_models=p.shape.models,
                                cpu_millis=p.shape.cpu_milli, memory_mib=p.shape.memory_mib) for p in pods]

    sim = Simulator(inventory, [SimJob(name=p.name, user="openb", submit_s=EVERY_S * (i // BATCH), runtime_s=None,
                                       resources=req) for i, (p, req) in enumerate(zip(pods, requests, strict=True))],
                    start=T0, id_prefix="j-")
    res = sim.run()
    sim_admits = {res.jobs.loc[res.jobs["job_id"] == job_id, "name"].iloc[0]: (t, detail)
                  for t, kind, job_id, detail in sim.decisions if kind == "admit"}

    clock = ManualClock(T0)
    service = SchedulerService(store=Store(sqlite_url(tmp_path / "sched.sqlite"), sqlite_synchronous="OFF"),
                               inventory=FixedInventory(inventory),
                               executor=PodExecutor(), clock=clock, ids=SequentialIds(), cycle_interval_s=3600.0)
    refused: set[str] = set()
    for b in range(len(pods) // BATCH):
        clock.set(T0 + timedelta(seconds=EVERY_S * b))
        for p, req in list(zip(pods, requests, strict=True))[b * BATCH:(b + 1) * BATCH]:
            body = {"name": p.name, "gpus": req.gpus, "gpu_milli": req.gpu_milli, "cpu_millis": req.cpu_millis,
                    "memory_mib": req.memory_mib, "command": ["sleep", "infinity"]}
            if req.gpu_models:
                body["gpu_models"] = list(req.gpu_models)
            try:
                service.submit(body, user="openb")
            except UnschedulableError as e:  # the simulator rejects them too (outcome "rejected", compared below):
                refused.add(p.name)  # openb's CPU-only and CPU-heavy pods ask more than their GPUs' part of a
                assert e.field in ("cpu_millis", "memory_mib"), e  # node's host (red38 R4, placement/host_share.py)
        service.tick()
    jobs = service.list_jobs(user=None)
    engine_admits = {}
    for job in jobs:
        alloc = job["allocation"]
        if alloc is None:
            continue
        t = (datetime.fromisoformat(job["admitted_at"]) - T0).total_seconds()
        workers = alloc["workers"] or [{"node": alloc["node"], "gpu_uuids": alloc["gpu_uuids"]}]
        engine_admits[job["name"]] = (t, ";".join(where(w["node"], w["gpu_uuids"], alloc["gpu_milli"]) for w in workers))

    assert len(sim_admits) > 50
    assert sim_admits == engine_admits
    sim_pending = set(res.jobs.loc[res.jobs["outcome"] == "pending", "name"])
    engine_pending = {j["name"] for j in jobs if j["state"] == "pending"}
    assert sim_pending == engine_pending
    assert refused == set(res.jobs.loc[res.jobs["outcome"] == "rejected", "name"])
