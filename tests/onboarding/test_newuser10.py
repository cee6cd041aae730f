"""New user 10's findings (/work/coord/notes/newuser10.md), each its own test: a real embedded server
(simulated GPUs) and its REST API; the Kubernetes pod manifest as the executor builds it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from jupyter_sched.executors.kubernetes import KubernetesConfig
from jupyter_sched.executors.kubernetes.manifests import make_job_manifest
from tests.kube.kube_builders import A100, allocation, make_job
from tests.onboarding.test_cli_firsthour import api, clear
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("nu10"), users=USERS, admin_users=["boss"],
                               stop_grace_s=30, simulated_gpus=2)
    try:
        yield srv
    finally:
        clear(srv)
        srv.kill()


@pytest.mark.parametrize("key", ["NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "NVIDIA_REQUIRE_CUDA",
                                 "NVIDIA_MIG_CONFIG_DEVICES"])
def test_newuser10_n4_env_may_not_choose_the_gpus_a_container_sees(server: EmbeddedServer, key: str) -> None:
    """env NVIDIA_VISIBLE_DEVICES=all on a 0-GPU job was 201, silently, and went into the pod's env,
    where the NVIDIA container runtime can expose every GPU of the node: refused, naming
    ``env.<KEY>``, audited; a variable CUDA libraries read (NVIDIA_TF32_OVERRIDE) stays accepted."""
    ann, boss = api(server, "tok-ann"), api(server, "tok-boss")
    for route in ("jobs", "dryrun"):
        refused = ann.post(route, json={"gpus": 0, "command": ["true"], "env": {"SEED": "1", key: "all"}})
        assert refused.status_code == 400, refused.text
        error = refused.json()["error"]
        assert error["field"] == f"env.{key}" and "container runtime" in error["message"] and error["hint"], error
    deadline = time.monotonic() + 15
    while not any((r.get("details") or {}).get("field") == f"env.{key}"
                  for r in boss.get("audit", params={"user": "ann", "limit": 1000}).json()):
        assert time.monotonic() < deadline, "the refusal was not audited"
        time.sleep(0.2)
    fine = ann.post("jobs", json={"gpus": 0, "command": ["true"], "env": {"NVIDIA_TF32_OVERRIDE": "0"}})
    assert fine.status_code == 201, fine.text
    clear(server)


def test_newuser10_n4_a_stored_job_never_passes_the_runtimes_variables_into_its_pod() -> None:
    """Defence in depth: a job stored before the refusal carries the variable; its pod does not."""
    job = make_job("old", gpus=0, env={"SEED": "1", "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_REQUIRE_CUDA": "x"})
    config = KubernetesConfig(namespace="team-ml", default_image="pytorch:2.3", allowed_images=("pytorch:2.3",))
    manifest = make_job_manifest(job, allocation("g1", 0), config, gpu_products=(A100,))
    names = {e["name"] for e in manifest["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert "SEED" in names and not {"NVIDIA_VISIBLE_DEVICES", "NVIDIA_REQUIRE_CUDA"} & names, names
