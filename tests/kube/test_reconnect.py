"""Watches that reconnect back off and say so (issue 17 item 5).

Against ``fake_apiserver.FakeKubernetes`` (a real API server cannot run here), through the
official client. ``stale_lists`` makes the fake answer every LIST with a version it has already
compacted, so each watch fails with 410 Gone at once — the server compacting faster than the
client relists. Before the fix the reflector relisted in a tight loop (63 LISTs in 3 s).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.engine import SchedulerService
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, object_name
from jupyter_sched.executors.kubernetes.reflector import Reflector
from jupyter_sched.inventory.kubernetes import KubernetesInventory
from jupyter_sched.store import Store, sqlite_url

from .fake_apiserver import FakeKubernetes
from .kube_builders import GPU_TAINT, make_node

NS = "team-ml"


def wait_until(check: Callable[[], Any], what: str, timeout_s: float = 30.0, tick: Callable[[], Any] | None = None) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if tick is not None:
            tick()
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_an_immediately_stale_relist_backs_off_with_growing_gaps(fake: FakeKubernetes,
                                                                  api_client: client.ApiClient) -> None:
    fake.put("nodes", make_node("g1", gpus=4))
    lists: list[float] = []
    core = client.CoreV1Api(api_client)

    def list_nodes(**kwargs: Any) -> Any:
        if not kwargs.get("watch"):
            lists.append(time.monotonic())
        return core.list_node(**kwargs)

    # the production schedule (1 s doubling to 60 s) scaled by 1/10 so the test takes seconds
    reflector = Reflector(list_nodes, name="nodes", watch_timeout_s=30, retry_s=0.1, max_retry_s=6.0,
                          rng=lambda: 0.0)
    reflector.start()
    try:
        fake.stale_lists = True
        fake.compact()
        fake.drop_watches()
        wait_until(lambda: reflector.reconnecting is not None and reflector.reconnecting.attempt >= 3, "a few retries")
        state = reflector.reconnecting
        assert state is not None and "reconnecting to the Kubernetes API (nodes watch) (attempt" in state.message
        time.sleep(2.0)
        window = lists[1:]  # the LISTs after the first (start)
        gaps = [b - a for a, b in itertools.pairwise(window)]
        # 1 relist at once, then waits of 0.1, 0.2, 0.4, 0.8, 1.6 s …: ≤ 8 LISTs in these ~3.5 s
        assert 3 <= len(window) <= 8, (len(window), gaps)
        assert all(later >= earlier * 1.5 for earlier, later in itertools.pairwise(gaps[1:])), gaps  # growing
        fake.stale_lists = False
        fake.put("nodes", make_node("g2", gpus=4))  # the server moves past its compaction point
        wait_until(lambda: reflector.reconnecting is None, "the watch to be back", timeout_s=20)
        wait_until(lambda: reflector.get("g2") is not None, "the change to be seen")
    finally:
        reflector.stop()


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


def test_a_running_job_shows_the_reconnecting_reason_until_its_watch_is_back(
        tmp_path: Path, fake: FakeKubernetes, cluster: tuple[KubernetesExecutor, Any]) -> None:
    executor, inventory = cluster
    svc = SchedulerService(store=Store(sqlite_url(tmp_path / "s.sqlite")), inventory=inventory, executor=executor,
                           cycle_interval_s=0.0)
    job = svc.submit({"command": ["python", "train.py"], "gpus": 1}, user="ana")
    wait_until(lambda: fake.get("jobs", NS, object_name(job["id"])), "the Job object", tick=svc.tick)
    fake.run_job(NS, object_name(job["id"]), node="g1")
    wait_until(lambda: svc.get_job(job["id"], user="ana")["message"] == "running", "running", tick=svc.tick)
    for reflector in (executor._reflectors or {}).values():  # scaled backoff: seconds, not minutes
        reflector.backoff = type(reflector.backoff)(base_s=0.1, cap_s=1.0, jitter=0.0)
    fake.stale_lists = True
    fake.compact()
    fake.drop_watches()
    message = wait_until(lambda: (m := svc.get_job(job["id"], user="ana")["message"]).startswith("reconnecting") and m,
                         "the reconnecting reason", tick=svc.tick)
    assert "reconnecting to the Kubernetes API (" in message and "watch) (attempt " in message and "next in" in message
    assert svc.get_job(job["id"], user="ana")["state"] == "running"  # the work is not lost for it
    fake.stale_lists = False
    fake.put("nodes", make_node("g2", gpus=4))  # the server moves past its compaction point
    wait_until(lambda: svc.get_job(job["id"], user="ana")["message"] == "running", "the watch to be back",
               tick=svc.tick)
