"""Job definitions through the REST API of a real server: create, list, edit, pause, resume, run, delete,
real firings by the engine, and the executed notebook of a failed run (kept, downloadable, openable)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import nbformat
import pytest
from nb_harness import TOKEN, wait_for
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.slow


@pytest.fixture
def sched_settings() -> dict[str, Any]:
    return {"definition_min_interval_s": 1.0}


@pytest.fixture
def http(sched_app: Any, jp_http_port: int, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[httpx.AsyncClient]:
    client = httpx.AsyncClient(base_url=f"http://localhost:{jp_http_port}/api/sched/",
                               headers={"Authorization": f"token {TOKEN}"}, timeout=30)
    yield client
    jp_asyncio_loop.run_until_complete(client.aclose())


def write_notebook(path: Path, *sources: str, parameters: str | None = None) -> Path:
    cells = [new_code_cell(s) for s in sources]
    if parameters is not None:
        cell = new_code_cell(parameters)
        cell.metadata["tags"] = ["parameters"]
        cells.insert(0, cell)
    nb = new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))
    return path


async def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def _json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema → JSON Schema (``nullable: true`` becomes "or null")."""
    if isinstance(node, list):
        return [_json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "example")}
    return {"anyOf": [out, {"type": "null"}]} if node.get("nullable") else out


def conforms(operation_id: str, status: int, payload: Any) -> Any:
    """``payload`` validates against openapi.yaml's schema of ``operation_id`` answering ``status``."""
    import jsonschema
    import yaml

    from jupyter_sched.services.models.openapi import SPEC_PATH

    spec = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
    [op] = [op for item in spec["paths"].values() for op in item.values()
            if isinstance(op, dict) and op.get("operationId") == operation_id]
    schema = op["responses"][str(status)]["content"]["application/json"]["schema"]
    jsonschema.validate(payload, {**_json_schema(schema), "components": {"schemas": _json_schema(
        spec["components"]["schemas"])}}, cls=jsonschema.Draft202012Validator)
    return payload


async def test_definition_lifecycle_over_rest(http: httpx.AsyncClient, jp_root_dir: Path) -> None:
    nb = write_notebook(jp_root_dir / "daily.ipynb", "print(region)", parameters="region = 'us'")
    created = conforms("createDefinition", 201, await ok(await http.post("definitions", json={
        "name": "daily", "notebook": str(nb), "schedule": "0 12 * * 1-5", "timezone": "Europe/Berlin",
        "parameters": {"region": "eu"}, "gpus": 1, "time_limit": "10m"}), 201))
    assert created["schedule_description"] == "At 12:00 on Monday through Friday"
    assert created["next_run_at"].endswith(("T10:00:00Z", "T11:00:00Z"))
    listed = conforms("listDefinitions", 200, await ok(await http.get("definitions")))
    assert [d["id"] for d in listed] == [created["id"]]
    paused = conforms("pauseOrResumeDefinition", 200, await ok(await http.post(f"definitions/{created['id']}/pause")))
    assert paused["paused"] is True and paused["next_run_at"] is None
    resumed = await ok(await http.post(f"definitions/{created['id']}/resume"))
    assert resumed["paused"] is False
    edited = conforms("updateDefinition", 200, await ok(await http.patch(f"definitions/{created['id']}",
                                                                       json={"schedule": "30 6 * * *", "gpus": 0})))
    assert edited["schedule"] == "30 6 * * *" and edited["job"]["gpus"] == 0
    run = conforms("runDefinitionNow", 201, await ok(
        await http.post(f"definitions/{created['id']}/runs", json={"parameters": {"region": "apac"}}), 201))
    assert run["trigger"] == "manual" and run["parameters"] == {"region": "apac"}

    async def succeeded() -> bool:
        job = await ok(await http.get(f"jobs/{run['job_id']}"))
        return job["state"] == "succeeded"

    await wait_for(succeeded, timeout_s=90)
    executed = await ok(await http.get(f"jobs/{run['job_id']}/notebook"))
    assert "".join(executed["cells"][2]["outputs"][0]["text"]) == "apac\n"
    detail = conforms("getDefinition", 200, await ok(await http.get(f"definitions/{created['id']}")))
    assert detail["runs"][0]["job"]["state"] == "succeeded" and len(detail["upcoming"]) == 5
    conforms("listDefinitionRuns", 200, await ok(await http.get(f"definitions/{created['id']}/runs")))
    conforms("listDefinitions", 200, await ok(await http.get("definitions")))  # with its last run
    deleted = conforms("deleteDefinition", 200, await ok(await http.delete(f"definitions/{created['id']}")))
    assert deleted["deleted"] is True
    assert (await http.get(f"definitions/{created['id']}")).status_code == 404
    assert await ok(await http.get("definitions")) == []


async def test_the_engine_fires_a_schedule_and_a_failed_run_keeps_its_notebook(
        http: httpx.AsyncClient, jp_root_dir: Path) -> None:
    nb = write_notebook(jp_root_dir / "flaky.ipynb", "x = 1", "import json", "raise RuntimeError('no data for ' + day)",
                        parameters="day = 'monday'")
    created = await ok(await http.post("definitions", json={
        "name": "flaky", "notebook": str(nb), "schedule": "*/2 * * * * *", "gpus": 0,
        "parameters": {"day": "friday"}}), 201)

    async def failed_run() -> dict[str, Any] | None:
        runs = await ok(await http.get(f"definitions/{created['id']}/runs"))
        done = [r for r in runs if r["job"] and r["job"]["state"] == "failed"]
        return done[-1] if done else None

    run = await wait_for(failed_run, timeout_s=90)
    assert run["trigger"] == "schedule"
    reason = run["job"]["message"]
    assert reason == ("cell 4 (In [5] in the executed notebook) raised RuntimeError: no data for friday "
                      "(cell starts: raise RuntimeError('no data for ' + day))")
    await ok(await http.post(f"definitions/{created['id']}/pause"))
    download = await http.get(f"jobs/{run['job_id']}/notebook", params={"download": "true"})
    assert download.status_code == 200
    assert download.headers["Content-Type"] == "application/x-ipynb+json"  # as openapi.yaml documents it
    assert download.headers["Content-Disposition"] == (
        f'attachment; filename="flaky (executed {run["job_id"]}).ipynb"; '
        f"filename*=UTF-8''flaky%20%28executed%20{run['job_id']}%29.ipynb")
    executed = nbformat.reads(download.text, as_version=4)
    assert executed.cells[4].outputs[0]["ename"] == "RuntimeError"
    opened = conforms("openExecutedNotebook", 200, await ok(await http.post(f"jobs/{run['job_id']}/notebook/open")))
    assert opened["path"] == f"scheduled-runs/flaky (executed {run['job_id']}).ipynb"
    assert json.loads((jp_root_dir / opened["path"]).read_text())["cells"][4]["outputs"][0]["evalue"] == "no data for friday"
    # new user 22, N13's kind: opened again, the same copy; once edited, it is kept and the run goes beside it
    assert (await ok(await http.post(f"jobs/{run['job_id']}/notebook/open")))["path"] == opened["path"]
    (jp_root_dir / opened["path"]).write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    beside = await ok(await http.post(f"jobs/{run['job_id']}/notebook/open"))
    assert beside["path"] == f"scheduled-runs/flaky (executed {run['job_id']})-2.ipynb", beside
    assert json.loads((jp_root_dir / opened["path"]).read_text())["cells"] == []  # the user's edit stays
    runs = await ok(await http.get(f"definitions/{created['id']}/runs", params={"limit": 500}))
    times = [r["scheduled_for"] for r in runs if r["trigger"] == "schedule"]
    assert len(times) == len(set(times)), "one run per scheduled instant"


@pytest.mark.parametrize(("body", "field"), [
    ({"name": "x", "notebook": "a.ipynb", "schedule": "61 * * * *"}, "schedule"),
    ({"name": "x", "notebook": "a.ipynb", "schedule": "0 12 * * *", "timezone": "Mars/Olympus"}, "timezone"),
    ({"name": "x", "notebook": "a.ipynb", "gpus": "lots"}, "gpus"),
    ({"name": "x", "notebook": "a.ipynb", "parameters": {"not valid": 1}}, "parameters.not valid"),
    ({"name": "x", "notebook": "a.txt"}, "notebook"),
    ({"name": "x", "notebook": "a.ipynb", "command": ["rm", "-rf"]}, "command"),
    ({"notebook": "a.ipynb"}, "name"),
    ({"name": "x", "notebook": "a.ipynb", "missed": "always"}, "missed"),
], ids=["minute 61", "unknown zone", "gpus as a word", "parameter name with a space", "not a notebook",
        "a command", "no name", "unknown missed policy"])
async def test_bad_definitions_are_400_naming_the_field(http: httpx.AsyncClient, body: dict[str, Any],
                                                        field: str) -> None:
    response = await http.post("definitions", json=body)
    assert response.status_code in (400, 422), response.text
    error = response.json()["error"]
    assert error["field"] == field and error["hint"]


async def test_preview_shows_the_next_firings_in_words(http: httpx.AsyncClient) -> None:
    body = conforms("previewSchedule", 200, await ok(
        await http.post("definitions/preview", json={"schedule": "30 2 * * *", "timezone": "Europe/Berlin"})))
    assert body["description"] == "At 02:30 every day" and len(body["next"]) == 5
