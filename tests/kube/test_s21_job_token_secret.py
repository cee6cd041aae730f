"""Session 20's note: on Kubernetes a job's progress token (``JUPYTER_SCHED_JOB_TOKEN``) was a plain env
value in its Job's pod template, readable by whoever may ``get`` Jobs or Pods in the work namespace. It is
now in a per-job Secret (:mod:`jupyter_sched.executors.kubernetes.job_secret`): created before the Job,
taken with ``valueFrom.secretKeyRef``, owned by the job's objects (garbage-collected with them), deleted
when the Job cannot be created (and, since session 22, when the job ends: test_s22_job_secret_every_end.py).

Through ``fake_apiserver.FakeKubernetes``, a **double** of the Kubernetes API server (a real one cannot
run on this machine, test_integration.py): it speaks batch/v1, apps/v1 and v1 Secret wire format —
``stringData`` kept as base64 ``data``, merge patches, the garbage collector's owner rule — to the
official ``kubernetes`` client.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from jupyter_sched.errors import ExecutorError
from jupyter_sched.executors.base import Exited, Started
from jupyter_sched.executors.kubernetes import KubernetesExecutor
from jupyter_sched.executors.kubernetes.config import KubernetesConfig
from jupyter_sched.executors.kubernetes.job_secret import secret_name, token_secret
from jupyter_sched.model import Job, JobKind

from .fake_apiserver import FakeKubernetes
from .kube_builders import K8S_VERSION, allocation, make_job
from .test_gangs import PLACED, _gang
from .test_integration import NS, _executor, of, poll_until

URL = "http://jupyter-sched.hub.svc:10101/services/jupyter-sched/"


def _token(job: Job) -> str:
    return f"jsjob1.{job.id}.{job.attempts}.{'m' * 43}"


@pytest.fixture
def executor(api_client: client.ApiClient) -> Iterator[KubernetesExecutor]:
    ex = _executor(api_client)
    ex.job_env = lambda job: {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": _token(job)}
    yield ex
    ex.detach()


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return list(obj["spec"]["template"]["spec"]["containers"])


CASES: list[tuple[str, Callable[[], Job], Any, list[tuple[str, str]]]] = [
    ("one pod", lambda: make_job("j-one", gpus=1), allocation("g1"), [("jobs", "js-j-one")]),
    ("a gang", lambda: make_job("j-gang", gpus=1, workers=2), allocation(gpus=1, workers=("g1", "g2")),
     [("jobs", "js-j-gang")]),
    ("a gang of worker groups", lambda: _gang("j-het"), PLACED, [("jobs", "js-j-het"), ("jobs", "js-j-het-g1")]),
    ("an inference service", lambda: make_job("j-svc", kind=JobKind.INFERENCE, port=8000, command=("serve",)),
     allocation("g2"), [("deployments", "js-j-svc")]),
]


@pytest.mark.parametrize(("make", "placed", "owners"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_s21_k8s_job_token_is_in_a_secret_owned_by_the_job_never_in_its_pod_spec(
        fake: FakeKubernetes, executor: KubernetesExecutor, make: Callable[[], Job], placed: Any,
        owners: list[tuple[str, str]]) -> None:
    job = make()
    token = _token(job)
    executor.start(job, placed)
    name = secret_name(job.id)
    secret = fake.get("secrets", NS, name)
    assert secret is not None, "the token's Secret"
    assert base64.b64decode(secret["data"]["JUPYTER_SCHED_JOB_TOKEN"]).decode() == token
    assert secret["immutable"] is True and secret["type"] == "Opaque" and "stringData" not in secret
    assert secret["metadata"]["labels"]["jupyter-sched/job-id"] == job.id
    made = [fake.get(plural, NS, obj) for plural, obj in owners]
    assert all(made)
    refs = secret["metadata"]["ownerReferences"]
    assert {(r["kind"], r["name"], r["uid"]) for r in refs} == {
        (m["kind"], m["metadata"]["name"], m["metadata"]["uid"]) for m in made if m}  # every Job of a gang
    for obj in made:
        assert obj is not None
        assert token not in json.dumps(obj) and "jsjob1." not in json.dumps(obj), "no token in the spec"
        for container in _containers(obj):
            env = {e["name"]: e for e in container["env"]}
            assert env["JUPYTER_SCHED_URL"] == {"name": "JUPYTER_SCHED_URL", "value": URL}  # no secret: a value
            assert env["JUPYTER_SCHED_JOB_TOKEN"] == {"name": "JUPYTER_SCHED_JOB_TOKEN", "valueFrom": {
                "secretKeyRef": {"name": name, "key": "JUPYTER_SCHED_JOB_TOKEN"}}}
    # the Secret first (no pod starts without it), the job's objects after, then their ownership
    writes = [(method, path.split("?")[0].rsplit("/", 1)[-1]) for method, path in fake.requests if method != "GET"]
    assert writes[0] == ("POST", "secrets") and writes[-1] == ("PATCH", name), writes
    assert all(token.encode() not in body for path, body in fake.bodies if "/secrets" not in path)


def test_s21_k8s_the_secret_manifest_is_a_valid_v1_secret() -> None:
    job = make_job("j-valid")
    manifest = token_secret(job, NS, {"JUPYTER_SCHED_JOB_TOKEN": _token(job)}, KubernetesConfig(namespace=NS))
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    assert len(secret_name("x" * 128)) <= 253


def test_s21_k8s_the_secret_goes_with_its_job(fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    # deleted by the API's garbage collector when the finished Job is removed (its TTL) while no one watched
    job = make_job("j-ttl")
    executor.start(job, allocation("g1"))
    fake.run_job(NS, "js-j-ttl")
    fake.finish_job(NS, "js-j-ttl")
    assert fake.get("secrets", NS, "js-j-ttl-token") is not None  # the Job is still there: so is its Secret
    fake.handle_delete("jobs", NS, "js-j-ttl", "Background")  # ttlSecondsAfterFinished
    assert fake.get("secrets", NS, "js-j-ttl-token") is None
    # and by the executor as soon as it sees the job end (session 22: every end, owned or not —
    # test_s22_job_secret_every_end.py)
    executor.start(make_job("j-end"), allocation("g1"))
    fake.run_job(NS, "js-j-end")
    fake.finish_job(NS, "js-j-end")
    assert of(Exited, poll_until(executor, lambda evs: bool(of(Exited, evs))))
    assert fake.get("jobs", NS, "js-j-end") is not None and fake.get("secrets", NS, "js-j-end-token") is None
    # a gang of worker groups: kept while any group's Job exists
    executor.start(_gang("j-het"), PLACED)
    fake.handle_delete("jobs", NS, "js-j-het", "Background")
    assert fake.get("secrets", NS, "js-j-het-token") is not None
    fake.handle_delete("jobs", NS, "js-j-het-g1", "Background")
    assert fake.get("secrets", NS, "js-j-het-token") is None
    # cancelled: stop deletes it with the Job (also when it has no owner: a patch that was refused)
    executor.start(make_job("j-cancel"), allocation("g1"))
    fake.update("secrets", NS, "js-j-cancel-token", lambda s: s["metadata"].pop("ownerReferences"))
    fake.run_job(NS, "js-j-cancel")
    poll_until(executor, lambda evs: bool(of(Started, evs)))
    executor.stop("j-cancel", grace_s=30)
    assert fake.get("secrets", NS, "js-j-cancel-token") is None


def test_s21_k8s_a_job_that_cannot_be_created_leaves_no_secret(fake: FakeKubernetes,
                                                                executor: KubernetesExecutor) -> None:
    def refuse(plural: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]] | None:
        if plural != "jobs":
            return None
        return 422, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 422,
                     "reason": "Invalid", "message": 'Job.batch "js-j-no" is invalid: spec.template: Invalid value'}

    fake.create_hooks.append(refuse)
    with pytest.raises(ExecutorError, match="is invalid"):
        executor.start(make_job("j-no"), allocation("g1"))
    assert fake.get("secrets", NS, "js-j-no-token") is None
    assert ("secrets", NS, "js-j-no-token", "Background") in fake.deletions
    assert fake.objects["jobs"] == {} and fake.objects["services"] == {}


def test_s21_k8s_a_leftover_secret_of_the_job_is_replaced_and_a_strangers_refused(
        fake: FakeKubernetes, executor: KubernetesExecutor) -> None:
    # an earlier run's Secret (requeued: its token is of run 1, and immutable) is replaced by this run's
    first = make_job("j-again")
    executor.start(first, allocation("g1"))
    executor.stop("j-again", grace_s=0)
    fake.put("secrets", {"metadata": {"name": "js-j-again-token", "namespace": NS,
                                      "labels": {"jupyter-sched/job-id": "j-again"}},
                         "data": {"JUPYTER_SCHED_JOB_TOKEN": base64.b64encode(b"old").decode()}, "immutable": True})
    poll_until(executor, lambda evs: bool(of(Exited, evs)))
    second = replace(first, attempts=2)
    executor.start(second, allocation("g1"))
    secret = fake.get("secrets", NS, "js-j-again-token")
    assert secret is not None
    assert base64.b64decode(secret["data"]["JUPYTER_SCHED_JOB_TOKEN"]).decode() == _token(second)
    # a Secret of that name that is not the job's: nothing is created, nothing of it changed
    fake.put("secrets", {"metadata": {"name": "js-j-taken-token", "namespace": NS}, "data": {"k": "dg=="}})
    with pytest.raises(ExecutorError, match='secrets "js-j-taken-token" already exists'):
        executor.start(make_job("j-taken"), allocation("g1"))
    assert fake.get("secrets", NS, "js-j-taken-token")["data"] == {"k": "dg=="}  # type: ignore[index]
    assert fake.get("jobs", NS, "js-j-taken") is None
