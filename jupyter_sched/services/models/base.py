"""Base classes of the typed request and response models, and the one parse function.

Request models describe what a client may send (``extra="forbid"``: an unknown or misspelt field
is refused, never dropped); bodies are parsed in strict mode (JSON types as sent: ``"1"`` is not
a number, ``1`` is not a boolean) and query strings in lax mode (``?limit=3``). Response models
describe what the API answers; they are built from the core's codec dicts and serialised with
:meth:`ResponseModel.to_wire`. Semantic checks (can this request run, may this caller ask)
belong to :mod:`jupyter_sched.admission` and the codec's validation, not here.

:func:`parse` turns pydantic's errors into the package's one error tree: a
:class:`~jupyter_sched.errors.ValidationError` naming the field, the value's type and a hint
taken from the field's ``examples``.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from ...errors import ValidationError

__all__ = ["CodecView", "ErrorBody", "ErrorResponse", "QueryModel", "RequestModel", "ResponseModel", "parse"]


class RequestModel(BaseModel):
    """A JSON request body: unknown fields refused, JSON types taken as sent."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class QueryModel(BaseModel):
    """Query-string arguments (all arrive as text): unknown arguments are ignored, values coerced."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ResponseModel(BaseModel):
    """An answer of the API."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_wire(self) -> Any:
        """The JSON value sent to the client."""
        return self.model_dump(mode="json")


class CodecView(ResponseModel):
    """An answer that mirrors a dict another module's codec builds (a job, a reason, an audit
    record, a quota line): the documented fields are typed, and a field the codec adds later
    passes through unchanged instead of failing the answer (the model names what clients may
    rely on; ``openapi.yaml`` is checked against it)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    def to_wire(self) -> Any:
        """The object's JSON: the fields it was built with, nothing added."""
        return self.model_dump(mode="json", exclude_unset=True)


class ErrorBody(ResponseModel):
    """What went wrong (:mod:`jupyter_sched.errors`): 4xx answers name the input ``field`` at fault
    and what to do; 5xx answers give our sentence and a ``reference`` to the server log."""

    code: str = Field(examples=["validation_error"])
    message: str
    field: str | None = Field(description="dotted input field at fault")
    hint: str | None = Field(description="what to do about it")
    details: dict[str, Any] | None = Field(default=None, description="the numbers behind the message")
    reference: str | None = Field(default=None, description="5xx: where the server log has the cause")


class ErrorResponse(ResponseModel):
    """Every error answer of the API."""

    error: ErrorBody


M = TypeVar("M", bound=BaseModel)


def parse(model: type[M], data: Any, *, where: str = "body") -> M:
    """Validate ``data`` as ``model``.

    Args:
        model: the request model.
        data: decoded JSON (a body) or a dict of query arguments.
        where: what ``data`` is, for errors about the whole of it (``body``).

    Raises:
        ValidationError: naming the first bad field (``field``), or ``where`` when ``data`` is not
            an object; the hint gives an example value or the known fields.
    """
    if not isinstance(data, dict):
        raise ValidationError(f"{where} must be a JSON object (got {type(data).__name__})", field=where,
                              hint="wrap the fields in {...}")
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise _translate(model, exc, data, where) from None


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    """Every field name in ``model`` and the models nested in it (to find the field an error is about)."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names = set(model.model_fields)
    for info in model.model_fields.values():
        stack = [info.annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                names |= _field_names(tp, seen)
            stack.extend(getattr(tp, "__args__", ()))
    return names


def _translate(model: type[BaseModel], exc: pydantic.ValidationError, data: dict[str, Any],
               where: str) -> ValidationError:
    errors = exc.errors(include_url=False)
    first = errors[0]
    loc = [part for part in first["loc"]]
    if not loc:
        return ValidationError(f"{where}: {first['msg']}", field=where, hint="see openapi.yaml for the fields")
    if first["type"] == "extra_forbidden":
        name = str(loc[-1])
        owner = _owner(model, loc)
        known = ", ".join(sorted(owner.model_fields))
        return ValidationError(f"unknown field {name!r}", field=name, hint=f"known fields: {known}")
    names = _field_names(model)
    name = next((str(p) for p in reversed(loc) if isinstance(p, str) and p in names), str(loc[0]))
    same = [e["msg"] for e in errors if e["loc"][:1] == first["loc"][:1]]
    value: Any = data
    for part in loc:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and part < len(value):
            value = value[part]
        if part == name:
            break
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    detail = "; or ".join(dict.fromkeys(m[0].lower() + m[1:] for m in same[:3]))
    info = _owner(model, loc).model_fields.get(name) or model.model_fields.get(name)
    examples = (info.examples or []) if info is not None else []
    hint = f"e.g. {json.dumps(examples[0])}" if examples else (info.description if info is not None and info.description
                                                               else "see openapi.yaml for this field")
    return ValidationError(f"{name}: {detail} (got {shown})", field=name, hint=hint)


def _owner(model: type[BaseModel], loc: list[Any]) -> type[BaseModel]:
    """The (nested) model that holds the last named part of ``loc``."""
    current = model
    for part in loc[:-1]:
        info = current.model_fields.get(str(part)) if isinstance(part, str) else None
        if info is None:
            continue
        stack = [info.annotation]
        while stack:
            tp = stack.pop()
            if isinstance(tp, type) and issubclass(tp, BaseModel):
                current = tp
                break
            stack.extend(getattr(tp, "__args__", ()))
    return current
