"""openapi.yaml (shipped in the package) describes exactly the live route table."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

import pytest
import yaml
from tornado import web

from .test_auth import sched_routes

HTTP_METHODS = ("get", "post", "put", "delete", "patch")


def load_spec() -> dict[str, Any]:
    text = files("jupyter_sched.extension").joinpath("openapi.yaml").read_text()
    spec: dict[str, Any] = yaml.safe_load(text)
    return spec


def live_operations(serverapp: Any) -> set[tuple[str, str]]:
    ops = set()
    for pattern, handler in sched_routes(serverapp):
        path = pattern[pattern.index("api/sched/") + len("api/sched") :].rstrip("$")
        path = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", path)
        for method in HTTP_METHODS:
            if getattr(handler, method) is not web.RequestHandler._unimplemented_method:
                ops.add((path, method))
    return ops


def test_openapi_paths_and_methods_match_the_live_route_table(sched_app: Any, jp_serverapp: Any) -> None:
    spec = load_spec()
    documented = {(path, method) for path, item in spec["paths"].items() for method in item if method in HTTP_METHODS}
    live = live_operations(jp_serverapp)
    assert documented - live == set(), "documented but not served"
    assert live - documented == set(), "served but not documented"


def test_every_operation_is_named_verb_noun_and_models_resolve() -> None:
    spec = load_spec()
    schemas = spec["components"]["schemas"]
    refs: list[str] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    refs.append(value)
                else:
                    collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    ids = []
    for path, item in spec["paths"].items():
        for method, op in item.items():
            if method not in HTTP_METHODS:
                continue
            ids.append(op["operationId"])
            assert re.fullmatch(r"[a-z]+[A-Z][A-Za-z]+", op["operationId"]), op["operationId"]
            assert "responses" in op and "default" in op["responses"], f"{method} {path} lacks the error response"
    assert len(ids) == len(set(ids)), "operationIds are unique"
    collect(spec)
    for ref in refs:
        kind, name = ref.split("/")[-2:]
        assert name in spec["components"][kind], f"unresolved {ref}"
    for name in schemas:
        if name.endswith(("Request", "Response")):
            assert re.fullmatch(r"[A-Z][a-z]+[A-Z]\w+", name), name


def json_schema(node: Any) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema (``nullable: true`` becomes "or null")."""
    if isinstance(node, list):
        return [json_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: json_schema(v) for k, v in node.items() if k not in ("nullable", "example")}
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out


def response_schema(spec: dict[str, Any], method: str, path: str, status: int) -> dict[str, Any]:
    """The documented schema of ``method path`` answering ``status`` (``path`` is a live path)."""
    for template, item in spec["paths"].items():
        if re.fullmatch(re.sub(r"\{\w+\}", "[^/]+", template), path) and method in item:
            responses = item[method]["responses"]
            answer = responses.get(str(status), responses["default"])
            if "$ref" in answer:
                answer = spec["components"]["responses"][answer["$ref"].split("/")[-1]]
            content = answer["content"]
            return dict(content.get("application/json", next(iter(content.values())))["schema"])
    raise AssertionError(f"{method} {path} is not documented")


async def test_live_responses_conform_to_the_documented_models(sched_app: Any, api: Any, kernel: Any) -> None:
    import jsonschema

    from .conftest import BOSS_TOKEN, IVAN_TOKEN, wait_for

    spec = load_spec()
    components = {"components": {"schemas": json_schema(spec["components"]["schemas"])}}
    seen = []

    async def check(method: str, path: str, body: Any = None, *, token: str = IVAN_TOKEN,
                    params: dict[str, str] | None = None) -> Any:
        status, payload = await api(method.upper(), path, body, token=token, params=params)
        schema = {**json_schema(response_schema(spec, method, "/" + path, status)), **components}
        jsonschema.validate(payload, schema, cls=jsonschema.Draft202012Validator)
        seen.append((method, path, status))
        return payload

    for path in ("config", "me", "inventory", "jobs", "leases", "queue", "quotas", "profiles", "usage"):
        await check("get", path)
    job = await check("post", "jobs", {"gpus": 1, "command": ["true"], "name": "conform"})
    await check("get", f"jobs/{job['id']}")
    await check("get", f"jobs/{job['id']}/logs")
    await check("post", "dryrun", {"gpus": 2, "command": ["true"]})
    await check("post", "dryrun", {"gpus": 64, "command": ["true"]})
    lease = await check("post", "leases", {"gpus": 1, "kernel_id": await kernel()})
    await check("get", f"leases/{lease['id']}")
    await check("get", "queue")
    await check("get", "telemetry")
    await check("get", "telemetry", params={"gpu": "GPU-none"})
    # newuser35 n12: the panel's zone named as the CLI names it; a name that is no zone is refused naming the field
    berlin = await check("get", "zone-labels", params={"zone": "Europe/Berlin"})
    assert {(z["offset_minutes"], z["label"]) for z in berlin["labels"]} == {(60, "CET"), (120, "CEST")}, berlin
    bad = await check("get", "zone-labels", params={"zone": "Europe/Berln"})
    assert bad["error"]["field"] == "zone" and "did you mean 'Europe/Berlin'?" in bad["error"]["message"], bad

    async def granted() -> bool:
        _, current = await api("GET", f"leases/{lease['id']}")
        return bool(current["state"] == "running")

    await wait_for(granted)
    await check("post", f"leases/{lease['id']}/keepalive")
    await check("get", "telemetry", params={"lease": lease["id"]})
    await check("delete", f"leases/{lease['id']}")
    await check("put", "quotas", {"quotas": [{"team": "ml", "guaranteed": 1, "borrowing_limit": 1}]}, token=BOSS_TOKEN)
    await check("get", "audit", token=BOSS_TOKEN)
    await check("get", "usage", token=BOSS_TOKEN, params={"all": "true", "by": "user,team"})
    await check("get", "jobs/nobody")
    await check("post", "jobs", {"gpus": "two", "command": ["true"]})
    await check("put", "quotas", {"quotas": []})
    assert {s for _, _, s in seen} >= {200, 201, 400, 403, 404}


def test_openapi_yaml_is_what_the_models_say() -> None:
    """One source of truth: the request/response schemas, bodies, answers and query parameters in
    openapi.yaml are generated from the pydantic models (jupyter_sched.services.models.openapi)."""
    from jupyter_sched.services.models.openapi import render

    spec = load_spec()
    assert render(spec) == spec, "openapi.yaml drifted from the models: python -m jupyter_sched.services.models.openapi --write"


def test_every_operation_with_a_model_is_a_live_route(sched_app: Any, jp_serverapp: Any) -> None:
    from jupyter_sched.services.models.openapi import OPERATIONS

    live = live_operations(jp_serverapp)
    assert {(op.path, op.method) for op in OPERATIONS} <= live


@pytest.mark.parametrize("error", [
    pytest.param(lambda: __import__("jupyter_sched.errors", fromlist=["x"]).QuotaError(
        "4 GPUs can never fit", field="gpus", hint="ask for 1", details={"requested": 4}).to_json(), id="a 4xx body"),
    pytest.param(lambda: __import__("jupyter_sched.errors", fromlist=["x"]).StoreError("db down").public_json("ab12cd34"),
                 id="a 5xx body"),
])
def test_error_bodies_are_the_documented_error_response(error: Any) -> None:
    from jupyter_sched.services.models import ErrorResponse

    ErrorResponse.model_validate(error())


def test_newuser7_finding_4_the_schema_says_how_a_share_and_no_gpu_read() -> None:
    """New user 7, F4: a 0.5-GPU job answers ``resources: {gpus: 1, gpu_milli: 500}`` and a CPU-only one
    ``{gpus: 0, gpu_milli: 1000}``; openapi.yaml (which the README points scripts to) did not say how
    to read either. The fields now say it where a script's author looks."""
    schemas = load_spec()["components"]["schemas"]
    resources = schemas["Resources"]["properties"]
    assert "0.5 GPU: gpus 1, gpu_milli 500" in resources["gpus"]["description"]
    assert "0 for work that needs no GPU" in resources["gpus"]["description"]
    # a 0-GPU job's gpu_milli reads 0 (new user 11, N8: it said 1000, "not used")
    assert "0 when gpus is 0" in resources["gpu_milli"]["description"]
    assert "0 when gpu_uuids is empty" in schemas["Allocation"]["properties"]["gpu_milli"]["description"]
