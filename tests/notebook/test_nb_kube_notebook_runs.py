"""Kubernetes notebook and script runs get their parameters and explain how they ended (issue 19).

No Kubernetes API server runs here, so the pod is not started: the test builds the real manifest
(validated with kubernetes-validate, strict) and runs its container's command as the container
would — same argv, working directory and home volume path (a temporary folder) — with a real
kernel through nbclient. ``python`` in the argv is the image's interpreter; here it is this venv's.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import kubernetes_validate
import nbformat
from nbformat.v4 import new_code_cell, new_notebook

from jupyter_sched.executors.kubernetes import KubernetesConfig, make_manifests
from jupyter_sched.executors.kubernetes.status import observe_job
from tests.kube.kube_builders import K8S_VERSION, allocation, make_job


def container_of(job: Any, config: KubernetesConfig) -> dict[str, Any]:
    manifest = make_manifests(job, allocation(), config)[0]
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    container: dict[str, Any] = manifest["spec"]["template"]["spec"]["containers"][0]
    return container


def run_like_the_container(container: dict[str, Any], cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable if container["command"][0] == "python" else container["command"][0],
            *container["command"][1:]]
    # one stream, as the container's log interleaves them
    return subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=180,
                          check=False)


def failed_job_with_pod(exit_code: int, message: str, reason: str = "Error") -> tuple[dict[str, Any], dict[str, Any]]:
    """A failed ``batch/v1`` Job and its pod whose container terminated with ``message`` (the
    objects' shapes as the API server returns them)."""
    job = {"metadata": {"name": "js-j", "namespace": "ns", "uid": "job-uid"}, "spec": {}, "status": {
        "failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                                     "message": "Job has reached the specified backoff limit",
                                     "lastTransitionTime": "2026-03-01T10:00:01Z"}]}}
    pod = {"metadata": {"name": "js-j-0", "namespace": "ns", "uid": "pod-uid", "annotations": {}},
           "status": {"phase": "Failed", "containerStatuses": [{"name": "main", "restartCount": 0, "state": {
               "terminated": {"exitCode": exit_code, "reason": reason, "message": message,
                              "finishedAt": "2026-03-01T10:00:00Z"}}}]}}
    return job, pod


def test_a_kubernetes_notebook_run_injects_parameters_keeps_the_executed_copy_and_ends_its_log_with_the_reason(
        tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    params = new_code_cell("region = 'us'\nrows = 1")
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[params, new_code_cell("print(region * rows)"),
                             new_code_cell("if rows > 2:\n    raise ValueError(f'too many rows for {region}')")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(home / "report.ipynb"))
    config = KubernetesConfig(namespace="team-ml", default_image="python:3.12", home_mount_path=str(home))
    job = make_job("j-kube-nb", image=None, command=())
    job = replace(job, spec=replace(job.spec, notebook="report.ipynb", working_dir="~",
                                    parameters={"region": "eu", "rows": 3}))

    container = container_of(job, config)
    executed = home / "scheduled-runs" / "j-kube-nb" / "report.ipynb"
    assert container["command"] == ["python", "-m", "jupyter_sched.executors.run_notebook", "report.ipynb",
                                    str(executed), "--parameters", '{"region": "eu", "rows": 3}']
    assert container["workingDir"] == str(home)
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"

    done = run_like_the_container(container, Path(container["workingDir"]))
    assert done.returncode == 1, done.stdout
    assert "eueueu" in done.stdout  # the injected values, not the notebook's defaults
    # FallbackToLogsOnError: the pod's termination message is the end of its log (2 KiB at most),
    # and the job's reason is the runner's sentence, not the Job's "backoff limit"
    job_obj, pod = failed_job_with_pod(done.returncode, done.stdout.encode()[-2048:].decode(errors="replace"))
    observed = observe_job(job_obj, [pod], [])
    assert (observed.phase, observed.exit_code) == ("failed", 1)
    assert observed.message == ("cell 3 (In [4] in the executed notebook) raised ValueError: too many rows for eu "
                                "(cell starts: if rows > 2:)")
    kept = nbformat.read(str(executed), as_version=4)
    assert [c.metadata.get("tags") for c in kept.cells][:2] == [["parameters"], ["injected-parameters"]]
    assert kept.cells[-1].outputs[0]["ename"] == "ValueError"


def test_a_kubernetes_script_run_gets_its_parameters_as_flags_and_a_notebook_without_a_home_writes_to_tmp() -> None:
    config = KubernetesConfig(namespace="team-ml", default_image="python:3.12")
    script = make_job("j-kube-py", image=None, command=("--epochs", "3"))
    script = replace(script, spec=replace(script.spec, script="train.py", parameters={"lr": 0.1}))
    assert container_of(script, config)["command"] == ["python", "train.py", "--epochs", "3", "--lr", "0.1"]

    nb = make_job("j-kube-nb2", image=None, command=())
    nb = replace(nb, spec=replace(nb.spec, notebook="reports/daily.ipynb"))
    assert container_of(nb, config)["command"] == [
        "python", "-m", "jupyter_sched.executors.run_notebook", "reports/daily.ipynb",
        "/tmp/jupyter-sched/j-kube-nb2/daily.ipynb"]


def test_a_failed_kubernetes_script_says_its_exit_code_and_last_lines_and_an_oom_kill_says_so() -> None:
    log = "epoch 1\nTraceback (most recent call last):\n  File \"train.py\", line 3\nValueError: bad lr\n"
    job_obj, pod = failed_job_with_pod(3, log)
    assert observe_job(job_obj, [pod], []).message == (
        "exited with code 3: ValueError: bad lr (train.py, line 3); last lines: epoch 1 | Traceback (most recent call "
        'last): |   File "train.py", line 3 | ValueError: bad lr')  # the error first (newuser33 N2)
    job_obj, pod = failed_job_with_pod(137, "", reason="OOMKilled")
    assert observe_job(job_obj, [pod], []).message == (  # and what to do (newuser37 n4)
        "killed by the out-of-memory killer — ask for more memory with --memory (jupyter-sched submit, %%schedule; the "
        "job card's Resubmit, Memory field), or make it use less")
    job_obj, pod = failed_job_with_pod(2, "")
    assert observe_job(job_obj, [pod], []).message == "Job has reached the specified backoff limit"
