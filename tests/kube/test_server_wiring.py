"""A real Jupyter server configured with ``c.SchedApp.executor = "kubernetes"``, end to end.

A real Kubernetes API server cannot run on this machine (none is installable, no Docker for
kind/k3d), so the cluster is ``fake_apiserver.FakeKubernetes``: an in-process HTTP server that
speaks the API's real REST JSON (lists, chunked watches, ``Status`` errors). Everything else is
real: a kubeconfig file on disk pointing at the fake's loopback URL, read by the official
``kubernetes`` client's ``load_kube_config``; a jupyter_server with the extension loaded
(pytest-jupyter); the REST API; the engine; the Kubernetes inventory watch and executor.

pytest-jupyter's fixtures are imported into this module (not tests/kube/conftest.py) so its
autouse event-loop fixtures apply to these tests only; the tests are synchronous and drive the
server's loop with ``jp_asyncio_loop.run_until_complete``.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from jupyter_server.serverapp import ServerApp
from pytest_jupyter.jupyter_server import *  # noqa: F403  (server fixtures, this module only)
from traitlets import TraitError

from jupyter_sched.errors import ExecutorError, SchedError, ValidationError
from jupyter_sched.executors.kubernetes import GPU_RESOURCE, object_name
from jupyter_sched.services import SchedulerService
from tests.web.conftest import api as api  # fixture reused (tests/conftest.py puts the root on sys.path)
from tests.web.conftest import sched_app as sched_app  # fixture reused
from tests.web.conftest import server_config, wait_for

from .fake_apiserver import FakeKubernetes
from .kube_builders import A100, GPU_TAINT, make_node

NS = "team-ml"
IMAGE = "python:3.12-slim"

Api = Callable[..., Awaitable[tuple[int, Any]]]


def write_kubeconfig(path: Path, server_url: str) -> Path:
    """A kubeconfig (as ``kubectl config view --raw`` writes it) whose current context is the fake."""
    path.write_text(json.dumps({  # JSON is YAML; the client's loader reads either
        "apiVersion": "v1", "kind": "Config", "preferences": {},
        "clusters": [{"name": "fake", "cluster": {"server": server_url}}],
        "users": [{"name": "tester", "user": {"token": "fake-token"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "tester", "namespace": NS}}],
        "current-context": "fake",
    }), encoding="utf-8")
    return path


def kube_settings(kubeconfig: Path, **kubernetes: Any) -> dict[str, Any]:
    """SchedApp settings of a server that runs its jobs on the (fake) cluster."""
    return {"executor": "kubernetes", "kubeconfig": str(kubeconfig), "inventory_source": "auto",
            "kubernetes": {"namespace": NS, "default_image": IMAGE, **kubernetes}}


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    """The fake cluster: g1 with 4 tainted A100s, g2 with 2."""
    server = FakeKubernetes()
    server.start()
    server.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    server.put("nodes", make_node("g2", gpus=2))
    yield server
    server.close()


@pytest.fixture
def jp_server_config(tmp_path: Path, fake: FakeKubernetes) -> dict[str, Any]:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
    return server_config(tmp_path, **kube_settings(kubeconfig))


def _k8s_job(fake: FakeKubernetes, job_id: str) -> dict[str, Any] | None:
    return fake.get("jobs", NS, object_name(job_id))


def test_the_inventory_is_the_clusters_gpu_nodes(sched_app: Any, api: Api,
                                                 jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    status, inventory = jp_asyncio_loop.run_until_complete(api("GET", "inventory"))
    assert status == 200
    assert inventory["source"] == "kubernetes" and inventory["simulated"] is False
    assert [(n["name"], len(n["gpus"])) for n in inventory["nodes"]] == [("g1", 4), ("g2", 2)]
    assert {g["model"] for g in inventory["gpus"]} == {A100}
    assert inventory["nodes"][0]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    status, config = jp_asyncio_loop.run_until_complete(api("GET", "config"))
    assert status == 200
    assert config["executors"] == ["kubernetes"] and config["features"]["kubernetes"] is True


def test_a_one_gpu_job_becomes_a_pinned_batch_job_that_runs_and_succeeds(
        sched_app: Any, api: Api, fake: FakeKubernetes, jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    run = jp_asyncio_loop.run_until_complete
    status, job = run(api("POST", "jobs", {"gpus": 1, "command": ["python", "-c", "print('hi')"], "name": "hi"}))
    assert status == 201, job
    job_id = job["id"]

    async def created() -> dict[str, Any] | None:
        return _k8s_job(fake, job_id)

    k8s_job = run(wait_for(created, timeout_s=20))
    status, job = run(api("GET", f"jobs/{job_id}"))
    assert status == 200 and job["allocation"] is not None
    node = job["allocation"]["node"]
    assert node in ("g1", "g2") and len(job["allocation"]["gpu_uuids"]) == 1

    assert k8s_job["apiVersion"] == "batch/v1" and k8s_job["kind"] == "Job"
    pod_spec = k8s_job["spec"]["template"]["spec"]
    (container,) = pod_spec["containers"]
    assert container["image"] == IMAGE
    assert container["resources"]["limits"][GPU_RESOURCE] == "1"
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert [f for t in terms for f in t.get("matchFields", [])] == [
        {"key": "metadata.name", "operator": "In", "values": [node]}]

    async def in_state(state: str) -> bool:
        _, body = await api("GET", f"jobs/{job_id}")
        return bool(body["state"] == state)

    fake.run_job(NS, object_name(job_id))  # the Job controller and kubelet start the pod on `node`
    run(wait_for(lambda: in_state("running"), timeout_s=20))
    assert fake.pods_of(NS, object_name(job_id))[0]["spec"]["nodeName"] == node
    fake.finish_job(NS, object_name(job_id), exit_code=0)
    run(wait_for(lambda: in_state("succeeded"), timeout_s=20))
    _, job = run(api("GET", f"jobs/{job_id}"))
    assert job["exit_code"] == 0


def test_a_bad_kubernetes_key_stops_loading_with_the_field(tmp_path: Path, fake: FakeKubernetes) -> None:
    from jupyter_sched.extension import SchedApp

    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
    with pytest.raises(TraitError) as caught:
        SchedApp(**kube_settings(kubeconfig, namspace="typo"))
    message = str(caught.value)
    assert "c.SchedApp.kubernetes.namspace" in message and "namespace" in message.split("Fix:")[1]


def test_a_bad_kubernetes_value_stops_the_server_with_the_field(
        tmp_path: Path, fake: FakeKubernetes, jp_configurable_serverapp: Callable[..., Any],
        capfd: pytest.CaptureFixture[str]) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", fake.url)
    config = server_config(tmp_path, **kube_settings(kubeconfig, queue_manager="slurm"))
    try:
        with pytest.raises(SystemExit):  # traitlets' "Bad config encountered during initialization"
            jp_configurable_serverapp(config=config)
    finally:
        ServerApp.clear_instance()  # the half-initialized server has nothing to clean up
    assert ("c.SchedApp.kubernetes.queue_manager = 'slurm': queue_manager must be none, kueue or volcano"
            in capfd.readouterr().err)


def test_stopping_the_service_stops_the_cluster_watches(tmp_path: Path, fake: FakeKubernetes,
                                                        jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                **kube_settings(write_kubeconfig(tmp_path / "kc", fake.url))}

    def watching() -> set[threading.Thread]:
        return {t for t in threading.enumerate() if t.name.startswith("reflector-") and t.is_alive()}

    earlier = watching()  # of other tests, if any
    service = SchedulerService.from_config(settings)
    assert {t.name for t in watching() - earlier} == {"reflector-nodes", "reflector-pods"}  # the inventory's

    async def life() -> None:
        await service.start()
        try:  # stopped however it ends: an engine left ticking runs on into later tests (s38-edges)
            service.submit({"gpus": 1, "command": ["true"]}, user="ivan")

            async def executor_watching() -> bool:  # the executor watches its Jobs from the first start on
                return "reflector-jobs" in {t.name for t in watching() - earlier}

            await wait_for(executor_watching, timeout_s=20)
        finally:
            await service.stop()

    jp_asyncio_loop.run_until_complete(life())
    assert not watching() - earlier


@dataclass(frozen=True)
class BadSetup:
    id: str
    kubeconfig: Callable[[Path, FakeKubernetes], str]   # (tmp dir, fake) -> kubeconfig setting
    want_error: type[SchedError]
    want_field: str
    settings: Mapping[str, Any] = field(default_factory=dict)


def _closed_port_url() -> str:
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


BAD_SETUPS = [
    BadSetup("no kubeconfig outside a pod and no ~/.kube/config", lambda tmp, fake: "",
             ValidationError, "kubeconfig"),
    BadSetup("a kubeconfig file that is not a kubeconfig",
             lambda tmp, fake: str(_write(tmp / "kc", "just: some yaml\n")), ValidationError, "kubeconfig"),
    BadSetup("an API server that refuses connections",
             lambda tmp, fake: str(write_kubeconfig(tmp / "kc", _closed_port_url())), ExecutorError, "kubeconfig"),
    BadSetup("a simulated inventory with the Kubernetes executor",
             lambda tmp, fake: str(write_kubeconfig(tmp / "kc", fake.url)), ValidationError, "inventory_source",
             {"inventory_source": "simulated"}),
    BadSetup("a Kubernetes inventory with the local executor",
             lambda tmp, fake: str(write_kubeconfig(tmp / "kc", fake.url)), ValidationError, "inventory_source",
             {"executor": "local", "inventory_source": "kubernetes"}),
    BadSetup("an unknown Kubernetes setting",
             lambda tmp, fake: str(write_kubeconfig(tmp / "kc", fake.url)), ValidationError, "kubernetes.nmespace",
             {"kubernetes": {"nmespace": "x"}}),
]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("case", BAD_SETUPS, ids=[c.id for c in BAD_SETUPS])
def test_a_cluster_that_cannot_be_used_fails_at_start_naming_the_field(
        case: BadSetup, tmp_path: Path, fake: FakeKubernetes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    settings = {"db_url": f"sqlite:///{tmp_path / 'sched.sqlite'}", "log_dir": str(tmp_path / "logs"),
                "executor": "kubernetes", "kubeconfig": case.kubeconfig(tmp_path, fake),
                "kubernetes": {"namespace": NS}, **case.settings}
    with pytest.raises(case.want_error) as caught:
        SchedulerService.from_config(settings)
    assert caught.value.field == case.want_field and caught.value.hint


def test_an_unreadable_kubeconfig_names_the_field(tmp_path: Path) -> None:
    from jupyter_sched.extension import SchedApp

    with pytest.raises(TraitError, match=r"c\.SchedApp\.kubeconfig.*no such file"):
        SchedApp(executor="kubernetes", kubeconfig=str(tmp_path / "missing"))

