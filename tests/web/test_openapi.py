"""openapi.yaml (shipped in the package) describes exactly the live route table."""

from __future__ import annotations

import re
from importlib.resources import files
from typing import Any

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
