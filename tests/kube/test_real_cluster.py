"""The same flow against a real Kubernetes cluster, for users who have one.

Skipped unless a kubeconfig exists (``$KUBECONFIG`` or ``~/.kube/config``); run with
``pytest -m kubernetes tests/kube``. Uses namespace ``$JUPYTER_SCHED_TEST_NAMESPACE`` (default
``default``), CPU-only work (``busybox``), and deletes what it creates. The PriorityClasses of
``server/priorityclasses.yaml`` must exist (``kubectl apply -f server/priorityclasses.yaml``).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_sched.executors.base import ExecutorEvent, Exited, Started
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor
from jupyter_sched.inventory.kubernetes import KubernetesInventory

from .kube_builders import allocation, make_job

KUBECONFIG = Path(os.environ.get("KUBECONFIG", str(Path.home() / ".kube" / "config")))

pytestmark = [
    pytest.mark.kubernetes,
    pytest.mark.skipif(not KUBECONFIG.is_file(), reason=f"no kubeconfig at {KUBECONFIG}: needs a real cluster"),
]


@pytest.fixture
def real_api() -> Iterator[object]:
    from kubernetes import client, config

    config.load_kube_config(config_file=str(KUBECONFIG))
    api = client.ApiClient()
    yield api
    api.close()


def _poll(executor: KubernetesExecutor, want: Callable[[list[ExecutorEvent]], bool],
          timeout_s: float = 300) -> list[ExecutorEvent]:
    events: list[ExecutorEvent] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        events += executor.poll()
        if want(events):
            return events
        time.sleep(1)
    raise AssertionError(f"condition not reached; events so far: {events}")


def test_real_cluster_job_runs_logs_and_cancels(real_api: object) -> None:
    from kubernetes import client

    namespace = os.environ.get("JUPYTER_SCHED_TEST_NAMESPACE", "default")
    inventory = KubernetesInventory(client.CoreV1Api(real_api))
    inventory.start()
    executor = KubernetesExecutor(real_api, KubernetesConfig(namespace=namespace, ttl_seconds_after_finished=300,
                                                                 allowed_images=("busybox:*",)),
                                  inventory=inventory)
    suffix = uuid.uuid4().hex[:6]
    try:
        nodes = inventory.inventory().nodes
        assert nodes, "the cluster has no nodes"
        node = nodes[0].name
        job = make_job(f"rt-{suffix}", gpus=0, image="busybox:1.36", command=("sh", "-c", "echo hello-from-k8s"))
        executor.start(job, allocation(node, 0))
        events = _poll(executor, lambda evs: any(isinstance(e, Exited) for e in evs))
        assert [e.exit_code for e in events if isinstance(e, Exited)] == [0]
        assert "hello-from-k8s" in executor.logs(job.id)[0]

        sleeper = make_job(f"rs-{suffix}", gpus=0, image="busybox:1.36", command=("sleep", "600"))
        executor.start(sleeper, allocation(node, 0))
        _poll(executor, lambda evs: any(isinstance(e, Started) for e in evs))
        executor.stop(sleeper.id, grace_s=5)
        events = _poll(executor, lambda evs: any(isinstance(e, Exited) for e in evs))
        assert [e.exit_code for e in events if isinstance(e, Exited)] == [-15]
    finally:
        for job_id in list(executor.tracked()):
            executor.stop(job_id, grace_s=0)
        executor.detach()
        inventory.stop()
