"""``pip install jupyter_sched`` without extras runs the central service and the CLI (issue 20).

The heavy libraries — pandas, plotly, scipy, jupyterlab — live in extras (``[lab]``, ``[sim]``,
``[fgd]``; ``[all]`` for everything). Here real processes run with those packages refused as if
absent (:mod:`tests.onboarding.slim`): ``jupyter-sched serve``, the embedded server extension doing
a job's whole life, and the CLI's ``status``, ``queue``, ``logs`` and ``cancel`` — the CLI with
numpy refused too, since each CLI call is a new process and must start fast. Every test also
asserts that nothing *tried* to import a refused package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from jupyter_sched.extension.host_schedulers import ENV_REGISTRY
from jupyter_sched.extras import install_extra
from tests.cli_server import TLS
from tests.onboarding.slim import HEAVY, refused_imports, slim_env
from tests.reliability.harness import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
TOKEN = "slim-install-token"

CONFIG = """\
# A slim install has none of the other server extensions this venv enables (notebook 7 and
# jupyter-scheduler need jupyterlab, which is refused here; they come with the [lab]/[test] extras):
# turn off every one its config enables, whatever a later extra adds.
import json
from pathlib import Path
from jupyter_core.paths import jupyter_config_path
others = {{}}
for folder in jupyter_config_path():
    for enabling in sorted(Path(folder, "jupyter_server_config.d").glob("*.json")):
        others.update(json.loads(enabling.read_text()).get("ServerApp", {{}}).get("jpserver_extensions", {{}}))
c.ServerApp.jpserver_extensions = {{**{{name: False for name in others}}, "jupyter_sched": True,
                                   "jupyterlab": False, "jupyter_lsp": False, "jupyter_server_terminals": False,
                                   "notebook_shim": False, "notebook": False,
                                   "jupyter_scheduler": False}}
c.ServerApp.reraise_server_extension_failures = True
c.IdentityProvider.token = {token!r}
c.SchedApp.inventory_source = "simulated"
c.SchedApp.simulated_gpus = 2
c.SchedApp.cycle_interval = 0.2
c.SchedApp.stop_grace_s = 5
c.SchedApp.log_dir = {logs!r}
import getpass
c.SchedApp.user_teams = {{getpass.getuser(): ["default", "research"]}}  # the owner's teams (issue 15)
"""


def _base_env(work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB")) or k == ENV_REGISTRY}
    env.update({"PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(work / "config"),
                "JUPYTER_DATA_DIR": str(work / "data"), "JUPYTER_RUNTIME_DIR": str(work / "runtime"),
                "JUPYTER_PLATFORM_DIRS": "1"})
    return env


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 90) -> httpx.Response:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"server exited ({proc.returncode}):\n{log.read_text()[-4000:]}")
        try:
            return httpx.get(url, timeout=5, verify=TLS)  # a bare get builds a TLS context per poll (~27 ms CPU)
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError(f"no answer from {url} in {timeout_s:g} s:\n{log.read_text()[-4000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


@dataclass
class SlimServer:
    url: str
    api: str
    slim: Path
    work: Path


@pytest.fixture(scope="module")
def slim_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SlimServer]:
    """The embedded extension in ``jupyter server``, pandas/plotly/scipy/jupyterlab refused."""
    work = tmp_path_factory.mktemp("slim-server")
    (work / "config").mkdir()
    config = work / "config" / "jupyter_server_config.py"
    config.write_text(CONFIG.format(token=TOKEN, logs=str(work / "jobs")), encoding="utf-8")
    env = slim_env(work / "slim", base=_base_env(work))
    port = free_port()
    log = work / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_server", f"--config={config}", "--no-browser", "--allow-root",
             "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
             f"--ServerApp.root_dir={work}"], stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work)
    url = f"http://127.0.0.1:{port}/"
    try:
        _wait_http(url + "api/sched/config", proc, log)
        yield SlimServer(url=url, api=url + "api/sched/", slim=work / "slim", work=work)
    finally:
        _stop(proc)
    assert "Traceback" not in log.read_text(errors="replace"), log.read_text(errors="replace")[-4000:]


def test_the_embedded_server_runs_a_job_start_to_end_without_the_heavy_libraries(slim_server: SlimServer) -> None:
    api = httpx.Client(base_url=slim_server.api, headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    job = api.post("jobs", json={"gpus": 1, "name": "slim", "team": "research",
                                 "command": [sys.executable, "-c", "print('ran slim')"]})
    assert job.status_code == 201, job.text
    job_id = job.json()["id"]
    deadline = time.monotonic() + 60
    while api.get(f"jobs/{job_id}").json()["state"] != "succeeded":
        assert time.monotonic() < deadline, api.get(f"jobs/{job_id}").json()
        time.sleep(0.2)
    assert "ran slim" in api.get(f"jobs/{job_id}/logs").json()["text"]
    for path in ("config", "me", "inventory", "queue", "jobs", "quotas", "profiles", "telemetry", "metrics",
                 "audit", "usage?all=true&by=team,user", "usage/report?all=true", "idle-policy"):
        answer = api.get(path)
        assert answer.status_code == 200, (path, answer.status_code, answer.text[:300])
    rows = api.get("usage?all=true&by=team,user").json()
    rows = rows["usage"] if isinstance(rows, dict) else rows
    assert any(r.get("team") == "research" for r in rows), rows
    assert refused_imports(slim_server.slim) == []


@pytest.mark.parametrize("argv", [["status"], ["queue"], ["jobs"], ["logs", "{job}"], ["cancel", "{job}"]],
                         ids=["status", "queue", "jobs", "logs", "cancel"])
def test_the_cli_paths_import_no_numpy_pandas_plotly_or_scipy(slim_server: SlimServer, tmp_path: Path,
                                                              argv: list[str]) -> None:
    """Each CLI call is a new process: these paths must not load numerical libraries at all."""
    api = httpx.Client(base_url=slim_server.api, headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    job = api.post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "time_limit": "5m"}).json()
    base = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_SCHED_URL": slim_server.url,
            "JUPYTER_SCHED_TOKEN": TOKEN}
    env = slim_env(tmp_path / "slim-cli", ("numpy", *HEAVY), base=base)
    done = subprocess.run([str(BIN / "jupyter-sched"), *(a.format(job=job["id"]) for a in argv)], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert refused_imports(tmp_path / "slim-cli") == []
    if argv[0] == "cancel":
        assert done.stdout.startswith(f"cancelled {job['id']} (was ")
    else:
        api.delete(f"jobs/{job['id']}")


START_UP_COSTLY = ("jupyter_core", "platformdirs", "http", "email", "ssl", "dataclasses", "httpx", "typing_extensions")
"""Modules the CLI's everyday paths do without (issue 20: each call is a new process; these were
~0.1 s of CPU at its start): jupyter_core and platformdirs (the runtime dir is read by
:func:`~jupyter_sched.client.discovery.jupyter_runtime_dir`), ``http.client`` with ``email`` and
``ssl`` (an ``http://`` server is spoken to over a plain socket), ``dataclasses``, httpx."""


@pytest.mark.parametrize("argv", [["status"], ["queue"], ["cancel", "{job}"], ["--help"]],
                         ids=["status", "queue", "cancel", "help"])
def test_the_cli_paths_load_none_of_the_modules_that_slowed_each_call(slim_server: SlimServer, tmp_path: Path,
                                                                      argv: list[str]) -> None:
    """Found through the server's runtime file, as at a user's terminal; refused imports fail the
    command and are logged, so a later ``import dataclasses`` on these paths fails here."""
    api = httpx.Client(base_url=slim_server.api, headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    job = api.post("jobs", json={"gpus": 1, "command": ["sleep", "60"], "time_limit": "5m"}).json()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER_SCHED", "JUPYTERHUB"))}
    base.update({"PYTHONPATH": str(ROOT), "JUPYTER_RUNTIME_DIR": str(slim_server.work / "runtime")})
    env = slim_env(tmp_path / "lean-cli", ("numpy", *HEAVY, *START_UP_COSTLY), base=base)
    done = subprocess.run([str(BIN / "jupyter-sched"), *(a.format(job=job["id"]) for a in argv)], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert refused_imports(tmp_path / "lean-cli") == []
    assert done.stdout.startswith({"status": f"server     {slim_server.url}", "queue": "ID", "cancel": "cancelled ",
                                   "--help": "usage: jupyter-sched"}[argv[0]]), done.stdout
    if argv[0] != "cancel":
        api.delete(f"jobs/{job['id']}")


def test_the_central_service_serve_starts_without_the_heavy_libraries(tmp_path: Path) -> None:
    """``jupyter-sched serve`` (the hub service) starts, runs its engine and answers; the hub it
    would ask about tokens is absent here, so a request without one is refused — not a 5xx."""
    env = slim_env(tmp_path / "slim", base=_base_env(tmp_path))
    env.update({"JUPYTERHUB_API_URL": "http://127.0.0.1:9/hub/api", "JUPYTERHUB_API_TOKEN": "no-hub-here",
                "JUPYTERHUB_SERVICE_PREFIX": "/services/jupyter-sched/"})
    port = free_port()
    log = tmp_path / "serve.log"
    # the central service runs jobs as other accounts: its job-log folder must be reachable by them
    # (pytest's tmp folders are mode 700), so it gets one under /tmp, mode 755
    job_logs = Path(tempfile.mkdtemp(prefix="slim-serve-jobs-", dir="/tmp"))
    job_logs.chmod(0o755)
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(BIN / "jupyter-sched"), "serve", "--db-url", f"sqlite:///{tmp_path / 'central.sqlite'}",
             "--allow-root", "--allow-unprivileged-port", "--ip", "127.0.0.1", "--port", str(port), "--SchedApp.inventory_source=simulated",
             "--SchedApp.simulated_gpus=2", f"--SchedApp.log_dir={job_logs}",
             "--HubSchedApp.job_python=/usr/bin/python3"],  # one every account can run (no job runs here)
            stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        answer = _wait_http(f"http://127.0.0.1:{port}/services/jupyter-sched/api/sched/config", proc, log)
        assert answer.status_code in (401, 403), answer.text[:300]
        time.sleep(1.0)  # a few engine cycles
        assert proc.poll() is None, log.read_text()[-4000:]
    finally:
        _stop(proc)
        shutil.rmtree(job_logs, ignore_errors=True)
    text = log.read_text(errors="replace")
    assert "Traceback" not in text and "ModuleNotFoundError" not in text, text[-4000:]
    assert refused_imports(tmp_path / "slim") == []


@pytest.mark.parametrize("code, want", [
    ("from jupyter_sched.magics.render import queue_frame; queue_frame([], None)",
     f"the magics' tables need pandas: {install_extra('lab')}"),
    ("from jupyter_sched.extension.config import PolicyConfig; PolicyConfig(placement_policy='fgd-planned')",
     install_extra("fgd")),
], ids=["magics tables name the [lab] extra", "fgd-planned names the [fgd] extra at load"])
def test_what_needs_an_extra_says_which_one_in_a_slim_install(tmp_path: Path, code: str, want: str) -> None:
    env = slim_env(tmp_path / "slim", base={**os.environ, "PYTHONPATH": str(ROOT)})
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and want in done.stderr, done.stderr[-2000:]


def test_simulate_in_a_slim_install_is_one_line_naming_the_sim_extra(tmp_path: Path) -> None:
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text("name: tiny\ncluster: {nodes: 1, gpus_per_node: 2}\n"
                        "jobs:\n  - {name: a, gpus: 1, submit: 0m, runtime: 10m, time_limit: 10m}\n")
    env = slim_env(tmp_path / "slim", base={**os.environ, "PYTHONPATH": str(ROOT)})
    done = subprocess.run([str(BIN / "jupyter-sched"), "simulate", str(scenario)], env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.startswith("jupyter-sched simulate: needs ") and install_extra("sim") in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr
