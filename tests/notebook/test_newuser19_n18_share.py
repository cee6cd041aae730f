"""New user 19, N18: ``%gpu request 0.5`` says it is half a GPU, time-sliced with no memory isolation,
and the kernel reads its share in ``JUPYTER_SCHED_GPU_MILLI`` as a job does (0 once released).
Before the fix it said "Allocated GPU-sim-vm-0 (lease …)", the words of a whole GPU, and set no
share. A kernel restart that re-attaches a share says and sets it too (``restart_plan``)."""

from __future__ import annotations

import pytest
from nb_harness import Kernel

from jupyter_sched.extension.kernel_gpus import restart_plan
from jupyter_sched.wording.jobs import SHARED_GPU_NOTE, granted_words


async def _env(kernel: Kernel, name: str) -> str:
    return (await kernel.run(f"import os; print(repr(os.environ.get({name!r})))")).stdout.strip()


@pytest.mark.slow
async def test_newuser19_n18_a_half_gpu_lease_says_and_sets_its_share(start_kernel) -> None:  # type: ignore[no-untyped-def]
    kernel = await start_kernel()
    half = await kernel.run("%gpu request 0.5")
    assert half.error is None, half.text
    assert "Allocated 0.5 of GPU-" in half.stdout and SHARED_GPU_NOTE in half.stdout, half.stdout
    assert "JUPYTER_SCHED_GPU_MILLI=500 in this kernel" in half.stdout, half.stdout
    assert await _env(kernel, "JUPYTER_SCHED_GPU_MILLI") == "'500'"
    assert (await kernel.run("%gpu release")).error is None
    assert await _env(kernel, "JUPYTER_SCHED_GPU_MILLI") == "'0'", "no GPU, no share"
    whole = await kernel.run("%gpu request 1")
    assert whole.error is None and "time-sliced" not in whole.stdout, whole.text
    assert await _env(kernel, "JUPYTER_SCHED_GPU_MILLI") == "'1000'"


def test_newuser19_n18_the_grant_in_words() -> None:
    half = {"allocation": {"gpu_uuids": ["GPU-a"], "gpu_milli": 500}}
    assert granted_words(half) == "0.5 of GPU-a"
    assert granted_words({"allocation": {"gpu_uuids": ["GPU-a", "GPU-b"], "gpu_milli": 1000}}) == "GPU-a, GPU-b"
    assert granted_words({"allocation": {"gpu_uuids": ["GPU-a"]}, "resources": {"gpus": 1, "gpu_milli": 250}}) \
        == "0.25 of GPU-a"


def test_newuser19_n18_a_restart_re_attaches_a_share_as_a_share() -> None:
    lease = {"id": "l-1", "kind": "lease", "state": "running", "kernel_id": "k1",
             "allocation": {"node": "n", "gpu_uuids": ["GPU-c"], "gpu_milli": 500}}
    plan = restart_plan([lease], release_on_restart=False, isolate=True)
    assert plan.notice == f"0.5 of GPU-c re-attached (lease l-1) — {SHARED_GPU_NOTE}; CUDA_VISIBLE_DEVICES is set in this kernel"
    assert plan.env["JUPYTER_SCHED_GPU_MILLI"] == "500" and plan.env["CUDA_VISIBLE_DEVICES"] == "GPU-c"
