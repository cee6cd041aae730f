"""The executor and the inventory watcher against an in-process fake of the Kubernetes API.

A real Kubernetes API server cannot run on this machine (none is installable, no Docker for
kind/k3d), so these tests use ``fake_apiserver.FakeKubernetes``: a threaded HTTP/1.1 server that
speaks the API's real REST JSON (lists, chunked watch streams, ``Status`` objects for 404, 409
and 410, pod logs), used through the official ``kubernetes`` client configured with the fake's
loopback URL. The fake's "controller" steps are driven by the tests. ``test_real_cluster.py``
runs the same flow against a real cluster when a kubeconfig exists.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.errors import ExecutorError, NotFoundError
from jupyter_sched.executors.base import (
    Executor,
    ExecutorEvent,
    ExecutorHandle,
    Exited,
    Lost,
    NotReady,
    Ready,
    Started,
    Waiting,
)
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, QueueManager
from jupyter_sched.inventory.base import InventorySource
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.model import Inventory, JobKind, JobState

from .fake_apiserver import FakeKubernetes
from .kube_builders import A100, allocation, make_job, make_node, make_pod

NS = "team-ml"


def poll_until(executor: KubernetesExecutor, want: Callable[[list[ExecutorEvent]], bool],
               timeout_s: float = 10.0) -> list[ExecutorEvent]:
    """Poll until ``want(events so far)``; a generous timeout only guards against hangs."""
    events: list[ExecutorEvent] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        events += executor.poll()
        if want(events):
            return events
        time.sleep(0.01)
    raise AssertionError(f"condition not reached; events so far: {events}")


def wait_for(check: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.01)
    raise AssertionError("condition not reached")


def of(kind: type, events: list[ExecutorEvent]) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def _executor(api_client: client.ApiClient, inventory: KubernetesInventory | None = None,
              **config: Any) -> KubernetesExecutor:
    config.setdefault("allowed_images", ("pytorch:*", "python:*"))
    return KubernetesExecutor(api_client, KubernetesConfig(namespace=NS, **config), inventory=inventory,
                              watch_timeout_s=30)


@pytest.fixture
def executor(api_client: client.ApiClient, inventory: KubernetesInventory) -> Iterator[KubernetesExecutor]:
    ex = _executor(api_client, inventory)
    yield ex
    ex.detach()


def test_the_executor_and_inventory_implement_the_protocols(executor: KubernetesExecutor,
                                                            inventory: KubernetesInventory) -> None:
    assert isinstance(executor, Executor)
    assert executor.name == "kubernetes"
    assert isinstance(inventory, InventorySource)
    assert inventory.current().source == "kubernetes"


def test_a_job_goes_pending_then_running_then_succeeded(fake: FakeKubernetes, executor: KubernetesExecutor,
                                                        inventory: KubernetesInventory) -> None:
    """Through the fake API server (a real one cannot run on this machine): create, FailedScheduling
    reason, pods running, logs, completion."""
    job = make_job("j-train", gpus=2)
    handle = executor.start(job, allocation("g1", 2))
    assert handle.executor == "kubernetes"
    assert handle.data["name"] == "js-j-train" and handle.data["namespace"] == NS
    created = fake.get("jobs", NS, "js-j-train")
    assert created is not None and handle.data["uid"] == created["metadata"]["uid"]
    pod_spec = created["spec"]["template"]["spec"]
    assert pod_spec["nodeSelector"] == {"nvidia.com/gpu.product": A100}  # from the inventory's node labels
    assert executor.tracked() == {"j-train"}

    fake.fail_scheduling(NS, "js-j-train", "0/2 nodes are available: 1 Insufficient nvidia.com/gpu, "
                                           "1 node(s) didn't match Pod's node affinity/selector. preemption: "
                                           "0/2 nodes are available: 2 Preemption is not helpful for scheduling.")
    (waiting,) = of(Waiting, poll_until(executor, lambda evs: bool(of(Waiting, evs))))
    assert waiting.reason.code == "Unschedulable"
    assert waiting.reason.details["causes"] == {"Insufficient nvidia.com/gpu": 1,
                                                "node(s) didn't match Pod's node affinity/selector": 1}
    assert (waiting.reason.details["available"], waiting.reason.details["total"]) == (0, 2)
    assert executor.poll() == []  # the same reason is not reported twice

    pods = fake.run_job(NS, "js-j-train", node="g1")
    (started,) = of(Started, poll_until(executor, lambda evs: bool(of(Started, evs))))
    assert started.handle == handle
    # Our own pod's GPUs are not "foreign": the allocation's uuids ride on the pod.
    wait_for(lambda: any(p["metadata"]["name"] == pods[0]["metadata"]["name"] for p in inventory.pods.items())
             if inventory.pods else False)
    assert all(g.foreign_memory_mib == 0 for g in inventory.inventory().gpus())

    fake.append_log(NS, pods[0]["metadata"]["name"], "epoch 1 loss 0.3\n")
    assert executor.logs("j-train", 0, 100) == ("epoch 1 loss 0.3\n", 17)
    fake.finish_job(NS, "js-j-train", exit_code=0)
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.exit_code == 0 and exited.finished_at.tzinfo is not None
    assert executor.tracked() == frozenset()
    assert executor.logs("j-train", 6, 100) == ("1 loss 0.3\n", 17)  # logs outlive the job


def test_a_failed_job_reports_its_exit_code(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-bad"), allocation("g2"))
    fake.run_job(NS, "js-j-bad")
    fake.finish_job(NS, "js-j-bad", exit_code=3)
    events = poll_until(executor, lambda evs: bool(of(Exited, evs)))
    assert [type(e) for e in events] == [Started, Exited]  # started first, even if it ran between polls
    assert of(Exited, events)[0].exit_code == 3


def test_cancel_deletes_the_job_with_background_propagation(fake: FakeKubernetes,
                                                            executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-cancel", gpus=1, workers=2), allocation(gpus=1, workers=("g1", "g2")))
    fake.run_job(NS, "js-j-cancel")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    executor.stop("j-cancel", grace_s=30)
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.exit_code == -15
    assert ("jobs", NS, "js-j-cancel", "Background") in fake.deletions
    assert fake.get("jobs", NS, "js-j-cancel") is None and fake.get("services", NS, "js-j-cancel") is None


def test_newuser30_n16_a_stopped_kubernetes_job_says_which_signals_its_processes_got(
        fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-said"), allocation("g1"))
    fake.run_job(NS, "js-j-said")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    executor.stop("j-said", grace_s=30, reason="cancelled by ana")
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.message == (f"stopped: Job {NS}/js-j-said deleted; Kubernetes sent each container's main process "
                              "SIGTERM, and SIGKILL to every process still in it when that process ended or "
                              f"{executor.config.preemption_grace_s} s later (terminationGracePeriodSeconds)")
    assert fake.pods_of(NS, "js-j-cancel") == []
    executor.stop("j-cancel", grace_s=30)  # already gone: ignored


def test_a_job_deleted_behind_our_back_is_lost(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-gone"), allocation("g2"))
    poll_until(executor, lambda evs: True)
    wait_for(lambda: executor._cached("jobs", NS, "js-j-gone") is not None)
    fake.remove("jobs", NS, "js-j-gone")
    (lost,) = of(Lost, poll_until(executor, lambda evs: bool(of(Lost, evs))))
    assert "deleted outside jupyter_sched" in lost.reason


def test_a_node_going_not_ready_removes_its_gpus(fake: FakeKubernetes, inventory: KubernetesInventory) -> None:
    def placeable(inv: Inventory) -> int:
        return sum(g.healthy for n in inv.nodes if n.schedulable for g in n.gpus)

    assert placeable(inventory.inventory()) == 8
    fake.update("nodes", "", "g2", lambda n: n["status"]["conditions"][0].update(
        status="False", reason="KubeletNotReady", message="container runtime is down"))
    wait_for(lambda: placeable(inventory.inventory()) == 4)
    g2 = inventory.inventory().node("g2")
    assert not g2.ready
    assert {g.health_reason for g in g2.gpus} == {"node g2 is not Ready (KubeletNotReady: container runtime is down)"}


def test_410_gone_triggers_a_relist(fake: FakeKubernetes, inventory: KubernetesInventory) -> None:
    assert inventory.nodes.list_count == 1 and fake.list_count("nodes") == 1
    fake.hold_watches("nodes")                    # the open watch must not tell the change (it raced the drop: CI)
    fake.compact()                                # history before now is forgotten ...
    fake.put("nodes", make_node("g3", gpus=8))    # ... a change happens ...
    fake.drop_watches()                           # ... and the watch must resume from an old version
    fake.release_watches("nodes")
    wait_for(lambda: [n.name for n in inventory.inventory().nodes] == ["g1", "g2", "g3"])
    assert inventory.nodes.list_count == 2 and fake.list_count("nodes") == 2
    fake.update("nodes", "", "g3", lambda n: n["spec"].update(unschedulable=True))  # watching again after it
    wait_for(lambda: inventory.inventory().node("g3").unschedulable)


def test_gpus_of_foreign_pods_count_as_used(fake: FakeKubernetes, inventory: KubernetesInventory) -> None:
    fake.put("pods", make_pod("someone-elses", node="g2", gpus=3, namespace="research"))
    wait_for(lambda: sum(g.foreign_memory_mib > 0 for g in inventory.inventory().node("g2").gpus) == 3)
    # The pod finishes: it leaves the watch's field selector (a DELETED event) and frees its GPUs.
    fake.update("pods", "research", "someone-elses", lambda p: p["status"].update(phase="Succeeded"))
    wait_for(lambda: all(g.foreign_memory_mib == 0 for g in inventory.inventory().gpus()))


def test_status_objects_409_and_404(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    job = make_job("j-twice")
    first = executor.start(job, allocation("g2"))
    assert executor.start(job, allocation("g2")).data["uid"] == first.data["uid"]  # repeated start: same Job
    stranger = {"metadata": {"name": "js-j-taken", "namespace": NS}, "spec": {"template": {"spec": {}}}}
    fake.put("jobs", stranger)
    with pytest.raises(ExecutorError, match=r'jobs\.batch "js-j-taken" already exists'):
        executor.start(make_job("j-taken"), allocation("g2"))
    lost = executor.adopt(make_job("j-never").transition(JobState.RUNNING),
                          ExecutorHandle("kubernetes", {"namespace": NS, "name": "js-j-never", "kind": "Job"}))
    assert isinstance(lost, Lost) and "no longer exists" in lost.reason
    with pytest.raises(NotFoundError):
        executor.logs("j-never")


def test_adopt_after_restart(fake: FakeKubernetes, api_client: client.ApiClient,
                             inventory: KubernetesInventory) -> None:
    before = _executor(api_client, inventory)
    handle = before.start(make_job("j-a"), allocation("g2"))
    before.start(make_job("j-b"), allocation("g2"))
    before.detach()  # server restart: the work keeps running
    fake.run_job(NS, "js-j-a")
    fake.run_job(NS, "js-j-b")
    fake.finish_job(NS, "js-j-b", exit_code=0)
    after = _executor(api_client, inventory)
    try:
        assert after.adopt(make_job("j-a").transition(JobState.RUNNING), handle) is None
        ended = after.adopt(make_job("j-b").transition(JobState.RUNNING), None)  # found by its name
        assert isinstance(ended, Exited) and ended.exit_code == 0
        assert after.tracked() == {"j-a"}
        fake.finish_job(NS, "js-j-a", exit_code=0)
        assert of(Exited, poll_until(after, lambda evs: bool(of(Exited, evs))))[0].job_id == "j-a"
    finally:
        after.detach()


def test_logs_follow_streams_until_the_container_ends(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    executor.start(make_job("j-log"), allocation("g2"))
    (pod,) = fake.run_job(NS, "js-j-log")
    name = pod["metadata"]["name"]
    wait_for(lambda: bool(executor._pods_of(executor._tracked["j-log"])))
    fake.append_log(NS, name, "one\n")
    stream = executor.follow_logs("j-log")
    assert next(stream) == "one\n"
    fake.append_log(NS, name, "two\n")
    assert next(stream) == "two\n"
    fake.finish_job(NS, "js-j-log")
    assert list(stream) == []


def test_kueue_mode_waits_for_admission_and_reads_it_back(fake: FakeKubernetes,
                                                          api_client: client.ApiClient) -> None:
    ex = _executor(api_client, queue_manager=QueueManager.KUEUE)
    try:
        ex.start(make_job("j-q", team="team-geo", models=("NVIDIA A100-SXM4-80GB",)), None)
        created = fake.get("jobs", NS, "js-j-q")
        assert created is not None and created["spec"]["suspend"] is True
        assert created["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-geo"
        (waiting,) = of(Waiting, poll_until(ex, lambda evs: bool(of(Waiting, evs))))
        assert waiting.reason.message == "waiting for Kueue to admit it in LocalQueue team-geo"
        assert ex.admission("j-q") is None

        def admit(job: dict[str, Any]) -> None:  # what Kueue does on admission
            job["spec"]["suspend"] = False
            job["spec"]["template"]["spec"].setdefault("nodeSelector", {})["cloud.example/pool"] = "a100"

        fake.update("jobs", NS, "js-j-q", admit)
        wait_for(lambda: ex.admission("j-q") is not None)
        assert ex.admission("j-q") == {"queue": "team-geo", "node_selector": {
            "nvidia.com/gpu.product": A100, "cloud.example/pool": "a100"}}
        fake.run_job(NS, "js-j-q", node="g1")
        poll_until(ex, lambda evs: bool(of(Started, evs)))
    finally:
        ex.detach()


def test_volcano_gang_gets_a_pod_group(fake: FakeKubernetes, api_client: client.ApiClient) -> None:
    ex = _executor(api_client, queue_manager=QueueManager.VOLCANO)
    try:
        ex.start(make_job("j-v", gpus=4, workers=2), None)
        podgroup = fake.get("podgroups", NS, "js-j-v")
        assert podgroup is not None and podgroup["spec"]["minMember"] == 2
        ex.stop("j-v", grace_s=10)
        assert fake.get("podgroups", NS, "js-j-v") is None
    finally:
        ex.detach()


def test_an_inference_service_becomes_ready(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    job = make_job("j-svc", kind=JobKind.INFERENCE, port=8000, command=("serve",))
    handle = executor.start(job, allocation("g2"))
    assert handle.data["kind"] == "Deployment"
    deployment = fake.get("deployments", NS, "js-j-svc")
    assert deployment is not None and fake.get("services", NS, "js-j-svc") is not None
    template = deployment["spec"]["template"]
    fake.put("pods", {"metadata": {"name": "js-j-svc-5d8f-abcde", "namespace": NS, "labels": template["metadata"]["labels"]},
                      "spec": dict(template["spec"], nodeName="g2"),
                      "status": {"phase": "Running", "containerStatuses": [{"name": "main", "restartCount": 0}]}})
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    fake.update("deployments", NS, "js-j-svc", lambda d: d.setdefault("status", {}).update(readyReplicas=1))
    (ready,) = of(Ready, poll_until(executor, lambda evs: bool(of(Ready, evs))))
    assert ready.port == 8000
    # new user 8, N8: a replica that stops being ready (its pod restarts) no longer reads "ready"
    fake.update("deployments", NS, "js-j-svc", lambda d: d["status"].update(readyReplicas=0))
    (gone,) = of(NotReady, poll_until(executor, lambda evs: bool(of(NotReady, evs))))
    assert gone.port == 8000 and "no replica is ready" in gone.why
    fake.update("deployments", NS, "js-j-svc", lambda d: d["status"].update(readyReplicas=1))
    assert of(Ready, poll_until(executor, lambda evs: bool(of(Ready, evs))))
    executor.stop("j-svc", grace_s=5)
    assert ("deployments", NS, "js-j-svc", "Background") in fake.deletions
