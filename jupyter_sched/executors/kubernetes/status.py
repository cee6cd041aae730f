"""Read a job's state back from API objects: Job / Deployment, its Pods and Warning Events (pure).

:func:`observe_job` and :func:`observe_deployment` turn the cached objects of one job into an
:class:`Observation` (phase, exit code, pending reason); :func:`reason_from_event` turns the
scheduler's and the Job controller's Warning events into our pending reasons with numbers:

* ``FailedCreate`` from the Job controller when a namespace ResourceQuota refuses the pod (case
  019): ``exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used:
  requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4`` →
  ``ExceedsQuota`` "namespace team-geo GPU quota exhausted (4 of 4 in use)". The same text in
  the body of a 403 on create is read by the same function.
* ``FailedScheduling`` from kube-scheduler (``0/3 nodes are available: 1 Insufficient
  nvidia.com/gpu, 2 node(s) had untolerated taint ...``) → ``Unschedulable`` with one plain
  sentence, counts per stable category and the preemption clause (:mod:`.failures`, case 027).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ...errors import TimestampError
from ...model import PendingReason
from ...model.units import parse_utc
from ..outcome import describe_termination
from .failures import GPU_TAINT_KEY, failure_sentence, parse_failed_scheduling
from .manifests import CARRIED_VOLUME, CONTAINER_NAME, GPU_RESOURCE, MIG_RESOURCE_PREFIX

__all__ = [
    "Observation",
    "latest_reason",
    "observe_deployment",
    "observe_job",
    "quota_reason",
    "reason_from_event",
    "scheduling_reason",
]

_QUOTA = re.compile(
    r"exceeded quota: (?P<quota>[^,]+), requested: (?P<requested>.+?), used: (?P<used>.+?), "
    r"limited: (?P<limited>[^\s]+)")
_NODES = re.compile(r"(?P<available>\d+)/(?P<total>\d+) nodes are available")
_NODE_REASON = re.compile(r"(?P<count>\d+) (?P<text>.+?)(?=, \d+ |$)")


@dataclass(frozen=True, slots=True)
class Observation:
    """What the cluster says about one job right now.

    Attributes:
        phase: ``pending`` | ``running`` | ``succeeded`` | ``failed`` | ``gone``.
        exit_code: the main container's exit code once finished (worker 0 first, else the first
            non-zero one of a gang).
        finished_at: completion time reported by the cluster (UTC).
        message: one sentence on how it ended (e.g. the time limit).
        reason: why it waits, while pending.
        ready: inference services: at least one replica passes its readiness probe.
        restarts: container restarts observed (services restart after failures).
        suspended: the Job is suspended (waiting for Kueue admission).
        settled: False while a failed Job's exit code is still provisional (its pods' final
            status has not been seen yet).
    """

    phase: str
    exit_code: int | None = None
    finished_at: datetime | None = None
    message: str = ""
    reason: PendingReason | None = None
    ready: bool = False
    restarts: int = 0
    suspended: bool = False
    settled: bool = True


def _kv_list(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in text.split(","):
        key, _, value = part.strip().partition("=")
        digits = re.match(r"\d+", value)
        if key and digits:
            out[key] = int(digits.group(0))
    return out


def _resource_words(resource: str) -> str:
    name = resource.removeprefix("requests.").removeprefix("limits.")
    if name == GPU_RESOURCE:
        return "GPU"
    if name.startswith(MIG_RESOURCE_PREFIX):
        return f"MIG {name[len(MIG_RESOURCE_PREFIX):]}"
    return name


def quota_reason(message: str, *, namespace: str) -> PendingReason | None:
    """Parse a ResourceQuota refusal (``exceeded quota: ...``) into ``ExceedsQuota``; None if not one.

    Of the resources the refusal names, the first one that overflows is reported, GPUs first.
    """
    match = _QUOTA.search(message)
    if not match:
        return None
    requested = _kv_list(match.group("requested"))
    used = _kv_list(match.group("used"))
    limited = _kv_list(match.group("limited"))

    def gpu_first(resource: str) -> tuple[int, str]:
        return (0 if GPU_RESOURCE in resource or MIG_RESOURCE_PREFIX in resource else 1, resource)

    over = [r for r in sorted(limited, key=gpu_first)
            if used.get(r, 0) + requested.get(r, 0) > limited[r]] or sorted(limited, key=gpu_first)
    if not over:
        return None
    resource = over[0]
    words = _resource_words(resource)
    quota = match.group("quota").strip()
    return PendingReason(
        code="ExceedsQuota",
        message=f"namespace {namespace} {words} quota exhausted ({used.get(resource, 0)} of {limited[resource]} in use)",
        details={"namespace": namespace, "quota": quota, "resource": resource,
                 "requested": requested.get(resource, 0), "used": used.get(resource, 0),
                 "limit": limited[resource]},
        unblock=(f"wait until work in namespace {namespace} releases {words}s, or ask an admin to raise "
                 f"ResourceQuota {quota}"),
    )


def scheduling_reason(message: str, *, pod: str, gpu_taint_keys: tuple[str, ...] = (GPU_TAINT_KEY,)) -> PendingReason:
    """Turn a ``FailedScheduling`` message into ``Unschedulable``: one plain sentence, the counts per
    stable category (:mod:`.failures`), the preemption clause, and a manifest problem when the job's
    manifest (not the cluster) is at fault (case 027).

    ``details``: ``pod``, ``causes`` (the raw phrases with their counts), ``categories``
    (``{"nodes": 8, "insufficient_gpu": 1, "unexplained": 7, "preemption": "no victims"}``),
    ``manifest_problem`` (``missing_gpu_toleration`` | ``selector_matches_no_node`` | ``""``),
    ``kubernetes_message`` (verbatim), and ``available`` / ``total`` nodes when given.
    """
    first = message.split(" preemption:", 1)[0].strip()
    nodes = _NODES.search(first)
    causes: dict[str, int] = {}
    if nodes:
        tail = first[nodes.end():].lstrip(": ").rstrip(".")
        for m in _NODE_REASON.finditer(tail):
            causes[m.group("text").strip()] = int(m.group("count"))
    failure = parse_failed_scheduling(message)
    sentence, problem, unblock = failure_sentence(failure, gpu_taint_keys=gpu_taint_keys)
    details: dict[str, Any] = {"pod": pod, "causes": causes, "categories": failure.to_dict(),
                               "manifest_problem": problem, "kubernetes_message": message.strip()}
    if failure.taints:
        details["taints"] = list(failure.taints)
    if nodes:
        details.update(available=int(nodes.group("available")), total=int(nodes.group("total")))
    prefix = "manifest problem: " if problem else ""
    return PendingReason(code="Unschedulable", message=f"{prefix}{sentence}", details=details, unblock=unblock)


def reason_from_event(event: Mapping[str, Any]) -> PendingReason | None:
    """Our pending reason for one Warning event, or None when the event is not about waiting."""
    reason = event.get("reason")
    message = str(event.get("message") or event.get("note") or "")
    involved = event.get("involvedObject") or event.get("regarding") or {}
    namespace = str(involved.get("namespace") or (event.get("metadata") or {}).get("namespace") or "")
    if reason == "FailedCreate":
        quota = quota_reason(message, namespace=namespace)
        if quota is not None:
            return quota
        return PendingReason(code="Unschedulable", message=f"Kubernetes cannot create the pod: {message}",
                             details={"event": "FailedCreate"}, unblock="see the message; fix and resubmit")
    if reason == "FailedScheduling":
        return scheduling_reason(message, pod=str(involved.get("name", "")))
    return None


def _event_time(event: Mapping[str, Any]) -> str:
    return str(event.get("lastTimestamp") or event.get("eventTime") or event.get("firstTimestamp")
               or (event.get("metadata") or {}).get("creationTimestamp") or "")


def latest_reason(events: Iterable[Mapping[str, Any]], *, uids: frozenset[str]) -> PendingReason | None:
    """The pending reason of the newest relevant event about one of the objects ``uids``.

    Matching by uid (not name) ignores events of an earlier object with the same name.
    """
    best: tuple[str, PendingReason] | None = None
    for event in events:
        involved = event.get("involvedObject") or event.get("regarding") or {}
        if involved.get("uid") not in uids:
            continue
        reason = reason_from_event(event)
        if reason is None:
            continue
        stamp = _event_time(event)
        if best is None or stamp >= best[0]:
            best = (stamp, reason)
    return best[1] if best else None


def _time(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        return parse_utc(str(value), field="time")
    except TimestampError:
        return None


def _uid(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def _terminated(pod: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        state = status.get("state") or {}
        if "terminated" in state:
            return dict(state["terminated"])
    return None


def _index(pod: Mapping[str, Any]) -> int:
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    try:
        return int(annotations.get("batch.kubernetes.io/job-completion-index", 0))
    except ValueError:
        return 0


def _exit_of(pods: list[Mapping[str, Any]]) -> tuple[int | None, datetime | None]:
    ordered = sorted(pods, key=_index)
    terminated = [t for t in (_terminated(p) for p in ordered) if t is not None]
    if not terminated:
        return None, None
    failing = [t for t in terminated if int(t.get("exitCode", 0)) != 0]
    chosen = failing[0] if failing else terminated[0]
    return int(chosen.get("exitCode", 0)), _time(chosen.get("finishedAt"))


def _files_of(job: Mapping[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    """The Job's container's working directory (None: its image's) and where the admin's volumes are mounted in it
    (the carried script's own read-only folder left out), from the Job's pod template."""
    template = ((job.get("spec") or {}).get("template") or {}).get("spec") or {}
    containers = [c for c in template.get("containers") or [] if isinstance(c, Mapping)]
    container = next((c for c in containers if c.get("name") == CONTAINER_NAME), containers[0] if containers else {})
    cwd = container.get("workingDir")
    mounts = tuple(str(m["mountPath"]) for m in container.get("volumeMounts") or []
                   if isinstance(m, Mapping) and m.get("mountPath") and m.get("name") != CARRIED_VOLUME)
    return (str(cwd) if cwd else None), mounts


def observe_job(job: Mapping[str, Any] | None, pods: Iterable[Mapping[str, Any]],
                events: Iterable[Mapping[str, Any]], *, queue: str = "") -> Observation:
    """State of a ``batch/v1`` Job from the Job, its pods and Warning events.

    Args:
        job: the Job object, or None when it no longer exists.
        pods: the Job's pods (label ``jupyter-sched/job-id``).
        events: Warning events (any; filtered by the uids of the Job and its pods).
        queue: the Kueue LocalQueue, to say what a suspended Job waits for.
    """
    pods = list(pods)
    if job is None:
        return Observation(phase="gone")
    spec = job.get("spec") or {}
    status = job.get("status") or {}
    conditions = {c.get("type"): c for c in status.get("conditions") or [] if c.get("status") == "True"}
    exit_code, pod_finished = _exit_of(pods)
    if "Complete" in conditions or "SuccessCriteriaMet" in conditions:
        finished = _time(status.get("completionTime")) or pod_finished
        return Observation(phase="succeeded", exit_code=0, finished_at=finished)
    if "Failed" in conditions:
        cond = conditions["Failed"]
        finished = _time(cond.get("lastTransitionTime")) or pod_finished
        message = str(cond.get("message") or cond.get("reason") or "")
        deadline = cond.get("reason") == "DeadlineExceeded"
        if deadline:
            message = f"time limit exceeded (activeDeadlineSeconds={spec.get('activeDeadlineSeconds')})"
        elif exit_code not in (None, 0):  # the run's own sentence: failing cell, log tail (issue 19)
            failing = next(t for t in (_terminated(p) for p in sorted(pods, key=_index))
                           if t is not None and int(t.get("exitCode", 0)) != 0)
            if failing.get("message") or failing.get("reason") == "OOMKilled":
                cwd, mounts = _files_of(job)  # a file's error names where the container read it (s37 left)
                message = describe_termination(exit_code, str(failing.get("message") or ""),
                                               reason=str(failing.get("reason") or ""), cwd=cwd, mounts=mounts)
        # The Job's condition can arrive before its pods' final status (separate watches): the
        # exit code is settled only once a pod shows it, or no pod is left to show it.
        waiting_for_pods = any((p.get("status") or {}).get("phase") in ("Pending", "Running") for p in pods) or (
            not pods and not deadline and int(status.get("failed") or 0) > 0)
        return Observation(phase="failed", exit_code=exit_code if exit_code not in (None, 0) else 1,
                           finished_at=finished, message=message,
                           settled=exit_code not in (None, 0) or not waiting_for_pods)
    if spec.get("suspend"):
        target = f"LocalQueue {queue}" if queue else "its queue manager"
        return Observation(phase="pending", suspended=True, reason=PendingReason(
            code="WaitingForCapacity", message=f"waiting for Kueue to admit it in {target}",
            details={"queue_manager": "kueue", "local_queue": queue},
            unblock="Kueue admits it when its ClusterQueue has quota"))
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    if running:
        restarts = sum(int(s.get("restartCount", 0)) for p in running
                       for s in (p.get("status") or {}).get("containerStatuses") or [])
        return Observation(phase="running", restarts=restarts)
    uids = frozenset({_uid(job), *(_uid(p) for p in pods)})
    return Observation(phase="pending", reason=latest_reason(events, uids=uids))


def observe_deployment(deployment: Mapping[str, Any] | None, pods: Iterable[Mapping[str, Any]],
                       events: Iterable[Mapping[str, Any]]) -> Observation:
    """State of an inference Deployment: running once a pod runs, ready once a replica is Ready."""
    pods = list(pods)
    events = list(events)
    if deployment is None:
        return Observation(phase="gone")
    status = deployment.get("status") or {}
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"]
    restarts = sum(int(s.get("restartCount", 0)) for p in pods
                   for s in (p.get("status") or {}).get("containerStatuses") or [])
    if running:
        return Observation(phase="running", ready=int(status.get("readyReplicas") or 0) > 0, restarts=restarts)
    uids = frozenset({_uid(deployment), *(_uid(p) for p in pods)})
    # ReplicaSets own the pods; their FailedCreate events name the ReplicaSet, matched by name prefix.
    name = str((deployment.get("metadata") or {}).get("name", ""))
    replica_set_uids = frozenset(
        str((e.get("involvedObject") or {}).get("uid", "")) for e in events
        if (e.get("involvedObject") or {}).get("kind") == "ReplicaSet"
        and str((e.get("involvedObject") or {}).get("name", "")).startswith(f"{name}-"))
    return Observation(phase="pending", reason=latest_reason(events, uids=uids | replica_set_uids))
