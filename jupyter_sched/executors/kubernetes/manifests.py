"""Pure manifest builders: a job and its allocation in, plain Kubernetes JSON dicts out.

Every function here is a pure function of its arguments (kubespawner's ``make_pod`` style): it
reads no clock, no environment and no module state, and builds every dict afresh, so the manifest
of a CPU-only job is byte-identical whether or not a GPU job was built before it (case 019: a
GPU request that survived a failed spawn leaked into the next CPU-only spawn).

What one job becomes:

==========================  ====================================================================
job                         objects (creation order)
==========================  ====================================================================
training, one worker        ``batch/v1 Job`` (one pod, ``restartPolicy: Never``, ``backoffLimit: 0``)
training, gang of N         headless ``Service`` + ``batch/v1 Job`` in Indexed mode with
                            completions = parallelism = N (+ Volcano ``PodGroup`` minMember N)
inference service           ``apps/v1 Deployment`` (readiness probe on the port) + ``Service``
heterogeneous gang          headless ``Service`` + one Indexed ``batch/v1 Job`` per worker group
(worker groups, issue 16)   (its own GPU count; the first named like a plain job's, the others
                            ``-g<k>``) (+ one Volcano ``PodGroup`` minMember = all workers)
==========================  ====================================================================

Gang environment: ``WORLD_SIZE`` (all workers), ``MASTER_ADDR`` (worker 0's stable DNS name),
``MASTER_PORT`` and ``RANK`` over the whole gang. With worker groups, ranks run in group order:
``JUPYTER_SCHED_GROUP`` / ``JUPYTER_SCHED_GROUP_SIZE`` / ``JUPYTER_SCHED_GROUP_RANK`` (the pod's
completion index) and ``JUPYTER_SCHED_RANK_OFFSET`` (workers of earlier groups); a pod template
cannot add numbers, so a later group of several workers starts its command through ``/bin/sh``
to export ``RANK = offset + group rank`` (its image needs a shell). Kueue admits Jobs one by one,
which cannot keep a multi-Job gang all-or-nothing: worker groups are refused under Kueue.

GPU rules (case 019; kubernetes/kubernetes#50182): ``nvidia.com/gpu`` (or
``nvidia.com/mig-<profile>``) appears in ``limits`` and ``requests`` with the same whole-number
value, and never on CPU-only work; GPU taints are tolerated only by GPU work.

Hardening (DESIGN, *Who runs it*; every pod passes the Pod Security "restricted" profile of
``server/namespace.yaml``): the pod runs as non-root (``runAsNonRoot``; ``runAsUser``/``runAsGroup``
and ``fsGroup`` from the job's :class:`~jupyter_sched.executors.runas.RunAs` where the user mapping
gives ids), with the ``RuntimeDefault`` seccomp profile, no service-account token
(``automountServiceAccountToken: false``), and its container without privilege escalation and with
every capability dropped. Images must be allowed by the admin (``allowed_images``,
``default_image``, or ``allow_any_image``).

Carried content (``source`` / ``notebook_json``, sent by ``%%schedule`` through a hub) travels in
pod annotations and reaches the container as read-only files through a ``downwardAPI`` volume at
:data:`CARRIED_DIR` — no extra object, no write access to the cluster. Annotations are limited to
256 KiB per object, so carried content is limited to :data:`MAX_CARRIED_BYTES`. Admin volumes
(``volumes``/``volume_mounts``, e.g. the user's home volume) are added to every pod.

Notebook and script runs (issue 19): a notebook runs as ``python -m
jupyter_sched.executors.run_notebook IN OUT [--parameters JSON]``, as on the local executor, so
its parameters are injected (papermill's convention) and its last log lines say which cell failed
and why; the image therefore needs ``jupyter_sched`` installed (a hub's single-user image has it).
The executed copy goes to the owner's home volume when one is mounted
(``<home_mount_path>/scheduled-runs/<job id>/<notebook>``, openable in their JupyterLab), else to
the container's ``/tmp``. A script gets its parameters as ``--name value``. Every container uses
``terminationMessagePolicy: FallbackToLogsOnError``, so a failed pod's termination message is the
end of its log (run_notebook's ``failed: cell 3 raised …``) rather than empty.
"""

from __future__ import annotations

import json
import math
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ...definitions.parameters import script_arguments
from ...errors import ValidationError
from ...model import Allocation, Job, JobKind, JobSpec
from ...model.jobenv import device_variable
from ...model.resources import GPU_MILLI
from ...userfiles import start_folder_argv
from ..runas import RunAs
from .config import KubernetesConfig, QueueManager
from .quantity import dns_label, format_cpu, format_memory_mib, label_value

__all__ = [
    "ANNOTATION_GPU_UUIDS",
    "CARRIED_DIR",
    "MAX_CARRIED_BYTES",
    "GPU_PRODUCT_LABEL",
    "GPU_RESOURCE",
    "KUEUE_QUEUE_LABEL",
    "LABEL_JOB_ID",
    "LABEL_MANAGED_BY",
    "MANAGED_BY",
    "MIG_RESOURCE_PREFIX",
    "VOLCANO_GROUP_ANNOTATION",
    "describe",
    "gpu_resources",
    "job_labels",
    "make_deployment_manifest",
    "make_headless_service",
    "make_inference_service",
    "group_job_name",
    "make_group_job_manifests",
    "make_job_manifest",
    "make_manifests",
    "make_podgroup_manifest",
    "object_name",
    "submitted_spec",
    "validate_spec",
]

GPU_RESOURCE = "nvidia.com/gpu"
"""Extended resource of whole GPUs (NVIDIA device plugin)."""
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
"""Extended resources of MIG devices under the device plugin's ``mixed`` strategy."""
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""GPU feature discovery label with the product name, spaces replaced by ``-``."""
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
VOLCANO_GROUP_ANNOTATION = "scheduling.k8s.io/group-name"
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "jupyter-sched"
LABEL_JOB_ID = "jupyter-sched/job-id"
LABEL_USER = "jupyter-sched/user"
LABEL_TEAM = "jupyter-sched/team"
LABEL_KIND = "jupyter-sched/kind"
LABEL_PRIORITY = "jupyter-sched/priority"
ANNOTATION_JOB_ID = "jupyter-sched/job-id"
ANNOTATION_USER = "jupyter-sched/user"
ANNOTATION_GPU_UUIDS = "jupyter-sched/gpu-uuids"
"""Our allocation's GPU uuids; the inventory reads it back to tell our pods' GPUs from foreign ones."""
COMPLETION_INDEX_ANNOTATION = "batch.kubernetes.io/job-completion-index"
CONTAINER_NAME = "main"
ANNOTATION_SOURCE = "jupyter-sched/source"
ANNOTATION_NOTEBOOK = "jupyter-sched/notebook"
CARRIED_VOLUME = "jupyter-sched-carried"
CARRIED_DIR = "/var/run/jupyter-sched"
"""Where carried scripts and notebooks appear in the container (read-only)."""
MAX_CARRIED_BYTES = 200 * 1024
"""Carried content per job through the Kubernetes executor (pod annotations: 256 KiB in all)."""
_NOTEBOOK_IN = "input.ipynb"


def object_name(job_id: str) -> str:
    """Kubernetes name of a job's objects: ``js-<job id>`` as a DNS label of at most 52 characters.

    52 leaves room for the ``-<index>`` pod hostnames of Indexed Jobs and the ``-<5>`` random
    suffix of generated pod names within the 63-character limit.
    """
    return dns_label(job_id, prefix="js-", max_len=52)


def _fraction_text(milli: int) -> str:
    return f"{milli / GPU_MILLI:g}"


def validate_spec(spec: JobSpec, config: KubernetesConfig) -> None:
    """Reject what cannot become a correct Kubernetes object, before anything is sent (case 019).

    Raises:
        ValidationError: ``gpus`` not an integer, negative, or a fraction (Kubernetes extended
            resources are whole numbers; a fraction needs a MIG profile); no image; a gang
            inference service; an inference service without a port.
    """
    res = spec.resources
    gpus: object = res.gpus
    if isinstance(gpus, bool) or not isinstance(gpus, int):
        raise ValidationError(f'gpus must be an integer (got "{gpus}")', field="gpus",  # case 019 b3's words
                              hint="use a whole number such as 0, 1 or 4")
    if gpus < 0:
        raise ValidationError(f"gpus must be >= 0 (got {gpus})", field="gpus",  # case 019 b2's words
                              hint="use 0 for CPU-only work")
    if gpus > 0 and res.gpu_milli < GPU_MILLI:
        raise ValidationError(
            f"gpus must be a whole number (got {_fraction_text(res.gpu_milli)}); "
            "request a MIG profile for a fraction of a GPU", field="gpus",
            hint='e.g. {"gpus": 1, "mig_profile": "1g.10gb"}; Kubernetes counts nvidia.com/gpu in whole devices')
    if res.workers < 1:
        raise ValidationError(f"workers must be >= 1 (got {res.workers})", field="workers", hint="use 1")
    if not (spec.image or config.default_image):
        raise ValidationError("a Kubernetes job needs a container image", field="image",
                              hint='give e.g. {"image": "python:3.12"} or configure a default image')
    if spec.image and not config.image_allowed(spec.image):
        allowed = ", ".join(p for p in (config.default_image, *config.allowed_images) if p) or "only the default"
        raise ValidationError(f"image {spec.image[:200]!r} is not one the admin allows", field="image",
                              hint=f"leave image out for the default, or use one of: {allowed}")
    carried = len((spec.source or "").encode()) + len((spec.notebook_json or "").encode())
    if carried > MAX_CARRIED_BYTES:
        raise ValidationError(f"the carried script or notebook is {carried} bytes; the Kubernetes executor carries at "
                              f"most {MAX_CARRIED_BYTES}", field="notebook_json" if spec.notebook_json else "source",
                              hint=_carried_too_big_fix(config))
    if res.groups and config.queue_manager is QueueManager.KUEUE:
        raise ValidationError("Kueue admits each Job on its own, so a gang of worker groups would not be "
                              "all-or-nothing", field="groups",
                              hint="submit one homogeneous gang (gpus + workers), or run without a queue manager")
    if res.groups and spec.kind is JobKind.INFERENCE:
        raise ValidationError("an inference service cannot have worker groups", field="groups",
                              hint="use replicas of one shape (workers)")
    if spec.kind is JobKind.INFERENCE and spec.port is None:
        raise ValidationError("an inference service needs a port", field="port", hint="add e.g. port 8000")
    if spec.kind is JobKind.LEASE:
        raise ValidationError("interactive leases run in the kernel, not as Kubernetes Jobs", field="kind",
                              hint="submit a training job or an inference service")


def _carried_too_big_fix(config: KubernetesConfig) -> str:
    """Where a script or notebook too big to carry can be put for the pod to run it by path (session 37 left: "put the
    file on the home volume" named no folder, and said it where no home volume is mounted)."""
    if config.home_mount_path:
        return (f"save it in your home folder, which the job's container mounts at {config.home_mount_path}, and run "
                f"it by its path there (e.g. {config.home_mount_path.rstrip('/')}/train.py; a relative path is read "
                "in that folder)")
    return ("this server's Kubernetes pods mount no home folder: put the file in the job's image (or a volume an admin "
            "mounts: c.SchedApp.kubernetes volumes and volume_mounts) and run it by its path in the container")


def gpu_resources(spec: JobSpec, *, mig_strategy: str = "mixed") -> dict[str, str]:
    """The extended resources of one worker: ``{}`` for CPU-only work, else one whole-number key.

    A MIG slice follows the node's MIG strategy (case 022): ``mixed`` advertises
    ``nvidia.com/mig-<profile>``; ``single`` advertises every slice as ``nvidia.com/gpu`` (the
    product label, which names the profile, selects the node: see ``gpu_products``)."""
    res = spec.resources
    if res.gpus <= 0:
        return {}
    if res.mig_profile and mig_strategy != "single":
        return {f"{MIG_RESOURCE_PREFIX}{res.mig_profile}": str(res.gpus)}
    return {GPU_RESOURCE: str(res.gpus)}


def job_labels(job: Job, config: KubernetesConfig) -> dict[str, str]:
    """Labels of every object of ``job`` (values sanitised to label syntax, see :func:`label_value`)."""
    labels = dict(config.extra_labels)
    labels.update({
        LABEL_MANAGED_BY: MANAGED_BY,
        LABEL_JOB_ID: label_value(job.id),
        LABEL_USER: label_value(job.spec.user),
        LABEL_TEAM: label_value(job.spec.team),
        LABEL_KIND: job.spec.kind.value,
        LABEL_PRIORITY: job.spec.priority.value,
    })
    return labels


def _annotations(job: Job, allocation: Allocation | None) -> dict[str, str]:
    out = {ANNOTATION_JOB_ID: job.id, ANNOTATION_USER: job.spec.user}
    if allocation is not None and job.spec.resources.gpus > 0:
        out[ANNOTATION_GPU_UUIDS] = ",".join(allocation.all_gpu_uuids())
    return out


def _carried_annotations(spec: JobSpec) -> dict[str, str]:
    out = {}
    if spec.source is not None and spec.script:
        out[ANNOTATION_SOURCE] = spec.source
    if spec.notebook_json is not None and spec.notebook:
        out[ANNOTATION_NOTEBOOK] = spec.notebook_json
    return out


def _carried_volume(spec: JobSpec) -> dict[str, Any] | None:
    """The downwardAPI volume that turns carried content (pod annotations) into files."""
    items = []
    if spec.source is not None and spec.script:
        items.append({"path": _script_name(spec), "fieldRef": {
            "fieldPath": f"metadata.annotations['{ANNOTATION_SOURCE}']"}})
    if spec.notebook_json is not None and spec.notebook:
        items.append({"path": _NOTEBOOK_IN, "fieldRef": {"fieldPath": f"metadata.annotations['{ANNOTATION_NOTEBOOK}']"}})
    return {"name": CARRIED_VOLUME, "downwardAPI": {"items": items}} if items else None


def _script_name(spec: JobSpec) -> str:
    return (spec.script or "script.py").rsplit("/", 1)[-1]


EXECUTED_DIR = "scheduled-runs"
"""Folder of executed notebooks under the owner's home volume (the server's default
``executed_notebooks_dir``, where "open" puts them locally)."""


def _executed_notebook(job: Job, config: KubernetesConfig) -> str:
    """Where the pod writes a notebook run's executed copy (see module docstring)."""
    name = (job.spec.notebook or "notebook.ipynb").rsplit("/", 1)[-1]
    if config.home_mount_path:
        return f"{config.home_mount_path.rstrip('/')}/{EXECUTED_DIR}/{label_value(job.id)}/{name}"
    return f"/tmp/jupyter-sched/{label_value(job.id)}/{name}"


def _command(job: Job, config: KubernetesConfig) -> list[str]:
    spec = job.spec
    if spec.script:
        arguments = [*spec.command, *script_arguments(spec.parameters)]
        if spec.source is not None:  # carried: the working dir first on sys.path, not CARRIED_DIR (N9)
            return start_folder_argv("python", f"{CARRIED_DIR}/{_script_name(spec)}", arguments)
        return ["python", spec.script, *arguments]
    if spec.notebook:
        notebook = f"{CARRIED_DIR}/{_NOTEBOOK_IN}" if spec.notebook_json is not None else spec.notebook
        parameters = ["--parameters", json.dumps(dict(spec.parameters), sort_keys=True)] if spec.parameters else []
        return ["python", "-m", "jupyter_sched.executors.run_notebook", notebook, _executed_notebook(job, config),
                *parameters]
    return list(spec.command)


def _working_dir(spec: JobSpec, config: KubernetesConfig) -> str | None:
    """The container's working directory: ``~`` resolves to the home volume's mount, and a relative
    one is read there, where a job naming none starts (:func:`anchored_working_dir`); without a home
    volume both are dropped (a relative ``workingDir`` fails at container creation: the OCI runtime
    takes absolute paths only) — a relative one is refused at submit then."""
    wanted = spec.working_dir
    if wanted is None:
        return config.home_mount_path
    if wanted == "~" or wanted.startswith("~/"):
        return config.home_mount_path + wanted[1:] if config.home_mount_path else None
    if not wanted.startswith("/"):
        return anchored_working_dir(wanted, config)
    return wanted


def anchored_working_dir(wanted: str, config: KubernetesConfig) -> str | None:
    """A relative ``working_dir`` read in the home volume's mount (``home_mount_path``), where a job
    naming no working_dir starts — as the local executor reads it in the owner's home (new user 11,
    N20); written out, e.g. ``/home/jovyan/data`` for ``data``, so ``..`` reaches nothing an absolute
    path could not. None without a home volume: nothing to read it in."""
    if not config.home_mount_path:
        return None
    return posixpath.normpath(posixpath.join(config.home_mount_path, wanted))


def submitted_spec(spec: JobSpec, config: KubernetesConfig) -> tuple[JobSpec, list[str]]:
    """``spec`` as it is stored at submit, and the notes for the answer: checked as its manifest will
    be (:func:`validate_spec`: a disallowed image, a fraction of a GPU… are a 400 at submit, not a
    failed start), its ``working_dir`` as the pod's (:func:`_working_dir`) written out — the answer
    shows where the job starts (new user 12, N3): ``data``, ``~/data`` → ``<home_mount_path>/data``,
    none → ``home_mount_path``; without a home mount none stays none (the image's working
    directory) and ``~…`` is dropped, said in a note.

    Raises:
        ValidationError: see :func:`validate_spec`; a relative working_dir with no home volume to
            read it in (``working_dir``, and what to give instead).
    """
    wanted = spec.working_dir
    notes: list[str] = []
    if wanted and not wanted.startswith(("/", "~")) and not config.home_mount_path:
        raise ValidationError(
            f"working_dir {wanted[:300]!r} is relative, and this server's Kubernetes pods mount no home "
            "directory to read it in", field="working_dir",
            hint="give an absolute path inside the job's container (its image, or a volume the admin mounts), "
                 "e.g. /workspace/data, or leave working_dir out (the job starts in its image's working "
                 "directory); an admin sets c.SchedApp.kubernetes.home_mount_path to read relative ones in "
                 "the home volume")
    if wanted and wanted.startswith("~") and not config.home_mount_path:
        notes.append(f"working_dir {wanted[:300]!r} is not used: this server's Kubernetes pods mount no home "
                     "directory, so the job starts in its image's working directory")
    start = _working_dir(spec, config)
    spec = replace(spec, working_dir=posixpath.normpath(start) if start else None)
    validate_spec(spec, config)
    return spec, notes


def _for_user(value: Any, user: str) -> Any:
    """``{user}`` in every string of an admin volume definition → the owner as a DNS label."""
    if isinstance(value, str):
        return value.replace("{user}", dns_label(user))
    if isinstance(value, Mapping):
        return {k: _for_user(v, user) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_for_user(v, user) for v in value]
    return value


_DROP_ALL = {"drop": ["ALL"]}


def _pod_security(run_as: RunAs | None) -> dict[str, Any]:
    context: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    if run_as is not None and run_as.uid is not None:
        context["runAsUser"] = run_as.uid
        if run_as.gid is not None:
            context["runAsGroup"] = run_as.gid
            context["fsGroup"] = run_as.gid
    return context


def _container_security() -> dict[str, Any]:
    return {"allowPrivilegeEscalation": False, "capabilities": dict(_DROP_ALL), "runAsNonRoot": True,
            "privileged": False, "seccompProfile": {"type": "RuntimeDefault"}}


def _env(job: Job, config: KubernetesConfig, *, gang_service: str | None,
         run_as: RunAs | None = None) -> list[dict[str, Any]]:
    # never a device variable from the user's env (a job stored before the request check refused them):
    # the device plugin's NVIDIA_VISIBLE_DEVICES comes before the container's env, which would win (new user 10, N4)
    env: list[dict[str, Any]] = [{"name": k, "value": v} for k, v in job.spec.env.items() if not device_variable(k)]
    if job.spec.resources.gpus <= 0:  # an image's own NVIDIA_VISIBLE_DEVICES=all (CUDA images) would expose every GPU
        env.append({"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"})
    env.append({"name": "JUPYTER_SCHED_JOB_ID", "value": job.id})
    # the account, as login(1)/sshd/Slurm set it (newuser28 N7: `/scratch/$USER/run1` was `/scratch//run1`);
    # the spec refuses USER/LOGNAME of its own (model.jobenv), so these are the only ones
    account = run_as.account if run_as is not None and run_as.account else job.spec.user
    env += [{"name": "USER", "value": account}, {"name": "LOGNAME", "value": account}]
    if gang_service is not None:
        name = object_name(job.id)
        env += [
            {"name": "WORLD_SIZE", "value": str(job.spec.resources.workers)},
            {"name": "MASTER_ADDR", "value": f"{name}-0.{gang_service}"},
            {"name": "MASTER_PORT", "value": str(config.rendezvous_port)},
            {"name": "RANK", "valueFrom": {"fieldRef": {
                "fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"}}},
        ]
    return env


def _container(job: Job, config: KubernetesConfig, *, gang_service: str | None,
               mig_strategy: str = "mixed", run_as: RunAs | None = None) -> dict[str, Any]:
    spec = job.spec
    res = spec.resources
    requests: dict[str, str] = {}
    if res.cpu_millis > 0:
        requests["cpu"] = format_cpu(res.cpu_millis)
    if res.memory_mib > 0:
        requests["memory"] = format_memory_mib(res.memory_mib)
    gpus = gpu_resources(spec, mig_strategy=mig_strategy)
    # Extended resources: requests must equal limits (kubernetes#50182); write both.
    limits = dict(gpus)
    if "memory" in requests:
        limits["memory"] = requests["memory"]
    requests.update(gpus)
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": spec.image or config.default_image,
        "imagePullPolicy": config.image_pull_policy,
        "env": _env(job, config, gang_service=gang_service, run_as=run_as),
    }
    command = _command(job, config)
    if command:
        container["command"] = command
    container["terminationMessagePolicy"] = "FallbackToLogsOnError"
    working_dir = _working_dir(spec, config)
    if working_dir:
        container["workingDir"] = working_dir
    mounts = [_for_user(dict(m), spec.user) for m in config.volume_mounts]
    if _carried_volume(spec) is not None:
        mounts.append({"name": CARRIED_VOLUME, "mountPath": CARRIED_DIR, "readOnly": True})
    if mounts:
        container["volumeMounts"] = mounts
    container["securityContext"] = _container_security()
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if spec.kind is JobKind.INFERENCE and spec.port is not None:
        container["ports"] = [{"name": "http", "containerPort": spec.port, "protocol": "TCP"}]
        container["readinessProbe"] = {
            "tcpSocket": {"port": spec.port}, "initialDelaySeconds": 2, "periodSeconds": 5,
            "failureThreshold": 3}
    return container


def _toleration(text: str) -> dict[str, str]:
    """``KEY[=VALUE][:EFFECT]`` (the grammar the request's validation holds it to) as a pod toleration:
    ``dedicated=ml:NoSchedule`` → key, Equal, value and effect (the effect was read into the value)."""
    rest, colon, effect = text.rpartition(":") if ":" in text else (text, "", "")
    key, sep, value = rest.partition("=")
    out = {"key": key, "operator": "Equal", "value": value} if sep else {"key": key, "operator": "Exists"}
    return {**out, "effect": effect} if colon else out


def _tolerations(spec: JobSpec, config: KubernetesConfig) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    if spec.resources.gpus > 0:
        # No effect: GPU work tolerates the GPU taint whatever its effect (NoSchedule or NoExecute).
        out += [{"key": key, "operator": "Exists"} for key in config.gpu_taint_keys]
    out += [_toleration(text) for text in spec.resources.tolerations]
    return out


def _pinned_nodes(allocation: Allocation | None, config: KubernetesConfig) -> list[str]:
    if allocation is None or config.queue_manager is not QueueManager.NONE:
        return []
    nodes: list[str] = []
    for node, _ in allocation.per_worker():
        if node not in nodes:
            nodes.append(node)
    return nodes


def _pod_spec(job: Job, allocation: Allocation | None, config: KubernetesConfig, *,
              gpu_products: Sequence[str], restart_policy: str, gang_service: str | None,
              run_as: RunAs | None, mig_strategy: str = "mixed") -> dict[str, Any]:
    spec = job.spec
    pod: dict[str, Any] = {
        "restartPolicy": restart_policy,
        "terminationGracePeriodSeconds": config.preemption_grace_s,
        "priorityClassName": f"{config.priority_class_prefix}{spec.priority.value}",
        "enableServiceLinks": False,
        "automountServiceAccountToken": False,
        "securityContext": _pod_security(run_as),
        "containers": [_container(job, config, gang_service=gang_service, mig_strategy=mig_strategy, run_as=run_as)],
    }
    volumes = [_for_user(dict(v), spec.user) for v in config.volumes]
    carried = _carried_volume(spec)
    if carried is not None:
        volumes.append(carried)
    if volumes:
        pod["volumes"] = volumes
    if config.service_account:
        pod["serviceAccountName"] = config.service_account
    if gang_service is not None:
        pod["subdomain"] = gang_service
    node_selector = dict(spec.resources.node_selector)
    products = list(dict.fromkeys(gpu_products)) if spec.resources.gpus > 0 else []
    if len(products) == 1:
        node_selector[GPU_PRODUCT_LABEL] = products[0]
    if node_selector:
        pod["nodeSelector"] = node_selector
    term: dict[str, Any] = {}
    if len(products) > 1:
        term["matchExpressions"] = [{"key": GPU_PRODUCT_LABEL, "operator": "In", "values": products}]
    nodes = _pinned_nodes(allocation, config)
    if nodes:
        # matchFields on metadata.name is exact; kubernetes.io/hostname may differ from the node name.
        term["matchFields"] = [{"key": "metadata.name", "operator": "In", "values": nodes}]
    if term:
        pod["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}}}
    tolerations = _tolerations(spec, config)
    if tolerations:
        pod["tolerations"] = tolerations
    if config.queue_manager is QueueManager.VOLCANO:
        pod["schedulerName"] = "volcano"
    return pod


def _pod_metadata(job: Job, allocation: Allocation | None, config: KubernetesConfig) -> dict[str, Any]:
    annotations = {**_annotations(job, allocation), **_carried_annotations(job.spec)}
    if config.queue_manager is QueueManager.VOLCANO:
        if job.spec.resources.workers > 1 and job.spec.kind is not JobKind.INFERENCE:
            annotations[VOLCANO_GROUP_ANNOTATION] = object_name(job.id)  # our PodGroup (make_podgroup_manifest)
        annotations[VOLCANO_QUEUE_ANNOTATION] = config.queue_name(
            config.volcano_queue, team=job.spec.team, user=job.spec.user)
    return {"labels": job_labels(job, config), "annotations": annotations}


def _metadata(job: Job, allocation: Allocation | None, config: KubernetesConfig) -> dict[str, Any]:
    labels = job_labels(job, config)
    if config.queue_manager is QueueManager.KUEUE:
        labels[KUEUE_QUEUE_LABEL] = config.queue_name(config.kueue_queue, team=job.spec.team, user=job.spec.user)
    return {"name": object_name(job.id), "namespace": config.namespace_for(job.spec.user),
            "labels": labels, "annotations": _annotations(job, allocation)}


def make_job_manifest(job: Job, allocation: Allocation | None, config: KubernetesConfig, *,
                      gpu_products: Sequence[str] = (), mig_strategy: str = "mixed",
                      run_as: RunAs | None = None) -> dict[str, Any]:
    """Build the ``batch/v1`` Job of a training job.

    Args:
        job: the job (its spec is validated with :func:`validate_spec`).
        allocation: where our placement put it; its nodes pin the pods (node affinity on the node
            name) unless a queue manager decides. ``None`` is allowed only with a queue manager.
        config: executor configuration.
        mig_strategy: the MIG strategy of the allocation's node (``single`` → a slice is requested as
            ``nvidia.com/gpu``; see :func:`gpu_resources`).
        gpu_products: acceptable ``nvidia.com/gpu.product`` label values (one → ``nodeSelector``,
            several → a node affinity ``In``); ignored for CPU-only work.
        run_as: the owner's identity; its uid/gid (when known) become the pod's user and group.

    Returns:
        The Job manifest: single worker → one pod; gang of N workers → Indexed Job with
        completions = parallelism = N, pods on the headless service of :func:`make_headless_service`.
        A pod template cannot pin index i to node i, so a gang's pods are confined to the set of
        nodes our placement chose; each worker's GPU request makes kube-scheduler spread them
        over those nodes as placed.

    Raises:
        ValidationError: see :func:`validate_spec`; a missing allocation without a queue manager.
    """
    validate_spec(job.spec, config)
    if job.spec.kind is JobKind.INFERENCE:
        raise ValidationError("an inference service becomes a Deployment, not a Job", field="kind",
                              hint="use make_deployment_manifest")
    if allocation is None and config.queue_manager is QueueManager.NONE:
        raise ValidationError("no allocation to pin the job to", field="allocation",
                              hint="place the job first, or configure a queue manager (kueue, volcano)")
    workers = job.spec.resources.workers
    gang_service = object_name(job.id) if workers > 1 else None
    job_spec: dict[str, Any] = {
        "backoffLimit": 0,  # our scheduler requeues; the Job controller must not retry on its own
        "ttlSecondsAfterFinished": config.ttl_seconds_after_finished,
        "template": {
            "metadata": _pod_metadata(job, allocation, config),
            "spec": _pod_spec(job, allocation, config, gpu_products=gpu_products, restart_policy="Never",
                              mig_strategy=mig_strategy,
                              gang_service=gang_service, run_as=run_as),
        },
    }
    if workers > 1:
        job_spec.update({"completionMode": "Indexed", "completions": workers, "parallelism": workers})
    if job.spec.time_limit_s is not None:
        job_spec["activeDeadlineSeconds"] = max(1, math.ceil(job.spec.time_limit_s))
    if config.queue_manager is QueueManager.KUEUE:
        job_spec["suspend"] = True  # Kueue unsuspends it on admission
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _metadata(job, allocation, config),
            "spec": job_spec}


def make_headless_service(job: Job, config: KubernetesConfig) -> dict[str, Any]:
    """The headless Service that gives gang workers stable DNS names (``<job>-<index>.<service>``)."""
    labels = job_labels(job, config)
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": object_name(job.id), "namespace": config.namespace_for(job.spec.user),
                     "labels": labels},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,  # workers rendezvous before they are Ready
            "selector": {LABEL_JOB_ID: labels[LABEL_JOB_ID]},
            "ports": [{"name": "rendezvous", "port": config.rendezvous_port,
                       "targetPort": config.rendezvous_port, "protocol": "TCP"}],
        },
    }


def make_podgroup_manifest(job: Job, config: KubernetesConfig, *, mig_strategy: str = "mixed") -> dict[str, Any]:
    """The Volcano ``PodGroup`` of a gang: all ``minMember`` pods are scheduled together or none."""
    res = job.spec.resources
    total = res.total_gpus if res.groups else None  # groups: their own GPU counts, summed
    min_resources = {key: str(total if total is not None else int(value) * res.workers)
                     for key, value in gpu_resources(job.spec, mig_strategy=mig_strategy).items()}
    spec: dict[str, Any] = {
        "minMember": res.workers,
        "queue": config.queue_name(config.volcano_queue, team=job.spec.team, user=job.spec.user),
        "priorityClassName": f"{config.priority_class_prefix}{job.spec.priority.value}",
    }
    if min_resources:
        spec["minResources"] = min_resources
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": object_name(job.id), "namespace": config.namespace_for(job.spec.user),
                     "labels": job_labels(job, config)},
        "spec": spec,
    }


def make_deployment_manifest(job: Job, allocation: Allocation | None, config: KubernetesConfig, *,
                             gpu_products: Sequence[str] = (), mig_strategy: str = "mixed",
                             run_as: RunAs | None = None) -> dict[str, Any]:
    """Build the ``apps/v1`` Deployment of an inference service (replicas = workers).

    The container exposes ``spec.port`` with a TCP readiness probe on it; the strategy is
    ``Recreate`` because a rolling update would need a second set of GPUs.

    Raises:
        ValidationError: see :func:`validate_spec`; the job is not an inference service.
    """
    validate_spec(job.spec, config)
    if job.spec.kind is not JobKind.INFERENCE:
        raise ValidationError("only inference services become Deployments", field="kind",
                              hint="use make_job_manifest for training jobs")
    metadata = _metadata(job, allocation, config)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata,
        "spec": {
            "replicas": job.spec.resources.workers,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {LABEL_JOB_ID: metadata["labels"][LABEL_JOB_ID]}},
            "template": {
                "metadata": _pod_metadata(job, allocation, config),
                "spec": _pod_spec(job, allocation, config, gpu_products=gpu_products, restart_policy="Always",
                                  gang_service=None, mig_strategy=mig_strategy, run_as=run_as),
            },
        },
    }


def make_inference_service(job: Job, config: KubernetesConfig) -> dict[str, Any]:
    """The ClusterIP Service in front of an inference Deployment (port → the container's port)."""
    labels = job_labels(job, config)
    port = job.spec.port or 0
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": object_name(job.id), "namespace": config.namespace_for(job.spec.user),
                     "labels": labels},
        "spec": {
            "type": "ClusterIP",
            "selector": {LABEL_JOB_ID: labels[LABEL_JOB_ID]},
            "ports": [{"name": "http", "port": port, "targetPort": port, "protocol": "TCP"}],
        },
    }


def make_manifests(job: Job, allocation: Allocation | None, config: KubernetesConfig, *,
                   gpu_products: Sequence[str] = (), mig_strategy: str = "mixed",
                   run_as: RunAs | None = None) -> list[dict[str, Any]]:
    """Every object of ``job``, in creation order (Service / PodGroup before the pods' owner).

    Raises:
        ValidationError: see :func:`make_job_manifest`.
    """
    if job.spec.kind is JobKind.INFERENCE:
        return [make_deployment_manifest(job, allocation, config, gpu_products=gpu_products,
                                         mig_strategy=mig_strategy, run_as=run_as),
                make_inference_service(job, config)]
    out: list[dict[str, Any]] = []
    if job.spec.resources.groups:
        jobs = make_group_job_manifests(job, allocation, config, gpu_products=gpu_products,
                                        mig_strategy=mig_strategy, run_as=run_as)
    else:
        jobs = [make_job_manifest(job, allocation, config, gpu_products=gpu_products, mig_strategy=mig_strategy,
                                  run_as=run_as)]
    if job.spec.resources.workers > 1:
        out.append(make_headless_service(job, config))
        if config.queue_manager is QueueManager.VOLCANO:
            out.append(make_podgroup_manifest(job, config, mig_strategy=mig_strategy))
    out.extend(jobs)
    return out


def group_job_name(job_id: str, index: int) -> str:
    """Name of worker group ``index``'s Job: the first is :func:`object_name`, the others ``…-g<k>``
    (at most 48 + 3 characters, leaving room for pod hostnames ``<name>-<completion index>``)."""
    return object_name(job_id) if index == 0 else f"{dns_label(job_id, prefix='js-', max_len=48)}-g{index}"


def make_group_job_manifests(job: Job, allocation: Allocation | None, config: KubernetesConfig, *,
                             gpu_products: Sequence[str] = (), mig_strategy: str = "mixed",
                             run_as: RunAs | None = None) -> list[dict[str, Any]]:
    """One Indexed ``batch/v1`` Job per worker group of a heterogeneous gang (module docstring).

    Each group's pods ask for that group's GPUs, CPU and memory and are pinned to the nodes our
    placement gave that group's workers (``allocation.workers`` is in group order).

    Raises:
        ValidationError: see :func:`make_job_manifest`; a later group of several workers with
            nothing to run through a shell (no command, script or notebook).
    """
    validate_spec(job.spec, config)
    res = job.spec.resources
    service = object_name(job.id)
    per_worker = allocation.per_worker() if allocation is not None else ()
    out: list[dict[str, Any]] = []
    offset = 0
    for index, group in enumerate(res.groups):
        one = replace(res, groups=(), gpus=group.gpus, workers=group.workers, cpu_millis=group.cpu_millis,
                      memory_mib=group.memory_mib)
        member = replace(job, spec=replace(job.spec, resources=one))
        mine = per_worker[offset:offset + group.workers]
        part = None if allocation is None or not mine else Allocation(
            node=mine[0][0], gpu_uuids=mine[0][1], gpu_milli=allocation.gpu_milli, workers=tuple(mine))
        manifest = make_job_manifest(member, part, config, gpu_products=gpu_products, mig_strategy=mig_strategy,
                                     run_as=run_as)
        manifest["metadata"]["name"] = group_job_name(job.id, index)
        manifest["spec"].update({"completionMode": "Indexed", "completions": group.workers,
                                 "parallelism": group.workers})
        template = manifest["spec"]["template"]
        template["spec"]["subdomain"] = service
        if config.queue_manager is QueueManager.VOLCANO:
            template["metadata"]["annotations"][VOLCANO_GROUP_ANNOTATION] = service
        container = template["spec"]["containers"][0]
        container["env"] = _group_env(container["env"], job, config, group.name, group.workers, offset)
        if offset and group.workers > 1:
            if not container.get("command"):
                raise ValidationError(f"worker group {group.name!r} needs a command to rank its workers",
                                      field="groups", hint="give a command, script or notebook")
            container["command"] = ["/bin/sh", "-c",
                                    'export RANK=$((JUPYTER_SCHED_RANK_OFFSET + JUPYTER_SCHED_GROUP_RANK)); exec "$@"',
                                    "sh", *container["command"]]
        out.append(manifest)
        offset += group.workers
    return out


def _group_env(env: list[dict[str, Any]], job: Job, config: KubernetesConfig, group: str, size: int,
               offset: int) -> list[dict[str, Any]]:
    """A group's pod env: the job's own entries, then the whole gang's rendezvous and rank."""
    gang_keys = {"WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "RANK"}
    index_ref = {"fieldRef": {"fieldPath": f"metadata.annotations['{COMPLETION_INDEX_ANNOTATION}']"}}
    out = [e for e in env if e["name"] not in gang_keys]
    out += [
        {"name": "WORLD_SIZE", "value": str(job.spec.resources.workers)},
        {"name": "MASTER_ADDR", "value": f"{group_job_name(job.id, 0)}-0.{object_name(job.id)}"},
        {"name": "MASTER_PORT", "value": str(config.rendezvous_port)},
        {"name": "JUPYTER_SCHED_GROUP", "value": group},
        {"name": "JUPYTER_SCHED_GROUP_SIZE", "value": str(size)},
        {"name": "JUPYTER_SCHED_GROUP_RANK", "valueFrom": index_ref},
        {"name": "JUPYTER_SCHED_RANK_OFFSET", "value": str(offset)},
    ]
    if offset == 0:
        out.append({"name": "RANK", "valueFrom": index_ref})
    elif size == 1:
        out.append({"name": "RANK", "value": str(offset)})
    return out  # a later group of several workers: RANK is exported by its shell (see above)


def describe(manifest: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` of a manifest, for messages."""
    meta = manifest.get("metadata", {})
    return f"{manifest.get('kind')} {meta.get('namespace')}/{meta.get('name')}"
