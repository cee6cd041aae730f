"""Case 027 Z in a real JupyterHub: the spawn form's GPU profiles follow the cluster's GPUs.

A real ``jupyterhub`` (dummy authenticator, configurable-http-proxy) loads
``jupyter_sched.hub.spawn_form.GpuProfiles`` from its ``jupyterhub_config.py``, as an admin
would; the central service is the real ``jupyter-sched serve`` (SQLite store) as the hub's
external service, with the Kubernetes executor and inventory watch. The cluster is
``tests/kube/fake_apiserver.FakeKubernetes`` (no real API server can run here): it speaks the
API's REST JSON and streams node watch events, so a GPU node that joins reaches the service as
it would from a cluster. Nobody spawns a server, so no OS accounts are needed.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from jupyter_sched.hub.spawn_form import GpuProfiles
from tests.hub.hub_harness import HUB_CONFIG_HEAD, _free_port, binaries_skip_reason, chp_command
from tests.kube.fake_apiserver import FakeKubernetes
from tests.kube.kube_builders import make_node

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROFILES = [{"name": "cpu", "display_name": "CPU only", "gpus": 0},
            {"name": "gpu-small", "display_name": "1 GPU", "gpus": 1}]

_HUB_CONFIG = HUB_CONFIG_HEAD + """
from jupyter_sched.hub.spawn_form import GpuProfiles
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allow_all = True
c.JupyterHub.services = [
    {{"name": "jupyter-sched", "url": s["service_url"], "api_token": s["service_token"], "display": False}},
    {{"name": "jupyter-sched-form", "api_token": s["form_token"]}},
]
c.JupyterHub.load_roles = [
    {{"name": "jupyter-sched-service", "scopes": ["read:users", "list:users", "read:groups"],
      "services": ["jupyter-sched"]}},
    {{"name": "jupyter-sched-form", "scopes": ["access:services!service=jupyter-sched"],
      "services": ["jupyter-sched-form"]}},
]
profiles = GpuProfiles(s["service_url"] + "/services/jupyter-sched/", s["form_token"], s["profiles"])
c.Spawner.options_form = profiles.options_form
c.Spawner.options_from_form = profiles.options_from_form
c.Spawner.apply_user_options = profiles.apply_user_options
"""


@dataclass
class Setup:
    hub_url: str
    service_url: str
    form_token: str
    fake: FakeKubernetes
    base: Path


def _wait(ready: Callable[[], bool], what: str, logs: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in sorted(logs.glob("*.log")))
    raise RuntimeError(f"{what} did not become ready\n{tails}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.fixture(scope="module")
def setup() -> Iterator[Setup]:
    reason = binaries_skip_reason()
    if reason:
        pytest.skip(reason)
    chp = chp_command()
    assert chp is not None
    base = Path(tempfile.mkdtemp(prefix="sched-spawn-form-"))
    base.chmod(0o755)  # the service refuses a job log folder other accounts cannot reach
    fake = FakeKubernetes()
    fake.start()
    fake.put("nodes", make_node("cpu-1", gpus=0, product=None))  # a cluster with no GPU nodes
    kubeconfig = base / "kubeconfig"
    kubeconfig.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": fake.url}}],
        "users": [{"name": "tester", "user": {"token": "fake-token"}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "tester", "namespace": "team-ml"}}]}))
    proxy_port, hub_port, service_port = _free_port(), _free_port(), _free_port()
    service_token, form_token = secrets.token_hex(16), secrets.token_hex(16)
    service_url = f"http://127.0.0.1:{service_port}"
    settings = {"base": str(base), "proxy_port": proxy_port, "hub_port": hub_port, "chp_api_port": _free_port(),
                "chp": chp, "service_url": service_url, "service_token": service_token, "form_token": form_token,
                "profiles": PROFILES}
    (base / "jupyterhub_config.py").write_text(_HUB_CONFIG.format(settings=json.dumps(settings)))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    service_env = {**env, "JUPYTERHUB_API_URL": f"http://127.0.0.1:{hub_port}/hub/api",
                   "JUPYTERHUB_API_TOKEN": service_token, "JUPYTERHUB_SERVICE_NAME": "jupyter-sched",
                   "JUPYTERHUB_SERVICE_URL": service_url, "JUPYTERHUB_SERVICE_PREFIX": "/services/jupyter-sched/",
                   "JUPYTERHUB_CLIENT_ID": "service-jupyter-sched", "JUPYTERHUB_HOST": "",
                   "JUPYTER_CONFIG_DIR": str(base / "svc-config"), "JUPYTER_DATA_DIR": str(base / "svc-data"),
                   "JUPYTER_RUNTIME_DIR": str(base / "svc-runtime")}
    processes = [subprocess.Popen(
        [sys.executable, "-m", "jupyter_sched.hub.serve", "--allow-root", f"--db-url=sqlite:///{base}/sched.db",
         "--SchedApp.executor=kubernetes", f"--SchedApp.kubeconfig={kubeconfig}",
         "--SchedApp.inventory_source=kubernetes", f"--SchedApp.log_dir={base / 'jobs'}"],
        cwd=base, env=service_env, stdout=(base / "service.log").open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True)]
    processes.append(subprocess.Popen([str(BIN / "jupyterhub"), "-f", str(base / "jupyterhub_config.py")], cwd=base,
                                      env=env, stdout=(base / "hub.log").open("wb"), stderr=subprocess.STDOUT,
                                      start_new_session=True))
    hub_url = f"http://127.0.0.1:{hub_port}"
    try:
        _wait(lambda: httpx.get(f"{service_url}/services/jupyter-sched/api/sched/config", timeout=5).status_code
              in (200, 403), "the jupyter-sched service", base)
        _wait(lambda: httpx.get(f"{hub_url}/hub/api/", timeout=5).status_code == 200, "the hub", base)
        yield Setup(hub_url=hub_url, service_url=f"{service_url}/services/jupyter-sched/", form_token=form_token,
                    fake=fake, base=base)
    finally:
        for process in reversed(processes):
            _stop(process)
        fake.close()
        shutil.rmtree(base, ignore_errors=True)


def logged_in(hub_url: str) -> httpx.Client:
    """A browser-like session of user ana, logged in through the dummy authenticator's form."""
    browser = httpx.Client(base_url=hub_url, timeout=30, follow_redirects=True)
    browser.get("/hub/login")
    response = browser.post("/hub/login", data={"username": "ana", "password": "any",
                                               "_xsrf": browser.cookies.get("_xsrf") or ""})
    assert response.status_code == 200, response.text[-2000:]
    return browser


def profile_inputs(page: str) -> dict[str, str]:
    """``{profile: its <input> tag}`` of the spawn form in ``page``."""
    return {m.group(1): m.group(0) for m in re.finditer(r'<input type="radio" name="profile" value="([^"]+)"[^>]*>',
                                                         page)}


def test_redteam3_a_spawn_through_the_rest_api_is_checked_like_the_form(setup: Setup) -> None:
    """Red-team 3 finding 1: a user's own token starts their server through the hub's REST API
    with any ``user_options`` (``options_from_form`` never runs then); ``apply_user_options``
    refuses a GPU profile on a cluster without GPU nodes, an unknown profile and a non-name, as
    the form does. (Runs while the fake cluster has no GPU node: the next test adds one.)"""
    assert not any(int(n["status"]["capacity"].get("nvidia.com/gpu", "0")) for n in setup.fake.list_objects(
        "nodes", None, "", "")["items"]), "a test left a GPU node in the fake cluster (each removes its own)"
    browser = logged_in(setup.hub_url)
    try:
        token = browser.post("/hub/api/users/ana/tokens", json={"note": "redteam3"},
                             headers={"X-XSRFToken": browser.cookies.get("_xsrf") or ""}).json()["token"]
    finally:
        browser.close()
    api = httpx.Client(base_url=setup.hub_url, timeout=30, headers={"Authorization": f"token {token}"})
    try:
        for options, message in [
                ({"profile": "gpu-small"}, "this cluster has no GPU nodes: profile gpu-small asks for 1 GPU"),
                ({"profile": "gpu-small", "gpus": 0}, "this cluster has no GPU nodes: profile gpu-small asks for 1 GPU"),
                ({"profile": "x" * 5000, "gpus": 64}, "unknown profile '" + "x" * 80 + "…'; choose one of: cpu, gpu-small"),
                ({"profile": {"name": "cpu"}}, "profile must be a profile name (got dict)")]:
            response = api.post("/hub/api/users/ana/server", json={"user_options": options})
            assert response.status_code == 400, (options, response.status_code, response.text[-500:])
            assert message in response.json()["message"], response.text[-500:]
            assert "x" * 81 not in response.text
        assert api.get("/hub/api/users/ana").json()["servers"] == {}, "a refused spawn left a server"
    finally:
        api.close()


def test_case_027_z_hub_form_disables_gpu_profiles_until_a_gpu_node_joins(setup: Setup) -> None:
    browser = logged_in(setup.hub_url)
    try:
        page = browser.get("/hub/spawn").text
        inputs = profile_inputs(page)
        assert set(inputs) == {"cpu", "gpu-small"}, page[-3000:]
        assert " disabled" in inputs["gpu-small"] and " checked" in inputs["cpu"] and " disabled" not in inputs["cpu"]
        assert "GPU profiles are unavailable: this cluster has no GPU nodes." in page
        assert "1 GPU <span class=\"text-muted\">(this cluster has no GPU nodes)</span>" in page

        # submitting the GPU profile anyway (a stale form, or a hand-made POST) is refused with the reason
        refused = browser.post("/hub/spawn", data={"profile": "gpu-small", "_xsrf": browser.cookies.get("_xsrf") or ""})
        assert refused.status_code == 400
        assert ("this cluster has no GPU nodes: profile gpu-small asks for 1 GPU; choose a CPU profile, or ask an "
                "admin to add a GPU node pool") in refused.text

        setup.fake.put("nodes", make_node("gpu-1", gpus=2))  # a GPU node joins; nothing restarts
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and " disabled" in profile_inputs(page := browser.get("/hub/spawn").text)[
                "gpu-small"]:
            time.sleep(0.5)
        inputs = profile_inputs(page)
        assert " disabled" not in inputs["gpu-small"], page[-3000:]
        assert "this cluster has no GPU nodes" not in page
        profiles = GpuProfiles(setup.service_url, setup.form_token, PROFILES)
        chosen = asyncio.run(profiles.options_from_form({"profile": ["gpu-small"]}))
        assert chosen == {"profile": "gpu-small", "gpus": 1}

        # the node leaves again: the form disables the GPU profiles again (and the module's other
        # tests, in any order, find the cluster as they expect it: without GPU nodes)
        setup.fake.remove("nodes", "", "gpu-1")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and " disabled" not in profile_inputs(
                page := browser.get("/hub/spawn").text)["gpu-small"]:
            time.sleep(0.5)
        assert " disabled" in profile_inputs(page)["gpu-small"], page[-3000:]
        assert "GPU profiles are unavailable: this cluster has no GPU nodes." in page
    finally:
        setup.fake.remove("nodes", "", "gpu-1")
        browser.close()



def test_redteam3_apply_user_options_takes_the_gpus_from_the_configured_profile() -> None:
    """A spawn request's own ``gpus`` never reaches the spawner: ``apply_user_options`` (run by
    JupyterHub's own hook runner on a real ``LocalProcessSpawner``) rewrites ``user_options`` to
    the checked profile and hands that profile to the admin's ``apply``. The scheduler does not
    answer here (unknown capacity), so GPU profiles stay allowed, as in the form."""
    from jupyterhub.spawner import LocalProcessSpawner

    applied: list[tuple[str, int]] = []

    async def apply(spawner: Any, profile: Any) -> None:
        applied.append((profile.name, profile.gpus))
        spawner.environment = {**spawner.environment, "GPUS": str(profile.gpus)}

    profiles = GpuProfiles(f"http://127.0.0.1:{_free_port()}/services/jupyter-sched/", "token", PROFILES,
                           timeout_s=2, apply=apply)
    for options, expected in [({"profile": "cpu", "gpus": 8}, {"profile": "cpu", "gpus": 0}),
                              ({"profile": ["gpu-small"], "gpus": ["64"], "image": "evil"},
                               {"profile": "gpu-small", "gpus": 1}),
                              ({}, {"profile": "cpu", "gpus": 0})]:
        spawner = LocalProcessSpawner(apply_user_options=profiles.apply_user_options)  # c.Spawner.apply_user_options
        spawner.user_options = options
        asyncio.run(spawner._run_apply_user_options(spawner.user_options))  # as JupyterHub's spawn runs it
        assert spawner.user_options == expected
        assert spawner.environment["GPUS"] == str(expected["gpus"])
    assert applied == [("cpu", 0), ("gpu-small", 1), ("cpu", 0)]


def test_an_unreachable_scheduler_keeps_gpu_profiles_offered_with_a_note() -> None:
    profiles = GpuProfiles(f"http://127.0.0.1:{_free_port()}/services/jupyter-sched/", "token", PROFILES,
                           timeout_s=2)
    page = asyncio.run(profiles.options_form())
    inputs = profile_inputs(page)
    assert " disabled" not in inputs["gpu-small"]
    assert "GPU availability unknown: the scheduler did not answer (cannot reach the hub's scheduler service" in html.unescape(page)
    assert asyncio.run(profiles.options_from_form({"profile": ["gpu-small"]})) == {"profile": "gpu-small", "gpus": 1}


@pytest.mark.parametrize(("bad", "message"), [
    ({"name": "a b", "gpus": 1}, "spawn profile name 'a b': use letters, digits"),
    ({"name": "g", "gpus": -1}, "spawn profile g: gpus must be a whole number >= 0, got -1"),
])
def test_a_bad_profile_is_refused_naming_the_field(bad: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        GpuProfiles("http://127.0.0.1:1/", "t", [bad])
