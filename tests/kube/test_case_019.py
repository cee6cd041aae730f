"""Case 019: a GPU request from a failed spawn must not leak into the next CPU-only job.

Runs against the in-process fake of the Kubernetes API (a real API server cannot run on this
machine; see ``fake_apiserver.py``), through the official client.
"""

from __future__ import annotations

import json
import time
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from jupyter_sched.errors import ExecutorError, ValidationError
from jupyter_sched.executors.base import Waiting
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor
from jupyter_sched.executors.kubernetes.manifests import make_job_manifest
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.model import Allocation, Job, JobState, spec_from_request

from .fake_apiserver import FakeKubernetes, status_obj
from .kube_builders import A100, GPU_TAINT, K8S_VERSION, make_node, quantity_problems

NAMESPACE = "team-geo"
CONFIG = KubernetesConfig(namespace=NAMESPACE, allowed_images=("pytorch:*", "python:*"))
QUOTA_MESSAGE = ('Error creating: pods "j-gpu-7x2kq" is forbidden: exceeded quota: gpu-quota, requested: '
                 'requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4')
WANT_REASON = "namespace team-geo GPU quota exhausted (4 of 4 in use)"


def _job(job_id: str, body: dict[str, Any]) -> Job:
    spec = spec_from_request({"command": ["python", "main.py"], **body}, user="geo-user", default_team=NAMESPACE)
    return Job(id=job_id, spec=spec, state=JobState.ADMITTED)


J_GPU = {"image": "pytorch:2.3", "gpus": 1, "model": A100}
J_CPU = {"image": "python:3.12", "gpus": 0}
GPU_ALLOC = Allocation(node="gpu-a100-1", gpu_uuids=("k8s-gpu-a100-1-gpu0",))
CPU_ALLOC = Allocation(node="cpu-1", gpu_uuids=())


def _session(fake: FakeKubernetes) -> tuple[KubernetesExecutor, KubernetesInventory, client.ApiClient]:
    fake.put("nodes", make_node("gpu-a100-1", gpus=4, taints=[GPU_TAINT]))
    fake.put("nodes", make_node("cpu-1", gpus=0, product=None))
    configuration = client.Configuration()
    configuration.host = fake.url
    api = client.ApiClient(configuration)
    inventory = KubernetesInventory(client.CoreV1Api(api), watch_timeout_s=30)
    inventory.start()
    return KubernetesExecutor(api, CONFIG, inventory=inventory, watch_timeout_s=30), inventory, api


def _posted_job(fake: FakeKubernetes, name: str) -> bytes:
    (body,) = [raw for path, raw in fake.bodies if path.endswith("/jobs") and json.loads(raw)["metadata"]["name"] == name]
    return body


BAD = [
    ({"gpus": 0.5}, "gpus must be a whole number (got 0.5); request a MIG profile for a fraction of a GPU"),
    ({"gpus": -1}, "gpus must be >= 0 (got -1)"),
    ({"gpus": "two"}, 'gpus must be an integer (got "two")'),
]


def test_case_019_k8s_job_manifest_stale_gpu_request(fake: FakeKubernetes) -> None:
    # The CPU job's manifest, built before anything else happened in this process.
    cpu_before = json.dumps(make_job_manifest(_job("j-cpu", J_CPU), CPU_ALLOC, CONFIG))

    executor, inventory, api = _session(fake)
    try:
        # Bad inputs are rejected before anything is sent to the API server.
        sent = len(fake.requests)
        for i, (body, message) in enumerate(BAD):
            with pytest.raises(ValidationError) as err:
                executor.start(_job(f"b{i + 1}", {"image": "python:3.12", **body}), GPU_ALLOC)
            assert err.value.message == message
            assert err.value.field == "gpus"
        # nothing about these jobs reached the API server (the inventory's own pod watch, which renews itself every
        # 30 s in the background, may: a loaded run 2 of session 32 saw one land here)
        assert [r for r in fake.requests[sent:] if not (r[0] == "GET" and "watch=true" in r[1])] == []

        # j-gpu: limits = requests = "1", the product's node selector, the GPU toleration.
        executor.start(_job("j-gpu", J_GPU), GPU_ALLOC)
        gpu_manifest = json.loads(_posted_job(fake, "js-j-gpu"))
        pod = gpu_manifest["spec"]["template"]["spec"]
        resources = pod["containers"][0]["resources"]
        assert resources["limits"]["nvidia.com/gpu"] == "1" and resources["requests"]["nvidia.com/gpu"] == "1"
        assert pod["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
        assert {"key": "nvidia.com/gpu", "operator": "Exists"} in pod["tolerations"]
        kubernetes_validate.validate(gpu_manifest, K8S_VERSION, strict=True)
        assert quantity_problems(gpu_manifest) == []

        # The namespace ResourceQuota refuses its pod: the Job controller's event becomes the reason.
        job_object = fake.get("jobs", NAMESPACE, "js-j-gpu")
        assert job_object is not None
        fake.emit_event(job_object, "FailedCreate", QUOTA_MESSAGE, component="job-controller")
        reasons = _wait_for_waiting(executor)
        assert [r.message for r in reasons] == [WANT_REASON]
        assert reasons[0].code == "ExceedsQuota"
        assert dict(reasons[0].details) == {"namespace": NAMESPACE, "quota": "gpu-quota",
                                            "resource": "requests.nvidia.com/gpu", "requested": 1, "used": 4,
                                            "limit": 4}

        # j-cpu after the failed GPU spawn: no GPU key, no GPU selector, no GPU toleration ...
        executor.start(_job("j-cpu", J_CPU), CPU_ALLOC)
        cpu_after = _posted_job(fake, "js-j-cpu")
        assert b"nvidia.com" not in cpu_after
        assert json.dumps(make_job_manifest(_job("j-cpu", J_CPU), CPU_ALLOC, CONFIG)) == cpu_before
    finally:
        executor.detach()
        inventory.stop()
        api.close()

    # ... and byte-identical on the wire to the j-cpu of a session that never saw j-gpu.
    fresh = FakeKubernetes()
    fresh.start()
    try:
        other, other_inventory, other_api = _session(fresh)
        try:
            other.start(_job("j-cpu", J_CPU), CPU_ALLOC)
            assert _posted_job(fresh, "js-j-cpu") == cpu_after
        finally:
            other.detach()
            other_inventory.stop()
            other_api.close()
    finally:
        fresh.close()


def _wait_for_waiting(executor: KubernetesExecutor) -> list[Any]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reasons = [e.reason for e in executor.poll() if isinstance(e, Waiting)]
        if reasons:
            return reasons
        time.sleep(0.01)
    raise AssertionError("no pending reason arrived")


def test_case_019_quota_refusal_on_create_reads_the_same(fake: FakeKubernetes) -> None:
    """With direct creation refused by the API server (HTTP 403), the same sentence comes back."""
    def refuse(plural: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if plural == "jobs":
            return 403, status_obj(403, "Forbidden", QUOTA_MESSAGE.removeprefix("Error creating: "))
        return None

    fake.create_hooks.append(refuse)
    executor, inventory, api = _session(fake)
    try:
        with pytest.raises(ExecutorError) as err:
            executor.start(_job("j-gpu", J_GPU), GPU_ALLOC)
        assert err.value.message == WANT_REASON
        assert err.value.details["used"] == 4 and err.value.details["limit"] == 4
        assert executor.tracked() == frozenset()
    finally:
        executor.detach()
        inventory.stop()
        api.close()
