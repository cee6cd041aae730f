"""An in-process fake of the Kubernetes API server that speaks its real REST JSON.

A real API server cannot run on the development and CI machines (none is installable; no
Docker for kind/k3d), so the Kubernetes code is tested against this double, through the
official ``kubernetes`` client pointed at its loopback URL. It implements the parts of the
protocol our code relies on, with the server's own shapes:

* ``GET`` collection → ``{"kind": "<Kind>List", "metadata": {"resourceVersion"}, "items"}``;
  ``labelSelector`` (``=``, ``==``, ``!=``, exists) and ``fieldSelector`` (dotted paths, ``=``/``!=``).
* ``GET ...?watch=true&resourceVersion=N`` → HTTP/1.1 ``Transfer-Encoding: chunked``, one JSON
  watch event per line, streamed as they happen (the client sees events at once only with a
  chunked response); ``ERROR`` event with a 410 ``Status`` when ``N`` was compacted;
  objects leaving a selector arrive as ``DELETED``; ends at ``timeoutSeconds``.
* ``POST`` → 201 + object (uid, resourceVersion, creationTimestamp); 409 ``AlreadyExists``.
* ``DELETE`` → 200 ``Status``; 404 ``NotFound``; ``propagationPolicy=Background`` removes the
  owner first and its dependents afterwards: every object whose ``ownerReferences`` name it and no
  owner that still exists (the garbage collector's rule: pods of a Job, a job's token Secret).
* ``v1`` Secrets as the API server keeps them: ``stringData`` written into ``data`` (base64) and never
  answered; an ``immutable`` Secret's ``data`` cannot change (422).
* ``PATCH`` with ``application/merge-patch+json`` (RFC 7386: objects merged, lists replaced, ``null``
  removes) → 200 + object; 404; 415 for any other patch type.
* ``GET .../pods/{name}/log`` (``sinceTime``, then ``tailLines``, then ``limitBytes``, as the kubelet applies them;
  ``timestamps=true`` starts each line with the time its record was written, RFC 3339 with nine fraction digits and a
  space — the kubelet's ``RFC3339NanoFixed`` — and ``limitBytes`` counts those too; ``sinceTime`` keeps the records
  written at or after its second; ``follow`` streamed chunked until the pod ends); each answer's bytes sent are
  recorded (``log_bytes_sent``);
  400 while the container has not started.

The "controller" half (:meth:`FakeKubernetes.run_job`, :meth:`finish_job`,
:meth:`fail_scheduling`, :meth:`emit_event`, :meth:`compact`, :meth:`drop_watches`) is driven by
the tests, so every step is deterministic.
"""

from __future__ import annotations

import base64
import copy
import json
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Obj = dict[str, Any]

# plural -> (api prefix, namespaced, kind)
RESOURCES: dict[str, tuple[str, bool, str]] = {
    "nodes": ("/api/v1", False, "Node"),
    "pods": ("/api/v1", True, "Pod"),
    "services": ("/api/v1", True, "Service"),
    "secrets": ("/api/v1", True, "Secret"),
    "events": ("/api/v1", True, "Event"),
    "jobs": ("/apis/batch/v1", True, "Job"),
    "deployments": ("/apis/apps/v1", True, "Deployment"),
    "podgroups": ("/apis/scheduling.volcano.sh/v1beta1", True, "PodGroup"),
}
_GROUP = {"jobs": "batch", "deployments": "apps", "podgroups": "scheduling.volcano.sh"}
_API_VERSION = {"/api/v1": "v1", "/apis/batch/v1": "batch/v1", "/apis/apps/v1": "apps/v1",
                "/apis/scheduling.volcano.sh/v1beta1": "scheduling.volcano.sh/v1beta1"}


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def status_obj(code: int, reason: str, message: str, **details: Any) -> Obj:
    """A ``meta/v1 Status`` as the API server writes it."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure" if code >= 400 else "Success",
                 "message": message, "reason": reason, "code": code}
    if details:
        body["details"] = details
    return body


def _path_value(obj: Obj, path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        cur = cur.get(part) if isinstance(cur, dict) else None
    return "" if cur is None else str(cur)


def _matches(obj: Obj, label_selector: str, field_selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, (t.strip() for t in label_selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if labels.get(key) == value:
                return False
        elif "=" in term:
            key, value = term.replace("==", "=").split("=", 1)
            if labels.get(key) != value:
                return False
        elif term not in labels:
            return False
    for term in filter(None, (t.strip() for t in field_selector.split(","))):
        if "!=" in term:
            key, value = term.split("!=", 1)
            if _path_value(obj, key) == value:
                return False
        else:
            key, value = term.replace("==", "=").split("=", 1)
            if _path_value(obj, key) != value:
                return False
    return True


class FakeKubernetes:
    """State and controller of the fake API server; :meth:`start` serves it on loopback."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._rv = 100
        self._compacted = 0
        self._generation = 0          # bumped by drop_watches(): open watches end
        self._closing = False
        self.objects: dict[str, dict[tuple[str, str], Obj]] = {plural: {} for plural in RESOURCES}
        self._history: list[tuple[int, str, str, Obj, Obj | None]] = []
        self.logs: dict[tuple[str, str], bytearray] = {}
        self.log_records: dict[tuple[str, str], list[tuple[str, bytes]]] = {}
        """Each pod log as the container runtime keeps it: ``(stamp, line)`` records (``logs`` is their lines joined)."""
        self.log_bytes_sent: list[int] = []  # bytes of each pod log answer, stamps included
        self.requests: list[tuple[str, str]] = []   # (method, path?query) of every request
        self.deletions: list[tuple[str, str, str, str]] = []  # (plural, ns, name, propagationPolicy)
        self.bodies: list[tuple[str, bytes]] = []  # (path, raw body) of every POST, as sent on the wire
        self.create_hooks: list[Callable[[str, Obj], tuple[int, Obj] | None]] = []
        self.patch_hooks: list[Callable[[str, str, Obj], tuple[int, Obj] | None]] = []  # (plural, name, patch)
        self.stale_lists = False  # every LIST answers a version already compacted (watch: 410 at once)
        self.held_watches: set[str] = set()  # plurals whose open watches send nothing until released (a lagging watch)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- serving -------------------------------------------------------------------------------
    def start(self) -> str:
        fake = self

        class Handler(_Handler):
            state = fake

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                if not isinstance(sys.exc_info()[1], ConnectionError):  # a reader that had enough and closed
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self.url

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def close(self) -> None:
        with self._lock:
            self._closing = True
            self._lock.notify_all()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)

    # -- storage -------------------------------------------------------------------------------
    def _next_rv(self) -> int:
        self._rv += 1
        return self._rv

    def _record(self, plural: str, kind: str, obj: Obj, prev: Obj | None) -> None:
        self._history.append((int(obj["metadata"]["resourceVersion"]), plural, kind, copy.deepcopy(obj), prev))
        self._lock.notify_all()

    def put(self, plural: str, obj: Obj) -> Obj:
        """Create or replace an object (controller side: no validation), emitting ADDED/MODIFIED."""
        with self._lock:
            meta = obj.setdefault("metadata", {})
            key = (meta.get("namespace", "") if RESOURCES[plural][1] else "", meta["name"])
            prev = self.objects[plural].get(key)
            prefix, _, kind = RESOURCES[plural]
            obj.setdefault("apiVersion", _API_VERSION[prefix])
            obj.setdefault("kind", kind)
            meta.setdefault("uid", prev["metadata"]["uid"] if prev else str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", prev["metadata"]["creationTimestamp"] if prev else now_iso())
            meta["resourceVersion"] = str(self._next_rv())
            self.objects[plural][key] = obj
            self._record(plural, "MODIFIED" if prev else "ADDED", obj, copy.deepcopy(prev) if prev else None)
            return copy.deepcopy(obj)

    def get(self, plural: str, namespace: str, name: str) -> Obj | None:
        with self._lock:
            obj = self.objects[plural].get((namespace if RESOURCES[plural][1] else "", name))
            return copy.deepcopy(obj) if obj else None

    def update(self, plural: str, namespace: str, name: str, mutate: Callable[[Obj], None]) -> Obj:
        """Apply ``mutate`` to a copy of the object and store it (MODIFIED)."""
        with self._lock:
            obj = self.get(plural, namespace, name)
            assert obj is not None, f"{plural} {namespace}/{name} does not exist"
            mutate(obj)
            return self.put(plural, obj)

    def remove(self, plural: str, namespace: str, name: str) -> Obj | None:
        """Delete an object now (DELETED event); returns it, or None when absent."""
        with self._lock:
            key = (namespace if RESOURCES[plural][1] else "", name)
            obj = self.objects[plural].pop(key, None)
            if obj is None:
                return None
            obj = copy.deepcopy(obj)
            obj["metadata"]["resourceVersion"] = str(self._next_rv())
            self._record(plural, "DELETED", obj, None)
            return obj

    def _collect_garbage(self, owner_uid: str) -> None:
        """Remove the dependents of ``owner_uid`` that have no other owner left (Kubernetes' garbage collector)."""
        alive = {obj["metadata"].get("uid") for objects in self.objects.values() for obj in objects.values()}
        for plural in self.objects:
            for (namespace, name), obj in list(self.objects[plural].items()):
                refs = obj["metadata"].get("ownerReferences") or []
                if any(ref.get("uid") == owner_uid for ref in refs) and not any(ref.get("uid") in alive for ref in refs):
                    removed = self.remove(plural, namespace, name)
                    if removed is not None:
                        self._collect_garbage(removed["metadata"]["uid"])

    def compact(self) -> None:
        """Forget the watch history: every resourceVersion up to now becomes too old (410 Gone)."""
        with self._lock:
            self._compacted = self._rv + 1
            self._history.clear()

    def drop_watches(self) -> None:
        """End every open watch stream (as an API server restart would)."""
        with self._lock:
            self._generation += 1
            self._lock.notify_all()

    def hold_watches(self, *plurals: str) -> None:
        """Open watches of ``plurals`` send nothing until :meth:`release_watches` (a watch cache that lags behind
        etcd, as a loaded API server's does: a GET or LIST answers the object as it is, the watch tells it later)."""
        with self._lock:
            self.held_watches.update(plurals)

    def release_watches(self, *plurals: str) -> None:
        """Held watches of ``plurals`` send what happened meanwhile, in order."""
        with self._lock:
            self.held_watches.difference_update(plurals)
            self._lock.notify_all()

    def list_count(self, plural: str) -> int:
        """LIST (not watch) requests made for ``plural``."""
        return sum(1 for method, path in self.requests
                   if method == "GET" and urlsplit(path).path.endswith("/" + plural) and "watch=" not in path)

    # -- controller ----------------------------------------------------------------------------
    def emit_event(self, involved: Obj, reason: str, message: str, *, component: str,
                   type_: str = "Warning") -> Obj:
        meta = involved["metadata"]
        stamp = now_iso()
        return self.put("events", {
            "metadata": {"name": f"{meta['name']}.{uuid.uuid4().hex[:16]}", "namespace": meta["namespace"]},
            "involvedObject": {"kind": involved["kind"], "namespace": meta["namespace"], "name": meta["name"],
                               "uid": meta["uid"], "apiVersion": involved["apiVersion"],
                               "resourceVersion": meta["resourceVersion"]},
            "reason": reason, "message": message, "type": type_, "count": 1,
            "source": {"component": component}, "firstTimestamp": stamp, "lastTimestamp": stamp,
            "reportingComponent": component, "reportingInstance": "",
        })

    def _job_pod(self, job: Obj, index: int, *, phase: str, node: str | None) -> Obj:
        template = job["spec"]["template"]
        meta = job["metadata"]
        pod_meta = copy.deepcopy(template.get("metadata") or {})
        pod_meta.setdefault("labels", {}).update({"batch.kubernetes.io/job-name": meta["name"],
                                                  "job-name": meta["name"],
                                                  "batch.kubernetes.io/controller-uid": meta["uid"]})
        annotations = pod_meta.setdefault("annotations", {})
        if job["spec"].get("completionMode") == "Indexed":
            annotations["batch.kubernetes.io/job-completion-index"] = str(index)
        pod_meta.update({
            "name": f"{meta['name']}-{index}-{uuid.uuid4().hex[:5]}", "namespace": meta["namespace"],
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "uid": meta["uid"],
                                 "controller": True, "blockOwnerDeletion": True}]})
        spec = copy.deepcopy(template["spec"])
        if node:
            spec["nodeName"] = node
        status: Obj = {"phase": phase}
        if phase == "Running":
            status["containerStatuses"] = [{"name": "main", "ready": True, "restartCount": 0, "image": "x",
                                            "imageID": "", "started": True,
                                            "state": {"running": {"startedAt": now_iso()}}}]
        elif phase == "Pending" and not node:
            status["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
        return {"metadata": pod_meta, "spec": spec, "status": status}

    def _pinned_node(self, job: Obj) -> str:
        affinity = job["spec"]["template"]["spec"].get("affinity") or {}
        terms = (((affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
                 .get("nodeSelectorTerms") or [])
        for term in terms:
            for field in term.get("matchFields") or []:
                if field.get("key") == "metadata.name":
                    return str(field["values"][0])
        nodes = sorted(name for _, name in self.objects["nodes"])
        return nodes[0] if nodes else "node-0"

    def run_job(self, namespace: str, name: str, *, node: str | None = None) -> list[Obj]:
        """The Job controller creates the pods and the kubelet starts them (phase Running)."""
        with self._lock:
            job = self.get("jobs", namespace, name)
            assert job is not None
            for (ns, pod_name), pod in list(self.objects["pods"].items()):  # pods left pending earlier
                if ns == namespace and any(r.get("uid") == job["metadata"]["uid"]
                                           for r in pod["metadata"].get("ownerReferences") or []):
                    self.remove("pods", ns, pod_name)
            workers = int(job["spec"].get("parallelism") or 1)
            pods = [self.put("pods", self._job_pod(job, i, phase="Running", node=node or self._pinned_node(job)))
                    for i in range(workers)]
            for pod in pods:
                self.logs.setdefault((namespace, pod["metadata"]["name"]), bytearray())
            self.update("jobs", namespace, name, lambda j: j.setdefault("status", {}).update(
                {"active": workers, "ready": workers, "startTime": now_iso()}))
            return pods

    def append_log(self, namespace: str, pod: str, text: str, *, at: str | None = None) -> None:
        """Write ``text`` to the pod's log; each line a record stamped ``at`` (``2026-12-07T07:55:01.123456789Z``;
        default: now). An unfinished last line is finished by the next write, in its record (the kubelet sends whole
        lines)."""
        data = text.encode("utf-8")
        if at is None:
            now = time.time_ns()
            at = datetime.fromtimestamp(now // 10**9, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + f".{now % 10**9:09d}Z"
        with self._lock:
            self.logs.setdefault((namespace, pod), bytearray()).extend(data)
            records = self.log_records.setdefault((namespace, pod), [])
            for line in data.splitlines(keepends=True):
                if records and not records[-1][1].endswith(b"\n"):
                    records[-1] = (records[-1][0], records[-1][1] + line)
                else:
                    records.append((at, line))
            self._lock.notify_all()

    def pods_of(self, namespace: str, job_name: str) -> list[Obj]:
        with self._lock:
            return [copy.deepcopy(p) for (ns, _), p in self.objects["pods"].items()
                    if ns == namespace and (p["metadata"].get("labels") or {}).get("job-name") == job_name]

    def finish_job(self, namespace: str, name: str, *, exit_code: int = 0) -> None:
        """The containers exit with ``exit_code``; the Job gets Complete or Failed conditions."""
        with self._lock:
            stamp = now_iso()
            for pod in self.pods_of(namespace, name):
                def end(p: Obj) -> None:
                    p["status"]["phase"] = "Succeeded" if exit_code == 0 else "Failed"
                    p["status"]["containerStatuses"] = [{
                        "name": "main", "ready": False, "restartCount": 0, "image": "x", "imageID": "",
                        "started": False, "state": {"terminated": {
                            "exitCode": exit_code, "reason": "Completed" if exit_code == 0 else "Error",
                            "startedAt": stamp, "finishedAt": stamp}}}]
                self.update("pods", namespace, pod["metadata"]["name"], end)

            def job_done(j: Obj) -> None:
                status = j.setdefault("status", {})
                workers = int(j["spec"].get("parallelism") or 1)
                status.pop("active", None)
                status["ready"] = 0
                if exit_code == 0:
                    status["succeeded"] = workers
                    status["completionTime"] = stamp
                    status["conditions"] = [
                        {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": stamp},
                        {"type": "Complete", "status": "True", "lastTransitionTime": stamp}]
                else:
                    status["failed"] = 1
                    status["conditions"] = [
                        {"type": "FailureTarget", "status": "True", "reason": "BackoffLimitExceeded",
                         "lastTransitionTime": stamp},
                        {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                         "message": "Job has reached the specified backoff limit", "lastTransitionTime": stamp}]
            self.update("jobs", namespace, name, job_done)

    def fail_scheduling(self, namespace: str, name: str, message: str) -> Obj:
        """The Job controller creates a pod that kube-scheduler cannot place (FailedScheduling)."""
        with self._lock:
            job = self.get("jobs", namespace, name)
            assert job is not None
            pod = self.put("pods", self._job_pod(job, 0, phase="Pending", node=None))
            self.emit_event(pod, "FailedScheduling", message, component="default-scheduler")
            return pod

    # -- request handling (called by the handler) -----------------------------------------------
    def handle_create(self, plural: str, namespace: str, body: Obj) -> tuple[int, Obj]:
        for hook in self.create_hooks:
            answer = hook(plural, body)
            if answer is not None:
                return answer
        with self._lock:
            meta = body.setdefault("metadata", {})
            name = meta.get("name")
            if not name:
                return 422, status_obj(422, "Invalid", f"{RESOURCES[plural][2]} is invalid: metadata.name: Required value")
            if RESOURCES[plural][1]:
                if meta.get("namespace", namespace) != namespace:
                    return 400, status_obj(400, "BadRequest", "the namespace of the object does not match the "
                                                              "namespace on the request")
                meta["namespace"] = namespace
            key = (namespace if RESOURCES[plural][1] else "", name)
            if key in self.objects[plural]:
                group = _GROUP.get(plural)
                what = f"{plural}.{group}" if group else plural
                return 409, status_obj(409, "AlreadyExists", f'{what} "{name}" already exists',
                                       name=name, group=group or "", kind=plural)
            meta["uid"] = str(uuid.uuid4())
            meta["generation"] = 1
            if plural == "secrets":  # the API server keeps stringData as base64 data and never answers it
                data = body.setdefault("data", {})
                for key, value in (body.pop("stringData", None) or {}).items():
                    data[key] = base64.b64encode(str(value).encode()).decode()
            if plural == "jobs":
                uid = meta["uid"]
                labels = body["spec"]["template"].setdefault("metadata", {}).setdefault("labels", {})
                labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                               "controller-uid": uid, "job-name": name})
                body["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
                body.setdefault("status", {})
            return 201, self.put(plural, body)

    def handle_delete(self, plural: str, namespace: str, name: str, propagation: str) -> tuple[int, Obj]:
        with self._lock:
            removed = self.remove(plural, namespace, name)
            if removed is None:
                group = _GROUP.get(plural)
                what = f"{plural}.{group}" if group else plural
                return 404, status_obj(404, "NotFound", f'{what} "{name}" not found',
                                       name=name, group=group or "", kind=plural)
            self.deletions.append((plural, namespace, name, propagation))
            if propagation != "Orphan":
                self._collect_garbage(removed["metadata"]["uid"])
            return 200, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
                         "details": {"name": name, "group": _GROUP.get(plural, ""), "kind": plural,
                                     "uid": removed["metadata"]["uid"]}}

    def handle_patch(self, plural: str, namespace: str, name: str, content_type: str, patch: Obj) -> tuple[int, Obj]:
        """A JSON merge patch (RFC 7386) of one object; 415 for any other patch type."""
        for hook in self.patch_hooks:  # a refusal the test plants (RBAC without patch, an admission webhook)
            answer = hook(plural, name, patch)
            if answer is not None:
                return answer
        if content_type.split(";")[0].strip() != "application/merge-patch+json":
            return 415, status_obj(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                                                "accepted media types include: application/merge-patch+json")
        with self._lock:
            obj = self.get(plural, namespace, name)
            if obj is None:
                group = _GROUP.get(plural)
                what = f"{plural}.{group}" if group else plural
                return 404, status_obj(404, "NotFound", f'{what} "{name}" not found',
                                       name=name, group=group or "", kind=plural)
            merged = _merge_patch(obj, patch)
            if plural == "secrets" and obj.get("immutable") and merged.get("data") != obj.get("data"):
                return 422, status_obj(422, "Invalid", f'Secret "{name}" is invalid: data: Forbidden: field is '
                                                       "immutable when `immutable` is set")
            return 200, self.put(plural, merged)

    def list_objects(self, plural: str, namespace: str | None, labels: str, fields: str) -> Obj:
        with self._lock:
            if self.stale_lists:  # the server compacts faster than the client relists
                self._compacted = self._rv + 1
            items = [copy.deepcopy(o) for (ns, _), o in sorted(self.objects[plural].items())
                     if (namespace is None or ns == namespace) and _matches(o, labels, fields)]
            return {"kind": RESOURCES[plural][2] + "List", "apiVersion": _API_VERSION[RESOURCES[plural][0]],
                    "metadata": {"resourceVersion": str(self._rv)}, "items": items}

    def watch_events(self, plural: str, namespace: str | None, labels: str, fields: str,
                     resource_version: str, timeout_s: float) -> Iterator[Obj]:
        """Yield watch events (dicts) from ``resource_version`` on, until timeout or drop."""
        deadline = threading.Event()
        timer = threading.Timer(timeout_s, lambda: (deadline.set(), self._notify()))
        timer.daemon = True
        timer.start()
        try:
            with self._lock:
                generation = self._generation
                if resource_version in ("", "0"):
                    start = self._rv
                    initial = [{"type": "ADDED", "object": copy.deepcopy(o)}
                               for (ns, _), o in sorted(self.objects[plural].items())
                               if (namespace is None or ns == namespace) and _matches(o, labels, fields)]
                else:
                    start = int(resource_version)
                    initial = []
                    if start < self._compacted:
                        yield {"type": "ERROR", "object": status_obj(
                            410, "Expired", f"too old resource version: {start} ({self._compacted})")}
                        return
            yield from initial
            cursor = start
            while True:
                with self._lock:
                    while (not self._closing and not deadline.is_set() and self._generation == generation
                           and (plural in self.held_watches or not (self._history and self._history[-1][0] > cursor))):
                        self._lock.wait(1.0)
                    if self._closing or deadline.is_set() or self._generation != generation:
                        return
                    pending = [h for h in self._history if h[0] > cursor]
                for rv, p, kind, obj, prev in pending:
                    cursor = rv
                    if p != plural:
                        continue
                    ns = (obj.get("metadata") or {}).get("namespace", "")
                    if namespace is not None and ns != namespace:
                        continue
                    now_in = _matches(obj, labels, fields)
                    was_in = prev is not None and _matches(prev, labels, fields)
                    if kind == "MODIFIED" and now_in and not was_in:
                        kind = "ADDED"
                    elif kind == "MODIFIED" and was_in and not now_in:
                        kind = "DELETED"
                    elif not now_in:
                        continue
                    yield {"type": kind, "object": obj}
        finally:
            timer.cancel()

    def _notify(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def log_stream(self, namespace: str, pod: str, follow: bool, limit: int | None,
                   tail: int | None = None, *, timestamps: bool = False,
                   since: str | None = None) -> tuple[int, Obj | None, Iterator[bytes]]:
        """A pod log read as the kubelet serves it (``ReadLogs``): ``tailLines`` first — from the start of the log's
        last ``tail`` lines, an unfinished last line counting as one (a CRI partial record is a line of its file) —
        then ``limitBytes`` caps what is sent from there."""
        with self._lock:
            obj = self.objects["pods"].get((namespace, pod))
            if obj is None:
                return 404, status_obj(404, "NotFound", f'pods "{pod}" not found', name=pod, kind="pods"), iter(())
            if obj["status"].get("phase") == "Pending":
                return 400, status_obj(400, "BadRequest",
                                       f'container "main" in pod "{pod}" is waiting to start: ContainerCreating'), iter(())

        if timestamps or since is not None:  # from the records (follow is not asked so)
            cut = since[:19] if since else ""
            with self._lock:
                records = [(at, line) for at, line in self.log_records.get((namespace, pod), []) if at[:19] >= cut]
            data = b"".join((at.encode() + b" " if timestamps else b"") + line for at, line in records)
            data = data[_tail_lines_start(data, tail):] if tail is not None else data
            data = data[:limit] if limit is not None else data

            def pieces() -> Iterator[bytes]:  # as the kubelet streams it: a reader that has enough may close
                for at in range(0, len(data), 1 << 16):
                    self.log_bytes_sent.append(len(data[at:at + (1 << 16)]))
                    yield data[at:at + (1 << 16)]
            return 200, None, pieces()
        with self._lock:
            whole = bytes(self.logs.get((namespace, pod), b""))
        begin = 0 if tail is None else _tail_lines_start(whole, tail)

        def chunks() -> Iterator[bytes]:
            sent = 0
            while True:
                with self._lock:
                    data = bytes(self.logs.get((namespace, pod), b""))[begin:]
                    if limit is not None:
                        data = data[:limit]
                    current = self.objects["pods"].get((namespace, pod))
                    ended = current is None or current["status"].get("phase") in ("Succeeded", "Failed")
                if len(data) > sent:
                    self.log_bytes_sent.append(len(data) - sent)
                    yield data[sent:]
                    sent = len(data)
                if not follow or ended or self._closing or (limit is not None and sent >= limit):
                    return
                with self._lock:
                    self._lock.wait(0.5)
        return 200, None, chunks()


def _tail_lines_start(data: bytes, lines: int) -> int:
    """Where the last ``lines`` lines of ``data`` begin (the kubelet's ``tail.FindTailLineStartIndex``): 0 when it
    holds no more; ``len(data)`` for 0 lines."""
    if lines <= 0:
        return len(data)
    at, found = (len(data) - 1 if data.endswith(b"\n") else len(data)), 0
    while found < lines:
        at = data.rfind(b"\n", 0, at)
        if at < 0:
            return 0
        found += 1
    return at + 1


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch of ``target`` by ``patch``."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = _merge_patch(out.get(key), value)
    return out


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: FakeKubernetes

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- routing -------------------------------------------------------------------------------
    def _route(self) -> tuple[str, str | None, str | None, str | None, dict[str, str]] | None:
        """(plural, namespace, name, subresource, query) or None."""
        parts = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
        for plural, (prefix, _, _) in RESOURCES.items():
            if not parts.path.startswith(prefix + "/"):
                continue
            rest = parts.path[len(prefix) + 1:].split("/")
            if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] == plural:
                name = rest[3] if len(rest) > 3 else None
                sub = rest[4] if len(rest) > 4 else None
                return plural, rest[1], name, sub, query
            if rest == [plural]:
                return plural, None, None, None, query
            if rest[0] == plural and len(rest) == 2 and not RESOURCES[plural][1]:
                return plural, None, rest[1], None, query
        return None

    def _send_json(self, code: int, body: Obj) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_chunked(self, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _body(self) -> Obj:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.command == "POST":
            self.state.bodies.append((self.path, raw))
        return json.loads(raw) if raw else {}

    def _not_found(self) -> None:
        self._send_json(404, status_obj(404, "NotFound", "the server could not find the requested resource"))

    # -- verbs ---------------------------------------------------------------------------------
    def do_GET(self) -> None:
        self.state.requests.append(("GET", self.path))
        route = self._route()
        if route is None:
            return self._not_found()
        plural, namespace, name, sub, query = route
        if name is not None and sub == "log":
            return self._log(namespace or "", name, query)
        if name is not None:
            obj = self.state.get(plural, namespace or "", name)
            if obj is None:
                group = _GROUP.get(plural)
                what = f"{plural}.{group}" if group else plural
                return self._send_json(404, status_obj(404, "NotFound", f'{what} "{name}" not found',
                                                       name=name, group=group or "", kind=plural))
            return self._send_json(200, obj)
        labels, fields = query.get("labelSelector", ""), query.get("fieldSelector", "")
        if query.get("watch") in ("true", "1", "True"):
            return self._watch(plural, namespace, labels, fields, query)
        return self._send_json(200, self.state.list_objects(plural, namespace, labels, fields))

    def _watch(self, plural: str, namespace: str | None, labels: str, fields: str, query: dict[str, str]) -> None:
        self._start_chunked("application/json")
        timeout = float(query.get("timeoutSeconds") or 1800)
        try:
            for event in self.state.watch_events(plural, namespace, labels, fields,
                                                 query.get("resourceVersion", ""), timeout):
                self._chunk(json.dumps(event).encode("utf-8") + b"\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client went away (Reflector.stop)
            self.close_connection = True

    def _log(self, namespace: str, pod: str, query: dict[str, str]) -> None:
        follow = query.get("follow") in ("true", "1", "True")
        limit = int(query["limitBytes"]) if query.get("limitBytes") else None
        tail = int(query["tailLines"]) if query.get("tailLines") else None
        code, error, chunks = self.state.log_stream(namespace, pod, follow, limit, tail,
                                                    timestamps=query.get("timestamps") == "true",
                                                    since=query.get("sinceTime"))
        if error is not None:
            return self._send_json(code, error)
        self._start_chunked("text/plain")
        try:
            for data in chunks:
                self._chunk(data)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def do_POST(self) -> None:
        self.state.requests.append(("POST", self.path))
        route = self._route()
        if route is None or route[2] is not None or route[1] is None:
            return self._not_found()
        plural, namespace, _, _, _ = route
        code, body = self.state.handle_create(plural, namespace or "", self._body())
        self._send_json(code, body)

    def do_PATCH(self) -> None:
        self.state.requests.append(("PATCH", self.path))
        route = self._route()
        if route is None or route[2] is None:
            return self._not_found()
        plural, namespace, name, _, _ = route
        code, body = self.state.handle_patch(plural, namespace or "", name or "", self.headers.get("Content-Type", ""),
                                             self._body())
        self._send_json(code, body)

    def do_DELETE(self) -> None:
        self.state.requests.append(("DELETE", self.path))
        route = self._route()
        if route is None or route[2] is None:
            return self._not_found()
        plural, namespace, name, _, query = route
        options = self._body()
        propagation = query.get("propagationPolicy") or options.get("propagationPolicy") or "Background"
        code, body = self.state.handle_delete(plural, namespace or "", name or "", propagation)
        self._send_json(code, body)
