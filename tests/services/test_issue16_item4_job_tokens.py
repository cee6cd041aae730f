"""Issue 16 item 4 (finishing): the per-job progress token itself and where the executors put it.

Pure parts: minting and reading a token, the secret file's rules, the local executor's environment and
the Kubernetes manifests (the same ``job_env`` for both executors).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jupyter_sched.executors.kubernetes import KubernetesConfig, make_manifests
from jupyter_sched.executors.kubernetes.executor import with_env
from jupyter_sched.executors.local import job_environment
from jupyter_sched.model import Allocation, Job, spec_from_request
from jupyter_sched.model.jobenv import refused_variable
from jupyter_sched.services.job_tokens import PREFIX, JobTokens, read_secret_file

SECRET = b"0123456789abcdef0123456789abcdef"
URL = "http://127.0.0.1:8888/"
NO_GPU = Allocation(node="n1", gpu_uuids=())


def _job(env: dict[str, str] | None = None, **request: object) -> Job:
    spec = spec_from_request({"gpus": 1, "command": ["python", "train.py"], "env": env or {}, **request}, user="ivan")
    return Job(id="j-1", spec=spec, attempts=1)


def test_issue16_item4_a_token_names_its_job_and_run_and_verifies() -> None:
    tokens = JobTokens(SECRET)
    token = tokens.mint("j-01hf3k2m9-x7q4za", 2)
    assert token.startswith(PREFIX) and tokens.read(token) == ("j-01hf3k2m9-x7q4za", 2)
    assert tokens.mint("j-01hf3k2m9-x7q4za", 2) == token  # derived, not stored: the same after a restart
    assert tokens.mint("j-01hf3k2m9-x7q4za", 3) != token and tokens.mint("j-other", 2) != token


@pytest.mark.parametrize("forge", [
    lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),
    lambda t: t.replace(".2.", ".3.", 1),
    lambda t: t.replace("j-01hf3k2m9-x7q4za", "j-01hf3k2m9-x7q4zb", 1),
    lambda t: JobTokens(b"another server's secret, 32 bytes").mint("j-01hf3k2m9-x7q4za", 2),
    lambda t: t + "=",
    lambda t: PREFIX + "x" * 300,
    lambda t: t.replace(PREFIX, "jsjob2.", 1),
], ids=["a changed mac", "another run", "another job", "another secret", "padded", "too long", "another version"])
def test_issue16_item4_a_changed_or_foreign_token_does_not_verify(forge: object) -> None:
    tokens = JobTokens(SECRET)
    assert tokens.read(forge(tokens.mint("j-01hf3k2m9-x7q4za", 2))) is None  # type: ignore[operator]


def test_issue16_item4_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        JobTokens(b"short")


def test_issue16_item4_an_old_secret_file_is_read_only_when_there_is_one(tmp_path: Path) -> None:
    # the secret is the store's since A19 (tests/services/test_s24_a19_job_secret_in_store.py); an old file is
    # read once, to move it in, and never made
    path = tmp_path / "sub" / "job_token_secret"
    assert read_secret_file(path) is None and not path.parent.exists()
    path.parent.mkdir()
    path.write_text("ab" * 32)
    path.chmod(0o600)
    assert read_secret_file(path) == b"ab" * 32


def test_issue16_item4_a_secret_file_other_accounts_can_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "job_token_secret"
    path.write_text("ab" * 32)
    os.chmod(path, 0o644)
    with pytest.raises(PermissionError, match="chmod 600"):
        read_secret_file(path)


def test_issue16_item4_a_job_env_may_not_set_the_job_token() -> None:
    refused = refused_variable("JUPYTER_SCHED_JOB_TOKEN")
    assert refused is not None and "scheduler's own" in refused[0]
    assert refused_variable("jupyter_sched_job_token") is not None  # whatever the case
    assert refused_variable("JUPYTER_SCHED_URL") is None  # the user's own connection stays allowed


def test_issue16_item4_the_local_job_gets_the_url_and_token_over_the_services_own() -> None:
    own = {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": "jsjob1.j-1.1.mac"}
    base = {"JUPYTER_SCHED_URL": "http://elsewhere:9999/", "JUPYTER_SCHED_TOKEN": "elsewhere-token", "HOME": "/home/i"}
    env = job_environment(_job(), NO_GPU, base, scheduler_env=own)
    assert env["JUPYTER_SCHED_URL"] == URL and env["JUPYTER_SCHED_JOB_TOKEN"] == own["JUPYTER_SCHED_JOB_TOKEN"]
    assert "JUPYTER_SCHED_TOKEN" not in env  # another server's token is never sent to this one


def test_issue16_item4_a_url_the_user_set_stays_and_a_matching_token_is_kept() -> None:
    own = {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": "jsjob1.j-1.1.mac"}
    mine = {"JUPYTER_SCHED_URL": "http://other:1/", "JUPYTER_SCHED_TOKEN": "mine"}
    env = job_environment(_job(mine), NO_GPU, {}, scheduler_env=own)
    assert env["JUPYTER_SCHED_URL"] == "http://other:1/" and env["JUPYTER_SCHED_TOKEN"] == "mine"
    assert env["JUPYTER_SCHED_JOB_TOKEN"] == own["JUPYTER_SCHED_JOB_TOKEN"]
    same = job_environment(_job(), NO_GPU, {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_TOKEN": "t"}, scheduler_env=own)
    assert same["JUPYTER_SCHED_TOKEN"] == "t"  # the service's own pair for this very server stays


@pytest.mark.parametrize("request_fields", [
    {},
    {"workers": 2},
    {"kind": "inference", "port": 8000, "command": ["python", "serve.py"]},
], ids=["one pod", "a gang", "an inference service"])
def test_issue16_item4_every_kubernetes_container_gets_the_url_and_token(request_fields: dict[str, object]) -> None:
    job = _job(**request_fields)  # type: ignore[arg-type]
    manifests = make_manifests(job, None, KubernetesConfig(namespace="ml", queue_manager="kueue", default_image="python:3.12"))
    extra = {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": "jsjob1.j-1.1.mac"}
    out = with_env(manifests, extra, keep=frozenset(job.spec.env))
    containers = [c for m in out if m["kind"] in ("Job", "Deployment") for c in m["spec"]["template"]["spec"]["containers"]]
    assert containers
    for container in containers:
        env = {item["name"]: item.get("value") for item in container["env"]}
        assert env["JUPYTER_SCHED_JOB_TOKEN"] == extra["JUPYTER_SCHED_JOB_TOKEN"] and env["JUPYTER_SCHED_URL"] == URL
        assert env["JUPYTER_SCHED_JOB_ID"] == "j-1"


def test_issue16_item4_a_kubernetes_job_keeps_the_url_its_user_set() -> None:
    job = _job({"JUPYTER_SCHED_URL": "http://other:1/"})
    manifests = make_manifests(job, None, KubernetesConfig(namespace="ml", queue_manager="kueue", default_image="python:3.12"))
    out = with_env(manifests, {"JUPYTER_SCHED_URL": URL, "JUPYTER_SCHED_JOB_TOKEN": "t"}, keep=frozenset(job.spec.env))
    (env,) = [{i["name"]: i.get("value") for i in c["env"]} for m in out if m["kind"] == "Job"
              for c in m["spec"]["template"]["spec"]["containers"]]
    assert env["JUPYTER_SCHED_URL"] == "http://other:1/" and env["JUPYTER_SCHED_JOB_TOKEN"] == "t"
