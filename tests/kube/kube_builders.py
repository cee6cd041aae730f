"""Builders for the Kubernetes tests: API objects (Node, Pod) as the API server writes them, and jobs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import kubernetes_validate

from jupyter_sched.executors.kubernetes.quantity import LABEL_VALUE_RE, QUANTITY_RE
from jupyter_sched.model import Allocation, Job, JobKind, JobSpec, JobState, PriorityClass, ResourceRequest

K8S_VERSION = kubernetes_validate.latest_version()
"""The newest Kubernetes schema kubernetes-validate ships (1.37 with kubernetes-validate 1.37)."""

A100 = "NVIDIA-A100-SXM4-80GB"


def make_node(name: str = "g1", *, gpus: int = 4, product: str | None = A100, memory_mib: int | None = 81920,
              allocatable_gpus: int | None = None, ready: bool = True, unschedulable: bool = False,
              taints: Sequence[Mapping[str, str]] = (), extra_labels: Mapping[str, str] | None = None,
              extra_capacity: Mapping[str, str] | None = None, count_label: int | None = None) -> dict[str, Any]:
    """A Node object with NVIDIA device plugin resources and GPU feature discovery labels."""
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux"}
    if product:
        labels["nvidia.com/gpu.product"] = product
        labels["nvidia.com/gpu.count"] = str(gpus if count_label is None else count_label)
    if memory_mib is not None and product:
        labels["nvidia.com/gpu.memory"] = str(memory_mib)
    labels.update(extra_labels or {})
    capacity = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    if gpus or product:
        capacity["nvidia.com/gpu"] = str(gpus)
    capacity.update(extra_capacity or {})
    allocatable = dict(capacity, cpu="63500m", memory="500Gi")
    if allocatable_gpus is not None:
        allocatable["nvidia.com/gpu"] = str(allocatable_gpus)
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = [dict(t) for t in taints]
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {
            "capacity": capacity, "allocatable": allocatable,
            "conditions": [{"type": "Ready", "status": "True" if ready else "Unknown",
                            "reason": "KubeletReady" if ready else "NodeStatusUnknown",
                            "message": "kubelet is posting ready status" if ready
                            else "Kubelet stopped posting node status."}],
        },
    }


GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def make_pod(name: str, *, node: str | None, gpus: int = 0, namespace: str = "other", phase: str = "Running",
             mig: Mapping[str, int] | None = None, labels: Mapping[str, str] | None = None,
             annotations: Mapping[str, str] | None = None, init_gpus: int = 0) -> dict[str, Any]:
    """A Pod object holding ``gpus`` (limits) on ``node``."""
    limits = {"nvidia.com/gpu": str(gpus)} if gpus else {}
    for profile, n in (mig or {}).items():
        limits[f"nvidia.com/mig-{profile}"] = str(n)
    spec: dict[str, Any] = {"containers": [{"name": "c", "image": "x", "resources": {"limits": limits}}]}
    if init_gpus:
        spec["initContainers"] = [{"name": "init", "image": "x",
                                   "resources": {"limits": {"nvidia.com/gpu": str(init_gpus)}}}]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {}),
                         "annotations": dict(annotations or {})},
            "spec": spec, "status": {"phase": phase}}


def make_job(job_id: str = "j1", *, gpus: int = 1, gpu_milli: int = 1000, user: str = "alice", team: str = "team-ml",
             kind: JobKind = JobKind.TRAINING, priority: PriorityClass = PriorityClass.NORMAL, workers: int = 1,
             mig_profile: str | None = None, image: str | None = "pytorch:2.3", command: Sequence[str] = ("python", "train.py"),
             models: Sequence[str] = (), time_limit_s: float | None = None, port: int | None = None,
             cpu_millis: int = 0, memory_mib: int = 0, env: Mapping[str, str] | None = None,
             working_dir: str | None = None, tolerations: Sequence[str] = ()) -> Job:
    """An admitted job."""
    spec = JobSpec(
        name=job_id, user=user, team=team, kind=kind, priority=priority,
        resources=ResourceRequest(gpus=gpus, gpu_milli=gpu_milli, mig_profile=mig_profile, workers=workers,
                                  gpu_models=tuple(models), cpu_millis=cpu_millis, memory_mib=memory_mib,
                                  tolerations=tuple(tolerations)),
        time_limit_s=time_limit_s, command=tuple(command), image=image, port=port, env=dict(env or {}),
        working_dir=working_dir)
    return Job(id=job_id, spec=spec, state=JobState.ADMITTED)


def allocation(node: str = "g1", gpus: int = 1, *, workers: Sequence[str] = ()) -> Allocation:
    """An allocation of ``gpus`` GPUs on ``node`` (or one per worker node for gangs)."""
    uuids = tuple(f"k8s-{node}-gpu{i}" for i in range(gpus))
    if not workers:
        return Allocation(node=node, gpu_uuids=uuids)
    per = tuple((w, tuple(f"k8s-{w}-gpu{i}" for i in range(gpus))) for w in workers)
    return Allocation(node=workers[0], gpu_uuids=per[0][1], workers=per)


def quantity_problems(manifest: Any, path: str = "") -> list[str]:
    """Quantity and label-format problems the OpenAPI schema does not catch (kubernetes-validate
    passes ``nvidia.com/gpu: "two"``): every resources value a quantity, extended resources
    whole numbers with requests == limits, every label value valid."""
    problems: list[str] = []
    if isinstance(manifest, dict):
        for key, value in manifest.items():
            here = f"{path}.{key}"
            if key == "resources" and isinstance(value, dict) and ({"requests", "limits"} & set(value)):
                requests, limits = value.get("requests", {}), value.get("limits", {})
                for section in (requests, limits):
                    for res, q in section.items():
                        if not (isinstance(q, str) and QUANTITY_RE.match(q)):
                            problems.append(f"{here}: {res}={q!r} is not a quantity")
                        if res.startswith("nvidia.com/") and not (isinstance(q, str) and re.fullmatch(r"[1-9]\d*", q)):
                            problems.append(f"{here}: {res}={q!r} is not a positive whole number")
                for res in set(requests) | set(limits):
                    if res.startswith("nvidia.com/") and requests.get(res, limits.get(res)) != limits.get(res):
                        problems.append(f"{here}: {res} requests != limits")
            if key in ("labels", "matchLabels", "selector", "nodeSelector") and isinstance(value, dict):
                for k, v in value.items():
                    if isinstance(v, str) and (not LABEL_VALUE_RE.match(v) or len(v) > 63):
                        problems.append(f"{here}: label {k}={v!r} is not a valid label value")
            problems += quantity_problems(value, here)
    elif isinstance(manifest, list):
        for i, item in enumerate(manifest):
            problems += quantity_problems(item, f"{path}[{i}]")
    return problems
