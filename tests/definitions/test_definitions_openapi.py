"""openapi.yaml's definitions entries come from the request and response models.

The generator and its drift test are i15-services' (``jupyter_sched.services.models.openapi``,
``tests/web/test_openapi.py``); these tests check the definitions side of it: every definitions
route is generated from the models its handler parses and answers, and a definition's run fields
are typed exactly as a job submission's.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from jupyter_sched.definitions.validation import JOB_FIELDS
from jupyter_sched.extension.definitions_web import DEFINITION_HANDLERS
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.services.models import definitions as m
from jupyter_sched.services.models.openapi import OPERATIONS, SPEC_PATH, Operation

HANDLER_MODELS: dict[tuple[str, str], tuple[type[Any] | None, type[Any] | None, type[Any] | None]] = {
    # (path, method): (query model, body model, answer model) the handler in definitions_web uses
    ("/definitions", "get"): (m.ListDefinitionsRequest, None, m.ListDefinitionsResponse),
    ("/definitions", "post"): (None, m.CreateDefinitionRequest, m.Definition),
    ("/definitions/preview", "post"): (None, m.PreviewScheduleRequest, m.PreviewScheduleResponse),
    ("/definitions/{definition_id}", "get"): (m.GetDefinitionRequest, None, m.DefinitionDetail),
    ("/definitions/{definition_id}", "patch"): (None, m.UpdateDefinitionRequest, m.Definition),
    ("/definitions/{definition_id}", "delete"): (m.DeleteDefinitionRequest, None, m.DeleteDefinitionResponse),
    ("/definitions/{definition_id}/{action}", "post"): (None, None, m.Definition),
    ("/definitions/{definition_id}/runs", "get"): (m.ListDefinitionRunsRequest, None, m.ListDefinitionRunsResponse),
    ("/definitions/{definition_id}/runs", "post"): (None, m.RunDefinitionRequest, m.DefinitionRun),
    ("/jobs/{job_id}/notebook", "get"): (m.GetExecutedNotebookRequest, None, None),
    ("/jobs/{job_id}/notebook/open", "post"): (None, None, m.OpenExecutedNotebookResponse),
}


def _operation(path: str, method: str) -> Operation:
    found = [op for op in OPERATIONS if (op.path, op.method) == (path, method)]
    assert len(found) == 1, f"{method} {path}: register it once in services/models/openapi.py OPERATIONS"
    return found[0]


def test_every_definitions_route_is_generated_from_its_handlers_models() -> None:
    documented = {(path, method) for path, item in yaml.safe_load(SPEC_PATH.read_text())["paths"].items()
                  for method in item if method != "parameters"
                  and (path.startswith("/definitions") or path.startswith("/jobs/{job_id}/notebook"))}
    assert documented == set(HANDLER_MODELS)
    assert len(DEFINITION_HANDLERS) == len({path for path, _ in HANDLER_MODELS})
    for (path, method), (query, body, answer) in HANDLER_MODELS.items():
        op = _operation(path, method)
        assert (op.query, op.body, op.answer) == (query, body, answer), f"{method} {path}"


@pytest.mark.parametrize(("path", "required"), [("/definitions", True), ("/definitions/{definition_id}/runs", False)])
def test_run_now_may_send_no_body_and_create_must(path: str, required: bool) -> None:
    spec = yaml.safe_load(SPEC_PATH.read_text())
    assert spec["paths"][path]["post"]["requestBody"]["required"] is required


def test_the_executed_notebook_is_documented_as_a_notebook_not_json() -> None:
    spec = yaml.safe_load(SPEC_PATH.read_text())
    content = spec["paths"]["/jobs/{job_id}/notebook"]["get"]["responses"]["200"]["content"]
    assert list(content) == ["application/x-ipynb+json"]


def test_a_definitions_run_fields_are_typed_as_a_job_submission() -> None:
    run_fields = m.UpdateDefinitionRequest.model_fields
    own = {"name", "notebook", "script", "args", "parameters", "schedule", "timezone", "paused", "missed",
           "overlap", "compute_type"}
    assert set(run_fields) - own == set(JOB_FIELDS)
    for name in JOB_FIELDS:
        assert run_fields[name].annotation == SubmitJobRequest.model_fields[name].annotation, name
    assert m.RunDefinitionRequest.model_json_schema()["additionalProperties"] is False, "unknown fields are refused"
