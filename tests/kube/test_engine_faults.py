"""Fault injection at the Kubernetes API: a refused create concerns its one job only.

Issue 17, "Done when": an executor start answered with HTTP 409, 422 or 500 fails or requeues
that job with a reason naming the cause, while the other jobs of the same cycle start and a
pending cancel is carried out. The engine, store (SQLite), core, Kubernetes executor and
inventory watch are real; the API server is ``fake_apiserver.FakeKubernetes`` (a real one cannot
run here), which answers with the API server's own ``Status`` objects. The 409 is the real
thing: an object of another job already has the name.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.backoff import Backoff
from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, object_name
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.store import Store, check_integrity, sqlite_url

from .fake_apiserver import FakeKubernetes, status_obj
from .kube_builders import GPU_TAINT, make_node

NS = "team-ml"
WAIT_S = 30.0


@pytest.fixture
def cluster(fake: FakeKubernetes, api_client: client.ApiClient) -> Iterator[tuple[KubernetesExecutor, Any]]:
    fake.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    inventory = KubernetesInventory(client.CoreV1Api(api_client), watch_timeout_s=30)
    inventory.start()
    executor = KubernetesExecutor(api_client, KubernetesConfig(namespace=NS, default_image="python:3.12-slim"),
                                  inventory=inventory, watch_timeout_s=30)
    yield executor, inventory
    executor.detach()
    inventory.stop()


def wait_until(predicate: Callable[[], Any], what: str, tick: Callable[[], Any]) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        tick()
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def refuse(fake: FakeKubernetes, name: str, code: int, reason: str, message: str, times: int) -> None:
    """Answer the next ``times`` creates of object ``name`` with ``code`` (``times`` < 0: always)."""
    left = [times]

    def hook(plural: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if plural != "jobs" or body.get("metadata", {}).get("name") != name or left[0] == 0:
            return None
        left[0] -= 1
        return code, status_obj(code, reason, message)

    fake.create_hooks.append(hook)


FAULTS = [
    pytest.param(409, "failed", "already exists", id="409 AlreadyExists (another job's object) fails the job"),
    pytest.param(422, "failed", "HTTP 422 Job.batch is invalid", id="422 Invalid fails the job"),
    pytest.param(500, "running", "reconnecting to the kubernetes executor (attempt 1",
                 id="500 is retried with backoff and then starts"),
]


@pytest.mark.parametrize(("status", "want_state", "want_text"), FAULTS)
def test_a_refused_create_concerns_its_job_only(tmp_path: Path, fake: FakeKubernetes,
                                                cluster: tuple[KubernetesExecutor, Any],
                                                status: int, want_state: str, want_text: str) -> None:
    executor, inventory = cluster
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor,
                           cycle_interval_s=0.0, stop_grace_s=1.0)
    svc.engine.retries.backoff = Backoff(base_s=0.01, cap_s=0.05)
    job = {"command": ["python", "train.py"], "gpus": 1}
    victim = svc.submit(dict(job, name="victim"), user="ana")
    wait_until(lambda: fake.get("jobs", NS, object_name(victim["id"])), "the first Job object", svc.tick)
    fake.run_job(NS, object_name(victim["id"]), node="g1")
    wait_until(lambda: svc.get_job(victim["id"], user="ana")["message"] == "running", "the pod to run", svc.tick)
    svc.cancel(victim["id"], user="ana")
    before, faulty, after = (svc.submit(dict(job, name=n), user="ana") for n in ("before", "faulty", "after"))
    name = object_name(faulty["id"])
    if status == 409:
        fake.put("jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {
            "name": name, "namespace": NS, "labels": {"owner": "someone-else"}}, "spec": {}, "status": {}})
    else:
        refuse(fake, name, status, {422: "Invalid", 500: "InternalError"}[status],
               {422: "Job.batch is invalid: spec.template.spec.containers[0].image: Required value",
                500: "etcdserver: request timed out"}[status], times=-1 if status == 422 else 2)
    report = svc.tick()
    assert set(report.admitted) == {before["id"], faulty["id"], after["id"]}
    assert {before["id"], after["id"]} <= set(report.started)  # the others of the same cycle started
    assert ("jobs", NS, object_name(victim["id"]), "Background") in fake.deletions  # the cancel was carried out
    if status == 500:
        first = svc.get_job(faulty["id"], user="ana")
        assert first["state"] == "admitted" and want_text in first["message"] and "HTTP 500" in first["message"]
    if status == 500:  # retried with backoff until the API answers: then created, and run by the cluster
        wait_until(lambda: fake.get("jobs", NS, name), "the Job object after the retries", svc.tick)
        fake.run_job(NS, name, node="g1")
    got = wait_until(lambda: (j := svc.get_job(faulty["id"], user="ana"))["state"] == want_state and j,
                     want_state, svc.tick)
    if status != 500:
        assert got["message"].startswith("could not start: ") and want_text in got["message"], got["message"]
        assert f"HTTP {status}" in got["message"]
    for other in (before, after):
        assert fake.get("jobs", NS, object_name(other["id"])) is not None
    assert check_integrity(svc.store).ok


def test_a_namespace_quota_refusal_requeues_the_job_with_the_quota_reason(
        tmp_path: Path, fake: FakeKubernetes, cluster: tuple[KubernetesExecutor, Any]) -> None:
    """Case 019's refusal on create (HTTP 403 exceeded quota) is capacity, not a broken job: the
    job goes back to the queue, and says why."""
    executor, inventory = cluster
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor,
                           cycle_interval_s=0.0)
    job = svc.submit({"command": ["python", "train.py"], "gpus": 1}, user="ana")
    refuse(fake, object_name(job["id"]), 403, "Forbidden",
           'jobs "x" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, '
           "used: requests.nvidia.com/gpu=4, limited: requests.nvidia.com/gpu=4", times=-1)
    svc.tick()
    got = svc.get_job(job["id"], user="ana")
    assert got["state"] == "pending", got
    assert got["reason"]["code"] == "ExceedsQuota"
    assert got["reason"]["message"] == "namespace team-ml GPU quota exhausted (4 of 4 in use)"
    assert svc.store.get_job(job["id"]).job.not_before is not None  # it backs off before trying again
