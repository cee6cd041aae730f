"""``openapi.yaml`` component schemas generated from the request and response models.

The pydantic models are the source of truth for the shapes they describe; this module turns a
model's JSON Schema (draft 2020-12, as pydantic writes it) into the OpenAPI 3.0.3 dialect the
shipped ``openapi.yaml`` uses, and writes or checks those components in the file::

    python -m jupyter_sched.services.models.openapi           # rewrite the generated components
    python -m jupyter_sched.services.models.openapi --check   # exit 1 naming the components that drifted

Only the models listed in :data:`GENERATED` are written; the rest of the file (paths, summaries,
hand-written components) is left byte for byte as it is. After a rewrite, regenerate the panel's
TypeScript types: ``cd labextension && jlpm openapi:generate``.

Dialect changes (OpenAPI 3.0 has no ``null`` type and no ``examples`` array in schemas):
``anyOf [X, null]`` → ``X`` + ``nullable: true`` (a ``$ref`` becomes ``allOf: [$ref]``);
``anyOf [integer, number]`` → ``number``; ``examples: [v, ...]`` → ``example: v``; ``const`` →
``enum``; titles and ``default: null`` are dropped; nested models are ``$ref``\\ s to their own
components.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel

from . import definitions as _definitions

__all__ = ["GENERATED", "component_schema", "components", "query_parameters", "render_component", "replace_components",
           "to_openapi30"]

REF_TEMPLATE = "#/components/schemas/{model}"

Mode = Literal["validation", "serialization"]

GENERATED: tuple[tuple[type[BaseModel], Mode], ...] = (
    (_definitions.Definition, "serialization"),
    (_definitions.DefinitionDetail, "serialization"),
    (_definitions.DefinitionRun, "serialization"),
    (_definitions.ListDefinitionsResponse, "serialization"),
    (_definitions.ListDefinitionRunsResponse, "serialization"),
    (_definitions.DeleteDefinitionResponse, "serialization"),
    (_definitions.PreviewScheduleResponse, "serialization"),
    (_definitions.OpenExecutedNotebookResponse, "serialization"),
    (_definitions.CreateDefinitionRequest, "validation"),
    (_definitions.UpdateDefinitionRequest, "validation"),
    (_definitions.RunDefinitionRequest, "validation"),
    (_definitions.PreviewScheduleRequest, "validation"),
)
"""The models whose components this module owns, with the JSON Schema mode of each (requests
are described as accepted, responses as sent)."""

_NUMBER = [{"type": "integer"}, {"type": "number"}]
_KEY_ORDER = ("$ref", "description", "type", "format", "enum", "items", "allOf", "anyOf", "nullable", "required",
              "additionalProperties", "properties", "default", "minimum", "maximum", "example")
"""Keys in the order the file writes them (unknown keys last, as pydantic gave them)."""


def _ordered(node: dict[str, Any]) -> dict[str, Any]:
    rank = {key: i for i, key in enumerate(_KEY_ORDER)}
    return dict(sorted(node.items(), key=lambda item: rank.get(item[0], len(rank))))


def to_openapi30(node: Any) -> Any:
    """A JSON Schema (draft 2020-12, pydantic's) node in OpenAPI 3.0.3's dialect (see module docstring)."""
    if isinstance(node, list):
        return [to_openapi30(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs") or (key == "default" and value is None):
            continue
        if key == "examples":
            out["example"] = to_openapi30(value[0]) if isinstance(value, list) and value else value
        elif key == "const":
            out["enum"] = [value]
        elif key == "anyOf":
            out.update(_any_of(value))
        else:
            out[key] = to_openapi30(value)
    if "$ref" in out and len(out) > 1:  # 3.0 ignores siblings of $ref: wrap it
        out = {"allOf": [{"$ref": out.pop("$ref")}], **out}
    return _ordered(out)


def _any_of(options: list[Any]) -> dict[str, Any]:
    nullable = {"type": "null"} in options
    rest = [o for o in options if o != {"type": "null"}]
    if rest[:2] == _NUMBER:
        rest = [{"type": "number"}, *rest[2:]]
    converted = [to_openapi30(o) for o in rest]
    out: dict[str, Any]
    if len(converted) == 1:
        only = converted[0]
        out = {"allOf": [only]} if "$ref" in only and nullable else dict(only)
    else:
        out = {"anyOf": converted}
    if nullable:
        out["nullable"] = True
    return out


def component_schema(model: type[BaseModel], mode: Mode = "validation") -> dict[str, Any]:
    """``model`` as an OpenAPI 3.0 component schema (nested models are ``$ref``\\ s)."""
    schema = model.model_json_schema(ref_template=REF_TEMPLATE, mode=mode)
    converted: dict[str, Any] = to_openapi30(schema)
    if isinstance(converted.get("description"), str):  # a docstring: one line, Markdown code spans
        converted["description"] = " ".join(converted["description"].split()).replace("``", "`")
    return converted


def components(models: Iterable[tuple[type[BaseModel], Mode]] = GENERATED) -> dict[str, dict[str, Any]]:
    """``{component name: schema}`` of ``models`` (the name is the model's class name)."""
    return {model.__name__: component_schema(model, mode) for model, mode in models}


def query_parameters(model: type[BaseModel]) -> list[dict[str, Any]]:
    """The ``in: query`` parameters a query model reads, as an operation's ``parameters`` list
    writes them (``{name, in, description?, schema}``)."""
    schema = component_schema(model, "validation")
    out = []
    for name, spec in schema.get("properties", {}).items():
        spec = dict(spec)
        description = spec.pop("description", None)
        spec.pop("example", None)
        param: dict[str, Any] = {"name": name, "in": "query"}
        if description:
            param["description"] = description
        param["schema"] = spec
        out.append(param)
    return out


def _flow(value: Any) -> str:
    text: str = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, width=1 << 16, allow_unicode=True)
    return text.strip().removesuffix("...").strip()


def render_component(name: str, schema: Mapping[str, Any], indent: int = 4) -> str:
    """The YAML block of one component as ``openapi.yaml`` writes them: one line per key, and
    one line per property."""
    pad = " " * indent
    lines = [f"{pad}{name}:"]
    for key, value in schema.items():
        if key == "properties" and isinstance(value, dict):
            lines.append(f"{pad}  properties:")
            lines += [f"{pad}    {prop}: {_flow(spec)}" for prop, spec in value.items()]
        else:
            lines.append(f"{pad}  {key}: {_flow(value)}")
    return "\n".join(lines) + "\n"


def replace_components(text: str, schemas: Mapping[str, Mapping[str, Any]]) -> str:
    """``openapi.yaml``'s text with the blocks of ``schemas`` rewritten (new ones appended at the
    end of ``components.schemas``); every other line unchanged.

    Raises:
        ValueError: the file has no ``components:`` / ``schemas:`` section.
    """
    lines = text.splitlines(keepends=True)
    try:
        start = next(i for i, line in enumerate(lines) if line.rstrip() == "  schemas:"
                     and any(prev.rstrip() == "components:" for prev in lines[:i]))
    except StopIteration:
        raise ValueError("openapi.yaml has no components.schemas section") from None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() and not lines[i].startswith("   ")),
               len(lines))
    blocks: list[tuple[str, list[str]]] = []
    for line in lines[start + 1:end]:
        if line.startswith("    ") and not line.startswith("     ") and not line.lstrip().startswith("#"):
            blocks.append((line.strip().split(":", 1)[0], [line]))
        elif blocks:
            blocks[-1][1].append(line)
    seen = set()
    body: list[str] = []
    for name, block in blocks:
        if name in schemas:
            seen.add(name)
            body.append(render_component(name, schemas[name]))
        else:
            body.append("".join(block))
    body += [render_component(name, schema) for name, schema in schemas.items() if name not in seen]
    return "".join(lines[:start + 1]) + "".join(body) + "".join(lines[end:])


def shipped_path() -> Path:
    """The package's ``extension/openapi.yaml``."""
    return Path(str(files("jupyter_sched.extension").joinpath("openapi.yaml")))


def main(argv: list[str] | None = None) -> int:
    """Rewrite (default) or ``--check`` the generated components of ``openapi.yaml``."""
    parser = argparse.ArgumentParser(prog="python -m jupyter_sched.services.models.openapi")
    parser.add_argument("--check", action="store_true", help="exit 1 when a generated component drifted")
    parser.add_argument("--file", type=Path, default=None, help="the openapi.yaml (default: the package's)")
    args = parser.parse_args(argv)
    path = args.file or shipped_path()
    text = path.read_text(encoding="utf-8")
    wanted = components()
    if args.check:
        documented = (yaml.safe_load(text).get("components") or {}).get("schemas") or {}
        drifted = sorted(name for name, schema in wanted.items() if documented.get(name) != schema)
        if drifted:
            print(f"{path}: generated components out of date: {', '.join(drifted)}; run "
                  "python -m jupyter_sched.services.models.openapi", file=sys.stderr)
            return 1
        return 0
    path.write_text(replace_components(text, wanted), encoding="utf-8")
    print(f"{path}: wrote {len(wanted)} components")
    return 0


if __name__ == "__main__":
    sys.exit(main())
