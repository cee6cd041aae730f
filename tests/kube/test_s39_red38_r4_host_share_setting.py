"""red38 R4, the rest: a GPU node's CPUs and host memory are split among its GPUs (placement/host_share.py), and
there was no setting to turn that off. With the Kubernetes executor every node carries allocatable cpu/memory, so on
a cluster of GPU nodes only, a 0-GPU job asking for ``cpu`` was refused, and its words named no way out for an admin.
Now ``c.SchedApp.gpu_node_host_share`` (default True) turns the split off, and the refusal names that setting and the
other way (a node without GPUs in the inventory).

A real Jupyter server configured with ``c.SchedApp.executor = "kubernetes"`` (a kubeconfig file read by the official
client's ``load_kube_config``, the REST API, the engine, the Kubernetes inventory watch and executor). The cluster is
``fake_apiserver.FakeKubernetes``, the tests/kube double that speaks the API's real REST JSON (a real API server
cannot run on this machine): two GPU nodes, g1 (4 GPUs) and g2 (2 GPUs), each with 63500m allocatable cpu.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (server fixtures, this module only)

from jupyter_sched.executors.kubernetes import object_name
from tests.web.conftest import api as api  # fixture reused
from tests.web.conftest import sched_app as sched_app  # fixture reused
from tests.web.conftest import server_config, wait_for

from .fake_apiserver import FakeKubernetes
from .kube_builders import GPU_TAINT, make_node
from .test_server_wiring import NS, Api, kube_settings, write_kubeconfig

SETTING = "c.SchedApp.gpu_node_host_share"
CPU_JOB = {"gpus": 0, "cpu": 4, "command": ["python", "-c", "print('rows')"], "name": "etl"}


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    """GPU nodes only (each with allocatable cpu/memory, as every Kubernetes node has)."""
    server = FakeKubernetes()
    server.start()
    server.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    server.put("nodes", make_node("g2", gpus=2))
    yield server
    server.close()


@pytest.fixture(params=[None, False], ids=["the default (not set)", "set False"])
def host_share(request: pytest.FixtureRequest) -> bool | None:
    return request.param  # type: ignore[no-any-return]


@pytest.fixture  # type: ignore[no-redef]  # pytest-jupyter's, replaced for this module
def jp_server_config(tmp_path: Path, fake: FakeKubernetes, host_share: bool | None) -> dict[str, Any]:
    settings = kube_settings(write_kubeconfig(tmp_path / "kubeconfig", fake.url))
    if host_share is not None:
        settings["gpu_node_host_share"] = host_share
    return server_config(tmp_path, **settings)


def test_red38_r4_a_cpu_job_on_gpu_nodes_only_follows_gpu_node_host_share(
        sched_app: Any, api: Api, fake: FakeKubernetes, host_share: bool | None,
        jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    run = jp_asyncio_loop.run_until_complete
    status, body = run(api("POST", "jobs", dict(CPU_JOB)))
    if host_share is None:  # on by default: refused at submit, naming the field, the setting and the other way
        assert status == 422, body
        error = body["error"]
        assert error["field"] == "cpu", error
        assert "a job without GPUs reserves no CPU or host memory on a GPU node" in error["message"], error
        hint = error["hint"]
        assert f"set {SETTING} = False to turn the split off" in hint, hint
        assert "add a node without GPUs to the inventory" in hint, hint
        assert "ask for at least " in hint and " GPU" in hint, hint  # as many as the part needs (newuser39 n9)
        _, jobs = run(api("GET", "jobs"))
        assert jobs == [], "the refused submit stored nothing"
        return
    assert status == 201, body  # off: it reserves 4 CPUs of a GPU node
    job_id = body["id"]

    async def created() -> dict[str, Any] | None:
        return fake.get("jobs", NS, object_name(job_id))

    k8s_job = run(wait_for(created, timeout_s=20))
    (container,) = k8s_job["spec"]["template"]["spec"]["containers"]
    assert container["resources"]["requests"]["cpu"] in ("4", "4000m"), container["resources"]
    assert "nvidia.com/gpu" not in container["resources"].get("limits", {}), container["resources"]
