"""Kubernetes executor: jobs as ``batch/v1`` Jobs (gangs as Indexed Jobs), services as Deployments.

The manifest builders (:mod:`.manifests`) are pure; the executor (:mod:`.executor`) talks to the
API server through the official ``kubernetes`` client, which is imported only when the executor is.
"""

from __future__ import annotations

from typing import Any

from .config import KubernetesConfig, QueueManager
from .manifests import (
    GPU_RESOURCE,
    MIG_RESOURCE_PREFIX,
    make_deployment_manifest,
    make_headless_service,
    make_inference_service,
    make_job_manifest,
    make_manifests,
    make_podgroup_manifest,
    object_name,
    validate_spec,
)

__all__ = [
    "GPU_RESOURCE",
    "MIG_RESOURCE_PREFIX",
    "KubernetesConfig",
    "KubernetesExecutor",
    "QueueManager",
    "make_deployment_manifest",
    "make_headless_service",
    "make_inference_service",
    "make_job_manifest",
    "make_manifests",
    "make_podgroup_manifest",
    "object_name",
    "validate_spec",
]


def __getattr__(name: str) -> Any:
    # The executor needs the optional `kubernetes` package; import it only when asked for.
    if name == "KubernetesExecutor":
        from .executor import KubernetesExecutor
        return KubernetesExecutor
    raise AttributeError(name)
