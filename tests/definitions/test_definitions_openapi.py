"""openapi.yaml's definitions entries come from the request and response models (and stay in step)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from jupyter_sched.definitions.validation import JOB_FIELDS
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models import definitions as m
from jupyter_sched.services.models.openapi import (
    component_schema,
    components,
    main,
    query_parameters,
    replace_components,
    shipped_path,
    to_openapi30,
)

OPERATIONS: dict[str, tuple[str, str, type[BaseModel] | None, type[BaseModel] | None, str, type[BaseModel] | None]] = {
    # operationId: (method, path, query model, body model, success status, response model)
    "listDefinitions": ("get", "/definitions", m.ListDefinitionsRequest, None, "200", m.ListDefinitionsResponse),
    "createDefinition": ("post", "/definitions", None, m.CreateDefinitionRequest, "201", m.Definition),
    "previewSchedule": ("post", "/definitions/preview", None, m.PreviewScheduleRequest, "200",
                        m.PreviewScheduleResponse),
    "getDefinition": ("get", "/definitions/{definition_id}", m.GetDefinitionRequest, None, "200", m.DefinitionDetail),
    "updateDefinition": ("patch", "/definitions/{definition_id}", None, m.UpdateDefinitionRequest, "200", m.Definition),
    "deleteDefinition": ("delete", "/definitions/{definition_id}", None, None, "200", m.DeleteDefinitionResponse),
    "pauseOrResumeDefinition": ("post", "/definitions/{definition_id}/{action}", None, None, "200", m.Definition),
    "listDefinitionRuns": ("get", "/definitions/{definition_id}/runs", m.ListDefinitionRunsRequest, None, "200",
                           m.ListDefinitionRunsResponse),
    "runDefinitionNow": ("post", "/definitions/{definition_id}/runs", None, m.RunDefinitionRequest, "201",
                         m.DefinitionRun),
    "getExecutedNotebook": ("get", "/jobs/{job_id}/notebook", m.GetExecutedNotebookRequest, None, "200", None),
    "openExecutedNotebook": ("post", "/jobs/{job_id}/notebook/open", None, None, "200",
                             m.OpenExecutedNotebookResponse),
}


@pytest.fixture(scope="module")
def spec() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(shipped_path().read_text(encoding="utf-8"))
    return loaded


def ref(node: dict[str, Any]) -> str | None:
    value = node.get("$ref")
    return value.rsplit("/", 1)[-1] if isinstance(value, str) else None


def test_the_generated_components_are_what_the_models_say(spec: dict[str, Any]) -> None:
    assert main(["--check"]) == 0, "run: python -m jupyter_sched.services.models.openapi"
    documented = spec["components"]["schemas"]
    for name, schema in components().items():
        assert documented[name] == schema, name


@pytest.mark.parametrize("operation_id", sorted(OPERATIONS))
def test_each_definitions_operation_names_the_models_its_handler_uses(spec: dict[str, Any], operation_id: str) -> None:
    method, path, query, body, status, answer = OPERATIONS[operation_id]
    op = spec["paths"][path][method]
    assert op["operationId"] == operation_id
    documented_query = [p for p in op.get("parameters", []) if p.get("in") == "query"]
    assert documented_query == (query_parameters(query) if query else [])
    if body is None:
        assert "requestBody" not in op
    else:
        assert ref(op["requestBody"]["content"]["application/json"]["schema"]) == body.__name__
    content = op["responses"][status]["content"]
    if answer is None:
        assert "application/x-ipynb+json" in content
    else:
        assert ref(content["application/json"]["schema"]) == answer.__name__


def test_a_definitions_run_fields_are_typed_as_a_job_submission() -> None:
    run_fields = m.UpdateDefinitionRequest.model_fields
    own = {"name", "notebook", "script", "args", "parameters", "schedule", "timezone", "paused", "missed",
           "compute_type"}
    assert set(run_fields) - own == set(JOB_FIELDS)
    for name in JOB_FIELDS:
        assert run_fields[name].annotation == SubmitJobRequest.model_fields[name].annotation, name


def test_json_schema_becomes_openapi_3_0() -> None:
    assert to_openapi30({"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "X"}) == \
        {"type": "string", "nullable": True}
    assert to_openapi30({"anyOf": [{"$ref": "#/components/schemas/Job"}, {"type": "null"}]}) == \
        {"allOf": [{"$ref": "#/components/schemas/Job"}], "nullable": True}
    assert to_openapi30({"anyOf": [{"type": "integer"}, {"type": "number"}, {"type": "string"}],
                         "examples": [1, 2]}) == {"anyOf": [{"type": "number"}, {"type": "string"}], "example": 1}
    assert to_openapi30({"const": "a"}) == {"enum": ["a"]}
    assert component_schema(m.RunDefinitionRequest)["additionalProperties"] is False, "unknown fields are refused"


def test_a_rewrite_touches_only_the_generated_blocks() -> None:
    text = ("openapi: 3.0.3\npaths:\n  /x:\n    get: {operationId: getX}\ncomponents:\n  schemas:\n"
            "    Kept:\n      type: object   # hand-written, comment kept\n"
            "    Mine:\n      type: string\n    AlsoKept: {type: integer}\n")
    out = replace_components(text, {"Mine": {"type": "object", "properties": {"a": {"type": "string"}}},
                                    "New": {"type": "boolean"}})
    assert out == ("openapi: 3.0.3\npaths:\n  /x:\n    get: {operationId: getX}\ncomponents:\n  schemas:\n"
                   "    Kept:\n      type: object   # hand-written, comment kept\n"
                   "    Mine:\n      type: object\n      properties:\n        a: {type: string}\n"
                   "    AlsoKept: {type: integer}\n    New:\n      type: boolean\n")
