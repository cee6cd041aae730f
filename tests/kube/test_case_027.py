"""Case 027: kube-scheduler's FailedScheduling text becomes a pending reason with stable categories,
counts, the preemption clause and one plain sentence; a missing GPU toleration is flagged as a
manifest problem; the reason reaches the job within one event, and the job is not ``running``
while its pod cannot schedule.

The delivery test runs the Kubernetes executor against ``fake_apiserver.FakeKubernetes`` (a real
API server cannot run here; the fake speaks the API's REST JSON and chunked watches)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.base import Waiting
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, object_name
from jupyter_sched.executors.kubernetes.failures import failure_sentence, parse_failed_scheduling
from jupyter_sched.executors.kubernetes.status import scheduling_reason
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.wording import state_word

from .fake_apiserver import FakeKubernetes
from .kube_builders import allocation, make_job, make_node

E1 = ("0/8 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/8 nodes are available: 1 No preemption "
      "victims found for incoming pod, 7 Preemption is not helpful for scheduling.")
E2 = ("0/14 nodes are available: 3 node(s) didn't match Pod's node affinity/selector, 3 node(s) had taint "
      "{node-role.kubernetes.io/infra: }, that the pod didn't tolerate, 3 node(s) had taint "
      "{node-role.kubernetes.io/master: }, that the pod didn't tolerate, 5 Insufficient nvidia.com/gpu.")
E3 = ("0/6 nodes are available: 6 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient "
      "memory.")


@pytest.mark.parametrize(("text", "want"), [
    (E1, {"nodes": 8, "insufficient_gpu": 1, "unexplained": 7, "preemption": "no victims"}),
    (E2, {"nodes": 14, "selector_mismatch": 3, "untolerated_taint": 6, "insufficient_gpu": 5}),
    (E3, {"nodes": 6, "untolerated_taint": 6, "insufficient_memory": 2}),
], ids=["E1 z2jh#3801", "E2 operate-first#1905", "E3 overlapping counts"])
def test_case_027_parser_output(text: str, want: dict[str, object]) -> None:
    assert parse_failed_scheduling(text).to_dict() == want


def test_case_027_e2_counts_sum_to_the_nodes_and_e3_may_exceed_them_without_error() -> None:
    e2 = parse_failed_scheduling(E2)
    assert sum(e2.counts.values()) == e2.nodes == 14
    e3 = parse_failed_scheduling(E3)
    assert sum(e3.counts.values()) == 8 > e3.nodes and e3.other == ()


@pytest.mark.parametrize(("text", "want", "want_problem"), [
    (E1, "1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt", ""),
    (E2, "5 GPU nodes are full; 9 nodes are not eligible (3 selector, 6 taint)", ""),
    (E3, "pod lacks toleration for nvidia.com/gpu taint", "missing_gpu_toleration"),
], ids=["E1", "E2", "E3"])
def test_case_027_reason_sentence(text: str, want: str, want_problem: str) -> None:
    sentence, problem, _ = failure_sentence(parse_failed_scheduling(text))
    assert (sentence, problem) == (want, want_problem)


def test_case_027_e3_is_flagged_as_a_manifest_bug_with_the_fix() -> None:
    reason = scheduling_reason(E3, pod="js-j-1-0")
    assert reason.code == "Unschedulable"
    assert reason.message == "manifest problem: pod lacks toleration for nvidia.com/gpu taint"
    assert reason.details["manifest_problem"] == "missing_gpu_toleration"
    assert "gpu_taint_keys" in reason.unblock
    assert reason.details["kubernetes_message"] == E3, "the original text is kept"


def test_case_027_the_preemption_clause_is_kept() -> None:
    reason = scheduling_reason(E1, pod="p")
    assert reason.details["categories"]["preemption"] == "no victims"
    assert reason.message.endswith("no lower-priority pod to preempt")


def test_case_027_unknown_phrases_are_kept_verbatim_under_other() -> None:
    text = ("0/5 nodes are available: 2 Insufficient nvidia.com/gpu, 3 node(s) had volume node affinity conflict, "
            "1 node(s) were in a zone the cluster autoscaler forgot.")
    parsed = parse_failed_scheduling(text)
    assert parsed.other == ("1 node(s) were in a zone the cluster autoscaler forgot",)
    assert parsed.counts == {"insufficient_gpu": 2, "volume": 3}


@pytest.fixture
def executor(fake: FakeKubernetes, api_client: client.ApiClient) -> Iterator[KubernetesExecutor]:
    fake.put("nodes", make_node("g1", gpus=4))
    ex = KubernetesExecutor(api_client, KubernetesConfig(namespace="team-ml", allowed_images=("pytorch:*",)),
                            watch_timeout_s=30)
    yield ex
    ex.detach()


def test_case_027_the_reason_reaches_the_job_within_one_event(fake: FakeKubernetes,
                                                              executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-gpu", gpus=1), allocation("g1", 1))
    fake.fail_scheduling("team-ml", "js-j-gpu", E1)
    delivered = time.monotonic()
    waiting: list[Waiting] = []
    while not waiting and time.monotonic() - delivered <= 10.0:
        waiting = [e for e in executor.poll() if isinstance(e, Waiting)]
        time.sleep(0.01)
    assert waiting, "no reason within 10 s of the event"
    assert waiting[0].reason.message == "1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt"
    assert time.monotonic() - delivered <= 10.0


def test_case_027_z_on_a_cluster_without_gpu_nodes_the_magic_says_so_without_executor_advice() -> None:
    from jupyter_sched.inventory.kubernetes import inventory_from_objects
    from jupyter_sched.magics.render import no_gpus_message
    from jupyter_sched.model.codec import inventory_to_dict

    cpu_only = make_node("cpu-1", gpus=0, product=None)
    message = no_gpus_message(inventory_to_dict(inventory_from_objects([cpu_only])))
    assert message is not None and message.lower().startswith("this cluster has no gpu nodes")
    assert "Kubernetes executor" not in message


def test_case_027_a_job_whose_pod_cannot_schedule_is_not_running_and_carries_the_reason(
        tmp_path: Path, fake: FakeKubernetes, api_client: client.ApiClient) -> None:
    """Engine, store (SQLite), core, Kubernetes executor and inventory watch are real; the API
    server is the fake. Until the pod runs, the job stays ``admitted`` (GPUs held, never
    ``running``) with the FailedScheduling reason and its sentence; once the pod runs it is
    ``running`` and the reason is gone."""
    fake.put("nodes", make_node("g1", gpus=4))
    inventory = KubernetesInventory(client.CoreV1Api(api_client), watch_timeout_s=30)
    inventory.start()
    executor = KubernetesExecutor(api_client, KubernetesConfig(namespace="team-ml", default_image="python:3.12-slim"),
                                  inventory=inventory, watch_timeout_s=30)
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor,
                           cycle_interval_s=0.0, stop_grace_s=1.0)
    try:
        job = svc.submit({"command": ["python", "train.py"], "gpus": 1, "name": "gpu-small"}, user="ana")
        name = object_name(job["id"])
        until(lambda: fake.get("jobs", "team-ml", name), "the Job object", svc.tick)
        assert svc.get_job(job["id"], user="ana")["state"] == "admitted"  # handed over, not running yet
        fake.fail_scheduling("team-ml", name, E1)
        waiting = until(lambda: (j := svc.get_job(job["id"], user="ana"))["reason"] and j, "the reason", svc.tick)
        assert waiting["state"] == "admitted" and waiting["started_at"] is None
        assert waiting["reason"]["code"] == "Unschedulable"
        assert waiting["reason"]["message"] == "1 of 8 nodes has GPUs and none free; no lower-priority pod to preempt"
        assert waiting["message"] == waiting["reason"]["message"]
        assert state_word(waiting) == "pending (in the cluster)"  # what the CLI and magics show
        fake.run_job("team-ml", name, node="g1")
        running = until(lambda: (j := svc.get_job(job["id"], user="ana"))["state"] == "running" and j, "running",
                        svc.tick)
        assert running["reason"] is None and running["started_at"] is not None
    finally:
        executor.detach()
        inventory.stop()
        svc.store.close()


def until(predicate: Callable[[], Any], what: str, tick: Callable[[], Any], timeout_s: float = 30.0) -> Any:
    """Tick the engine until ``predicate`` holds (its value), or fail naming ``what``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        tick()
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
