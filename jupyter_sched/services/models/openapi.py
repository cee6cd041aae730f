"""``openapi.yaml`` from the models: one source of truth for validation and schema.

The request and response models (this package) validate what the API takes and describe what it
answers; :func:`render` writes them into ``jupyter_sched/extension/openapi.yaml``:

- ``components.schemas``: every model, converted from pydantic's JSON Schema (2020-12) to
  OpenAPI 3.0 (``nullable``, ``example``, boolean ``exclusiveMinimum``), nested models included;
- for each operation of :data:`OPERATIONS`: the request body's schema, the success answer's
  schema and the query parameters (from the query model's fields).

The rest of the file (paths, summaries, path parameters, media types other than JSON such as the
executed notebook's, hand-kept components such as ``IdlePolicy``) is kept as written.
``python -m jupyter_sched.services.models.openapi --write`` regenerates the file; the test
``tests/web/test_openapi.py`` fails when the committed file differs from what the models say.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from . import accounting, cancel, definitions, ends, jobs, nodes, quotas, system, teams, telemetry, users
from .base import ErrorResponse, QueryModel, RequestModel

__all__ = ["OPERATIONS", "Operation", "component_schemas", "main", "render"]

SPEC_PATH = Path(__file__).resolve().parents[2] / "extension" / "openapi.yaml"
_REF = "#/components/schemas/{model}"


@dataclass(frozen=True)
class Operation:
    """One route and method and the models that validate and describe it (``answer`` None: the
    success answer is not JSON and its entry is written by hand; ``body_required`` False: an empty
    body means the model's defaults)."""

    path: str
    method: str
    answer: type[BaseModel] | None
    status: str = "200"
    body: type[BaseModel] | None = None
    query: type[BaseModel] | None = None
    body_required: bool = True


OPERATIONS = [
    Operation("/config", "get", system.GetConfigResponse),
    Operation("/me", "get", quotas.GetMeResponse),
    Operation("/inventory", "get", system.GetInventoryResponse),
    Operation("/jobs", "get", jobs.ListJobsResponse, query=jobs.ListJobsRequest),
    Operation("/jobs", "post", jobs.Job, "201", body=jobs.SubmitJobRequest),
    Operation("/jobs/cancel", "post", cancel.CancelJobsResponse, body=cancel.CancelJobsRequest),
    Operation("/jobs/{job_id}", "get", jobs.Job),
    Operation("/jobs/{job_id}", "patch", jobs.Job, body=jobs.UpdateJobRequest),
    Operation("/jobs/{job_id}", "delete", jobs.Job, query=jobs.CancelJobRequest),
    Operation("/jobs/{job_id}/logs", "get", jobs.GetJobLogsResponse, query=jobs.GetJobLogsRequest),
    Operation("/jobs/{job_id}/progress", "post", jobs.ReportProgressResponse, body=jobs.ReportProgressRequest),
    Operation("/dryrun", "post", jobs.DryrunJobResponse, body=jobs.SubmitJobRequest),
    Operation("/leases", "get", jobs.ListJobsResponse, query=jobs.ListJobsRequest),
    Operation("/leases", "post", jobs.Job, "201", body=jobs.SubmitJobRequest, query=jobs.WaitLeaseRequest),
    Operation("/leases/{lease_id}", "get", jobs.Job, query=jobs.WaitLeaseRequest),
    Operation("/leases/{lease_id}", "delete", jobs.Job, query=jobs.CancelJobRequest),
    Operation("/leases/{lease_id}/keepalive", "post", jobs.KeepaliveLeaseResponse, body=jobs.KeepaliveLeaseRequest,
              body_required=False),
    Operation("/leases/{lease_id}/heartbeat", "post", jobs.LeaseHeartbeatResponse),
    Operation("/queue", "get", jobs.GetQueueResponse, query=jobs.GetQueueRequest),
    Operation("/quotas", "get", quotas.GetQuotasResponse),
    Operation("/quotas", "put", quotas.SetQuotasResponse, body=quotas.SetQuotasRequest),
    Operation("/quotas/what-if", "get", quotas.GetQuotaWhatIfResponse, query=quotas.GetQuotaWhatIfRequest),
    Operation("/teams/{team}/move", "post", teams.MoveTeamResponse, body=teams.MoveTeamRequest),
    Operation("/users/{user}/rename", "post", users.RenameUserResponse, body=users.RenameUserRequest),
    Operation("/nodes/{node}/cordon", "post", nodes.CordonNodeResponse, body=nodes.CordonNodeRequest),
    Operation("/nodes/{node}/uncordon", "post", nodes.CordonNodeResponse, body=nodes.UncordonNodeRequest,
              body_required=False),
    Operation("/idle-policy", "get", telemetry.GetIdlePolicyResponse),
    Operation("/idle-policy", "put", telemetry.GetIdlePolicyResponse, body=telemetry.SetIdlePolicyRequest),
    Operation("/profiles", "get", quotas.ListProfilesResponse),
    Operation("/zone-labels", "get", system.GetZoneLabelsResponse, query=system.GetZoneLabelsRequest),
    Operation("/telemetry", "get", telemetry.GetTelemetryResponse, query=telemetry.GetTelemetryRequest),
    Operation("/telemetry/history", "get", telemetry.GetTelemetryHistoryResponse,
              query=telemetry.GetTelemetryHistoryRequest),
    Operation("/idle", "get", telemetry.GetIdleResponse),
    Operation("/audit", "get", accounting.GetAuditResponse, query=accounting.GetAuditRequest),
    Operation("/eta-accuracy", "get", accounting.GetEtaAccuracyResponse, query=accounting.GetEtaAccuracyRequest),
    Operation("/usage", "get", accounting.GetUsageResponse, query=accounting.GetUsageRequest),
    Operation("/usage/report", "get", accounting.GetUsageReportResponse, query=accounting.GetUsageReportRequest),
    Operation("/usage/waste", "get", accounting.GetUsageWasteResponse, query=accounting.GetUsageWasteRequest),
    Operation("/usage/claimed-ends", "get", ends.ListClaimedEndsResponse),
    Operation("/jobs/{job_id}/end", "post", ends.CorrectEndResponse, body=ends.CorrectEndRequest),
    Operation("/definitions", "get", definitions.ListDefinitionsResponse, query=definitions.ListDefinitionsRequest),
    Operation("/definitions", "post", definitions.Definition, "201", body=definitions.CreateDefinitionRequest),
    Operation("/definitions/preview", "post", definitions.PreviewScheduleResponse,
              body=definitions.PreviewScheduleRequest),
    Operation("/definitions/{definition_id}", "get", definitions.DefinitionDetail,
              query=definitions.GetDefinitionRequest),
    Operation("/definitions/{definition_id}", "patch", definitions.Definition,
              body=definitions.UpdateDefinitionRequest),
    Operation("/definitions/{definition_id}", "delete", definitions.DeleteDefinitionResponse,
              query=definitions.DeleteDefinitionRequest),
    Operation("/definitions/{definition_id}/{action}", "post", definitions.Definition),
    Operation("/definitions/{definition_id}/runs", "get", definitions.ListDefinitionRunsResponse,
              query=definitions.ListDefinitionRunsRequest),
    Operation("/definitions/{definition_id}/runs", "post", definitions.DefinitionRun, "201",
              body=definitions.RunDefinitionRequest, body_required=False),
    Operation("/jobs/{job_id}/notebook", "get", None, query=definitions.GetExecutedNotebookRequest),
    Operation("/jobs/{job_id}/notebook/open", "post", definitions.OpenExecutedNotebookResponse),
]
"""The operations whose schemas the models give (the route table has a few more: events, metrics;
their entries in openapi.yaml are written by hand)."""


def _to_openapi(node: Any) -> Any:
    """JSON Schema 2020-12 (pydantic) → OpenAPI 3.0.3 schema object."""
    if isinstance(node, list):
        return [_to_openapi(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key == "x-ref":  # a component kept by hand (see models.telemetry)
            out["$ref"] = _REF.format(model=value)
        elif key == "examples":
            out["example"] = _to_openapi(value[0]) if value else None
        elif key == "const":
            out["enum"] = [value]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            out[key] = True
        else:
            out[key] = _to_openapi(value)
    any_of = out.get("anyOf")
    if isinstance(any_of, list) and {"type": "null"} in any_of:
        rest = [s for s in any_of if s != {"type": "null"}]
        out.pop("anyOf")
        base = rest[0] if len(rest) == 1 else {"anyOf": rest}
        if "$ref" in base:
            base = {"allOf": [base]}  # OpenAPI 3.0 ignores siblings of $ref
        merged = {**base, **out, "nullable": True}
        return merged
    return out


def _without_defaults(node: Any) -> Any:
    """The schema without ``default`` keys: a body's defaults are the server's business, and
    generated clients (openapi-typescript) take a default to mean "always present", which an
    answer that leaves unset fields out does not promise."""
    if isinstance(node, list):
        return [_without_defaults(v) for v in node]
    if isinstance(node, dict):
        return {k: ({name: _without_defaults(p) for name, p in v.items()} if k == "properties" and isinstance(v, dict)
                    else _without_defaults(v)) for k, v in node.items() if k != "default"}
    return node


def _schemas_of(model: type[BaseModel]) -> dict[str, Any]:
    mode: Literal["validation", "serialization"] = \
        "validation" if issubclass(model, (RequestModel, QueryModel)) else "serialization"
    raw = model.model_json_schema(ref_template=_REF, mode=mode)
    found = {name: _without_defaults(_to_openapi(schema)) for name, schema in raw.get("$defs", {}).items()}
    found[model.__name__] = _without_defaults(_to_openapi(raw))
    return found


def _models() -> list[type[BaseModel]]:
    """The models the operations use (nested ones come with them), and the error body."""
    out: list[type[BaseModel]] = [ErrorResponse]
    for op in OPERATIONS:
        out += [m for m in (op.answer, op.body, op.query) if m is not None]
    return out


def component_schemas() -> dict[str, Any]:
    """The OpenAPI schema of every model the operations use, by name (nested models included);
    query models are left out (they become parameters)."""
    schemas: dict[str, Any] = {}
    for model in _models():
        if issubclass(model, QueryModel):
            continue
        for name, schema in _schemas_of(model).items():
            if name in schemas and schemas[name] != schema:
                raise ValueError(f"two different schemas are named {name}")
            schemas[name] = schema
    return dict(sorted(schemas.items()))


def _parameters(model: type[BaseModel], existing: list[Any]) -> list[Any]:
    """Path parameters as written, then one query parameter per field of ``model``."""
    schema = _to_openapi(model.model_json_schema(ref_template=_REF))
    params = [p for p in existing if p.get("in") != "query"]
    for name, prop in schema.get("properties", {}).items():
        param: dict[str, Any] = {"name": name, "in": "query", "required": name in schema.get("required", ())}
        description = prop.pop("description", None)
        if description:
            param["description"] = description
        param["schema"] = prop
        params.append(param)
    return params


def render(spec: dict[str, Any]) -> dict[str, Any]:
    """``spec`` (openapi.yaml, parsed) with the models' schemas, bodies, answers and query parameters."""
    out = dict(spec)
    components = dict(out.get("components") or {})
    schemas = dict(components.get("schemas") or {})
    schemas.update(component_schemas())
    components["schemas"] = dict(sorted(schemas.items()))
    out["components"] = components
    paths = dict(out.get("paths") or {})
    for op in OPERATIONS:
        item = dict(paths.get(op.path) or {})
        operation = dict(item.get(op.method) or {})
        if op.body is not None:
            operation["requestBody"] = {"required": op.body_required, "content": {
                "application/json": {"schema": {"$ref": _REF.format(model=op.body.__name__)}}}}
        responses = dict(operation.get("responses") or {})
        if op.answer is not None:
            success = dict(responses.get(op.status) or {"description": "OK"})
            success["content"] = {**(success.get("content") or {}),  # other media types (text/csv) stay as written
                                  "application/json": {"schema": {"$ref": _REF.format(model=op.answer.__name__)}}}
            responses[op.status] = success
        responses.setdefault("default", {"$ref": "#/components/responses/Error"})
        operation["responses"] = responses
        if op.query is not None:
            operation["parameters"] = _parameters(op.query, list(operation.get("parameters") or ()))
        item[op.method] = operation
        paths[op.path] = item
    out["paths"] = paths
    return out


class _Dumper(yaml.SafeDumper):
    """Multi-line text as literal blocks (``|``), so descriptions read as written."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def dump(spec: dict[str, Any]) -> str:
    """The YAML text of ``spec`` (stable: keys in their order, long lines kept)."""
    text: str = yaml.dump(spec, Dumper=_Dumper, sort_keys=False, width=120, allow_unicode=True)
    return text


def main(argv: list[str] | None = None) -> int:
    """``--write``: regenerate openapi.yaml; ``--check``: exit 1 when it differs from the models."""
    parser = argparse.ArgumentParser(prog="python -m jupyter_sched.services.models.openapi")
    parser.add_argument("--write", action="store_true", help="rewrite openapi.yaml from the models")
    parser.add_argument("--check", action="store_true", help="exit 1 when openapi.yaml is out of date")
    args = parser.parse_args(argv)
    current = yaml.safe_load(SPEC_PATH.read_text())
    wanted = render(current)
    if args.write:
        SPEC_PATH.write_text(dump(wanted))
        return 0
    if wanted != current:
        print(f"{SPEC_PATH} is out of date: run python -m jupyter_sched.services.models.openapi --write",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
