"""Case 022: MIG as each node advertises it. Counts come from ``status.allocatable``; labels add
model and memory; the node's MIG strategy decides the resource a slice is requested as; label
disagreements are warnings naming the node; a slice is charged as a slice, never a whole GPU.

The manifest checks run the Kubernetes executor and inventory watcher against
``fake_apiserver.FakeKubernetes`` (no real API server can run here)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime, timezone
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from jupyter_sched.accounting.usage import usage_share
from jupyter_sched.admission.fit import FitCheck
from jupyter_sched.errors import UnschedulableError
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor
from jupyter_sched.inventory.kubernetes import KubernetesInventory, inventory_from_objects
from jupyter_sched.model import Allocation, Inventory, Job, JobSpec, JobState, QuotaSet, ResourceRequest
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import CycleResult, Snapshot

from .fake_apiserver import FakeKubernetes
from .kube_builders import K8S_VERSION, make_job, quantity_problems


def node(name: str, labels: Mapping[str, str], allocatable: Mapping[str, str]) -> dict[str, Any]:
    resources = {"cpu": "64", "memory": "512Gi", **allocatable}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels)}, "spec": {},
            "status": {"capacity": dict(resources), "allocatable": dict(resources),
                       "conditions": [{"type": "Ready", "status": "True"}]}}


NODES = [
    node("gpu-n1", {"nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                    "nvidia.com/gpu.count": "8", "nvidia.com/gpu.memory": "81559",
                    "nvidia.com/mig-1g.10gb.count": "7", "nvidia.com/mig-3g.40gb.count": "1",
                    "nvidia.com/mig-4g.40gb.count": "1"},
         {"nvidia.com/gpu": "6", "nvidia.com/mig-1g.10gb": "7", "nvidia.com/mig-3g.40gb": "1",
          "nvidia.com/mig-4g.40gb": "1"}),
    node("gpu-n2", {"nvidia.com/mig.strategy": "mixed", "nvidia.com/mig-3g.21gb.count": "16",
                    "nvidia.com/mig-3g.21gb.memory": "20096", "nvidia.com/mig-3g.21gb.multiprocessors": "42"},
         {"nvidia.com/mig-3g.20gb": "16"}),
    node("gpu-n3", {"nvidia.com/mig.strategy": "single", "nvidia.com/gpu.product": "NVIDIA-H100-NVL-MIG-1g.12gb",
                    "nvidia.com/gpu.memory": "11008"},
         {"nvidia.com/gpu": "28"}),
]


def inventory() -> Inventory:
    return inventory_from_objects(NODES)


def summary(inv: Inventory, name: str) -> tuple[int, dict[str, int], set[int]]:
    n = inv.node(name)
    whole = sum(1 for g in n.gpus if not g.mig_enabled and g.healthy)
    mig: dict[str, int] = {}
    memory: set[int] = set()
    for g in n.gpus:
        for m in g.mig_devices:
            mig[m.profile] = mig.get(m.profile, 0) + 1
            memory.add(m.memory_mib)
    return whole, mig, memory


def test_case_022_gpu_n1_counts_from_allocatable_and_warns_about_the_count_label() -> None:
    inv = inventory()
    whole, mig, _ = summary(inv, "gpu-n1")
    assert (whole, mig) == (6, {"1g.10gb": 7, "3g.40gb": 1, "4g.40gb": 1})
    assert inv.node("gpu-n1").warnings == ("node gpu-n1: gpu.count label 8 != allocatable nvidia.com/gpu 6 (mixed MIG)",)
    assert inv.node("gpu-n1").mig_strategy == "mixed"


def test_case_022_gpu_n2_memory_from_the_matching_label_group_with_a_name_warning() -> None:
    inv = inventory()
    whole, mig, memory = summary(inv, "gpu-n2")
    assert (whole, mig, memory) == (0, {"3g.20gb": 16}, {20096})
    assert inv.node("gpu-n2").warnings == ("node gpu-n2: MIG label name 3g.21gb does not match resource 3g.20gb",)
    assert sum(1 for g in inv.node("gpu-n2").gpus if g.mig_enabled) == 8, "8 A100s, each split into 2 x 3g"


def test_case_022_gpu_n3_single_strategy_is_28_slices_never_28_whole_gpus() -> None:
    inv = inventory()
    whole, mig, memory = summary(inv, "gpu-n3")
    assert (whole, mig, memory) == (0, {"1g.12gb": 28}, {11008})
    assert inv.node("gpu-n3").mig_strategy == "single"


def request(job_id: str, **resources: Any) -> Job:
    return Job(id=job_id, spec=JobSpec(name=job_id, user="ana", resources=ResourceRequest(**resources),
                                       command=("python", "x.py")), state=JobState.PENDING)


def cycle(job: Job) -> CycleResult:
    return run_cycle(Snapshot(now=datetime(2026, 3, 2, tzinfo=timezone.utc), inventory=inventory(), jobs=(job,)))


def test_case_022_r1_seven_whole_gpus_pends_naming_the_mig_partitioned_ones() -> None:
    result = cycle(request("r1", gpus=7))
    assert (result.admits, result.rejects) == ((), ())
    (pend,) = result.pending
    assert pend.job_id == "r1"
    assert pend.reason.code == "MigPartitioned"
    assert pend.reason.message == "largest node has 6 whole GPUs (gpu-n1: 2 of 8 are MIG-partitioned)"
    # the hint says what an admin can do: only nodes whose physical GPUs would hold 7 (gpu-n3 has 4)
    assert pend.reason.unblock.startswith("an admin can re-partition MIG GPUs into whole GPUs")
    assert "gpu-n1, gpu-n2)" in pend.reason.unblock and "gpu-n3" not in pend.reason.unblock
    assert pend.reason.details["max_per_node"] == 6 and pend.reason.details["max_physical_per_node"] == 8
    assert pend.reason.eta is None and "re-partitions" in pend.reason.eta_reason


def test_case_022_r1_passes_the_submit_check_but_more_than_any_nodes_physical_gpus_is_refused() -> None:
    check = FitCheck(run_cycle)
    now = datetime(2026, 3, 2, tzinfo=timezone.utc)
    check.check(request("r1", gpus=7), inventory(), QuotaSet(), now=now)  # pends: no error
    with pytest.raises(UnschedulableError) as refused:
        check.check(request("r9", gpus=9), inventory(), QuotaSet(), now=now)
    assert str(refused.value).startswith("needs 9 GPUs of any model on one node but the largest node has 6 whole GPUs "
                                         "(gpu-n1: 2 of 8 are MIG-partitioned)")


def test_case_022_r2_is_placed_on_gpu_n2() -> None:
    (admit,) = cycle(request("r2", gpus=1, mig_profile="3g.20gb")).admits
    assert admit.allocation.node == "gpu-n2"


def test_case_022_r3_unknown_profile_lists_what_exists() -> None:
    result = cycle(request("r3", gpus=1, mig_profile="3g.21gb"))
    (reject,) = result.rejects
    assert reject.reason.message == ("unknown MIG profile 3g.21gb; available: 1g.10gb, 3g.40gb, 4g.40gb, 3g.20gb, "
                                     "1g.12gb")


def test_case_022_r4_forty_gib_goes_to_a_whole_h100_not_a_slice() -> None:
    (admit,) = cycle(request("r4", gpus=1, min_memory_mib=40 * 1024)).admits
    assert admit.allocation.node == "gpu-n1"
    assert not admit.allocation.gpu_uuids[0].count("mig")


def test_case_022_r5_is_placed_on_gpu_n3() -> None:
    (admit,) = cycle(request("r5", gpus=1, mig_profile="1g.12gb")).admits
    assert admit.allocation.node == "gpu-n3"


def test_case_022_slices_are_charged_as_slices_never_a_whole_gpu() -> None:
    inv = inventory()
    gpu_of = inv.gpu_by_uuid()
    for job, profile in (("r2", "3g.20gb"), ("r5", "1g.12gb")):
        (admit,) = cycle(request(job, gpus=1, mig_profile=profile)).admits
        (uuid,) = admit.allocation.gpu_uuids
        share = usage_share(uuid, admit.allocation, gpu_of)
        assert share == pytest.approx({"r2": 3 / 7, "r5": 1 / 7}[job])


@pytest.fixture
def executor(fake: FakeKubernetes, api_client: client.ApiClient) -> Iterator[KubernetesExecutor]:
    for n in NODES:
        fake.put("nodes", n)
    watcher = KubernetesInventory(client.CoreV1Api(api_client), watch_timeout_s=30)
    watcher.start()
    ex = KubernetesExecutor(api_client, KubernetesConfig(namespace="team-ml", allowed_images=("pytorch:*",)),
                            inventory=watcher, watch_timeout_s=30)
    yield ex
    ex.detach()
    watcher.stop()


def created_container(fake: FakeKubernetes, job: Job) -> tuple[dict[str, Any], dict[str, Any]]:
    manifest = fake.get("jobs", "team-ml", f"js-{job.id}")
    assert manifest is not None
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    assert quantity_problems(manifest) == []
    pod = manifest["spec"]["template"]["spec"]
    return pod, pod["containers"][0]["resources"]


def test_case_022_r2_manifest_requests_the_mixed_mig_resource(fake: FakeKubernetes,
                                                               executor: KubernetesExecutor) -> None:
    job = make_job("r2", gpus=1, mig_profile="3g.20gb")
    (admit,) = cycle(request("r2", gpus=1, mig_profile="3g.20gb")).admits
    executor.start(job, admit.allocation)
    _, resources = created_container(fake, job)
    assert resources["limits"] == {"nvidia.com/mig-3g.20gb": "1"} == resources["requests"]


def test_case_022_r5_single_strategy_manifest_requests_nvidia_gpu_and_selects_the_product(
        fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    job = make_job("r5", gpus=1, mig_profile="1g.12gb")
    (admit,) = cycle(request("r5", gpus=1, mig_profile="1g.12gb")).admits
    assert isinstance(admit.allocation, Allocation)
    executor.start(job, admit.allocation)
    pod, resources = created_container(fake, job)
    assert resources["limits"] == {"nvidia.com/gpu": "1"}
    assert pod["nodeSelector"]["nvidia.com/gpu.product"] == "NVIDIA-H100-NVL-MIG-1g.12gb"
