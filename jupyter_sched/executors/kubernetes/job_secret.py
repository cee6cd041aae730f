"""A job's progress token in a per-job Secret, never in its pod spec (issue 16 item 4; session 21).

The scheduler gives every job ``JUPYTER_SCHED_URL`` and its own progress token ``JUPYTER_SCHED_JOB_TOKEN``
(:mod:`jupyter_sched.extension.job_tokens`). As a plain ``env`` value the token sat in the Job's and
every pod's spec, where anyone who may ``get`` Jobs or Pods in the work namespace reads it. Now:

* the token goes in a Secret of its own (:func:`token_secret`: ``js-<job>-token``, type ``Opaque``,
  ``immutable``, the job's labels), created **before** the job's Job or Deployment, so no pod starts
  without it (a missing Secret is a ``CreateContainerConfigError`` until it exists);
* each container takes it with ``valueFrom.secretKeyRef`` (:func:`with_secret_env`); the URL stays a
  plain value (it is no secret);
* once the Job(s) or Deployment exist, the Secret is given them as owners (:func:`owner_references`,
  a merge patch of ``metadata.ownerReferences``), so Kubernetes' garbage collector deletes it with its
  job — when every owner is gone, e.g. every Job of a gang of worker groups;
* when the Job cannot be created the Secret is deleted again; ``stop`` deletes it, and so does every end
  the executor sees (succeeded, failed, deleted outside, found ended or gone after a restart), owned or
  not — a patch that failed (RBAC, a webhook) leaves it without owners, and the garbage collector would
  then never delete it (session 22). A Secret already gone is fine (404).

The executor's service account needs ``get``, ``create``, ``patch`` and ``delete`` on Secrets in the
work namespace (``server/rbac.yaml``) — never ``list`` or ``watch``: it reads no other Secret.

Pure builders: no API call here (:class:`~.executor.KubernetesExecutor` makes them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...model import Job
from .config import KubernetesConfig
from .manifests import job_labels, object_name

__all__ = ["SECRET_VARIABLES", "owner_references", "secret_name", "split_secret", "token_secret", "with_secret_env"]

SECRET_VARIABLES = frozenset({"JUPYTER_SCHED_JOB_TOKEN"})
"""Variables of ``job_env(job)`` that go in the job's Secret rather than in its pod spec."""


def secret_name(job_id: str) -> str:
    """The name of a job's token Secret: ``<object name>-token`` (at most 58 characters, a DNS subdomain)."""
    return f"{object_name(job_id)}-token"


def split_secret(values: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """``(plain, secret)``: ``values`` split into those set as plain env values and those of :data:`SECRET_VARIABLES`."""
    plain = {k: v for k, v in values.items() if k not in SECRET_VARIABLES}
    secret = {k: v for k, v in values.items() if k in SECRET_VARIABLES}
    return plain, secret


def token_secret(job: Job, namespace: str, values: Mapping[str, str], config: KubernetesConfig) -> dict[str, Any]:
    """The ``v1`` Secret of ``job`` in ``namespace`` holding ``values`` (variable name → value, as ``stringData``)."""
    return {
        "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "immutable": True,
        "metadata": {"name": secret_name(job.id), "namespace": namespace, "labels": job_labels(job, config)},
        "stringData": dict(values),
    }


def with_secret_env(manifests: list[dict[str, Any]], names: Iterable[str], *, secret: str) -> list[dict[str, Any]]:
    """``manifests`` with each variable of ``names`` taken from key ``name`` of Secret ``secret`` in every
    container of their pod templates (Jobs, Deployments), replacing a value of the same name."""
    wanted = sorted(set(names))
    for manifest in manifests:
        if manifest.get("kind") not in ("Job", "Deployment"):
            continue
        for container in manifest["spec"]["template"]["spec"].get("containers", []):
            env = [item for item in container.get("env", []) if item.get("name") not in wanted]
            container["env"] = env + [{"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": name}}}
                                      for name in wanted]
    return manifests


def owner_references(owners: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``metadata.ownerReferences`` naming each created owner (a Job or Deployment as the API answered it,
    with its ``uid``); owners without a uid are left out."""
    refs = []
    for owner in owners:
        meta = owner.get("metadata") or {}
        if not meta.get("uid") or not meta.get("name"):
            continue
        refs.append({"apiVersion": str(owner.get("apiVersion") or ("apps/v1" if owner.get("kind") == "Deployment"
                                                                   else "batch/v1")),
                     "kind": str(owner.get("kind") or "Job"), "name": str(meta["name"]), "uid": str(meta["uid"]),
                     "blockOwnerDeletion": False})
    return refs
