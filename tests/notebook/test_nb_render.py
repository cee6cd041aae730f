"""What the magics print, from API objects, without a server: case 015 messages, reasons, tables, CUDA checks."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

import pytest

from jupyter_sched.magics.cuda import cuda_state
from jupyter_sched.magics.display import LiveFigure
from jupyter_sched.magics.render import gpu_frame, job_line, no_gpus_message, queue_frame, reason_line

NOW = datetime(2026, 3, 30, 6, 30, tzinfo=timezone.utc)


def make_gpu(index: int, **extra: Any) -> dict[str, Any]:
    return {"uuid": f"GPU-{index}", "index": index, "node": "ws-7", "model": "A100", "memory_mib": 81920,
            "health": "healthy", "simulated": False, **extra}


def make_job(job_id: str, state: str = "pending", **extra: Any) -> dict[str, Any]:
    job: dict[str, Any] = {"id": job_id, "name": "train", "user": "hana", "kind": "training", "state": state,
                           "priority": "normal", "resources": {"gpus": 1, "gpu_milli": 1000, "gpu_models": []},
                           "allocation": None, "reason": None, "exit_code": None, "message": ""}
    job.update(extra)
    return job


NO_GPUS = [
    pytest.param({"available": False, "error": "NVML shared library not found (libnvidia-ml.so.1)"},
                 "(NVML library not found)", id="a CPU node without the NVML library"),
    pytest.param({"available": False, "error": "NVML too old: nvmlInitWithFlags missing, driver upgrade needed"},
                 "(NVML too old: nvmlInitWithFlags missing, driver upgrade needed)", id="an old driver"),
    pytest.param({"available": True, "error": "NVML ok, 0 devices"}, "(NVML ok, 0 devices)",
                 id="a driver with no GPU"),
    pytest.param({"available": False, "error": "NVIDIA driver not loaded"}, "(NVIDIA driver not loaded)",
                 id="a driver that is not loaded"),
]


@pytest.mark.parametrize(("nvml", "want_cause"), NO_GPUS)
def test_case_015_no_gpus_message_names_the_cause(nvml: dict[str, Any], want_cause: str) -> None:
    message = no_gpus_message({"gpus": [], "nvml": nvml})
    assert message == (f"No NVIDIA GPUs available on this host {want_cause}. "
                       "Use the Kubernetes executor or a GPU node.")


def test_an_inventory_with_gpus_has_no_message() -> None:
    assert no_gpus_message({"gpus": [make_gpu(0)]}) is None


def test_a_pending_reason_reads_as_one_line_with_position_numbers_and_eta() -> None:
    job = make_job("j-1", reason={"code": "WaitingForCapacity", "message": "needs 2 GPUs, 1 free of 4",
                                  "position": 2, "eta": "2026-03-30T06:35:00Z", "unblock": "a job ends"})
    # a capacity wait's "unblocks when" is its ETA: said once (issue 20)
    assert reason_line(job, NOW) == "queued #2 · needs 2 GPUs, 1 free of 4 · ETA 06:35 UTC (in 5m)"
    unknown = make_job("j-2", reason={"code": "Fragmented", "message": "m", "eta": None, "eta_reason": "no limits"})
    assert "ETA unknown: no limits" in reason_line(unknown, NOW)


def test_job_lines_say_where_it_runs_and_how_it_ended() -> None:
    running = make_job("l-1", "running", kind="lease", allocation={"node": "ws-7", "gpu_uuids": ["GPU-3090-b"]})
    assert job_line(running, NOW) == "lease l-1 (train): running on ws-7: GPU-3090-b"
    failed = make_job("j-3", "failed", exit_code=2, message="lost its node")
    assert job_line(failed, NOW) == "job j-3 (train): failed, exit code 2 — lost its node"


def test_the_gpu_table_says_who_holds_each_gpu_and_marks_this_kernels() -> None:
    inventory = {"gpus": [make_gpu(0), make_gpu(1)]}
    work = [make_job("l-1", "running", kind="lease", allocation={"node": "ws-7", "gpu_uuids": ["GPU-1"]})]
    samples = [{"gpu_uuid": "GPU-1", "utilization_pct": 40.0, "memory_used_mib": 1024}]
    frame = gpu_frame(inventory, work, samples, mine=["GPU-1"])
    assert list(frame["allocated_to"]) == ["", "hana: lease l-1 (train)"]
    assert list(frame["this_kernel"]) == [False, True]
    assert frame.loc[1, "util_pct"] == 40.0


def test_newuser6_finding_2_a_shared_gpu_names_every_job_on_it_with_its_share() -> None:
    """New user 6, F2 remainder (shared GPUs): the table kept only the last holder of a GPU, so of two
    0.5-GPU jobs on one GPU one was not named at all."""
    inventory = {"gpus": [make_gpu(0)]}
    half = {"gpus": 1, "gpu_milli": 500}
    work = [make_job("j-1", "running", name="half", resources=half, allocation={"node": "n", "gpu_uuids": ["GPU-0"]}),
            make_job("j-2", "running", name="half2", resources=half, allocation={"node": "n", "gpu_uuids": ["GPU-0"]})]
    frame = gpu_frame(inventory, work)
    assert list(frame["allocated_to"]) == ["hana: training j-1 (half) 0.5 GPU; hana: training j-2 (half2) 0.5 GPU"]


def test_the_queue_table_has_whole_positions() -> None:
    rows = [make_job("j-1", reason={"code": "Priority", "message": "m", "position": 1}),
            make_job("j-2", "running", allocation={"node": "n", "gpu_uuids": ["GPU-0"]})]
    frame = queue_frame(rows, NOW)
    assert frame["position"].tolist()[0] == 1
    assert frame["reason"].tolist() == ["priority", ""]  # in words since new user 10 N15 (e6897ea)


def test_the_queue_table_says_pending_in_the_cluster_for_work_the_cluster_holds_back() -> None:
    held = make_job("j-3", "admitted", allocation={"node": "n", "gpu_uuids": ["GPU-0"]},
                    reason={"code": "Unschedulable", "message": "Kubernetes cannot place the pod"})
    frame = queue_frame([held], NOW)
    assert frame["state"].tolist() == ["pending (in the cluster)"]
    assert frame["detail"].tolist() == ["Kubernetes cannot place the pod"]  # a cell, not a sentence: no full stop


@pytest.fixture
def stub_torch() -> Iterator[types.SimpleNamespace]:
    """A stand-in ``torch`` in sys.modules (no CUDA runtime here), removed afterwards."""
    cuda = types.SimpleNamespace(initialized=False)
    module = types.ModuleType("torch")
    module.cuda = types.SimpleNamespace(is_initialized=lambda: cuda.initialized)  # type: ignore[attr-defined]
    saved = sys.modules.get("torch")
    sys.modules["torch"] = module
    try:
        yield cuda
    finally:
        if saved is None:
            del sys.modules["torch"]
        else:
            sys.modules["torch"] = saved


def test_case_017_cuda_state_tells_imported_from_initialised(stub_torch: types.SimpleNamespace) -> None:
    assert cuda_state(use_nvml=False).imported == ("torch",)
    assert not cuda_state(use_nvml=False).initialized
    stub_torch.initialized = True
    state = cuda_state(use_nvml=False)
    assert state.initialized_by == ("torch.cuda.is_initialized()",)


def test_the_static_live_figure_redraws_utilization_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTER_SCHED_WIDGETS", "0")  # the widget path needs a frontend; this is the fallback
    figure = LiveFigure(["GPU-0"], "lease l-1")
    figure.update({"GPU-0": [{"t": NOW, "utilization_pct": 35.0, "memory_used_mib": 2048}]})
    util, memory = figure.figure.data
    assert (list(util.y), list(memory.y)) == ([35.0], [2048])
