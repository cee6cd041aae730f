"""The Kubernetes executor: admitted jobs become Jobs/Deployments, watched until they end.

Implements :class:`~jupyter_sched.executors.base.Executor` with the official ``kubernetes``
client (major version 37; every call asks for raw JSON with ``_preload_content=False``, so the
cache holds the API's own dicts):

* ``start`` builds the objects with the pure builders of :mod:`.manifests` (bad input is a
  :class:`~jupyter_sched.errors.ValidationError` before any request is sent — case 019) and
  creates them in order; a ResourceQuota refusal (HTTP 403) becomes an ExecutorError whose
  message is the pending reason ("namespace team-geo GPU quota exhausted (4 of 4 in use)").
  The job's progress token goes in a Secret of its own, created first and owned by the job's
  objects once they exist (:mod:`.job_secret`): never a value in the pod spec. Every end deletes
  it (succeeded, failed, stopped or preempted, deleted outside, found ended after a restart), owned
  or not: a Secret whose owner patch was refused never outlives its job.
* ``poll`` reads the state back from watches of the Jobs, Deployments, Pods (label
  ``app.kubernetes.io/managed-by=jupyter-sched``) and Warning Events of the work namespace
  (cluster-wide with ``namespace_per_user``), and reports :class:`Started`, :class:`Ready`,
  :class:`Waiting` (FailedScheduling / FailedCreate / Kueue suspension), :class:`Exited` and
  :class:`Lost`.
* ``stop`` deletes the Job (or Deployment) with ``propagationPolicy: Background``; its pods get
  SIGTERM and, after ``terminationGracePeriodSeconds`` (the configured preemption grace, fixed
  when the pod was created), SIGKILL. Kubernetes cannot deliver a checkpoint signal, so a
  checkpointable job must checkpoint on SIGTERM. :class:`Exited` (code -15) is reported once
  the Job and all its pods are gone, i.e. when the GPUs are really free; its message says which
  signals the containers' processes got (newuser30 n16; the pod's log is the container's own, which the
  service cannot write, and no process of a pod is seen from here to be named).
  A Job that had already ended on its own keeps its end (:attr:`Exited.before_stop`, newuser38 N4 on Kubernetes):
  ``stop`` reads the Job's status from the API server before the delete (the watch may lag), and a Job's
  ``Complete``/``Failed`` condition seen at any time is its own end, since a Job deleted with background
  propagation is removed at once and no condition is written to it after.
* What a container's main process leaves running when it ends (PID 1 of the container's PID namespace)
  the kernel SIGKILLs with it, at once and unseen: unlike the local executor's wrapper
  (:mod:`..wrapper`), nothing here can name those processes.
* ``logs`` reads the pod log of worker 0 (byte offsets; a read on from the last answer asks only for what is new,
  ``sinceTime`` with ``timestamps=true``: :mod:`.pod_log`; :meth:`follow_logs` streams it; :meth:`tail_logs` its
  last lines, with ``tailLines``).
* A gang of worker groups is one Job per group (handle ``members``: their names, the first being
  ``name``), read as one job by :func:`.gangs.observe_gang`; when one group fails, the others
  are deleted and the failure is reported once their pods are gone; ``stop`` deletes them all.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Any

from kubernetes import client as k8s

from ...backoff import Reconnecting
from ...errors import ExecutorError, NotFoundError
from ...inventory.kubernetes import KubernetesInventory
from ...model import Allocation, Inventory, Job, JobKind, JobSpec, JobState, PendingReason, ResourceRequest
from ..base import Connection, ExecutorEvent, ExecutorHandle, Exited, Lost, NotReady, Ready, Started, Waiting
from ..log_tail import LogTail, line_count, tail_in
from ..runas import RunAs
from .config import KubernetesConfig, QueueManager
from .gangs import observe_gang
from .job_secret import owner_references, secret_name, split_secret, token_secret, with_secret_env
from .manifests import (
    ANNOTATION_GPU_UUIDS,
    ANNOTATION_JOB_ID,
    ANNOTATION_USER,
    GPU_PRODUCT_LABEL,
    KUEUE_QUEUE_LABEL,
    LABEL_JOB_ID,
    LABEL_MANAGED_BY,
    LABEL_TEAM,
    MANAGED_BY,
    describe,
    group_job_name,
    make_manifests,
    object_name,
    submitted_spec,
)
from .pod_log import START, Mark, parse_records, since_time, take, utf8_cut
from .quantity import label_value
from .reflector import Reflector
from .status import Observation, observe_deployment, observe_job, quota_reason

__all__ = ["KubernetesExecutor", "with_env"]

log = logging.getLogger(__name__)

_SIGTERM_EXIT = -15
_SELECTOR = f"{LABEL_MANAGED_BY}={MANAGED_BY}"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(slots=True)
class _Tracked:
    job_id: str
    kind: str            # "Job" | "Deployment"
    namespace: str
    name: str
    handle: ExecutorHandle
    port: int | None = None
    queue: str = ""
    seen: bool = False
    started: bool = False
    ready: bool = False
    restarts: int = 0
    stopping: bool = False
    reason: PendingReason | None = None
    settling_since: datetime | None = None
    connection: str | None = None  # the "reconnecting to …" sentence last reported, None when connected
    members: tuple[str, ...] = ()              # a gang of worker groups: one Job per group
    failure: Observation | None = None         # how such a gang failed, reported once its pods are gone
    ended: Observation | None = None           # how its Job(s) had ended on their own when the stop came (read then)


_MOST_LOG_MARKS = 1024
"""Followed jobs' log marks kept (:meth:`KubernetesExecutor.logs`); a job past them reads from its log's start once."""


class _NotStamped(Exception):
    """A pod log answer whose lines carry no kubelet stamp."""


def _streamed_records(response: Any) -> Iterator[tuple[tuple[int, int], bytes]]:
    """The stamped lines of a streamed ``timestamps=true`` answer, as they come.

    Raises:
        _NotStamped: a line has no stamp."""
    pending = b""
    for chunk in response.stream(amt=1 << 16, decode_content=False):
        pending += chunk
        head, newline, pending = pending.rpartition(b"\n")
        if newline:
            records = parse_records(head + newline, whole=False)
            if records is None:
                raise _NotStamped
            yield from records
    if pending:
        records = parse_records(pending, whole=True)
        if records is None:
            raise _NotStamped
        yield from records


def _utf8_whole(data: bytes, mark: Mark) -> tuple[bytes, Mark]:
    """``data`` without a character cut at its end, the mark moved back with it (where it can be: inside its line)."""
    back = len(data) - utf8_cut(data)
    if back and mark.partial >= back:
        return data[:-back], Mark(mark.key, mark.same, mark.partial - back)
    return data, mark


def _status_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if body:
        try:
            return str(json.loads(body).get("message") or body)
        except (ValueError, AttributeError):
            return str(body)
    return str(getattr(exc, "reason", "") or exc)


def _http_status(exc: Exception) -> int | None:
    status = getattr(exc, "status", None)
    return status if isinstance(status, int) else None


class KubernetesExecutor:
    """Run jobs on a Kubernetes cluster (see the module docstring).

    Args:
        api_client: a configured ``kubernetes.client.ApiClient`` (``config.load_kube_config()`` /
            ``load_incluster_config()`` or a ``Configuration`` with ``host``).
        config: namespaces, queue manager, defaults.
        inventory: the cluster inventory, used to pin GPU work to the product label of the
            chosen node (``nvidia.com/gpu.product``) and to resolve model names in queue-manager
            mode. Optional.
        watch_timeout_s: server-side timeout of each watch request (seconds).
        clock: UTC clock, for ``finished_at`` when the cluster reports none.
        settle_s: how long a failed Job may wait for its pods' exit codes to show up in the pod
            watch before exit code 1 is reported (seconds).
    """

    name = "kubernetes"
    starts_async = True
    """A created Job is not running yet: the engine waits for :class:`Started` (its pods scheduled)."""

    def __init__(self, api_client: Any, config: KubernetesConfig | None = None, *,
                 inventory: KubernetesInventory | Callable[[], Inventory] | None = None,
                 watch_timeout_s: int = 240, clock: Callable[[], datetime] = _utcnow,
                 settle_s: float = 10.0) -> None:
        self.config = config or KubernetesConfig()
        # Typed Any: every call passes _preload_content=False and gets the raw urllib3 response,
        # which the client's annotations (model return types) do not describe.
        self._core: Any = k8s.CoreV1Api(api_client)
        self._batch: Any = k8s.BatchV1Api(api_client)
        self._apps: Any = k8s.AppsV1Api(api_client)
        self._custom: Any = k8s.CustomObjectsApi(api_client)
        self._inventory = inventory
        self._watch_timeout_s = watch_timeout_s
        self._clock = clock
        self._settle_s = settle_s
        self._lock = threading.RLock()
        self._tracked: dict[str, _Tracked] = {}
        self._reflectors: dict[str, Reflector] | None = None
        self._ended: list[tuple[str, str]] = []  # (namespace, job id) whose token Secret goes (_drop_secrets)
        self._log_marks: dict[str, tuple[str, int, Mark]] = {}
        """``job id -> (pod, offset, mark)``: where the last :meth:`logs` answer of the job's log ended (:mod:`.pod_log`:
        the next read from that offset asks for what is new only); at most :data:`_MOST_LOG_MARKS`, the oldest
        dropped."""
        self.job_env: Callable[[Job], Mapping[str, str]] | None = None
        """``job_env(job)``: variables added to every container of the job (``JUPYTER_SCHED_URL`` and the
        job's progress token, as the local executor adds them: :func:`with_env`); None: none."""

    # -- watches -------------------------------------------------------------------------------
    def _watching(self) -> dict[str, Reflector]:
        with self._lock:
            if self._reflectors is not None:
                return self._reflectors
            ns = self.config.namespace
            per_user = self.config.namespace_per_user
            fns: dict[str, Callable[..., Any]] = {
                "jobs": self._batch.list_job_for_all_namespaces if per_user
                else partial(self._batch.list_namespaced_job, ns),
                "deployments": self._apps.list_deployment_for_all_namespaces if per_user
                else partial(self._apps.list_namespaced_deployment, ns),
                "pods": self._core.list_pod_for_all_namespaces if per_user
                else partial(self._core.list_namespaced_pod, ns),
                "events": self._core.list_event_for_all_namespaces if per_user
                else partial(self._core.list_namespaced_event, ns),
            }
            reflectors = {
                kind: Reflector(fn, name=kind, watch_timeout_s=self._watch_timeout_s, list_kwargs=(
                    {"field_selector": "type=Warning"} if kind == "events" else {"label_selector": _SELECTOR}))
                for kind, fn in fns.items()}
            started: list[Reflector] = []
            try:
                for reflector in reflectors.values():
                    reflector.start()
                    started.append(reflector)
            except ExecutorError:
                for reflector in started:
                    reflector.stop()
                raise
            self._reflectors = reflectors
            return reflectors

    def _cached(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        return self._watching()[kind].get(f"{namespace}/{name}")

    def _pods_of(self, tracked: _Tracked) -> list[dict[str, Any]]:
        want = label_value(tracked.job_id)
        return [p for p in self._watching()["pods"].items()
                if (p.get("metadata") or {}).get("namespace") == tracked.namespace
                and ((p.get("metadata") or {}).get("labels") or {}).get(LABEL_JOB_ID) == want]

    def _observe(self, tracked: _Tracked, obj: Mapping[str, Any] | None = None) -> Observation:
        kind = "jobs" if tracked.kind == "Job" else "deployments"
        current = obj if obj is not None else self._cached(kind, tracked.namespace, tracked.name)
        pods = self._pods_of(tracked)
        if tracked.kind == "Job":
            return self._observe_read(tracked, [(m, current if m == tracked.name else self._cached(
                "jobs", tracked.namespace, m)) for m in tracked.members or (tracked.name,)], pods)
        return observe_deployment(current, pods, self._watching()["events"].items())

    def submitted_spec(self, spec: JobSpec) -> tuple[JobSpec, list[str]]:
        """A submitted job's spec as stored, and notes for the answer: checked now as its objects will be
        at start, its relative working_dir written out (:func:`.manifests.submitted_spec`).

        Raises:
            ValidationError: naming the field (400 at submit, never a failed start).
        """
        return submitted_spec(spec, self.config)

    # -- Executor protocol ---------------------------------------------------------------------
    def start(self, job: Job, allocation: Allocation | None, run_as: RunAs | None = None) -> ExecutorHandle:
        """Create the job's objects and track it.

        Args:
            job: the admitted job.
            allocation: our placement (None only with a queue manager configured).
            run_as: the owner's identity; known uid/gid become the pods' user and group (pods are
                non-root either way, see :mod:`.manifests`).

        Returns:
            ``ExecutorHandle("kubernetes", {"namespace", "name", "kind", "uid"})``.

        Raises:
            ValidationError: the job cannot become a valid object (nothing was sent).
            ExecutorError: the API refused (the message is the pending reason for quota refusals;
                ``details`` carries its numbers); objects already created are deleted again.
        """
        manifests = make_manifests(job, allocation, self.config, gpu_products=self._gpu_products(job, allocation),
                                   mig_strategy=self._mig_strategy(allocation), run_as=run_as)
        secret: dict[str, Any] | None = None
        if self.job_env is not None:  # the URL as a value, the token from the job's Secret (.job_secret)
            plain, hidden = split_secret(self.job_env(job))
            manifests = with_env(manifests, plain, keep=frozenset(job.spec.env))
            if hidden:
                secret = token_secret(job, manifests[0]["metadata"]["namespace"], hidden, self.config)
                manifests = with_secret_env(manifests, hidden, secret=secret["metadata"]["name"])
        self._watching()
        if secret is not None:
            self._create_secret(secret, job.id)
        created: list[dict[str, Any]] = []
        owner: dict[str, Any] = {}
        owners: list[dict[str, Any]] = []
        for manifest in manifests:
            try:
                answer = self._create(manifest)
            except Exception as exc:
                existing = self._existing_of_same_job(manifest, job.id) if _http_status(exc) == 409 else None
                if existing is None:
                    for done in reversed([*([secret] if secret is not None else []), *created]):
                        self._delete(done)
                    raise self._create_error(manifest, exc) from exc
                answer = existing
            created.append(manifest)
            if manifest["kind"] in ("Job", "Deployment"):
                owner = answer
                owners.append(answer)
        if secret is not None:
            self._own_secret(secret, owners)
        meta = manifests[0]["metadata"]
        kind = "Deployment" if job.spec.kind is JobKind.INFERENCE else "Job"
        members = [m["metadata"]["name"] for m in manifests if m["kind"] == "Job"]
        handle = ExecutorHandle(executor=self.name, data={
            "namespace": meta["namespace"], "name": object_name(job.id), "kind": kind,
            "uid": str((owner.get("metadata") or {}).get("uid", "")),
            **({"members": members} if len(members) > 1 else {})})
        self._track(job, handle)
        return handle

    def poll(self) -> list[ExecutorEvent]:
        """Report what changed for every tracked job since the last call (see module docstring);
        while a watch reconnects, every tracked job says so (:class:`Connection`)."""
        events: list[ExecutorEvent] = []
        with self._lock:
            reconnecting = self.reconnecting()
            text = reconnecting.message if reconnecting is not None else None
            for tracked in list(self._tracked.values()):
                if tracked.connection != text:
                    tracked.connection = text
                    events.append(Connection(tracked.job_id, text))
                events.extend(self._advance(tracked, self._observe(tracked)))
        self._drop_secrets()  # before the ends are answered: a requeued job's next start makes it anew
        return events

    def reconnecting(self) -> Reconnecting | None:
        """The first of this executor's watches that is reconnecting, None when all are up."""
        for reflector in (self._reflectors or {}).values():
            state = reflector.reconnecting
            if state is not None:
                return state
        return None

    def stop(self, job_id: str, *, grace_s: float, checkpoint_signal: bool = False, reason: str = "") -> None:
        """Delete the job's objects with background propagation (see module docstring).

        ``grace_s`` and ``checkpoint_signal`` cannot change a running pod on Kubernetes: the
        pod's ``terminationGracePeriodSeconds`` (set from the preemption grace at creation) applies;
        ``reason`` is not written anywhere (a pod's log is the container's own output).

        Raises:
            ExecutorError: the API refused the delete (other than 404).
        """
        with self._lock:
            tracked = self._tracked.get(job_id)
            if tracked is None or tracked.stopping:
                return
            tracked.stopping = True
        if tracked.kind == "Job" and tracked.failure is None:  # a failed gang's own stop knows its end
            ended = self._ended_at_stop(tracked)
            with self._lock:
                tracked.ended = ended
        owner: dict[str, Any] = {"apiVersion": "batch/v1" if tracked.kind == "Job" else "apps/v1", "kind": tracked.kind,
                 "metadata": {"name": tracked.name, "namespace": tracked.namespace}}
        service: dict[str, Any] = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"name": tracked.name, "namespace": tracked.namespace}}
        objects = [owner, service, *({**owner, "metadata": {**owner["metadata"], "name": m}}
                                     for m in tracked.members if m != tracked.name),
                   {"apiVersion": "v1", "kind": "Secret",  # its owners' garbage collection deletes it too
                    "metadata": {"name": secret_name(job_id), "namespace": tracked.namespace}}]
        if self.config.queue_manager is QueueManager.VOLCANO:
            objects.append({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                            "metadata": {"name": tracked.name, "namespace": tracked.namespace}})
        for obj in objects:
            self._delete(obj, strict=obj is owner)

    def logs(self, job_id: str, offset: int = 0, limit: int = 65536) -> tuple[str, int]:
        """Up to ``limit`` bytes of worker 0's log from byte ``offset``; ``(text, next_offset)``.

        A read from where the job's last answer ended (a follow's next poll) asks the API for the lines recorded
        since (``sinceTime``, ``timestamps=true``; :mod:`.pod_log`): it costs what is new, not the log up to
        ``offset``. Any other offset reads the log from its start once (the API has no byte offset), and is followed
        from where it ends.

        Raises:
            NotFoundError: no pod of the job exists (never started, or removed after its TTL).
        """
        namespace, pod = self._log_pod(job_id)
        with self._lock:
            held = self._log_marks.get(job_id)
        try:
            answered = None
            if held is not None and held[:2] == (pod, offset) and held[2] != START:
                answered = self._log_since(namespace, pod, held[2], limit)
            if answered is None:
                answered = self._log_from(namespace, pod, offset, limit)
        except Exception as exc:
            if _http_status(exc) in (400, 404):  # container not started yet / pod gone
                return "", offset
            raise ExecutorError(f"cannot read the log of pod {namespace}/{pod}: {_status_message(exc)}") from exc
        if answered is None:  # an answer without stamps (not the kubelet's format): the plain read
            return self._logs_plain(namespace, pod, offset, limit)
        data, mark = answered
        with self._lock:
            self._log_marks.pop(job_id, None)
            self._log_marks[job_id] = (pod, offset + len(data), mark)
            while len(self._log_marks) > _MOST_LOG_MARKS:
                del self._log_marks[next(iter(self._log_marks))]
        return data.decode("utf-8", errors="replace"), offset + len(data)

    def _pod_log(self, namespace: str, pod: str, query: list[tuple[str, Any]]) -> Any:
        """``GET …/pods/{pod}/log?container=main&…`` with ``query`` (``sinceTime`` among them, which this client's
        ``read_namespaced_pod_log`` does not take): the raw response, to be read or streamed.

        Raises:
            kubernetes.client.ApiException: the API answered an error.
        """
        api = self._core.api_client
        request = api.param_serialize(method="GET", resource_path="/api/v1/namespaces/{namespace}/pods/{name}/log",
                                      path_params={"namespace": namespace, "name": pod},
                                      query_params=[("container", "main"), *query], header_params={"Accept": "*/*"},
                                      auth_settings=["BearerToken"])
        response = api.call_api(*request)
        if not 200 <= response.status <= 299:
            response.read()
            raise k8s.ApiException.from_response(http_resp=response, body=None, data=None)
        return response.response

    def _log_since(self, namespace: str, pod: str, mark: Mark, limit: int) -> tuple[bytes, Mark] | None:
        """The log's bytes after ``mark``, at most ``limit``: the lines recorded since its second, those it passed
        dropped. None where that cannot be told from the answer (no stamps; one second's lines beyond the bound)."""
        bound = 2 * limit + (64 << 10)  # the stamps (31 bytes a line) and the lines of the mark's second read again
        response = self._pod_log(namespace, pod, [("timestamps", "true"), ("sinceTime", since_time(mark)),
                                                  ("limitBytes", bound)])
        try:
            data: bytes = response.data
        finally:
            response.release_conn()
        records = parse_records(data, whole=len(data) < bound)
        if records is None:
            return None
        out, ends = _utf8_whole(*take(records, mark, skip=0, limit=limit))
        return None if not out and len(data) >= bound else (out, ends)

    def _log_from(self, namespace: str, pod: str, offset: int, limit: int) -> tuple[bytes, Mark] | None:
        """The log's bytes from ``offset``, at most ``limit``, read from its start with stamps (streamed: memory
        bounded by a line and the answer), with the mark where they end; None for an answer without stamps."""
        response = self._pod_log(namespace, pod, [("timestamps", "true")])
        try:
            return _utf8_whole(*take(_streamed_records(response), START, skip=offset, limit=limit))
        except _NotStamped:
            return None
        finally:
            response.close()
            response.release_conn()

    def _logs_plain(self, namespace: str, pod: str, offset: int, limit: int) -> tuple[str, int]:
        """:meth:`logs` by a read without stamps from the log's start up to ``offset`` + ``limit``."""
        try:
            response = self._core.read_namespaced_pod_log(
                pod, namespace, container="main", limit_bytes=offset + limit, _preload_content=False)
            data: bytes = response.data
        except Exception as exc:
            if _http_status(exc) in (400, 404):  # container not started yet / pod gone
                return "", offset
            raise ExecutorError(f"cannot read the log of pod {namespace}/{pod}: {_status_message(exc)}") from exc
        chunk = data[offset:offset + limit]
        for cut in range(len(chunk), max(len(chunk) - 4, -1), -1):
            try:
                text = chunk[:cut].decode("utf-8")
            except UnicodeDecodeError:
                continue
            return text, offset + cut
        return chunk.decode("utf-8", errors="replace"), offset + len(chunk)

    def tail_logs(self, job_id: str, lines: int, limit: int) -> LogTail:
        """The last ``lines`` lines of worker 0's log, at most ``limit`` bytes, as
        :func:`~..log_tail.read_log_tail` cuts a log file's (:func:`~..log_tail.tail_in`): the same lines, ``start``
        where they begin (above 0: earlier lines are not shown), ``end`` where a reader follows on from, ``size``.

        First one read with ``tailLines`` (one line more than asked: whether the log holds more) and ``limitBytes``
        (``limit`` + 1): it costs what it shows, and is the whole answer when it is the whole log. The API gives a pod
        log's lines but no byte offset and no size, and the answer's offsets must be the log's own (the follow goes on
        from ``end``; "only the last 64 KB of the 7 MB log" counts from ``start``): for a longer log they take one
        streamed read of it, counted and kept to its last ``limit`` + 4 bytes (memory bounded by the answer; the read
        through in slices it replaces fetched the log from its start for every slice: s36-edges).

        Raises:
            NotFoundError: no pod of the job exists.
            ExecutorError: the API refused the read (other than 400/404: not started yet, or gone: empty).
        """
        namespace, pod = self._log_pod(job_id)
        try:
            response = self._core.read_namespaced_pod_log(pod, namespace, container="main", tail_lines=lines + 1,
                                                          limit_bytes=limit + 1, _preload_content=False)
            data: bytes = response.data
        except Exception as exc:
            if _http_status(exc) in (400, 404):  # container not started yet / pod gone
                return LogTail("", 0, 0, 0, 0)
            raise ExecutorError(f"cannot read the log of pod {namespace}/{pod}: {_status_message(exc)}") from exc
        if len(data) <= limit and line_count(data) <= lines:  # fewer lines than asked for: the whole log
            return tail_in(data, len(data), lines, limit)
        return self._tail_streamed(namespace, pod, lines, limit)

    def _tail_streamed(self, namespace: str, pod: str, lines: int, limit: int) -> LogTail:
        """:meth:`tail_logs` of a log longer than its tail: one streamed read, its bytes counted, its last ``limit`` + 4
        kept."""
        keep, size, kept = limit + 4, 0, bytearray()
        try:
            response = self._core.read_namespaced_pod_log(pod, namespace, container="main", _preload_content=False)
        except Exception as exc:
            if _http_status(exc) in (400, 404):
                return LogTail("", 0, 0, 0, 0)
            raise ExecutorError(f"cannot read the log of pod {namespace}/{pod}: {_status_message(exc)}") from exc
        try:
            for chunk in response.stream(amt=1 << 16, decode_content=False):
                size += len(chunk)
                kept += chunk
                if len(kept) > 2 * keep:
                    del kept[:len(kept) - keep]
        finally:
            response.close()
            response.release_conn()
        return tail_in(bytes(kept[-keep:]), size, lines, limit)

    def follow_logs(self, job_id: str) -> Iterator[str]:
        """Stream worker 0's log (``follow=true``) chunk by chunk until the container ends.

        Raises:
            NotFoundError: no pod of the job exists.
        """
        namespace, pod = self._log_pod(job_id)
        response = self._core.read_namespaced_pod_log(pod, namespace, container="main", follow=True,
                                                      _preload_content=False)
        try:
            for chunk in response.stream(amt=None, decode_content=False):
                yield chunk.decode("utf-8", errors="replace")
        finally:
            response.close()
            response.release_conn()

    def adopt(self, job: Job, handle: ExecutorHandle | None) -> ExecutorEvent | None:
        """Find the job's Job/Deployment again after a restart (by handle, else by its
        deterministic name) and track it; report how it ended if it ended unwatched."""
        data = dict(handle.data) if handle is not None else {}
        kind = str(data.get("kind") or ("Deployment" if job.spec.kind is JobKind.INFERENCE else "Job"))
        namespace = str(data.get("namespace") or self.config.namespace_for(job.spec.user))
        name = str(data.get("name") or object_name(job.id))
        self._watching()
        try:
            read = (self._batch.read_namespaced_job if kind == "Job" else self._apps.read_namespaced_deployment)
            obj = json.loads(read(name, namespace, _preload_content=False).data)
        except Exception as exc:
            if _http_status(exc) == 404:
                self._drop_secret(namespace, job.id)  # e.g. a start cut short after the Secret was made
                return Lost(job.id, f"{kind} {namespace}/{name} no longer exists (deleted, or removed "
                                    f"{self.config.ttl_seconds_after_finished}s after it finished)",
                            started=job.state is JobState.RUNNING)
            raise ExecutorError(f"cannot read {kind} {namespace}/{name}: {_status_message(exc)}") from exc
        groups = job.spec.resources.groups  # a gang of worker groups: its Jobs' names are deterministic
        members = {"members": [group_job_name(job.id, i) for i in range(len(groups))]} if len(groups) > 1 else {}
        handle = handle or ExecutorHandle(self.name, {"namespace": namespace, "name": name, "kind": kind,
                                                      "uid": str((obj.get("metadata") or {}).get("uid", "")),
                                                      **members})
        with self._lock:
            tracked = self._track(job, handle)
            tracked.started = job.state is JobState.RUNNING
            observation = self._observe(tracked, obj)
            ended = observation.phase in ("succeeded", "failed")
            if ended:
                self._tracked.pop(job.id, None)
        if not ended:
            return None
        self._drop_secret(namespace, job.id)
        return self._own_end(job.id, observation)

    def live_copy(self, job: Job) -> tuple[ExecutorHandle, Allocation | None] | None:
        """The handle and allocation of ``job``'s Job if one exists and has not finished, else None
        (hubadmin23 A13: a store restored from a backup has it as pending).

        The allocation is read back from the pod template (the pinned node and the GPU uuids
        annotation) for a single-worker Job; None for others (a gang, a Deployment, a queue manager's
        placement): :meth:`start` then reuses the existing object, never makes a second one. A job
        this executor watches is not a copy (None).

        Raises:
            ExecutorError: the API server cannot be read now (other than 404).
        """
        if job.id in self.tracked() or job.spec.kind is JobKind.INFERENCE:
            return None
        namespace, name = self.config.namespace_for(job.spec.user), object_name(job.id)
        try:
            obj = json.loads(self._batch.read_namespaced_job(name, namespace, _preload_content=False).data)
        except Exception as exc:
            if _http_status(exc) == 404:
                return None
            raise ExecutorError(f"cannot read Job {namespace}/{name}: {_status_message(exc)}") from exc
        conditions = (obj.get("status") or {}).get("conditions") or []
        if any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions):
            return None
        handle = ExecutorHandle(self.name, {"namespace": namespace, "name": name, "kind": "Job",
                                            "uid": str((obj.get("metadata") or {}).get("uid", ""))})
        return handle, _allocation_of(obj, job)

    def live_unknown(self, known: Callable[[str], bool]) -> list[tuple[Job, ExecutorHandle, Allocation | None]]:
        """Unfinished Jobs of ours (our ``managed-by`` label) whose job id ``known`` says the store lacks
        (hubadmin24 B2/B7: submitted after a restored backup, or a new empty store), as ``(job, handle,
        allocation)``: ``job`` pending, rebuilt from the object (owner and job id from its annotations, team
        from its label, GPUs from the pinned pod template, command, ``activeDeadlineSeconds`` as the limit);
        ``allocation`` None when the template does not pin one (a queue manager's placement) or the job
        is a gang of several Jobs — the caller then only warns. Deployments (services) are not listed.

        Raises:
            ExecutorError: the API server cannot be listed now.
            StoreError: ``known`` failed (the caller's store).
        """
        ns = self.config.namespace
        try:
            listed = (self._batch.list_job_for_all_namespaces(label_selector=_SELECTOR, _preload_content=False)
                      if self.config.namespace_per_user else
                      self._batch.list_namespaced_job(ns, label_selector=_SELECTOR, _preload_content=False))
            items = json.loads(listed.data).get("items") or []
        except Exception as exc:
            raise ExecutorError(f"cannot list our Jobs: {_status_message(exc)}") from exc
        by_id: dict[str, list[dict[str, Any]]] = {}
        for obj in items:
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            job_id = annotations.get(ANNOTATION_JOB_ID)
            if isinstance(job_id, str) and job_id:
                by_id.setdefault(job_id, []).append(obj)
        found: list[tuple[Job, ExecutorHandle, Allocation | None]] = []
        tracked = self.tracked()
        for job_id, objs in sorted(by_id.items()):
            obj = objs[0]
            conditions = (obj.get("status") or {}).get("conditions") or []
            if job_id in tracked or any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                                        for c in conditions) or known(job_id):
                continue
            meta = obj.get("metadata") or {}
            spec = obj.get("spec") or {}
            template = spec.get("template") or {}
            uuids = [u for u in str(((template.get("metadata") or {}).get("annotations") or {})
                                    .get(ANNOTATION_GPU_UUIDS, "")).split(",") if u]
            containers = (template.get("spec") or {}).get("containers") or [{}]
            deadline = spec.get("activeDeadlineSeconds")
            job = Job(id=job_id, spec=JobSpec(
                name=f"(not in this store: Job {meta.get('namespace')}/{meta.get('name')})",
                user=str((meta.get("annotations") or {}).get(ANNOTATION_USER) or ""),
                team=str((meta.get("labels") or {}).get(LABEL_TEAM) or "default"),
                resources=ResourceRequest(gpus=len(uuids)), command=tuple(str(a) for a in containers[0].get("command") or ()),
                time_limit_s=float(deadline) if isinstance(deadline, int) and deadline > 0 else None))
            handle = ExecutorHandle(self.name, {"namespace": str(meta.get("namespace") or ns), "name": str(meta.get("name")),
                                                "kind": "Job", "uid": str(meta.get("uid", ""))})
            found.append((job, handle, _allocation_of(obj, job) if len(objs) == 1 else None))
        return found

    def tracked(self) -> frozenset[str]:
        """Ids of the jobs being watched."""
        with self._lock:
            return frozenset(self._tracked)

    def detach(self) -> None:
        """Stop all watches and forget the jobs; the work keeps running in the cluster."""
        with self._lock:
            reflectors, self._reflectors = self._reflectors, None
            self._tracked.clear()
        for reflector in (reflectors or {}).values():
            reflector.stop()

    # -- Kueue read-back -----------------------------------------------------------------------
    def admission(self, job_id: str) -> dict[str, Any] | None:
        """Kueue admission read back from the Job: None while suspended (or unknown), else
        ``{"queue": LocalQueue, "node_selector": what Kueue's flavor injected}``."""
        with self._lock:
            tracked = self._tracked.get(job_id)
        if tracked is None or tracked.kind != "Job":
            return None
        obj = self._cached("jobs", tracked.namespace, tracked.name)
        if obj is None or (obj.get("spec") or {}).get("suspend"):
            return None
        template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return {"queue": labels.get(KUEUE_QUEUE_LABEL, ""), "node_selector": dict(template.get("nodeSelector") or {})}

    # -- helpers -------------------------------------------------------------------------------
    def _track(self, job: Job, handle: ExecutorHandle) -> _Tracked:
        data = handle.data
        queue = (self.config.queue_name(self.config.kueue_queue, team=job.spec.team, user=job.spec.user)
                 if self.config.queue_manager is QueueManager.KUEUE else "")
        tracked = _Tracked(job_id=job.id, kind=str(data.get("kind", "Job")), namespace=str(data["namespace"]),
                           name=str(data["name"]), handle=handle, port=job.spec.port, queue=queue,
                           members=tuple(str(m) for m in data.get("members") or ()))
        with self._lock:
            self._tracked[job.id] = tracked
        return tracked

    def _stopped_words(self, t: _Tracked) -> str:
        """A stopped job's end: its objects deleted, and what its processes got (newuser30 n16; the pod's log is
        the container's own, so this is said in the message only, and no process is named: none is seen)."""
        return (f"stopped: {t.kind} {t.namespace}/{t.name} deleted; Kubernetes sent each container's main process "
                "SIGTERM, and SIGKILL to every process still in it when that process ended or "
                f"{self.config.preemption_grace_s} s later (terminationGracePeriodSeconds)")

    def _advance(self, t: _Tracked, obs: Observation) -> list[ExecutorEvent]:
        out: list[ExecutorEvent] = []
        if t.failure is not None and t.stopping:  # a failed gang's other groups are being deleted
            obs = Observation(phase="gone")
        if obs.phase == "gone":
            if t.stopping:
                if not self._pods_of(t):  # GPUs are free only when the pods are gone
                    f = t.failure or t.ended  # it had failed/ended on its own: its own end, not the stop's
                    out.append(Exited(t.job_id, _SIGTERM_EXIT, self._clock(), self._stopped_words(t)) if f is None else
                               self._own_end(t.job_id, f))
                    self._end(t)
            elif t.seen:
                out.append(Lost(t.job_id, f"{t.kind} {t.namespace}/{t.name} was deleted outside jupyter_sched",
                                started=t.started))
                self._end(t)
            return out
        t.seen = True
        if obs.phase in ("succeeded", "failed") and not obs.settled and t.ended is not None and t.ended.settled:
            obs = t.ended  # read whole at the stop; its pods are going now and may never show their codes here
        if obs.phase in ("succeeded", "failed") and not obs.settled:
            now = self._clock()
            t.settling_since = t.settling_since or now
            if (now - t.settling_since).total_seconds() < self._settle_s:
                return out  # wait for the pods' exit codes rather than report a made-up one
        if obs.phase == "pending":
            if obs.reason is not None and obs.reason != t.reason:
                t.reason = obs.reason
                out.append(Waiting(t.job_id, obs.reason))
            return out
        if not t.started or (obs.phase == "running" and obs.restarts > t.restarts):
            t.started = True
            t.restarts = obs.restarts
            out.append(Started(t.job_id, t.handle, restarts=obs.restarts))
        if obs.phase == "running":
            if obs.ready and not t.ready and t.port is not None:
                t.ready = True
                out.append(Ready(t.job_id, t.port))
            elif not obs.ready and t.ready and t.port is not None:  # new user 8, N8: it read "ready" on
                t.ready = False
                out.append(NotReady(t.job_id, t.port, "no replica is ready (its pod restarts, or fails its "
                                                      "readiness probe)"))
            return out
        if obs.phase == "failed" and t.members and self._pods_of(t):
            t.failure = obs  # all-or-nothing: the other groups go too, and the end waits for their pods
            self.stop(t.job_id, grace_s=0)
            return out
        out.append(self._own_end(t.job_id, obs))
        self._end(t)
        return out

    def _own_end(self, job_id: str, obs: Observation) -> Exited:
        """The end a Job's own ``Complete``/``Failed`` condition says (``obs``): always its own, never a stop's
        (:attr:`Exited.before_stop`; a stop deletes the Job, which then gets no condition), said as the local
        executor says it when the cluster gives no sentence ("exited with code 0")."""
        code = obs.exit_code if obs.exit_code is not None else 1
        return Exited(job_id, code, obs.finished_at or self._clock(), obs.message or f"exited with code {code}",
                      before_stop=True)

    def _ended_at_stop(self, t: _Tracked) -> Observation | None:
        """How the job's Job(s) had ended on their own when a stop came, read from the API server now (the Job's
        status as ``batch/v1`` reports it; the watch may not have brought it yet), with its pods' exit codes (read
        now too when the watch has not brought them); None while it runs, or when it cannot be read (logged: the stop
        then settles it, as before)."""
        jobs: list[tuple[str, Mapping[str, Any] | None]] = []
        for name in t.members or (t.name,):
            try:
                jobs.append((name, json.loads(self._batch.read_namespaced_job_status(
                    name, t.namespace, _preload_content=False).data)))
            except Exception as exc:
                if _http_status(exc) != 404:
                    log.warning("job %s: cannot read Job %s/%s before stopping it (%s): if it had already ended, "
                                "its end is taken as the stop's", t.job_id, t.namespace, name, _status_message(exc))
                    return None
                jobs.append((name, None))
        obs = self._observe_read(t, jobs, self._pods_of(t))
        if obs.phase not in ("succeeded", "failed"):
            return None
        if not obs.settled:  # a failed Job's pods, as the API server has them now
            try:
                listed = self._core.list_namespaced_pod(t.namespace, _preload_content=False,
                                                        label_selector=f"{LABEL_JOB_ID}={label_value(t.job_id)}")
                obs = self._observe_read(t, jobs, json.loads(listed.data).get("items") or [])
            except Exception as exc:
                log.warning("job %s: cannot list its pods before stopping it (%s)", t.job_id, _status_message(exc))
        return obs if obs.phase in ("succeeded", "failed") else None

    def _observe_read(self, t: _Tracked, jobs: Sequence[tuple[str, Mapping[str, Any] | None]],
                      pods: list[dict[str, Any]]) -> Observation:
        """A Job's (or a gang's Jobs') observation from ``jobs`` (``(name, object or None)``) and ``pods``."""
        events = self._watching()["events"].items()
        if t.members:
            return observe_gang(jobs, pods, events, queue=t.queue)
        return observe_job(jobs[0][1], pods, events, queue=t.queue)

    def _end(self, t: _Tracked) -> None:
        """Forget a job that ended; its token Secret is deleted once the lock is released (:meth:`_drop_secrets`)."""
        self._tracked.pop(t.job_id, None)
        self._ended.append((t.namespace, t.job_id))

    def _drop_secrets(self) -> None:
        """Delete the token Secrets of the jobs that ended since the last call (outside the lock: API calls)."""
        with self._lock:
            ended, self._ended = self._ended, []
        for namespace, job_id in ended:
            self._drop_secret(namespace, job_id)

    def _drop_secret(self, namespace: str, job_id: str) -> None:
        """Delete the token Secret of an ended job, owned or not (its owners' garbage collection would delete an
        owned one only when they are removed, and never one whose owner patch was refused): idempotent — one
        already gone (404) is fine; another refusal is logged, naming the Secret."""
        self._delete({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": secret_name(job_id), "namespace": namespace}})

    def _gpu_products(self, job: Job, allocation: Allocation | None) -> tuple[str, ...]:
        if job.spec.resources.gpus <= 0:
            return ()
        inventory = self._current_inventory()
        if inventory is not None and allocation is not None and self.config.queue_manager is QueueManager.NONE:
            try:
                product = inventory.node(allocation.node).labels.get(GPU_PRODUCT_LABEL)
            except KeyError:
                product = None
            return (product,) if product else ()
        wanted = job.spec.resources.gpu_models
        if not wanted:
            return ()
        if inventory is None:
            return tuple(model.replace(" ", "-") for model in wanted)  # GFD writes spaces as '-'
        products = {n.labels[GPU_PRODUCT_LABEL] for n in inventory.nodes if GPU_PRODUCT_LABEL in n.labels}
        return tuple(sorted(p for p in products
                            if any(w.lower().replace(" ", "-") in p.lower() for w in wanted)))

    def _mig_strategy(self, allocation: Allocation | None) -> str:
        """The MIG strategy of the allocation's node (case 022: ``single`` requests slices as
        ``nvidia.com/gpu``); ``mixed`` when unknown."""
        inventory = self._current_inventory()
        if inventory is None or allocation is None:
            return "mixed"
        try:
            return inventory.node(allocation.node).mig_strategy
        except KeyError:
            return "mixed"

    def _current_inventory(self) -> Inventory | None:
        source = self._inventory
        if source is None:
            return None
        if isinstance(source, KubernetesInventory):
            return source.inventory()
        return source()

    def _create(self, manifest: Mapping[str, Any]) -> dict[str, Any]:
        namespace = manifest["metadata"]["namespace"]
        kind = manifest["kind"]
        if kind == "Job":
            response = self._batch.create_namespaced_job(namespace, manifest, _preload_content=False)
        elif kind == "Deployment":
            response = self._apps.create_namespaced_deployment(namespace, manifest, _preload_content=False)
        elif kind == "Service":
            response = self._core.create_namespaced_service(namespace, manifest, _preload_content=False)
        elif kind == "PodGroup":
            response = self._custom.create_namespaced_custom_object(
                "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", manifest, _preload_content=False)
        elif kind == "Secret":
            response = self._core.create_namespaced_secret(namespace, manifest, _preload_content=False)
        else:  # pragma: no cover - the builders make no other kinds
            raise ExecutorError(f"cannot create kind {kind}")
        result: dict[str, Any] = json.loads(response.data)
        return result

    def _create_secret(self, secret: dict[str, Any], job_id: str) -> None:
        """Create the job's token Secret; one of the same job left by an earlier start (a restart, a
        requeued run: its token may be an earlier run's, and it is immutable) is replaced.

        Raises:
            ExecutorError: the API refused, or a Secret of that name belongs to something else.
        """
        try:
            self._create(secret)
            return
        except Exception as exc:
            if _http_status(exc) != 409 or self._existing_of_same_job(secret, job_id) is None:
                raise self._create_error(secret, exc) from exc
        self._delete(secret, strict=True)
        try:
            self._create(secret)
        except Exception as exc:
            raise self._create_error(secret, exc) from exc

    def _own_secret(self, secret: Mapping[str, Any], owners: list[dict[str, Any]]) -> None:
        """Make the job's objects ``owners`` the owners of its Secret (deleted with them); a refusal is
        logged (the job's end deletes the Secret itself, :meth:`_drop_secret`)."""
        refs = owner_references(owners)
        meta = secret["metadata"]
        if not refs:
            return
        try:
            self._core.patch_namespaced_secret(meta["name"], meta["namespace"], {"metadata": {"ownerReferences": refs}},
                                               _content_type="application/merge-patch+json", _preload_content=False)
        except Exception as exc:
            log.warning("%s has no owner (%s): it is deleted when the job ends (or is stopped), not by the "
                        "garbage collector with the job's objects", describe(secret), _status_message(exc))

    def _existing_of_same_job(self, manifest: Mapping[str, Any], job_id: str) -> dict[str, Any] | None:
        """On 409: the object already exists; reuse it only if it belongs to the same job (a
        start repeated after a crash), never a stranger's object."""
        meta = manifest["metadata"]
        reads: dict[str, Callable[..., Any]] = {
            "Job": self._batch.read_namespaced_job, "Deployment": self._apps.read_namespaced_deployment,
            "Service": self._core.read_namespaced_service, "Secret": self._core.read_namespaced_secret,
            "PodGroup": partial(self._custom.get_namespaced_custom_object, "scheduling.volcano.sh", "v1beta1",
                                plural="podgroups")}
        try:
            if manifest["kind"] == "PodGroup":
                obj = json.loads(reads["PodGroup"](namespace=meta["namespace"], name=meta["name"],
                                                   _preload_content=False).data)
            else:
                obj = json.loads(reads[manifest["kind"]](meta["name"], meta["namespace"], _preload_content=False).data)
        except Exception:
            return None
        labels = (obj.get("metadata") or {}).get("labels") or {}
        found: dict[str, Any] | None = obj if labels.get(LABEL_JOB_ID) == label_value(job_id) else None
        return found

    def _create_error(self, manifest: Mapping[str, Any], exc: Exception) -> ExecutorError:
        message = _status_message(exc)
        namespace = manifest["metadata"]["namespace"]
        reason = quota_reason(message, namespace=namespace) if _http_status(exc) == 403 else None
        if reason is not None:  # case 019: a quota refusal on create reads like the FailedCreate event
            return ExecutorError(reason.message, hint=reason.unblock,
                                 details={"code": reason.code, **dict(reason.details)})
        status = _http_status(exc)
        return ExecutorError(f"cannot create {describe(manifest)}: "
                             f"{'HTTP ' + str(status) + ' ' if status else ''}{message}",
                             hint="check the RBAC rules in server/rbac.yaml and the namespace",
                             details={"status": status} if status else None)

    def _delete(self, manifest: Mapping[str, Any], *, strict: bool = False) -> None:
        meta = manifest["metadata"]
        name, namespace = meta["name"], meta["namespace"]
        kind = manifest["kind"]
        try:
            if kind == "Job":
                self._batch.delete_namespaced_job(name, namespace, propagation_policy="Background",
                                                  _preload_content=False)
            elif kind == "Deployment":
                self._apps.delete_namespaced_deployment(name, namespace, propagation_policy="Background",
                                                        _preload_content=False)
            elif kind == "Service":
                self._core.delete_namespaced_service(name, namespace, _preload_content=False)
            elif kind == "Secret":
                self._core.delete_namespaced_secret(name, namespace, _preload_content=False)
            elif kind == "PodGroup":
                self._custom.delete_namespaced_custom_object(
                    "scheduling.volcano.sh", "v1beta1", namespace, "podgroups", name, _preload_content=False)
        except Exception as exc:
            if _http_status(exc) == 404:
                return
            if strict:
                raise ExecutorError(f"cannot delete {describe(manifest)}: {_status_message(exc)}") from exc
            log.warning("cannot delete %s: %s", describe(manifest), _status_message(exc))

    def _log_pod(self, job_id: str) -> tuple[str, str]:
        with self._lock:
            tracked = self._tracked.get(job_id)
        want = label_value(job_id)
        pods = [p for p in self._watching()["pods"].items()
                if ((p.get("metadata") or {}).get("labels") or {}).get(LABEL_JOB_ID) == want
                and (tracked is None or (p.get("metadata") or {}).get("namespace") == tracked.namespace)]
        if not pods:
            raise NotFoundError(f"no pod of job {job_id} exists (not started yet, or removed after it finished)",
                                field="job_id")

        def order(pod: Mapping[str, Any]) -> tuple[str, str]:
            annotations = (pod.get("metadata") or {}).get("annotations") or {}
            index = str(annotations.get("batch.kubernetes.io/job-completion-index", "0")).zfill(6)
            return index, str((pod.get("metadata") or {}).get("creationTimestamp", ""))

        pod = sorted(pods, key=order)[0]
        meta = pod.get("metadata") or {}
        return str(meta.get("namespace")), str(meta.get("name"))


def with_env(manifests: list[dict[str, Any]], extra: Mapping[str, str], *, keep: frozenset[str]) -> list[dict[str, Any]]:
    """``manifests`` with ``extra`` set in the env of every container of their pod templates (Jobs,
    Deployments), replacing a value of the same name except ``JUPYTER_SCHED_URL`` when the spec sets it
    (``keep``: the spec's env names; the user's own connection stays, as the local executor keeps it)."""
    wanted = {k: v for k, v in extra.items() if not (k == "JUPYTER_SCHED_URL" and k in keep)}
    for manifest in manifests:
        if manifest.get("kind") not in ("Job", "Deployment"):
            continue
        for container in manifest["spec"]["template"]["spec"].get("containers", []):
            env = [item for item in container.get("env", []) if item.get("name") not in wanted]
            container["env"] = env + [{"name": k, "value": v} for k, v in wanted.items()]
    return manifests


def _allocation_of(obj: Mapping[str, Any], job: Job) -> Allocation | None:
    """Our allocation as a single-worker Job's pod template carries it (node pinned by ``matchFields``,
    GPUs in the ``jupyter-sched/gpu-uuids`` annotation); None when it does not say both."""
    if len(job.spec.resources.groups) > 1:
        return None
    template = (obj.get("spec") or {}).get("template") or {}
    uuids = str(((template.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_GPU_UUIDS, ""))
    terms = (((((template.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
              .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
    nodes = [v for t in terms for f in t.get("matchFields") or [] if f.get("key") == "metadata.name"
             for v in f.get("values") or []]
    gpus = tuple(u for u in uuids.split(",") if u)
    if len(nodes) != 1 or (not gpus and job.spec.resources.gpus > 0):
        return None
    wanted = float(job.spec.resources.gpus)
    return Allocation(str(nodes[0]), gpus, gpu_milli=round(wanted * 1000) if 0 < wanted < 1 else 1000)
