"""Red team 19, R1 leftover: the server caps ``node_selector`` (64 pairs, a key of 317 characters,
a value of 63), ``tolerations`` (64) and ``env`` (names, 256 / 32 KiB), but openapi.yaml — what a
script's author and the panel's generated types read — declared none of it. The request schemas now
declare the same bounds the server checks, and the two agree on both sides of every bound.

Real parts: the shipped openapi.yaml, jsonschema, the server's own request parser.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from jupyter_sched.errors import ValidationError
from jupyter_sched.model import spec_from_request
from jupyter_sched.model.validation import (
    MAX_ENV_KEY_CHARS,
    MAX_ENV_VALUE_CHARS,
    MAX_NODE_LABEL_KEY_CHARS,
    MAX_NODE_LABEL_VALUE_CHARS,
    MAX_NODE_SELECTOR,
    MAX_TOLERATIONS,
)

from .test_openapi import json_schema, load_spec

REQUESTS = ("SubmitJobRequest", "CreateDefinitionRequest", "UpdateDefinitionRequest")


def _pairs(n: int) -> dict[str, str]:
    return {f"k{i}": "v" for i in range(n)}


CASES = [
    pytest.param("node_selector", _pairs(MAX_NODE_SELECTOR), True, id="64 pairs"),
    pytest.param("node_selector", _pairs(MAX_NODE_SELECTOR + 1), False, id="65 pairs"),
    pytest.param("node_selector", {"k" * MAX_NODE_LABEL_KEY_CHARS: "v"}, True, id="key of 317"),
    pytest.param("node_selector", {"k" * (MAX_NODE_LABEL_KEY_CHARS + 1): "v"}, False, id="key of 318"),
    pytest.param("node_selector", {"zone": "v" * MAX_NODE_LABEL_VALUE_CHARS}, True, id="value of 63"),
    pytest.param("node_selector", {"zone": "v" * (MAX_NODE_LABEL_VALUE_CHARS + 1)}, False, id="value of 64"),
    pytest.param("tolerations", ["gpu"] * MAX_TOLERATIONS, True, id="64 tolerations"),
    pytest.param("tolerations", ["gpu"] * (MAX_TOLERATIONS + 1), False, id="65 tolerations"),
    pytest.param("env", {"A" * MAX_ENV_KEY_CHARS: "x"}, True, id="env name of 256"),
    pytest.param("env", {"A" * (MAX_ENV_KEY_CHARS + 1): "x"}, False, id="env name of 257"),
    pytest.param("env", {"1A": "x"}, False, id="env name not a variable name"),
    pytest.param("env", {"A": "x" * MAX_ENV_VALUE_CHARS}, True, id="env value of 32 KiB"),
    pytest.param("env", {"A": "x" * (MAX_ENV_VALUE_CHARS + 1)}, False, id="env value over 32 KiB"),
]


def _schema_takes(schema: dict[str, Any], value: Any) -> bool:
    try:
        jsonschema.validate(value, json_schema(schema), cls=jsonschema.Draft202012Validator)
    except jsonschema.ValidationError:
        return False
    return True


def _server_takes(field: str, value: Any) -> bool:
    try:
        spec_from_request({"gpus": 1, "command": ["true"], field: value}, user="ann")
    except ValidationError as exc:
        assert exc.field is not None and exc.field.startswith(field), exc
        return False
    return True


@pytest.mark.parametrize(("field", "value", "taken"), CASES)
def test_red19_r1_openapi_declares_the_bounds_the_server_checks(field: str, value: Any, taken: bool) -> None:
    schemas = load_spec()["components"]["schemas"]
    assert _server_takes(field, value) is taken
    for name in REQUESTS:
        assert _schema_takes(schemas[name]["properties"][field], value) is taken, f"{name}.{field}"


def test_red19_r1_node_selector_schema_says_its_bounds_in_words() -> None:
    described = load_spec()["components"]["schemas"]["SubmitJobRequest"]["properties"]["node_selector"]["description"]
    assert f"at most {MAX_NODE_SELECTOR} pairs" in described
    assert f"{MAX_NODE_LABEL_KEY_CHARS} characters" in described and f"at most {MAX_NODE_LABEL_VALUE_CHARS}" in described
