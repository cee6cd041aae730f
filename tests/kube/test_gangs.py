"""Heterogeneous gangs on Kubernetes (issue 16, case 024): one Indexed Job per worker group under
one headless Service, each group asking for its own GPUs on the nodes our placement gave it,
ranked over the whole gang; watched and stopped as one job, all-or-nothing.

The executor half runs against ``fake_apiserver.FakeKubernetes`` (the API's real REST JSON; a
real API server cannot run on this machine — see test_integration.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from kubernetes import client

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.base import Exited, Started
from jupyter_sched.executors.kubernetes import KubernetesConfig, KubernetesExecutor, QueueManager
from jupyter_sched.executors.kubernetes.manifests import make_manifests
from jupyter_sched.model import Allocation, Job, JobState, ResourceRequest, WorkerGroup

from .fake_apiserver import FakeKubernetes
from .kube_builders import make_job, quantity_problems
from .test_integration import NS, of, poll_until, wait_for

# a 1-GPU launcher on g1 and two 4-GPU workers, one on g1 and one on g2
GROUPS = (WorkerGroup("launcher", 1, 1), WorkerGroup("worker", 4, 2))
PLACED = Allocation("g1", ("k8s-g1-gpu0",), workers=(
    ("g1", ("k8s-g1-gpu0",)), ("g1", tuple(f"k8s-g1-gpu{i}" for i in range(1, 5))),
    ("g2", tuple(f"k8s-g2-gpu{i}" for i in range(4)))))


def _gang(job_id: str = "j-het") -> Job:
    job = make_job(job_id)
    return replace(job, spec=replace(job.spec, resources=ResourceRequest.of_groups(GROUPS)))


def _config(**kw: Any) -> KubernetesConfig:
    return KubernetesConfig(namespace=NS, allowed_images=("pytorch:*",), **kw)


def _env(manifest: dict[str, Any]) -> dict[str, Any]:
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def _nodes(manifest: dict[str, Any]) -> list[str]:
    terms = manifest["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return [v for t in terms for f in t.get("matchFields", ()) for v in f["values"]]


def test_case_024_a_heterogeneous_gang_becomes_one_indexed_job_per_group() -> None:
    service, launcher, workers = make_manifests(_gang(), PLACED, _config())
    assert (service["kind"], service["metadata"]["name"]) == ("Service", "js-j-het")
    assert [(m["kind"], m["metadata"]["name"]) for m in (launcher, workers)] == [("Job", "js-j-het"),
                                                                                  ("Job", "js-j-het-g1")]
    for manifest, size, gpus, nodes in ((launcher, 1, "1", ["g1"]), (workers, 2, "4", ["g1", "g2"])):
        spec = manifest["spec"]
        assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", size, size)
        pod = spec["template"]["spec"]
        assert pod["subdomain"] == "js-j-het"
        assert pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == gpus
        assert _nodes(manifest) == nodes  # each group pinned to the nodes placement gave it
        assert quantity_problems(manifest) == []
    index = {"fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}
    assert _env(launcher) == {
        "JUPYTER_SCHED_JOB_ID": "j-het", "USER": "alice", "LOGNAME": "alice", "WORLD_SIZE": "3", "MASTER_ADDR": "js-j-het-0.js-j-het",
        "MASTER_PORT": "29500", "JUPYTER_SCHED_GROUP": "launcher", "JUPYTER_SCHED_GROUP_SIZE": "1",
        "JUPYTER_SCHED_GROUP_RANK": index, "JUPYTER_SCHED_RANK_OFFSET": "0", "RANK": index}
    worker_env = _env(workers)
    assert "RANK" not in worker_env and worker_env["JUPYTER_SCHED_RANK_OFFSET"] == "1"
    assert worker_env["WORLD_SIZE"] == "3" and worker_env["JUPYTER_SCHED_GROUP"] == "worker"
    assert workers["spec"]["template"]["spec"]["containers"][0]["command"] == [
        "/bin/sh", "-c", 'export RANK=$((JUPYTER_SCHED_RANK_OFFSET + JUPYTER_SCHED_GROUP_RANK)); exec "$@"',
        "sh", "python", "train.py"]
    assert launcher["spec"]["template"]["spec"]["containers"][0]["command"] == ["python", "train.py"]


def test_volcano_pod_group_counts_every_group_s_own_gpus() -> None:
    podgroup = next(m for m in make_manifests(_gang(), None, _config(queue_manager=QueueManager.VOLCANO))
                    if m["kind"] == "PodGroup")
    assert podgroup["spec"]["minMember"] == 3
    assert podgroup["spec"]["minResources"] == {"nvidia.com/gpu": "9"}  # 1 + 2 x 4, not 3 x 4


def test_kueue_cannot_keep_a_gang_of_groups_whole_so_it_is_refused_naming_groups() -> None:
    with pytest.raises(ValidationError) as info:
        make_manifests(_gang(), None, _config(queue_manager=QueueManager.KUEUE))
    assert info.value.field == "groups"


def _complete(executor: KubernetesExecutor, name: str) -> bool:
    job = executor._cached("jobs", NS, name)
    return job is not None and any(c.get("type") == "Complete" for c in (job.get("status") or {}).get("conditions", []))


@pytest.fixture
def executor(api_client: client.ApiClient) -> Iterator[KubernetesExecutor]:
    ex = KubernetesExecutor(api_client, _config(), watch_timeout_s=30)
    yield ex
    ex.detach()


def test_a_gang_of_groups_starts_and_succeeds_as_one_job(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    handle = executor.start(_gang("j-ok"), PLACED)
    assert handle.data["members"] == ["js-j-ok", "js-j-ok-g1"]
    fake.run_job(NS, "js-j-ok")
    fake.run_job(NS, "js-j-ok-g1")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    fake.finish_job(NS, "js-j-ok", exit_code=0)
    wait_for(lambda: _complete(executor, "js-j-ok"))  # the executor has seen the launcher end
    assert of(Exited, executor.poll()) == []  # the workers still run: the gang has not ended
    fake.finish_job(NS, "js-j-ok-g1", exit_code=0)
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.exit_code == 0


def test_a_failing_group_fails_the_gang_and_the_other_groups_are_deleted(fake: FakeKubernetes,
                                                                         executor: KubernetesExecutor) -> None:
    executor.start(_gang("j-fail"), PLACED)
    fake.run_job(NS, "js-j-fail")
    fake.run_job(NS, "js-j-fail-g1")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    fake.finish_job(NS, "js-j-fail-g1", exit_code=3)
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.exit_code == 3 and "js-j-fail-g1" in exited.message
    assert ("jobs", NS, "js-j-fail", "Background") in fake.deletions  # the launcher went too
    assert fake.pods_of(NS, "js-j-fail") == [] and fake.pods_of(NS, "js-j-fail-g1") == []


def test_stopping_a_gang_of_groups_deletes_every_group_s_job(fake: FakeKubernetes,
                                                             executor: KubernetesExecutor) -> None:
    executor.start(_gang("j-stop"), PLACED)
    fake.run_job(NS, "js-j-stop")
    fake.run_job(NS, "js-j-stop-g1")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    executor.stop("j-stop", grace_s=30)
    (exited,) = of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert exited.exit_code == -15
    assert fake.get("jobs", NS, "js-j-stop") is None and fake.get("jobs", NS, "js-j-stop-g1") is None
    assert fake.get("services", NS, "js-j-stop") is None


def test_a_gang_of_groups_is_adopted_whole_even_without_its_handle(fake: FakeKubernetes,
                                                                  api_client: client.ApiClient) -> None:
    first = KubernetesExecutor(api_client, _config(), watch_timeout_s=30)
    job = _gang("j-adopt")
    first.start(job, PLACED)
    first.detach()  # the server restarts before the handle was persisted
    fake.run_job(NS, "js-j-adopt")
    fake.run_job(NS, "js-j-adopt-g1")
    second = KubernetesExecutor(api_client, _config(), watch_timeout_s=30)
    try:
        assert second.adopt(replace(job, state=JobState.RUNNING), None) is None
        fake.finish_job(NS, "js-j-adopt", exit_code=0)
        wait_for(lambda: _complete(second, "js-j-adopt"))
        assert of(Exited, second.poll()) == []  # the worker group still runs: the gang has not ended
        fake.finish_job(NS, "js-j-adopt-g1", exit_code=0)
        (exited,) = of(Exited, poll_until(second, lambda evs: bool(of(Exited, evs))))
        assert exited.exit_code == 0
    finally:
        second.detach()
