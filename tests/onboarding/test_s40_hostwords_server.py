"""Session 40, s39-hostask's left-overs through a real server (newuser39 n8/n10, red39 R9): the words of a CPU wait
on GPU nodes whose host is split among their GPUs, where a user reads them (the job's reason, ``queue``,
``submit --dry-run``), the split itself in ``GET config`` and ``status``, and a ``--cpu`` above the host the job
runs on.

Inventory file (StaticInventory): g1 with 4 GPUs and 1 core (a quarter core per GPU), g2 with 4 GPUs and 4 cores per
GPU of this host's count. A 4-GPU, 2-core job can only take g2 (g1's 4 GPUs bring 1 core); then a 1-GPU, 1-core job
waits with g1 wholly free. It was told "no node with 1 free GPU has 1000 millicores CPU free" — g1 has its core free;
its GPUs bring a quarter each. A ``--cpu`` above this host's cores was placed by g2's declared cores, though every
local job runs on this host. Real jupyter server, the CLI as a subprocess, the local executor."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_server import TLS
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

CLI = str(Path(sys.executable).parent / "jupyter-sched")
ROOT = Path(__file__).resolve().parents[2]
USERS = {"tok-ann": "ann", OWNER_TOKEN: "boss"}
CORES = os.cpu_count() or 1

pytestmark = pytest.mark.skipif(CORES < 2, reason="the 4-GPU job asks 2 cores, which this host must have")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    work = tmp_path_factory.mktemp("s40hw")
    nodes = work / "nodes.yaml"
    nodes.write_text("nodes:\n"
                     "  - {name: g1, gpu_count: 4, gpu_model: A100-80GB, gpu_memory: 80GiB, cpus: 1}\n"
                     f"  - {{name: g2, gpu_count: 4, gpu_model: A100-80GB, gpu_memory: 80GiB, cpus: {4 * CORES}}}\n")
    srv = EmbeddedServer.start(work, users=USERS, admin_users=["boss"], inventory_source="static",
                               inventory_file=str(nodes))
    try:
        yield srv
    finally:
        try:  # jobs outlive a killed server by design: stop this module's first
            for job in _api(srv, OWNER_TOKEN).get("jobs", params={"all": "true"}).json():
                if job["state"] in ("pending", "admitted", "running"):
                    _api(srv, OWNER_TOKEN).delete(f"jobs/{job['id']}")
        finally:
            srv.kill()


def _api(server: EmbeddedServer, token: str = "tok-ann") -> httpx.Client:
    return httpx.Client(base_url=server.api, headers={"Authorization": f"token {token}"}, timeout=30, verify=TLS)


def _cli(server: EmbeddedServer, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
    env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": "tok-ann", "PYTHONPATH": str(ROOT)})
    return subprocess.run([CLI, *argv], env=env, capture_output=True, text=True, timeout=120)


def _until(server: EmbeddedServer, job_id: str, done: Any) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while True:
        job = _api(server).get(f"jobs/{job_id}").json()
        if done(job):
            return dict(job)
        assert time.monotonic() < deadline, job
        time.sleep(0.2)


WAIT = ("4 A100-80GB GPUs free, but it asks for 1 CPU core with 1 GPU, and a GPU node's host is split among its GPUs: "
        "g1 gives 0.25 CPU core per GPU it hands out (1 CPU core, 4 GPUs)")
UNBLOCK = "Ask for at most cpu 0.25 with 1 GPU, or for 4 GPUs, to start on g1 now."


def test_s40_hostwords_a_cpu_wait_names_the_gpu_nodes_part_in_the_reason_the_queue_and_the_dry_run(
        server: EmbeddedServer) -> None:
    full = _api(server).post("jobs", json={"name": "full", "gpus": 4, "cpu": 2, "time_limit": "10m",
                                           "command": ["sleep", "300"]})
    assert full.status_code == 201, full.text
    placed = _until(server, full.json()["id"], lambda j: j["state"] in ("admitted", "running"))
    assert placed["allocation"]["node"] == "g2", placed
    dry = _cli(server, "submit", "--dry-run", "--gpus", "1", "--cpu", "1", "--time-limit", "5m", "--", "true")
    assert dry.returncode == 0 and dry.stdout.startswith("Would wait: "), dry
    assert WAIT in dry.stdout and "millicores" not in dry.stdout, dry.stdout
    assert "ask for at most cpu 0.25 with 1 GPU, or for 4 GPUs, to start on g1 now" in dry.stdout, dry.stdout
    want = _api(server).post("jobs", json={"name": "want1", "gpus": 1, "cpu": 1, "time_limit": "5m",
                                           "command": ["true"]})
    assert want.status_code == 201, want.text
    job = _until(server, want.json()["id"], lambda j: (j.get("reason") or {}).get("code") == "WaitingForCapacity")
    reason = job["reason"]
    assert reason["message"].startswith(WAIT), reason["message"]
    assert reason["unblock"] == reason["text"]["unblock"] == UNBLOCK, reason  # the ETA says when it starts else
    part = reason["details"]["host_share"]
    assert part["node"] == "g1" and part["max_cpu_millis"] == 250 and reason["details"]["field"] == "cpu", part
    queue = _cli(server, "queue")
    assert queue.returncode == 0 and WAIT in " ".join(queue.stdout.split()), queue.stdout
    _api(server).delete(f"jobs/{want.json()['id']}")
    _api(server).delete(f"jobs/{full.json()['id']}")


def test_s40_hostwords_config_and_status_say_the_split(server: EmbeddedServer) -> None:
    for token in ("tok-ann", OWNER_TOKEN):  # a user and an admin read it alike
        config = _api(server, token).get("config").json()
        assert config["gpu_node_host_share"] is True, config
    status = _cli(server, "status")
    assert status.returncode == 0, status
    line = next(ln for ln in status.stdout.splitlines() if ln.startswith("host "))
    assert line.split(None, 1)[1] == (
        "a GPU node's CPUs and host memory are split among its GPUs (c.SchedApp.gpu_node_host_share): g1 gives 0.25 "
        f"CPU core per GPU; g2 gives {CORES:g} CPU core{'s' if CORES > 1 else ''} per GPU — a job without GPUs "
        "reserves none of it"), line


def test_newuser39_n10_a_cpu_ask_above_this_host_is_refused_whatever_the_inventory_declares(
        server: EmbeddedServer) -> None:
    """g2 declares 4 x this host's cores; the local executor runs the job on this host, which has CORES: a ``--cpu``
    above them is refused as ``--memory`` above the host's is (unschedulable, exit 1; the dry run: never), naming
    the node that declares more. It was placed by g2's numbers."""
    over = str(CORES + 1)
    said = _api(server).post("jobs", json={"gpus": 2, "cpu": CORES + 1, "command": ["true"]})
    assert said.status_code == 422, said.text
    error = said.json()["error"]
    assert error["code"] == "unschedulable" and error["field"] == "cpu", error
    assert error["message"] == (f"cpu {over} is more than this host's {CORES} cores — local jobs run on this host, "
                                f"whatever node the inventory places them on (it declares more cores on g2 "
                                f"({4 * CORES}))"), error
    assert error["hint"] == f"ask for at most cpu {CORES}, or leave cpu out", error
    run = _cli(server, "submit", "--gpus", "2", "--cpu", over, "--time-limit", "5m", "--", "true")
    assert run.returncode == 1 and "[unschedulable]" in run.stderr, run
    dry = _cli(server, "submit", "--dry-run", "--gpus", "2", "--cpu", over, "--time-limit", "5m", "--", "true")
    assert dry.returncode == 0 and dry.stdout.startswith("Would never start here: "), dry
    assert "local jobs run on this host" in dry.stdout, dry.stdout


def test_newuser39_n10_doctor_says_an_inventory_file_bigger_than_this_host(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The start-up WARNING of newuser39 n10 is in the server's log only; an admin who runs ``jupyter-sched doctor``
    (the config this server reads, its embedded store) now reads it too: ``warn`` naming the node, and ``ok`` once
    the inventory file declares no more than this host. Real doctor main, real SQLite store, real config file."""
    import io
    import json

    from jupyter_sched.cli import doctor
    from jupyter_sched.services.host_size import host_memory_mib
    from jupyter_sched.store import Store, sqlite_url
    from tests.onboarding.test_newuser29_n4_config_check import config_folders

    folders = config_folders(tmp_path, monkeypatch)
    (folders.data / "jupyter_sched").mkdir(parents=True)
    Store(sqlite_url(folders.data / "jupyter_sched" / "sched.sqlite")).close()
    nodes = tmp_path / "nodes.yaml"
    (folders.conf / "jupyter_server_config.py").write_text(
        f'c.SchedApp.inventory_source = "static"\nc.SchedApp.inventory_file = {str(nodes)!r}\n', encoding="utf-8")

    def scan() -> tuple[int, str, dict[str, Any]]:
        out, err = io.StringIO(), io.StringIO()
        code = doctor.main([], out=out, err=err)
        report = io.StringIO()
        doctor.main(["--json"], out=report, err=io.StringIO())
        (check,) = [c for c in json.loads(report.getvalue())["checks"] if c["name"] == "inventory_host"]
        return code, out.getvalue(), check

    big = 8 * CORES
    nodes.write_text(f"nodes:\n  - {{name: g1, gpu_count: 2, gpu_model: A100, gpu_memory: 80GiB, cpus: {big}}}\n")
    code, out, check = scan()
    assert code == doctor.EXIT_OK, out  # a warning: said, the exit code unchanged
    assert check["status"] == "warn" and f"g1 (cpus {big})" in check["message"], check
    assert check["fix"] == f"declare this host's own cpus and memory in {nodes}", check
    line = next(ln for ln in out.splitlines() if ln.startswith("inventory: "))
    assert "the inventory declares more host CPU or memory than this host has" in line and str(nodes) in line, line
    assert "a cpu or memory ask above this host's is refused" in line, line
    memory_gib = max(1, host_memory_mib() // 1024)
    nodes.write_text("nodes:\n  - {name: g1, gpu_count: 2, gpu_model: A100, gpu_memory: 80GiB, cpus: 1, "
                     f"memory: {memory_gib}GiB}}\n")
    code, out, check = scan()
    assert code == doctor.EXIT_OK and check["status"] == "ok", (out, check)
    assert not [ln for ln in out.splitlines() if ln.startswith("inventory: ")], out


def test_s40_hostwords_a_definition_asking_above_this_host_is_refused_when_saved(server: EmbeddedServer,
                                                                                  tmp_path: Path) -> None:
    """A scheduled notebook's cpu or memory above this host was saved (201) and every firing refused; now the create
    and the edit answer as ``POST jobs`` does (422 unschedulable, naming the field), and nothing is saved."""
    script = tmp_path / "t.py"
    script.write_text("print(1)\n")
    base = {"script": str(script), "schedule": "0 3 * * *", "gpus": 2}
    for extra, field in (({"cpu": CORES + 1}, "cpu"), ({"memory": "64TiB"}, "memory")):
        made = _api(server).post("definitions", json={**base, "name": f"s40-over-{field}", **extra})
        assert made.status_code == 422, made.text
        error = made.json()["error"]
        assert error["code"] == "unschedulable" and error["field"] == field, error
        assert "is more than this host's" in error["message"], error
    names = [d["name"] for d in _api(server).get("definitions").json()]
    assert not [n for n in names if n.startswith("s40-over-")], names
    kept = _api(server).post("definitions", json={**base, "name": "s40-within", "cpu": 1})
    assert kept.status_code == 201, kept.text
    edit = _api(server).patch(f"definitions/{kept.json()['id']}", json={"cpu": CORES + 1})
    assert edit.status_code == 422 and edit.json()["error"]["field"] == "cpu", edit.text
    assert _api(server).get(f"definitions/{kept.json()['id']}").json()["job"]["cpu"] == 1
    _api(server).delete(f"definitions/{kept.json()['id']}")
