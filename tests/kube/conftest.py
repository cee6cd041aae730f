"""Fixtures: the in-process fake API server and the official client pointed at it.

A real Kubernetes API server cannot run on the development and CI machines (none is
installable, no Docker); see ``fake_apiserver.py`` for what the double implements.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from kubernetes import client

from jupyter_sched.inventory.kubernetes import KubernetesInventory

from .fake_apiserver import FakeKubernetes
from .kube_builders import GPU_TAINT, make_node


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    server = FakeKubernetes()
    server.start()
    yield server
    server.close()


@pytest.fixture
def api_client(fake: FakeKubernetes) -> Iterator[client.ApiClient]:
    configuration = client.Configuration()
    configuration.host = fake.url  # loopback only
    api = client.ApiClient(configuration)
    yield api
    api.close()


@pytest.fixture
def inventory(fake: FakeKubernetes, api_client: client.ApiClient) -> Iterator[KubernetesInventory]:
    """A watching Kubernetes inventory over the API double: g1 (4 GPUs, tainted for GPU work) and g2 (4 GPUs)."""
    fake.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    fake.put("nodes", make_node("g2", gpus=4))
    watcher = KubernetesInventory(client.CoreV1Api(api_client), watch_timeout_s=30)
    watcher.start()
    yield watcher
    watcher.stop()
