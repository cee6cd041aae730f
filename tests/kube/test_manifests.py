"""Manifest builders: every kind of job becomes objects that pass the official schema (strict), with
correct quantities, GPU rules (case 019) and labels; building is a pure function."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.kubernetes import KubernetesConfig, QueueManager, make_manifests, validate_spec
from jupyter_sched.executors.kubernetes.manifests import (
    GPU_RESOURCE,
    make_deployment_manifest,
    make_job_manifest,
    object_name,
)
from jupyter_sched.executors.kubernetes.quantity import dns_label, label_value, parse_quantity
from jupyter_sched.model import Allocation, Job, JobKind, PriorityClass, spec_from_request

from .kube_builders import A100, K8S_VERSION, allocation, make_job, quantity_problems

IMAGES = ("pytorch:*", "python:*")  # the admin allow-list of these tests
PINNED = KubernetesConfig(namespace="team-ml", allowed_images=IMAGES)
KUEUE = KubernetesConfig(namespace="team-ml", queue_manager=QueueManager.KUEUE, allowed_images=IMAGES)
VOLCANO = KubernetesConfig(namespace="team-ml", queue_manager=QueueManager.VOLCANO, allowed_images=IMAGES)


@dataclass(frozen=True)
class Case:
    job: Job
    alloc: Allocation | None
    config: KubernetesConfig = PINNED
    products: tuple[str, ...] = ()
    want_kinds: tuple[str, ...] = ("Job",)
    want_gpu_key: str | None = GPU_RESOURCE
    want_gpu_value: str = "1"
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    pytest.param(Case(make_job("single", gpus=1), allocation("g1", 1), products=(A100,)),
                 id="a single-GPU job is one Job pinned to its node"),
    pytest.param(Case(make_job("multi", gpus=4, cpu_millis=16000, memory_mib=65536, time_limit_s=3600.5),
                      allocation("g1", 4), want_gpu_value="4"),
                 id="a multi-GPU job asks for 4 GPUs in requests and limits"),
    pytest.param(Case(make_job("mig", gpus=1, mig_profile="1g.10gb"), allocation("g1", 1),
                      want_gpu_key="nvidia.com/mig-1g.10gb"),
                 id="a MIG job asks for its MIG profile resource"),
    pytest.param(Case(make_job("gang", gpus=8, workers=3), allocation(gpus=8, workers=("g1", "g2", "g3")),
                      want_kinds=("Service", "Job"), want_gpu_value="8"),
                 id="a gang is a headless Service plus an Indexed Job"),
    pytest.param(Case(make_job("cpu", gpus=0, cpu_millis=500, memory_mib=512), allocation("c1", 0),
                      want_gpu_key=None),
                 id="CPU-only work has no GPU key at all"),
    pytest.param(Case(make_job("kueue", gpus=2, team="team-geo"), None, KUEUE, want_gpu_value="2"),
                 id="Kueue mode creates a suspended Job in the team's LocalQueue"),
    pytest.param(Case(make_job("volcano", gpus=2, workers=2), None, VOLCANO,
                      want_kinds=("Service", "PodGroup", "Job"), want_gpu_value="2"),
                 id="Volcano mode uses the volcano scheduler and a PodGroup for gangs"),
    pytest.param(Case(make_job("infer", gpus=1, kind=JobKind.INFERENCE, port=8000, command=("serve",)),
                      allocation("g1", 1), want_kinds=("Deployment", "Service")),
                 id="an inference service is a Deployment plus a Service"),
]


def _containers(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    return list(manifest["spec"]["template"]["spec"]["containers"])


def _validate(manifest: dict[str, Any]) -> None:
    if manifest["kind"] == "PodGroup":
        # A CRD: kubernetes-validate ships no schema for it; check its structure instead.
        assert manifest["apiVersion"] == "scheduling.volcano.sh/v1beta1"
        assert isinstance(manifest["spec"]["minMember"], int) and manifest["spec"]["minMember"] >= 1
        assert set(manifest["spec"]) <= {"minMember", "queue", "priorityClassName", "minResources"}
        return
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)


@pytest.mark.parametrize("case", CASES)
def test_every_manifest_kind_passes_the_schema_and_quantity_checks(case: Case) -> None:
    manifests = make_manifests(case.job, case.alloc, case.config, gpu_products=case.products)
    assert tuple(m["kind"] for m in manifests) == case.want_kinds
    for manifest in manifests:
        _validate(manifest)
        assert quantity_problems(manifest) == []
        assert manifest["metadata"]["namespace"] == case.config.namespace
        assert manifest["metadata"]["name"] == object_name(case.job.id)
        if manifest["kind"] in ("Job", "Deployment", "Service"):
            # The official client's models accept it and serialize it back unchanged.
            model = getattr(client, f"V1{manifest['kind']}").model_validate(manifest)
            assert client.ApiClient().sanitize_for_serialization(model) == manifest


@pytest.mark.parametrize("case", CASES)
def test_gpu_requests_equal_limits_and_only_gpu_work_tolerates_gpu_taints(case: Case) -> None:
    owner = next(m for m in make_manifests(case.job, case.alloc, case.config, gpu_products=case.products)
                 if m["kind"] in ("Job", "Deployment"))
    resources = _containers(owner)[0].get("resources", {})
    pod = owner["spec"]["template"]["spec"]
    tolerated = {t["key"] for t in pod.get("tolerations", [])}
    if case.want_gpu_key is None:
        assert "nvidia.com" not in json.dumps(owner)
        assert "nvidia.com/gpu" not in tolerated
    else:
        assert resources["limits"][case.want_gpu_key] == case.want_gpu_value
        assert resources["requests"][case.want_gpu_key] == case.want_gpu_value
        assert [k for k in resources["limits"] if k.startswith("nvidia.com/")] == [case.want_gpu_key]
        assert "nvidia.com/gpu" in tolerated


def test_a_job_is_pinned_to_the_nodes_our_placement_chose() -> None:
    manifest = make_job_manifest(make_job("gang", gpus=8, workers=3), allocation(gpus=8, workers=("g1", "g2", "g1")),
                                 PINNED)
    term = manifest["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term["matchFields"] == [{"key": "metadata.name", "operator": "In", "values": ["g1", "g2"]}]


def test_a_gang_is_an_indexed_job_with_rendezvous_environment() -> None:
    service, job = make_manifests(make_job("gang", gpus=8, workers=3), allocation(gpus=8, workers=("a", "b", "c")),
                                  PINNED)
    spec = job["spec"]
    assert (spec["completionMode"], spec["completions"], spec["parallelism"]) == ("Indexed", 3, 3)
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"] == {"jupyter-sched/job-id": "gang"}
    pod = spec["template"]["spec"]
    assert pod["subdomain"] == service["metadata"]["name"]
    env = {e["name"]: e for e in pod["containers"][0]["env"]}
    assert env["WORLD_SIZE"]["value"] == "3"
    assert env["MASTER_ADDR"]["value"] == "js-gang-0.js-gang"
    assert "job-completion-index" in env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"]


def test_job_fields_come_from_the_spec_and_the_config() -> None:
    job = make_job("fields", gpus=2, priority=PriorityClass.HIGH, time_limit_s=90.2, env={"SEED": "1"},
                   working_dir="/work", command=("python", "-m", "train"), tolerations=("dedicated=ml",))
    config = KubernetesConfig(namespace="team-ml", preemption_grace_s=45, ttl_seconds_after_finished=600,
                              default_image="unused:1", service_account="runner", allowed_images=IMAGES)
    manifest = make_job_manifest(job, allocation("g1", 2), config, gpu_products=(A100,))
    spec = manifest["spec"]
    pod = spec["template"]["spec"]
    container = pod["containers"][0]
    assert spec["activeDeadlineSeconds"] == 91
    assert spec["ttlSecondsAfterFinished"] == 600
    assert spec["backoffLimit"] == 0
    assert pod["terminationGracePeriodSeconds"] == 45
    assert pod["priorityClassName"] == "jupyter-sched-high"
    assert pod["restartPolicy"] == "Never"
    assert pod["serviceAccountName"] == "runner"
    assert pod["nodeSelector"] == {"nvidia.com/gpu.product": A100}
    assert {"key": "dedicated", "operator": "Equal", "value": "ml"} in pod["tolerations"]
    assert container["image"] == "pytorch:2.3"
    assert container["command"] == ["python", "-m", "train"]
    assert container["workingDir"] == "/work"
    assert {"name": "SEED", "value": "1"} in container["env"]
    assert {"name": "JUPYTER_SCHED_JOB_ID", "value": "fields"} in container["env"]
    assert manifest["metadata"]["annotations"]["jupyter-sched/gpu-uuids"] == "k8s-g1-gpu0,k8s-g1-gpu1"


def test_several_acceptable_products_become_a_node_affinity() -> None:
    manifest = make_job_manifest(make_job("m"), None, KUEUE, gpu_products=(A100, "NVIDIA-A100-SXM4-40GB"))
    pod = manifest["spec"]["template"]["spec"]
    term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
    assert term == {"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In",
                                          "values": [A100, "NVIDIA-A100-SXM4-40GB"]}]}
    assert "nodeSelector" not in pod
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)


def test_kueue_mode_suspends_and_labels_and_does_not_pin() -> None:
    manifest = make_job_manifest(make_job("k", team="Team Geo!"), allocation("g1"), KUEUE)
    assert manifest["spec"]["suspend"] is True
    assert manifest["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == dns_label("Team Geo!")
    assert "affinity" not in manifest["spec"]["template"]["spec"]


def test_volcano_mode_names_the_scheduler_queue_and_pod_group() -> None:
    manifests = make_manifests(make_job("v", gpus=2, workers=4, team="team-geo"), None, VOLCANO)
    podgroup = next(m for m in manifests if m["kind"] == "PodGroup")
    job = manifests[-1]
    pod = job["spec"]["template"]
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == podgroup["metadata"]["name"]
    assert podgroup["spec"]["minMember"] == 4
    assert podgroup["spec"]["queue"] == "team-geo"
    assert podgroup["spec"]["minResources"] == {"nvidia.com/gpu": "8"}
    single = make_job_manifest(make_job("v1", gpus=1), None, VOLCANO)
    assert "scheduling.k8s.io/group-name" not in single["spec"]["template"]["metadata"]["annotations"]


def test_inference_deployment_has_a_readiness_probe_on_its_port() -> None:
    job = make_job("svc", gpus=1, kind=JobKind.INFERENCE, port=8080, command=("serve",))
    deployment, service = make_manifests(job, allocation("g1"), PINNED)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["readinessProbe"]["tcpSocket"]["port"] == 8080
    assert container["ports"][0]["containerPort"] == 8080
    assert deployment["spec"]["template"]["spec"]["restartPolicy"] == "Always"
    assert deployment["spec"]["selector"]["matchLabels"] == service["spec"]["selector"]
    assert service["spec"]["ports"][0]["targetPort"] == 8080
    with pytest.raises(ValidationError):
        make_deployment_manifest(make_job("t"), allocation("g1"), PINNED)


def test_labels_are_sanitised_and_namespaces_can_be_per_user() -> None:
    config = KubernetesConfig(namespace_per_user=True, allowed_images=IMAGES)
    job = make_job("J_42", user="Alice.Smith@example.com", team="ml/vision")
    manifest = make_job_manifest(job, allocation("g1"), config)
    labels = manifest["metadata"]["labels"]
    assert labels["jupyter-sched/user"] == label_value("Alice.Smith@example.com")
    assert labels["jupyter-sched/user"].startswith("Alice.Smith-example.com-")
    assert labels["jupyter-sched/team"].startswith("ml-vision-")
    assert manifest["metadata"]["annotations"]["jupyter-sched/user"] == "Alice.Smith@example.com"
    assert manifest["metadata"]["namespace"] == dns_label("Alice.Smith@example.com", prefix="jsched-")
    assert manifest["metadata"]["name"].startswith("js-j-42-")
    assert label_value("alice@x") != label_value("alice-x")
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    assert quantity_problems(manifest) == []


BAD_SPECS = [
    pytest.param({"gpus": 0.5}, "gpus must be a whole number (got 0.5); request a MIG profile for a fraction of a GPU",
                 id="half a GPU is refused with a MIG hint"),
    pytest.param({"gpus": -1}, "gpus must be >= 0 (got -1)", id="negative GPUs are refused"),
    pytest.param({"gpus": "two"}, 'gpus must be an integer (got "two")', id="GPUs as a word are refused"),
]


@pytest.mark.parametrize(("body", "message"), BAD_SPECS)
def test_bad_gpu_counts_are_refused_before_building(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as err:
        spec = spec_from_request({**body, "command": ["x"], "image": "python:3.12"}, user="u")
        validate_spec(spec, PINNED)
    assert err.value.message == message
    assert err.value.field == "gpus"


def test_building_is_pure_and_does_not_touch_its_inputs() -> None:
    cpu = make_job("j-cpu", gpus=0)
    gpu = make_job("j-gpu", gpus=1)
    before = json.dumps(make_job_manifest(cpu, allocation("c1", 0), PINNED))
    config_copy = copy.deepcopy(PINNED)
    first = make_job_manifest(gpu, allocation("g1"), PINNED, gpu_products=(A100,))
    first["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] = "7"
    assert json.dumps(make_job_manifest(cpu, allocation("c1", 0), PINNED)) == before
    assert PINNED == config_copy


def test_a_job_without_image_or_allocation_is_refused() -> None:
    with pytest.raises(ValidationError) as err:
        make_job_manifest(make_job("x", image=None), allocation("g1"), PINNED)
    assert err.value.field == "image"
    with pytest.raises(ValidationError) as err:
        make_job_manifest(make_job("x"), None, PINNED)
    assert err.value.field == "allocation"


QUANTITIES = [
    pytest.param("500m", "0.5", id="millicores"),
    pytest.param("16Gi", str(16 * 1024**3), id="binary suffix"),
    pytest.param("1e3", "1000", id="exponent"),
    pytest.param("4", "4", id="plain number"),
]


@pytest.mark.parametrize(("text", "value"), QUANTITIES)
def test_quantities_parse(text: str, value: str) -> None:
    assert parse_quantity(text) == parse_quantity(value)


def test_a_word_is_not_a_quantity() -> None:
    with pytest.raises(ValidationError):
        parse_quantity("two")
    assert quantity_problems({"resources": {"limits": {"nvidia.com/gpu": "two"}}}) != []
    assert quantity_problems({"resources": {"limits": {"nvidia.com/gpu": "1"},
                                            "requests": {"nvidia.com/gpu": "2"}}}) != []


def test_config_from_plain_settings() -> None:
    config = KubernetesConfig.from_dict({"namespace": "ml", "queue_manager": "kueue", "gpu_taint_keys": ["a"]})
    assert (config.namespace, config.queue_manager, config.gpu_taint_keys) == ("ml", QueueManager.KUEUE, ("a",))
    for raw, want_field in (({"colour": 1}, "kubernetes.colour"), ({"queue_manager": "slurm"}, "kubernetes.queue_manager"),
                       ({"namespace": "Not A Label"}, "kubernetes.namespace")):
        with pytest.raises(ValidationError) as err:
            KubernetesConfig.from_dict(raw)
        assert err.value.field == want_field


def test_public_surface() -> None:
    import jupyter_sched.executors.kubernetes as package

    assert sorted(package.__all__) == sorted([
        "GPU_RESOURCE", "MIG_RESOURCE_PREFIX", "KubernetesConfig", "KubernetesExecutor", "QueueManager",
        "make_deployment_manifest", "make_headless_service", "make_inference_service", "make_job_manifest",
        "make_manifests", "make_podgroup_manifest", "object_name", "validate_spec"])
    for name in package.__all__:
        assert getattr(package, name) is not None
