"""Session 37 left: Kubernetes errors about files named no folder.

* A job's pod that failed on a file — ``FileNotFoundError: … 'data/train.csv'`` in its termination message (the end of
  its log: ``FallbackToLogsOnError``), ``python: can't open file '…'`` for a script the container has not, a notebook
  cell's — said the error and no more: not the container's working folder it read a relative path from, nor that the
  container holds only its image's files and the volumes mounted in it. Now the fix names both.
* The service's kubeconfig: a relative path missing read "Invalid kube-config file. No configuration found." (no
  folder: it was read from the server's working folder), the default one "from the in-cluster service account /
  ~/.kube/config", the in-cluster token "Service token file does not exist.". Now the file, its folder and the fix.

The Job and pod objects are the real manifests (``make_manifests``, validated by kubernetes-validate) and the pod
status as the API server returns it; the kubeconfig is read by the official client's loader (no API server is
needed to fail reading one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.executors.kubernetes import KubernetesConfig, make_manifests
from jupyter_sched.executors.kubernetes.status import observe_job
from jupyter_sched.services import SchedulerService
from tests.kube.kube_builders import K8S_VERSION, allocation, make_job

HOME = "/home/jovyan"
HOME_VOLUME = {"volumes": [{"name": "home", "persistentVolumeClaim": {"claimName": "claim-{user}"}}],
               "volume_mounts": [{"name": "home", "mountPath": HOME}], "home_mount_path": HOME}

TRACEBACK = ("Traceback (most recent call last):\n  File \"/home/jovyan/proj/train.py\", line 3, in <module>\n"
             "    open('data/train.csv')\nFileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv'\n")


def failed(job_obj: dict[str, Any], exit_code: int, message: str) -> str:
    """The message of ``job_obj`` (a created Job) once its pod's container ended with ``message`` and the Job
    controller gave up (the objects as the API server returns them)."""
    job_obj = {**job_obj, "metadata": {**job_obj["metadata"], "uid": "job-uid"}, "status": {
        "failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                     "message": "Job has reached the specified backoff limit",
                                     "lastTransitionTime": "2026-03-01T10:00:01Z"}]}}
    pod = {"metadata": {"name": "js-j-0", "namespace": "ns", "uid": "pod-uid", "annotations": {}},
           "status": {"phase": "Failed", "containerStatuses": [{"name": "main", "restartCount": 0, "state": {
               "terminated": {"exitCode": exit_code, "reason": "Error", "message": message,
                              "finishedAt": "2026-03-01T10:00:00Z"}}}]}}
    observed = observe_job(job_obj, [pod], [])
    assert observed.phase == "failed", observed
    return observed.message


@dataclass(frozen=True)
class FileCase:
    id: str
    working_dir: str | None
    settings: dict[str, Any]
    exit_code: int
    log: str
    want: tuple[str, ...]
    notebook: bool = False


FILE_CASES = [
    FileCase("a relative path read in the job's working folder on the home volume", "proj", HOME_VOLUME, 1, TRACEBACK,
             ("a relative path is read from the job's working folder in its container, /home/jovyan/proj, and there "
              "is no /home/jovyan/proj/data/train.csv: check the path, or give an absolute one",
              "the job's container holds its image's files and the volume mounted at /home/jovyan, nothing else "
              "of the server's")),
    FileCase("a relative path with no working folder and no volume: the image's folder, and nothing of the server's",
             None, {}, 1, TRACEBACK,
             ("a relative path is read from the job's working folder in its container (its image's: the job named "
              "none — give working_dir to choose it) and there is no data/train.csv",
              "the job's container holds only its image's files (no volume is mounted: a file of the server's is "
              "not there; put it in the image, or an admin mounts a volume")),
    FileCase("a script the container has not (python's own can't open file)", "~", HOME_VOLUME, 2,
             "python: can't open file '/home/jovyan/train.py': [Errno 2] No such file or directory\n",
             ("there is no /home/jovyan/train.py: check the path — the job's container holds its image's files and "
              "the volume mounted at /home/jovyan",)),
    FileCase("a notebook cell's relative path", "~/reports", HOME_VOLUME, 1,
             "[jupyter_sched] failed: cell 2 raised FileNotFoundError: [Errno 2] No such file or directory: "
             "'data/x.csv'\n",
             ("cell 2 raised FileNotFoundError", "a relative path is read from the job's working folder in its "
              "container, /home/jovyan/reports, and there is no /home/jovyan/reports/data/x.csv"), True),
]


@pytest.mark.parametrize("case", FILE_CASES, ids=[c.id for c in FILE_CASES])
def test_s38_edges_a_pod_that_failed_on_a_file_names_the_container_folder_and_what_it_holds(case: FileCase) -> None:
    """Failed before: the message quoted the error and named no folder, nor what the container holds."""
    config = KubernetesConfig(namespace="ns", default_image="python:3.12", **case.settings)
    job = make_job("j", image=None, command=() if case.notebook else ("python", "train.py"),
                   working_dir=case.working_dir)
    if case.notebook:
        job = replace(job, spec=replace(job.spec, notebook="report.ipynb"))
    job = replace(job, spec=replace(job.spec, working_dir=case.working_dir and (
        case.working_dir if case.working_dir.startswith(("/", "~")) else f"{HOME}/{case.working_dir}")))
    manifest = make_manifests(job, allocation(), config)[0]
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    said = failed(manifest, case.exit_code, case.log)
    for want in case.want:
        assert want in said, said


@dataclass(frozen=True)
class ConfigCase:
    id: str
    setting: str
    env: dict[str, str]
    make: str  # what to put at tmp/x.yaml first: "" (nothing), "folder", "empty"
    want: tuple[str, ...]


CONFIG_CASES = [
    ConfigCase("a relative kubeconfig that is not there: read from the server's working folder", "x.yaml", {}, "",
               ("c.SchedApp.kubeconfig 'x.yaml', read from the server's working folder {tmp} as {tmp}/x.yaml",
                "there is no {tmp}/x.yaml")),
    ConfigCase("a kubeconfig in a folder that is not there", "{tmp}/nope/x.yaml", {}, "",
               ("there is no {tmp}/nope/x.yaml (there is no folder {tmp}/nope)",)),
    ConfigCase("a kubeconfig that is a folder", "{tmp}/x.yaml", {}, "folder", ("{tmp}/x.yaml is a folder, not a file",)),
    ConfigCase("an empty kubeconfig", "{tmp}/x.yaml", {}, "empty", ("{tmp}/x.yaml is empty",)),
    ConfigCase("no setting, no $KUBECONFIG: the default one, under the server's home", "", {}, "",
               ("the default kubeconfig, {tmp}/.kube/config (neither c.SchedApp.kubeconfig nor $KUBECONFIG is set)",
                "there is no {tmp}/.kube/config (there is no folder {tmp}/.kube)")),
    ConfigCase("$KUBECONFIG's file", "", {"KUBECONFIG": "{tmp}/k.yaml"}, "",
               ("$KUBECONFIG ({tmp}/k.yaml; c.SchedApp.kubeconfig is not set)", "there is no {tmp}/k.yaml")),
]


@pytest.mark.parametrize("case", CONFIG_CASES, ids=[c.id for c in CONFIG_CASES])
def test_s38_edges_a_kubeconfig_that_cannot_be_read_names_the_file_its_folder_and_the_fix(
        case: ConfigCase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: 'cannot load … from x.yaml: Invalid kube-config file. No configuration found.' (which folder?),
    'from the in-cluster service account / ~/.kube/config' (which file?)."""
    tmp = str(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", tmp)
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    for name, value in case.env.items():
        monkeypatch.setenv(name, value.format(tmp=tmp))
    if case.make == "folder":
        (tmp_path / "x.yaml").mkdir()
    elif case.make == "empty":
        (tmp_path / "x.yaml").write_text("")
    settings = {"db_url": f"sqlite:///{tmp}/sched.sqlite", "log_dir": f"{tmp}/logs", "executor": "kubernetes",
                "kubeconfig": case.setting.format(tmp=tmp), "kubernetes": {"namespace": "ns"}}
    with pytest.raises(ValidationError) as caught:
        SchedulerService.from_config(settings)
    assert caught.value.field == "kubeconfig"
    for want in case.want:
        assert want.format(tmp=tmp) in caught.value.message, caught.value.message
    assert "absolute path of a kubeconfig the server's account may read" in (caught.value.hint or "")


@pytest.mark.skipif(os.path.exists("/var/run/secrets/kubernetes.io/serviceaccount/token"),
                    reason="this host runs in a pod with a service-account token")
def test_s38_edges_an_in_cluster_server_without_its_token_names_the_token_file_and_the_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before: 'Service token file does not exist.' (which file? what to do?)."""
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    settings = {"db_url": f"sqlite:///{tmp_path}/sched.sqlite", "log_dir": f"{tmp_path}/logs",
                "executor": "kubernetes", "kubeconfig": "", "kubernetes": {"namespace": "ns"}}
    with pytest.raises(ValidationError) as caught:
        SchedulerService.from_config(settings)
    assert "the in-cluster service account (KUBERNETES_SERVICE_HOST is set" in caught.value.message
    assert "there is no /var/run/secrets/kubernetes.io/serviceaccount/token" in caught.value.message
    assert "automountServiceAccountToken: true" in (caught.value.hint or "")


@pytest.mark.parametrize("settings, want", [
    (HOME_VOLUME, "save it in your home folder, which the job's container mounts at /home/jovyan, and run it by its "
                  "path there (e.g. /home/jovyan/train.py"),
    ({}, "this server's Kubernetes pods mount no home folder: put the file in the job's image"),
], ids=["with a home volume: its folder in the container", "without one: the image, or an admin's volume"])
def test_s38_edges_a_script_too_big_to_carry_is_told_which_folder_to_put_it_in(settings: dict[str, Any],
                                                                              want: str) -> None:
    """Failed before: 'put the file on the home volume and run it by path' — no folder, and said also where no home
    volume is mounted."""
    from jupyter_sched.executors.kubernetes.manifests import MAX_CARRIED_BYTES

    config = KubernetesConfig(namespace="ns", default_image="python:3.12", **settings)
    job = make_job("big", image=None, command=())
    job = replace(job, spec=replace(job.spec, script="big.py", source="x" * (MAX_CARRIED_BYTES + 1)))
    with pytest.raises(ValidationError) as refused:
        make_manifests(job, allocation(), config)
    assert refused.value.field == "source"
    assert want in (refused.value.hint or ""), refused.value.hint
