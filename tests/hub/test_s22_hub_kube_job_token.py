"""Hub mode with the Kubernetes executor: a job's token (in its Secret) works for its own progress only,
and the Secret goes when the job ends (session 21's note: the hub + Kubernetes combination of the job
token was tested only through the API double's unit tests, never through a hub-mode service).

Real parts, as session 21's job progress test in tests/hub/test_red19_r5_body.py: JupyterHub (PyPI) +
configurable-http-proxy (npm) and ``jupyter-sched serve`` as its external service on PostgreSQL, configured with
``c.SchedApp.executor = "kubernetes"`` and a kubeconfig file. The cluster is
``tests/kube/fake_apiserver.FakeKubernetes`` (no Kubernetes API server can run here): the service's
official client creates each job's Secret and Job in it and watches them; the test plays the kubelet
(``run_job``/``finish_job``) and each job's process, which calls the URL its pod spec says with the token
its Secret holds. No OS accounts: pods run as whatever the cluster says.
"""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import accounts
from tests.kube.fake_apiserver import FakeKubernetes
from tests.kube.kube_builders import GPU_TAINT, make_node
from tests.kube.test_server_wiring import NS, write_kubeconfig
from tests.runas_env import runas_venv

from .hub_harness import Hub, binaries_skip_reason

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(binaries_skip_reason() is not None, reason=binaries_skip_reason() or "")]

KAY, LEE, ADMIN = "kay", "lee", "carol"


@pytest.fixture(scope="module")
def cluster() -> Iterator[FakeKubernetes]:
    fake = FakeKubernetes()
    fake.start()
    fake.put("nodes", make_node("g1", gpus=4, taints=[GPU_TAINT]))
    yield fake
    fake.close()


@pytest.fixture(scope="module")
def hub(pg_server: Any, cluster: FakeKubernetes) -> Iterator[Hub]:
    with accounts.shared_dir("jsched-s22kube-") as base:
        kubeconfig = write_kubeconfig(base / "kubeconfig", cluster.url)  # the service's client reads it
        settings = base / "kube_config.py"
        settings.write_text(f'c.SchedApp.executor = "kubernetes"\nc.SchedApp.kubeconfig = {str(kubeconfig)!r}\n'
                            f'c.SchedApp.kubernetes = {{"namespace": {NS!r}, "default_image": "python:3.12-slim"}}\n')
        running = Hub(base=base, db_url=pg_server.create_database("hub_s22kube"), venv=runas_venv(),
                      admins=(ADMIN,), groups={"vision": [KAY], "nlp": [LEE]},
                      service_args=(f"--config={settings}", "--SchedApp.inventory_source=auto"))
        try:
            running.start()
            created = running.api("POST", "users", {"usernames": [KAY, LEE, ADMIN]})
            assert created.status_code in (201, 409), created.text
            yield running
        finally:
            running.stop()


def _wait(what: str, check: Any, timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def _api(hub: Hub, token: str, method: str, path: str, body: Any = None) -> httpx.Response:
    return httpx.request(method, f"{hub.service_url}api/sched/{path}", json=body, timeout=60,
                         headers={"Authorization": f"token {token}"})


class Pod:
    """A job's process in its pod: the URL its pod spec gives, the token its Secret holds."""

    def __init__(self, cluster: FakeKubernetes, job_id: str) -> None:
        self.job_id = job_id
        made = _wait(f"the Job of {job_id}", lambda: cluster.get("jobs", NS, f"js-{job_id}"))
        env = {e["name"]: e for e in made["spec"]["template"]["spec"]["containers"][0]["env"]}
        self.url = str(env["JUPYTER_SCHED_URL"]["value"])
        ref = env["JUPYTER_SCHED_JOB_TOKEN"]["valueFrom"]["secretKeyRef"]
        secret = cluster.get("secrets", NS, ref["name"])
        assert secret is not None, "the Job's Secret exists before any pod can start"
        self.secret = str(ref["name"])
        self.token = base64.b64decode(secret["data"][ref["key"]]).decode()

    def call(self, method: str, path: str, body: Any = None, *, token: str | None = None) -> httpx.Response:
        return httpx.request(method, f"{self.url}api/sched/{path}", json=body, timeout=60,
                             headers={"Authorization": f"token {token or self.token}"})


def _submit(hub: Hub, cluster: FakeKubernetes, token: str, name: str) -> Pod:
    answer = _api(hub, token, "POST", "jobs", {"gpus": 1, "name": name, "time_limit": "10m",
                                               "command": ["python", "train.py"]})
    assert answer.status_code == 201, answer.text
    pod = Pod(cluster, answer.json()["id"])
    cluster.run_job(NS, f"js-{pod.job_id}")
    _wait(f"{name} to run", lambda: _api(hub, token, "GET", f"jobs/{pod.job_id}").json()["state"] == "running")
    return pod


def test_s22_hub_kube_a_jobs_token_reports_its_own_progress_only_and_goes_with_the_job(
        hub: Hub, cluster: FakeKubernetes) -> None:
    tokens = {name: hub.token_for(name) for name in (KAY, LEE, ADMIN)}
    kay = _submit(hub, cluster, tokens[KAY], "kay-train")
    lee = _submit(hub, cluster, tokens[LEE], "lee-train")
    try:
        assert kay.url == f"http://127.0.0.1:{hub.service_port}/services/jupyter-sched/", kay.url
        assert kay.token.startswith(f"jsjob1.{kay.job_id}.") and kay.token != lee.token

        stored = kay.call("POST", f"jobs/{kay.job_id}/progress", {"done": 1, "total": 4})
        assert stored.status_code == 200, stored.text
        assert _api(hub, tokens[KAY], "GET", f"jobs/{kay.job_id}").json()["progress"]["fraction"] == 0.25

        other = lee.call("POST", f"jobs/{kay.job_id}/progress", {"done": 3, "total": 4})  # lee's job, kay's job id
        assert other.status_code == 403 and other.json()["error"]["field"] == "job_id", other.text
        assert lee.call("GET", "jobs").status_code == 403  # a job token calls nothing but its own job's progress
        assert lee.call("GET", f"jobs/{lee.job_id}").status_code == 403
        forged = lee.call("POST", f"jobs/{lee.job_id}/progress", {"done": 1, "total": 2},
                          token=lee.token.rsplit(".", 1)[0] + "." + "A" * 43)
        assert forged.status_code == 401 and forged.json()["error"]["field"] == "Authorization", forged.text
        assert _api(hub, tokens[KAY], "GET", f"jobs/{kay.job_id}").json()["progress"]["fraction"] == 0.25
        refused = _api(hub, tokens[ADMIN], "GET", "audit?action=refused").json()
        assert (LEE, "job_id", 403) in {(r["user"], r["details"].get("field"), r["details"].get("status"))
                                        for r in refused if r.get("job_id") == lee.job_id}, refused
        assert "jsjob1." not in str(refused)

        cluster.finish_job(NS, f"js-{kay.job_id}")  # kay's job ends on its own
        _wait("kay's job to succeed",
              lambda: _api(hub, tokens[KAY], "GET", f"jobs/{kay.job_id}").json()["state"] == "succeeded")
        assert _wait("kay's Secret to go", lambda: cluster.get("secrets", NS, kay.secret) is None)
        assert cluster.get("jobs", NS, f"js-{kay.job_id}") is not None, "the finished Job stays (its TTL)"
        late = kay.call("POST", f"jobs/{kay.job_id}/progress", {"done": 4, "total": 4})
        assert late.status_code == 401 and late.json()["error"]["field"] == "Authorization", late.text
    finally:
        for user, pod in ((KAY, kay), (LEE, lee)):
            _api(hub, tokens[user], "DELETE", f"jobs/{pod.job_id}")
    _wait("lee's job to end", lambda: _api(hub, tokens[LEE], "GET", f"jobs/{lee.job_id}").json()["state"]
          in ("cancelled", "failed", "succeeded"))
    assert cluster.get("secrets", NS, lee.secret) is None
    logs = (Path(hub.base) / "service.log").read_text(errors="replace")
    assert "jsjob1." not in logs, "no job token in the service's log"
