"""jupyter-scheduler's REST API on a real server whose backend is jupyter_sched (issue 19, "work with jupyter-scheduler").

A real jupyter_server runs both extensions: jupyter-scheduler 2.x (its handlers, models and UI
contract, unchanged) with ``scheduler_class`` / ``environment_manager_class`` /
``job_files_manager_class`` pointing at :mod:`jupyter_sched.jupyter_scheduler_backend`. A job and a
job definition created through jupyter-scheduler's own endpoints with a GPU compute type must be
ours — in our queue with our pending reason, in our store with the profile — and a job cancelled
from our CLI must read STOPPED in jupyter-scheduler's list.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nb_harness import TOKEN, sched_server_config, wait_for
from nbformat.v4 import new_code_cell, new_notebook

pytest.importorskip("jupyter_scheduler", reason="jupyter-scheduler comes with the [test] extra")

from jupyter_sched.cli.main import EXIT_OK, main
from jupyter_sched.jupyter_scheduler_backend import SCHEDULER_APP_CONFIG

pytestmark = pytest.mark.slow

PROFILE = "one-gpu"


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    config = sched_server_config(tmp_path, profiles={PROFILE: {"description": "one GPU, 10 minutes", "gpus": 1,
                                                               "time_limit": "10m"}})
    config["ServerApp"]["jpserver_extensions"] = {"jupyter_sched": True, "jupyter_scheduler": True}
    config["SchedulerApp"] = {**SCHEDULER_APP_CONFIG, "db_url": f"sqlite:///{tmp_path / 'unused-scheduler.sqlite'}"}
    return config


@pytest.fixture
def http(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[httpx.AsyncClient]:
    jp_asyncio_loop.run_until_complete(
        sched_app.serverapp.extension_manager.start_extension("jupyter_scheduler"))
    client = httpx.AsyncClient(base_url=f"http://localhost:{jp_http_port}/",
                               headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json() if response.content else None


async def test_jobs_and_definitions_made_in_jupyter_scheduler_are_ours(
        http: httpx.AsyncClient, jp_root_dir: Path, jp_http_port: int, sched_app: Any) -> None:
    nb = new_notebook(cells=[new_code_cell("import time\ntime.sleep(600)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(jp_root_dir / "train.ipynb"))

    environments = await ok(await http.get("scheduler/runtime_environments"))
    assert [(e["name"], e["compute_types"]) for e in environments] == [("jupyter_sched", [PROFILE])]
    config = await ok(await http.get("scheduler/config"))
    assert config["supported_features"]["job_definition"] is True
    assert config["supported_features"]["delete_job"] is False

    # every simulated GPU is busy, so the GPU job waits in our queue with our reason
    blocker = await ok(await http.post("api/sched/jobs", json={"name": "blocker", "gpus": 4,
                                                                 "command": ["sleep", "600"]}), 201)

    async def blocker_running() -> bool:
        return bool((await ok(await http.get(f"api/sched/jobs/{blocker['id']}")))["state"] == "running")

    await wait_for(blocker_running, timeout_s=30)
    created = await ok(await http.post("scheduler/jobs", json={
        "input_uri": "train.ipynb", "runtime_environment_name": "jupyter_sched", "name": "train-from-ui",
        "compute_type": PROFILE, "parameters": {"epochs": "3"}, "output_formats": ["ipynb"]}))
    job_id = created["job_id"]

    async def reason_in_queue() -> dict[str, Any] | None:
        rows = await ok(await http.get("api/sched/queue"))
        rows = rows.get("jobs", rows) if isinstance(rows, dict) else rows
        mine = [r for r in rows if r["id"] == job_id and r.get("reason")]
        return mine[0] if mine else None

    queued = await wait_for(reason_in_queue, timeout_s=30)
    stored = sched_app.services.store.get_job(job_id).job
    assert (stored.spec.profile, stored.spec.notebook, dict(stored.spec.parameters)) == (
        PROFILE, str(jp_root_dir / "train.ipynb"), {"epochs": "3"})
    described = await ok(await http.get(f"scheduler/jobs/{job_id}"))
    assert (described["status"], described["compute_type"]) == ("QUEUED", PROFILE)
    # the queue's reason in words, as the panel, magics and CLI show it (reason.text, issue 20)
    assert described["status_message"] == queued["reason"]["text"]["line"] and described["status_message"]

    definition = await ok(await http.post("scheduler/job_definitions", json={
        "input_uri": "train.ipynb", "runtime_environment_name": "jupyter_sched", "name": "nightly",
        "compute_type": PROFILE, "schedule": "0 2 * * *", "timezone": "Europe/Berlin",
        "parameters": {"epochs": "10"}, "output_formats": ["ipynb"]}))
    ours = await ok(await http.get(f"api/sched/definitions/{definition['job_definition_id']}"))
    assert (ours["schedule"], ours["timezone"], ours["job"]["profile"], ours["parameters"]) == (
        "0 2 * * *", "Europe/Berlin", PROFILE, {"epochs": "10"})
    listed = await ok(await http.get("scheduler/job_definitions"))
    assert [(d["name"], d["active"], d["schedule"]) for d in listed["job_definitions"]] == [("nightly", True, "0 2 * * *")]
    await ok(await http.patch(f"scheduler/job_definitions/{definition['job_definition_id']}", json={"active": False}),
             204)
    assert (await ok(await http.get(f"api/sched/definitions/{definition['job_definition_id']}")))["paused"] is True

    out, err = io.StringIO(), io.StringIO()
    code = await asyncio.to_thread(main, ["--url", f"http://localhost:{jp_http_port}/", "--token", TOKEN,
                                          "cancel", job_id], out=out, err=err)
    assert code == EXIT_OK, err.getvalue()
    jobs = await ok(await http.get("scheduler/jobs"))
    assert {j["job_id"]: j["status"] for j in jobs["jobs"]}[job_id] == "STOPPED"
    refused = await http.delete(f"scheduler/jobs/{job_id}")
    assert refused.status_code == 500 and "accounting record" in refused.text  # jupyter-scheduler maps errors to 500
    await ok(await http.delete(f"api/sched/jobs/{blocker['id']}"))


async def test_a_run_now_from_jupyter_scheduler_and_its_files(http: httpx.AsyncClient, jp_root_dir: Path) -> None:
    cell = new_code_cell("who = 'nobody'")
    cell.metadata["tags"] = ["parameters"]
    nb = new_notebook(cells=[cell, new_code_cell("print('hello', who)")])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(jp_root_dir / "hello.ipynb"))
    definition = await ok(await http.post("scheduler/job_definitions", json={
        "input_uri": "hello.ipynb", "runtime_environment_name": "jupyter_sched", "name": "hello",
        "compute_type": PROFILE, "output_formats": ["ipynb"]}))
    run = await ok(await http.post(f"scheduler/job_definitions/{definition['job_definition_id']}/jobs",
                                   json={"parameters": {"who": "fay"}}))

    async def completed() -> bool:
        job = await ok(await http.get(f"scheduler/jobs/{run['job_id']}"))
        return bool(job["status"] == "COMPLETED")

    await wait_for(completed, timeout_s=90)
    listed = await ok(await http.get("scheduler/jobs", params={"job_definition_id": definition["job_definition_id"]}))
    assert [j["job_id"] for j in listed["jobs"]] == [run["job_id"]]
    await ok(await http.get(f"scheduler/jobs/{run['job_id']}/download_files"), 204)
    job = await ok(await http.get(f"scheduler/jobs/{run['job_id']}"))
    files = {f["file_format"]: f["file_path"] for f in job["job_files"]}
    assert files["ipynb"] and files["input"], job["job_files"]
    executed = nbformat.read(str(jp_root_dir / files["ipynb"]), as_version=4)
    assert executed.cells[2].outputs[0]["text"] == "hello fay\n"
