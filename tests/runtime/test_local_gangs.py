"""Heterogeneous gangs executing on the local executor (issue 16, case 024): one real process per
worker, each pinned to its own GPUs, ranked over the whole gang in group order; all-or-nothing.

GPUs are UUID strings (no GPU here): what is checked is what each worker process is given.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from jupyter_sched.executors.base import Exited
from jupyter_sched.executors.local import LocalExecutor, gang_environments
from jupyter_sched.model import Allocation, Job, JobKind, ResourceRequest, WorkerGroup
from tests.runtime.builders import make_job
from tests.runtime.test_local_executor import job_for, wait_event

# a 1-GPU launcher and two 2-GPU workers, placed on one host in group order
GROUPS = (WorkerGroup("launcher", 1, 1), WorkerGroup("worker", 2, 2))
ALLOCATION = Allocation("ws-1", ("GPU-a",), workers=(
    ("ws-1", ("GPU-a",)), ("ws-1", ("GPU-b", "GPU-c")), ("ws-1", ("GPU-d", "GPU-e"))))
KEYS = ("CUDA_VISIBLE_DEVICES", "RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "JUPYTER_SCHED_GROUP",
        "JUPYTER_SCHED_GROUP_RANK", "JUPYTER_SCHED_GROUP_SIZE")
DUMP = (f"out = {{k: os.environ.get(k) for k in {KEYS!r}}}\n"
        "out['port'] = os.environ['MASTER_PORT']\n"
        "print(json.dumps(out), flush=True)\n")


def _grouped(job_id: str, tmp_path: Path, body: str) -> Job:
    job = job_for(tmp_path, body, job_id=job_id)
    return replace(job, spec=replace(job.spec, resources=ResourceRequest.of_groups(GROUPS)))


def test_each_worker_of_a_heterogeneous_gang_runs_with_its_own_gpus_and_rank(tmp_path: Path) -> None:
    ex = LocalExecutor(tmp_path / "jobs")
    job = _grouped("g-1", tmp_path, DUMP)
    ex.start(job, ALLOCATION)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 0
    lines = [json.loads(line) for line in ex.logs(job.id)[0].splitlines() if line.startswith("{")]
    ports = {seen.pop("port") for seen in lines}
    assert len(ports) == 1 and next(iter(ports)).isdigit()  # one rendezvous port for the gang
    assert sorted(lines, key=lambda s: s["RANK"]) == [
        {"CUDA_VISIBLE_DEVICES": "GPU-a", "RANK": "0", "WORLD_SIZE": "3", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
         "JUPYTER_SCHED_GROUP": "launcher", "JUPYTER_SCHED_GROUP_RANK": "0", "JUPYTER_SCHED_GROUP_SIZE": "1"},
        {"CUDA_VISIBLE_DEVICES": "GPU-b,GPU-c", "RANK": "1", "WORLD_SIZE": "3", "LOCAL_RANK": "0",
         "MASTER_ADDR": "127.0.0.1", "JUPYTER_SCHED_GROUP": "worker", "JUPYTER_SCHED_GROUP_RANK": "0",
         "JUPYTER_SCHED_GROUP_SIZE": "2"},
        {"CUDA_VISIBLE_DEVICES": "GPU-d,GPU-e", "RANK": "2", "WORLD_SIZE": "3", "LOCAL_RANK": "0",
         "MASTER_ADDR": "127.0.0.1", "JUPYTER_SCHED_GROUP": "worker", "JUPYTER_SCHED_GROUP_RANK": "1",
         "JUPYTER_SCHED_GROUP_SIZE": "2"},
    ]


def test_a_failing_worker_fails_the_gang_and_stops_the_others(tmp_path: Path) -> None:
    # rank 2 fails at once; ranks 0 and 1 would wait forever on a gate nobody opens
    gate = tmp_path / "never"
    body = ("if os.environ['RANK'] == '2':\n    sys.exit(7)\n"
            f"print('waiting', os.environ['RANK'], flush=True)\nwait_gate({str(gate)!r})\n")
    ex = LocalExecutor(tmp_path / "jobs")
    job = _grouped("g-2", tmp_path, body)
    ex.start(job, ALLOCATION)
    ended = wait_event(ex, Exited)
    assert isinstance(ended, Exited) and ended.exit_code == 7  # the failing worker's code, not SIGTERM's


def test_a_single_worker_job_gets_no_gang_environment() -> None:
    job = make_job("solo", gpus=2)
    assert gang_environments(job, Allocation("ws-1", ("GPU-a", "GPU-b")), master_port=29500) == []
    homogeneous = replace(job, spec=replace(job.spec, resources=ResourceRequest(gpus=1, workers=2)))
    envs = gang_environments(homogeneous, Allocation("ws-1", ("GPU-a",), workers=(
        ("ws-1", ("GPU-a",)), ("ws-1", ("GPU-b",)))), master_port=29500)
    assert [(e["RANK"], e["CUDA_VISIBLE_DEVICES"], e["MASTER_PORT"]) for e in envs] == [
        ("0", "GPU-a", "29500"), ("1", "GPU-b", "29500")]
    assert all("JUPYTER_SCHED_GROUP" not in e for e in envs)
    service = replace(homogeneous, spec=replace(homogeneous.spec, kind=JobKind.INFERENCE, port=8000))
    assert gang_environments(service, Allocation("ws-1", ("GPU-a",), workers=(
        ("ws-1", ("GPU-a",)), ("ws-1", ("GPU-b",)))), master_port=29500) == []  # one port, one process
