"""Base classes of the typed request and response models, and the one parse function.

Request models describe what a client may send (``extra="forbid"``: an unknown or misspelt field
is refused, never dropped); bodies are parsed in strict mode (JSON types as sent: ``"1"`` is not
a number, ``1`` is not a boolean) and query strings in lax mode (``?limit=3``). Response models
describe what the API answers; they are built from the core's codec dicts and serialised with
:meth:`ResponseModel.to_wire`. Semantic checks (can this request run, may this caller ask)
belong to :mod:`jupyter_sched.admission` and the codec's validation, not here.

:func:`parse` turns pydantic's errors into the package's one error tree through ONE formatter,
:func:`request_error`: a :class:`~jupyter_sched.errors.ValidationError` naming the field, saying
in plain words what it must be (with the real bound) and what came, and a hint with the allowed
range or an example from the field's ``examples``.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Collection, Mapping
from typing import Any, ClassVar, TypeVar

import pydantic
from pydantic import BaseModel, ConfigDict, Field

from ...errors import ValidationError, json_kind, shown
from ...textsafe import escaped_controls

log = logging.getLogger(__name__)

__all__ = ["CodecView", "ErrorBody", "ErrorResponse", "QueryModel", "RequestModel", "ResponseModel", "dump_all",
           "dump_set", "parse", "request_error", "wire_json"]


PAGE_BYTES = 4 << 20
"""About the most bytes of rows one page of a list answers (``GET definitions``, ``GET jobs``): a page
ends early, with a next page, once its rows pass it (red28 R6: limit=1000 of heavy jobs made 117 MiB)."""


def dump_all(self: BaseModel) -> Any:
    """A ``to_wire``: every field's JSON value."""
    return self.model_dump(mode="json")


def dump_set(self: BaseModel) -> Any:
    """A ``to_wire``: the JSON value of the fields the answer was built with (``exclude_unset``)."""
    return self.model_dump(mode="json", exclude_unset=True)


def wire_json(answer: Any) -> bytes:
    """The JSON text of ``answer.to_wire()`` (or of plain JSON data ``answer``), UTF-8.

    An answer whose ``to_wire`` is :func:`dump_all` or :func:`dump_set` is serialised by
    pydantic-core straight from the model (issue 17: building the Python value and then
    ``json.dumps`` of a 50-job page was a third of a polled request's CPU); any other is
    ``json.dumps(to_wire())``. Both give the same JSON value.

    Never ``NaN`` nor ``Infinity`` (s29: they are not JSON — a browser's ``JSON.parse`` throws on the
    whole answer, so one bad row froze a panel): a non-finite float is written ``null`` ("not known"),
    by both paths (pydantic's default; :func:`_finite` for the other), and logged with where it was.
    Written, not refused: a 500 for one bad number would freeze the panel just the same. The sources
    refuse them first (stored rows are quarantined, named and audited; request bodies get a 400 naming
    the field) — a null here is a source not yet covered, which the log line names.
    """
    to_wire = getattr(type(answer), "to_wire", None)
    if to_wire is dump_set or to_wire is dump_all:
        return bytes(answer.model_dump_json(exclude_unset=to_wire is dump_set).encode())
    data = answer.to_wire() if to_wire is not None else answer
    try:
        return json.dumps(data, default=str, allow_nan=False).encode()
    except ValueError:  # a NaN or an infinity somewhere (the C encoder's fast path stays the common one)
        where: list[str] = []
        written = json.dumps(_finite(data, "", where), default=str, allow_nan=False).encode()
        log.warning("jupyter_sched: an answer (%s) held %d non-finite number(s), written as null: %s",
                    type(answer).__name__, len(where), ", ".join(where[:5]))
        return written


def _finite(value: Any, path: str, where: list[str]) -> Any:
    """``value`` with every NaN or infinite float replaced by None; their paths (``rows[3].power_w``) go to
    ``where``. Dicts, lists and tuples are copied; anything else is returned as it is."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        where.append(path or "(the answer)")
        return None
    if isinstance(value, dict):
        return {k: _finite(v, f"{path}.{k}" if path else str(k), where) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v, f"{path}[{i}]", where) for i, v in enumerate(value)]
    return value


class RequestModel(BaseModel):
    """A JSON request body: unknown fields refused, JSON types taken as sent.

    ``BOUND_HINTS`` (``{(field, pydantic error type): hint}``, e.g. ``("total", "greater_than")``) gives
    the hint of one bound of one field where the generic range says too little (new user 21, N2:
    ``total must be more than 0`` hinted "give a number of at most 1000000000000000").
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    BOUND_HINTS: ClassVar[Mapping[tuple[str, str], str]] = {}


class QueryModel(BaseModel):
    """Query-string arguments (all arrive as text): unknown arguments are ignored, values coerced."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ResponseModel(BaseModel):
    """An answer of the API."""

    model_config = ConfigDict(extra="forbid", frozen=True, ser_json_inf_nan="null")  # never NaN: see wire_json

    to_wire = dump_all
    """The JSON value sent to the client (:func:`wire_json` writes it)."""


class CodecView(ResponseModel):
    """An answer that mirrors a dict another module's codec builds (a job, a reason, an audit
    record, a quota line): the documented fields are typed, and a field the codec adds later
    passes through unchanged instead of failing the answer (the model names what clients may
    rely on; ``openapi.yaml`` is checked against it)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    to_wire = dump_set
    """The object's JSON: the fields it was built with, nothing added."""


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


def parse(model: type[M], data: Any, *, where: str = "body", offered: Collection[str] | None = None) -> M:
    """Validate ``data`` as ``model``.

    Args:
        model: the request model.
        data: decoded JSON (a body) or a dict of query arguments.
        where: what ``data`` is, for errors about the whole of it (``body``); ``query`` when the
            values are query-string text.
        offered: the top-level fields this route takes, when fewer than the model's (``POST leases``
            shares ``SubmitJobRequest`` but refuses what a job runs): an unknown field's hint lists
            these and guesses among them (new user 14, N20: it listed ``command, script, …``).

    Raises:
        ValidationError: naming the first bad field (``field``), or ``where`` when ``data`` is not
            an object; the message says in plain words what the field must be and what came
            (``limit must be at most 10000 (got 99999999999999999999999)``, ``name is required``,
            ``gpus must be a number or a string (got an array of 1)``), the hint the allowed range
            or an example value (see :func:`request_error`).
    """
    if not isinstance(data, dict):
        raise ValidationError(f"{where} must be a JSON object (got {json_kind(data)})", field=where,
                              hint="wrap the fields in {...}")
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise request_error(model, exc, data, where, offered=offered) from None


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


_KINDS = {
    "int_type": "a whole number", "int_parsing": "a whole number", "int_from_float": "a whole number",
    "float_type": "a number", "float_parsing": "a number", "decimal_type": "a number",
    "string_type": "a string", "bool_type": "true or false", "bool_parsing": "true or false",
    "dict_type": "an object", "model_type": "an object", "model_attributes_type": "an object",
    "list_type": "an array", "tuple_type": "an array", "none_required": "null",
}
"""pydantic's type errors → the JSON kind the field takes, in words (a union lists each)."""

_ABSENT = object()


def request_error(model: type[BaseModel], exc: pydantic.ValidationError, data: dict[str, Any],
                  where: str, *, offered: Collection[str] | None = None) -> ValidationError:
    """THE formatter of request-model errors: every refusal of a body or query string by its
    model reads the same way, in words, with the real bounds — never pydantic's wording, a Python
    repr or a type name.

    ``name is required`` · ``unknown field 'cron'`` · ``limit must be at most 10000 (got
    99999999999999999999999)`` · ``priority must be 'high', 'normal' or 'low' (got 'urgent')`` ·
    ``gpus must be a number or a string (got an array of 1)`` · ``groups[0].name is required``.
    The error's ``field`` is the model field's name, or within an item of a list its whole place
    (``quotas[0].guaranteed``, as the message and a config line's error name it: new user 13, N12);
    the hint gives the allowed range (and what leaving the field out means) or an example value.
    """
    # an unknown field first: it is most often a misspelt one, and a field it hides may be the one
    # reported missing — "name is required", then "unknown field 'cron'… did you mean 'schedule'?"
    # cost a second round (new user 12, N9)
    errors = sorted(exc.errors(include_url=False), key=lambda e: e["type"] != "extra_forbidden")
    # of a union's alternatives, the one that got furthest into the value says what is wrong inside it:
    # tolerations [{"key": "x"}] → "tolerations[0] must be a string", not "tolerations must be a string
    # (got an array of 1)" (new user 10, N13)
    field = errors[0]["loc"][:1]  # the first field at fault, as before; of its errors, the deepest
    first = max((e for e in errors if e["loc"][:1] == field),
                key=lambda e: len(_place(data, list(e["loc"]), missing=e["type"] == "missing")))
    loc = list(first["loc"])
    if not loc:
        return ValidationError(f"{where} must be a JSON object (got {json_kind(data)})", field=where,
                               hint="wrap the fields in {...}")
    if first["type"] == "extra_forbidden":
        name = escaped_controls(str(loc[-1]))  # echoed as the field too (red team 15, R3)
        if len(name) > _NAME_SHOWN:  # user input: no field is this long; never echoed or audited whole
            name = name[:_NAME_SHOWN - 3] + "..."
        owner = _owner(model, loc)
        fields = owner.model_fields if offered is None or len(loc) > 1 else {f: None for f in offered}
        known = ", ".join(sorted(fields))
        inside = _path(_place(data, loc[:-1]))
        guess = _meant(name, fields)
        meant = f"did you mean {shown(guess)}? " if guess else ""
        if _option_name(name) == "timeout" and "wait_ms" not in owner.model_fields and "time_limit" not in fields:
            meant = "to wait for the grant, pass wait_ms in the query (e.g. ?wait_ms=30000). "  # a lease: no time limit
        elif guess == "time_limit" and _option_name(name) == "timeout" and "wait_ms" not in owner.model_fields:
            # %gpu request --timeout is how long to wait for a grant (new user 5 #7): say both meanings
            meant = ("did you mean time_limit (how long the work may run)? To wait for a lease's grant, pass "
                     "wait_ms in the query. ")
        return ValidationError(f"unknown field {shown(name)}" + (f" in {inside}" if inside else ""),
                               field=f"{inside}.{name}" if "[" in inside else name,
                               hint=meant + f"known fields: {known}")
    names = _field_names(model)
    name = next((str(p) for p in reversed(loc) if isinstance(p, str) and p in names), str(loc[0]))
    info = _owner(model, loc).model_fields.get(name) or model.model_fields.get(name)
    # a union's alternatives all report at the same place, each under its own tag (``gpus.int``,
    # ``gpus.str``): the place is the part of the location that exists in the data
    place = _place(data, loc, missing=first["type"] == "missing")
    same = [e for e in errors if _place(data, list(e["loc"]), missing=e["type"] == "missing") == place]
    path = _path(place) or name
    said = path[:200] if "[" in path else name  # an item of a list: its place, as the message and a config line's error say
    value = _value_at(data, place)
    if first["type"] == "missing" or value is _ABSENT:
        return ValidationError(f"{path} is required", field=said, hint=_example(info) or "see openapi.yaml")
    ctx = first.get("ctx") or {}
    given = ctx.get("got")  # a check across fields says what came of each: "got done 11, total 10"
    got = given if isinstance(given, str) else _shown_query(value) if where == "query" else shown(value)
    own = ctx.get("hint")  # a check that knows the case gives its own hint (new user 21, N2)
    bound = _bound(first)
    if bound is not None:
        hints = getattr(_owner(model, loc), "BOUND_HINTS", None) or {}
        hint = hints.get((name, first["type"])) if isinstance(hints, Mapping) else None
        return ValidationError(f"{path} {bound} (got {got})", field=said, hint=hint or _range_hint(name, info))
    kinds = list(dict.fromkeys(_KINDS[e["type"]] for e in same if e["type"] in _KINDS))
    if kinds:
        if "a number" in kinds and "a whole number" in kinds:
            kinds.remove("a whole number")
        what = kinds[0] if len(kinds) == 1 else ", ".join(kinds[:-1]) + " or " + kinds[-1]
        bounded = _limits(info) != (None, None)
        return ValidationError(f"{path} must be {what} (got {got})", field=said,
                               hint=_range_hint(name, info) if bounded else _example(info) or _range_hint(name, info))
    hint = own if isinstance(own, str) and own else _example(info) or "see openapi.yaml"
    return ValidationError(f"{path} {_phrase(first)} (got {got})", field=said, hint=hint)


_NAME_SHOWN = 80
"""Longest unknown field name an error echoes (a 5 MB key came back whole and was stored whole in
the audit log of every refusal: red-team 3 finding 6)."""

_SPELLED_AS_OPTIONS = {"cron": "schedule", "tz": "timezone", "workdir": "working_dir", "mem": "mem_per_gpu",
                       "gpu": "gpus", "timeout": "time_limit"}
"""What a person who knows the CLI or magics may send for a field (``--cron`` sets ``schedule``)."""


def _option_name(name: str) -> str:
    """``--Mem-Per-GPU`` → ``mem_per_gpu``: a field name as a CLI or magic option spells it, normalised."""
    return name.strip().lstrip("-").replace("-", "_").lower()


def _meant(name: str, fields: Any) -> str | None:
    """The known field an unknown one most likely meant: the CLI option's spelling (``cron`` →
    ``schedule``, ``mem-per-gpu`` → ``mem_per_gpu``) or a close misspelling (``time_limt``)."""
    import difflib

    plain = _option_name(name)
    for candidate in (plain, _SPELLED_AS_OPTIONS.get(plain)):
        if candidate and candidate != name and candidate in fields:
            return candidate
    close = difflib.get_close_matches(plain, list(fields), n=1, cutoff=0.8)
    return close[0] if close else None


def _path(loc: list[Any]) -> str:
    """``groups[0].name`` from pydantic's location parts."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _place(data: Any, loc: list[Any], *, missing: bool = False) -> list[Any]:
    """The parts of ``loc`` that index into ``data`` (field names, array indices, object keys),
    plus, for a ``missing`` error, the missing field's name; a union's branch tags (``int``,
    ``str``) are left out."""
    place: list[Any] = []
    value = data
    for part in loc:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        elif missing and isinstance(value, dict) and isinstance(part, str) and part is loc[-1]:
            place.append(part)  # a required field that is missing
            break
        else:
            continue
        place.append(part)
    return place


def _value_at(data: Any, loc: list[Any]) -> Any:
    value = data
    for part in loc:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and 0 <= part < len(value):
            value = value[part]
        else:
            return _ABSENT
    return value


def _shown_query(text: Any) -> str:
    """A query argument as typed: a number bare (``99999999999999999999999``), other text quoted."""
    if isinstance(text, str) and re.fullmatch(r"[+-]?\d+(\.\d+)?", text):
        return text
    return shown(text)


def _bound(error: Any) -> str | None:
    """``must be at most 1000`` for pydantic's bound errors (numbers and lengths); else None."""
    ctx = error.get("ctx") or {}
    kind = error["type"]
    words = {"less_than_equal": ("le", "must be at most {}"), "less_than": ("lt", "must be less than {}"),
             "greater_than_equal": ("ge", "must be at least {}"), "greater_than": ("gt", "must be more than {}"),
             "string_too_long": ("max_length", "must be at most {} characters long"),
             "string_too_short": ("min_length", "must be at least {} characters long"),
             "too_long": ("max_length", "must have at most {} items"),
             "too_short": ("min_length", "must have at least {} items")}
    if kind not in words or words[kind][0] not in ctx:
        return None
    key, text = words[kind]
    if ctx[key] == 1:  # "at least 1 character long", not "1 characters" (new user 13, N12)
        text = text.replace("characters", "character").replace("items", "item")
    return text.format(_plain(ctx[key]))


def _phrase(error: Any) -> str:
    """Any other pydantic error, in words (``must be 'high', 'normal' or 'low'``)."""
    kind, ctx = error["type"], error.get("ctx") or {}
    if kind == "literal_error" and "expected" in ctx:
        return f"must be {ctx['expected']}"
    if kind in ("finite_number",):
        return "must be a finite number"
    message = str(error.get("msg") or "is not valid")
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    message = message.replace("Input should be", "must be").replace("input should be", "must be")
    return message[:1].lower() + message[1:]


def _example(info: Any) -> str | None:
    examples = (info.examples or []) if info is not None else []
    return f"e.g. {json.dumps(examples[0])}" if examples else None


def _limits(info: Any) -> tuple[Any, Any]:
    """The field's ``(ge, le)`` bounds (None where unbounded)."""
    low = high = None
    for item in getattr(info, "metadata", None) or ():
        low = getattr(item, "ge", None) if getattr(item, "ge", None) is not None else low
        high = getattr(item, "le", None) if getattr(item, "le", None) is not None else high
    return low, high


def _open_limits(info: Any) -> tuple[Any, Any]:
    """The field's ``(gt, lt)`` bounds (None where it has none): ``weight`` more than 0."""
    low = high = None
    for item in getattr(info, "metadata", None) or ():
        low = getattr(item, "gt", None) if getattr(item, "gt", None) is not None else low
        high = getattr(item, "lt", None) if getattr(item, "lt", None) is not None else high
    return low, high


def _plain(number: Any) -> str:
    """``1000``, ``0.5``; a round power of ten from 10^12 up as JSON writes it short: ``1e15``
    (new user 21, N2: sixteen digits are miscounted)."""
    if isinstance(number, float) and number >= 1e12 and number.is_integer() and math.isfinite(number):
        power = round(math.log10(number))
        if 10.0 ** power == number:
            return f"1e{power}"
    return str(int(number)) if isinstance(number, float) and number.is_integer() else str(number)


def _range_hint(name: str, info: Any) -> str:
    """``give a whole number from 1 to 1000, or leave limit out (default: 500)``."""
    if info is None:
        return "see openapi.yaml for this field"
    low, high = _limits(info)
    if high is not None and high >= 2**53:
        high = None  # a byte offset's 2^62: no count comes near it, and the figure only puzzles
    annotation = str(info.annotation)
    noun = ("true or false" if info.annotation is bool else
            "a whole number" if info.annotation is int or annotation.startswith("int") else "a number")
    above, below = _open_limits(info)  # "more than 0": a gt bound was left out of the hint (new user 21, N2)
    if above is not None or below is not None:
        parts = ([f"more than {_plain(above)}"] if above is not None else [f"at least {_plain(low)}"]
                 if low is not None else []) + ([f"less than {_plain(below)}"] if below is not None else [
                     f"at most {_plain(high)}"] if high is not None else [])
        text = f"give {noun} " + " and ".join(parts)
    elif low is not None and high is not None:
        text = f"give {noun} from {_plain(low)} to {_plain(high)}"
    elif low is not None:
        text = f"give {noun} of at least {_plain(low)}"
    elif high is not None:
        text = f"give {noun} of at most {_plain(high)}"
    elif info.annotation in (int, float, bool):
        text = f"give {noun}"
    else:
        text = _example(info) or "see openapi.yaml for this field"
    if info.is_required():
        return text
    found = re.search(r"\(default:? ([^)]*)\)", info.description or "")
    default = found.group(1) if found else (None if info.default is None or info.default is False
                                            else json.dumps(info.default))
    return f"{text}, or leave {name} out" + (f" (default: {default})" if default else "")


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
