"""A relative ``working_dir`` on the Kubernetes executor (session 11's leftover of new user 11's N20):
a real Jupyter server with the extension, ``c.SchedApp.executor = "kubernetes"``, the official client
talking to the fake API server (``fake_apiserver.FakeKubernetes``: a real Kubernetes API server cannot
run here, see test_server_wiring.py) — what reaches the cluster is read at the wire.

Decision: read the way the local executor reads it — where a job naming no working_dir starts, the
pods' home mount (``kubernetes.home_mount_path``): ``data`` → ``/home/jovyan/data`` in the stored job
and in the pod's ``workingDir``. Without a home mount there is nothing to read it in (a relative
``workingDir`` fails at container creation: the OCI runtime takes absolute paths only), so it is a
400 at submit naming ``working_dir`` and what to give instead, audited. The rest of the executor's
own spec check (an image the admin does not allow, a fraction of a GPU) is a 400 at submit too,
where it was accepted and then failed at start.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_jupyter.jupyter_server import *  # noqa: F403  (server fixtures, this module only)

from jupyter_sched.executors.kubernetes import object_name
from tests.web.conftest import BOSS_TOKEN, server_config, wait_for
from tests.web.conftest import api as api  # fixture reused
from tests.web.conftest import sched_app as sched_app  # fixture reused

from .fake_apiserver import FakeKubernetes
from .kube_builders import make_node
from .test_server_wiring import NS, Api, kube_settings, write_kubeconfig

HOME = "/home/jovyan"


@pytest.fixture
def fake() -> Iterator[FakeKubernetes]:
    server = FakeKubernetes()
    server.start()
    server.put("nodes", make_node("g2", gpus=2))
    yield server
    server.close()


@pytest.fixture
def jp_server_config(request: pytest.FixtureRequest, tmp_path: Path, fake: FakeKubernetes) -> dict[str, Any]:
    home = getattr(request, "param", None)  # the pods' home mount, or none
    kubernetes = {"home_mount_path": home} if home else {}
    return server_config(tmp_path, **kube_settings(write_kubeconfig(tmp_path / "kubeconfig", fake.url), **kubernetes))


def _created_jobs(fake: FakeKubernetes) -> int:
    """Job objects the server was asked to create (POSTs at the wire)."""
    return sum(1 for method, path in fake.requests if method == "POST" and path.split("?")[0].endswith("/jobs"))


def _working_dir_at_the_wire(fake: FakeKubernetes, job_id: str, run: Any) -> Any:
    async def created() -> dict[str, Any] | None:
        return fake.get("jobs", NS, object_name(job_id))

    k8s_job = run(wait_for(created, timeout_s=20))
    (container,) = k8s_job["spec"]["template"]["spec"]["containers"]
    return container.get("workingDir")


@pytest.mark.parametrize("jp_server_config", [HOME], indirect=True)
def test_nu11_leftover_relative_working_dir_is_read_in_the_pods_home_mount(
        sched_app: Any, api: Api, fake: FakeKubernetes, jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    """With a home mount, ``data`` (and ``a/../data``) is read in it, as the local executor reads it in
    the owner's home: the job's answer shows it written out and the pod starts there. It was passed
    as typed (``workingDir: data``: the pod fails at container creation). The answer shows every
    working_dir as the pod's, none given included (new user 12, N3)."""
    run = jp_asyncio_loop.run_until_complete
    for given, want in (("data", f"{HOME}/data"), ("a/../data/", f"{HOME}/data"), (".", HOME),
                        ("/srv/shared", "/srv/shared"), ("/srv/a/../shared", "/srv/shared"),
                        ("~/proj", f"{HOME}/proj"), (None, HOME)):
        status, job = run(api("POST", "jobs", {"gpus": 0, "command": ["true"], "working_dir": given}))
        assert status == 201, job
        assert job["working_dir"] == want, (given, job)  # where it starts, written out (new user 12, N3)
        assert _working_dir_at_the_wire(fake, job["id"], run) == want, given
        assert not any("working_dir" in w for w in job.get("warnings") or []), job


@pytest.mark.parametrize("jp_server_config", [None], indirect=True)
def test_nu11_leftover_relative_working_dir_without_a_home_mount_is_a_400_naming_working_dir(
        sched_app: Any, api: Api, fake: FakeKubernetes, jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    """Without a home mount a relative working_dir has nowhere to be read: 400 ``working_dir`` with the
    fix, audited, and nothing reaches the cluster; ``~/proj`` (what ``%%schedule`` sends through a
    hub) is still accepted, its dropping said in the answer; an absolute one is used as given."""
    run = jp_asyncio_loop.run_until_complete
    status, body = run(api("POST", "jobs", {"gpus": 0, "command": ["true"], "working_dir": "data"}))
    assert status == 400, body
    error = body["error"]
    assert error["field"] == "working_dir" and "'data' is relative" in error["message"], error
    assert "absolute path" in error["hint"] and "home_mount_path" in error["hint"], error
    status, dry = run(api("POST", "dryrun", {"gpus": 0, "command": ["true"], "working_dir": "data"}))
    assert status == 400 and dry["error"]["field"] == "working_dir", dry
    assert _created_jobs(fake) == 0

    async def audited() -> list[dict[str, Any]]:
        _, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"action": "refused", "limit": "100"})
        return [r for r in rows if (r.get("details") or {}).get("field") == "working_dir"]

    assert run(wait_for(audited, timeout_s=15))[0]["details"]["code"] == error["code"]

    status, job = run(api("POST", "jobs", {"gpus": 0, "command": ["true"], "working_dir": "~/proj"}))
    assert status == 201, job
    assert any("'~/proj' is not used" in w for w in job["warnings"]), job
    assert job["working_dir"] is None and _working_dir_at_the_wire(fake, job["id"], run) is None, job
    status, job = run(api("POST", "jobs", {"gpus": 0, "command": ["true"], "working_dir": "/srv/data"}))
    assert status == 201 and _working_dir_at_the_wire(fake, job["id"], run) == "/srv/data", job


@pytest.mark.parametrize("jp_server_config", [None], indirect=True)
def test_nu11_leftover_the_kubernetes_spec_check_answers_at_submit_not_at_start(
        sched_app: Any, api: Api, fake: FakeKubernetes, jp_asyncio_loop: asyncio.AbstractEventLoop) -> None:
    """The same kind of fault: an image the admin does not allow, or half a GPU, was 201 and then failed
    at start ("could not start: image 'evil:1' is not one the admin allows"); the executor's own check
    answers at submit, naming the field."""
    run = jp_asyncio_loop.run_until_complete
    for body, field in (({"gpus": 1, "command": ["true"], "image": "evil:1"}, "image"),
                        ({"gpus": 0.5, "command": ["true"]}, "gpus")):
        status, answer = run(api("POST", "jobs", body))
        assert status == 400 and answer["error"]["field"] == field, answer
    assert _created_jobs(fake) == 0
