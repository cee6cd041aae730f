"""Job pods are hardened (DESIGN, *Who runs it*): non-root with the owner's ids where the user mapping
gives them, no privilege escalation, no capabilities, no service-account token, RuntimeDefault
seccomp, admin-allowed images only; carried cells and notebooks arrive as read-only files; the
admin's volumes (the user's home) are mounted. Every manifest still passes kubernetes-validate strict
and the Pod Security "restricted" rules that server/namespace.yaml enforces."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import kubernetes_validate
import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.kubernetes import KubernetesConfig, make_manifests
from jupyter_sched.executors.kubernetes.manifests import CARRIED_DIR, MAX_CARRIED_BYTES
from jupyter_sched.executors.runas import AccountMapping, RunAs
from jupyter_sched.model import JobKind
from jupyter_sched.userfiles import START_FOLDER_RUNNER

from .kube_builders import K8S_VERSION, allocation, make_job

HOME = {"name": "home", "persistentVolumeClaim": {"claimName": "claim-{user}"}}
CONFIG = KubernetesConfig(namespace="team-ml", default_image="python:3.12", allowed_images=("registry.example.org/ml/*",),
                          volumes=(HOME,), volume_mounts=({"name": "home", "mountPath": "/home/jovyan"},),
                          home_mount_path="/home/jovyan")
ALICE = RunAs(user="alice", uid=1001, gid=1001)


def pods(manifests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m["spec"]["template"] for m in manifests if m["kind"] in ("Job", "Deployment")]


def restricted_problems(pod: dict[str, Any]) -> list[str]:
    """The Pod Security Standards "restricted" checks a pod template can fail (kubernetes.io/docs/concepts/
    security/pod-security-standards), as the admission controller applies them."""
    spec, problems = pod["spec"], []
    pod_ctx = spec.get("securityContext", {})
    allowed_volumes = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                       "projected", "secret"}
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= allowed_volumes:
            problems.append(f"volume {volume['name']} uses {sorted(kinds)}")
    for c in spec["containers"]:
        ctx = c.get("securityContext", {})
        if ctx.get("allowPrivilegeEscalation") is not False:
            problems.append("allowPrivilegeEscalation must be false")
        if ctx.get("capabilities", {}).get("drop") != ["ALL"] or ctx.get("capabilities", {}).get("add"):
            problems.append("capabilities must drop ALL and add nothing")
        if not (ctx.get("runAsNonRoot") or pod_ctx.get("runAsNonRoot")):
            problems.append("runAsNonRoot must be true")
        if ctx.get("runAsUser", pod_ctx.get("runAsUser")) == 0:
            problems.append("runAsUser must not be 0")
        seccomp = ctx.get("seccompProfile", pod_ctx.get("seccompProfile", {})).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            problems.append("seccompProfile must be RuntimeDefault or Localhost")
        if ctx.get("privileged"):
            problems.append("privileged")
    return problems


@pytest.mark.parametrize("job", [
    pytest.param(make_job("one", gpus=1, image="python:3.12"), id="a training job"),
    pytest.param(make_job("gang", gpus=2, workers=2, image=None), id="a gang with the default image"),
    pytest.param(make_job("svc", gpus=1, kind=JobKind.INFERENCE, port=8000, command=("serve",),
                          image="registry.example.org/ml/serve:1"), id="an inference service"),
])
def test_every_pod_is_hardened_and_passes_the_schema(job: Any) -> None:
    alloc = allocation("g1", job.spec.resources.gpus, workers=("g1", "g2") if job.spec.resources.workers > 1 else ())
    manifests = make_manifests(job, alloc, CONFIG, run_as=ALICE)
    for manifest in manifests:
        kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    for pod in pods(manifests):
        spec = pod["spec"]
        assert spec["automountServiceAccountToken"] is False
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert (spec["securityContext"]["runAsUser"], spec["securityContext"]["runAsGroup"]) == (1001, 1001)
        assert restricted_problems(pod) == []
        assert spec["volumes"] == [{"name": "home", "persistentVolumeClaim": {"claimName": "claim-alice"}}]
        assert spec["containers"][0]["volumeMounts"] == [{"name": "home", "mountPath": "/home/jovyan"}]
        assert spec["containers"][0]["workingDir"] == "/home/jovyan"  # no working dir: the home volume


def test_without_ids_the_pod_still_refuses_root_and_uses_the_images_user() -> None:
    pod = pods(make_manifests(make_job("x", image="python:3.12"), allocation(), CONFIG, run_as=RunAs(user="alice")))[0]
    assert pod["spec"]["securityContext"] == {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    assert restricted_problems(pod) == []


@pytest.mark.parametrize("image, allowed", [
    pytest.param("python:3.12", True, id="the default image"),
    pytest.param("registry.example.org/ml/torch:2.4", True, id="an image matching the allow-list"),
    pytest.param("registry.example.org/other/x:1", False, id="another path of the same registry"),
    pytest.param("evil.example.com/miner:latest", False, id="any other image"),
])
def test_only_images_the_admin_allows_run(image: str, allowed: bool) -> None:
    job = make_job("img", image=image)
    if allowed:
        assert make_manifests(job, allocation(), CONFIG)
        return
    with pytest.raises(ValidationError) as refused:
        make_manifests(job, allocation(), CONFIG)
    assert refused.value.field == "image" and "registry.example.org/ml/*" in (refused.value.hint or "")
    assert make_manifests(job, allocation(), replace(CONFIG, allow_any_image=True))  # only when the admin says so


def test_a_carried_cell_and_notebook_arrive_as_read_only_files_from_annotations() -> None:
    cell = make_job("cell", image=None, command=())
    cell = replace(cell, spec=replace(cell.spec, script="cell-ab12.py", source="print('hi')\n", working_dir="~/proj"))
    manifest = make_manifests(cell, allocation(), CONFIG)[0]
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    pod = manifest["spec"]["template"]
    container = pod["spec"]["containers"][0]
    # run from its working dir, first on sys.path, not the carried files' folder (newuser26 N9)
    assert container["command"] == ["python", "-c", START_FOLDER_RUNNER, f"{CARRIED_DIR}/cell-ab12.py"]
    assert container["workingDir"] == "/home/jovyan/proj"  # ~ is the home volume
    assert {"name": "jupyter-sched-carried", "mountPath": CARRIED_DIR, "readOnly": True} in container["volumeMounts"]
    volume = next(v for v in pod["spec"]["volumes"] if v["name"] == "jupyter-sched-carried")
    item = volume["downwardAPI"]["items"][0]
    assert item["path"] == "cell-ab12.py"
    assert pod["metadata"]["annotations"][item["fieldRef"]["fieldPath"].split("'")[1]] == "print('hi')\n"

    nb = make_job("nb", image=None, command=())
    text = json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    nb = replace(nb, spec=replace(nb.spec, notebook="report.ipynb", notebook_json=text))
    container = make_manifests(nb, allocation(), CONFIG)[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["python", "-m", "jupyter_sched.executors.run_notebook", f"{CARRIED_DIR}/input.ipynb",
                                    f"/home/jovyan/scheduled-runs/{nb.id}/report.ipynb"]


def test_carried_content_too_large_for_annotations_is_refused_naming_the_field() -> None:
    job = make_job("big", image=None, command=())
    job = replace(job, spec=replace(job.spec, script="big.py", source="x" * (MAX_CARRIED_BYTES + 1)))
    with pytest.raises(ValidationError) as refused:
        make_manifests(job, allocation(), CONFIG)
    assert refused.value.field == "source"


def test_the_user_mapping_gives_pod_ids() -> None:
    mapping = AccountMapping(ids={"alice": (1001, 100)}, default_ids=(1000, 100))
    assert mapping.pod_ids("alice") == (1001, 100)
    assert mapping.pod_ids("bob") == (1000, 100)
    assert AccountMapping().pod_ids("bob") is None
    with pytest.raises(ValidationError):
        AccountMapping(ids={"mallory": (0, 0)})
