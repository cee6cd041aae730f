"""red25 R1: a JSON number past a double's range (``10**400``, ``-10**400``: 401-digit integers; ``1e400``)
or a finite one that overflows once scaled (``cpu: 1e308`` times 1000 millicores) in a job's numeric field
was a 500 with a traceback in the service log, on ``POST jobs``, ``POST dryrun``, ``POST definitions``,
``PATCH definitions/ID`` and nested under ``resources``. Each is a 400 naming the field and its bound.

Real parts: a jupyter_server with jupyter_sched (tests/web/conftest.py), the raw JSON bodies the
red team sent (Python's json writes 10**400 as its 401 digits).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.model.validation import NUMBER_BOUNDS

FIELDS = ("gpus", "gpu_milli", "min_memory_mib", "mem_per_gpu", "cpu", "cpu_millis", "memory", "memory_mib",
          "workers", "time_limit", "time_limit_s")
HUGE: tuple[tuple[str, Any], ...] = (("10**400", 10 ** 400), ("-10**400", -(10 ** 400)), ("1e308", 1e308),
                                     ("-1e308", -1e308), ("1e400", "1e400"))


def _raw(body: dict[str, Any], field: str, value: Any, *, nested: bool) -> bytes:
    """``body`` with ``field`` set to ``value`` (at the top or under ``resources``), as the raw JSON sent:
    a ``"1e400"`` text stands for the literal 1e400, which no Python float writes."""
    marker = "__HUGE__"
    if nested:
        body = {**body, "resources": {field: marker}}
    else:
        body = {**body, field: marker}
    literal = value if isinstance(value, str) else json.dumps(value)
    return json.dumps(body).replace(f'"{marker}"', literal).encode()


BOUND = re.compile(r"must (be [^(]*(<=|>=|at most|at least)|not be negative)|1\.\.1000")
"""How a field's own parser says its bound (a double it can read: 1e308): ``gpus must be <= 4``."""


def _check(status: int, answer: Any, field: str, label: str, what: str) -> None:
    assert status == 400, (what, status, answer)
    error = answer["error"]
    assert error["code"] == "validation_error", (what, error)
    assert error["field"] in (field, f"resources.{field}"), (what, error)
    assert field in error["message"], (what, error)
    if "e308" in label:  # a double: the field's parser reads it and says its bound
        assert BOUND.search(error["message"]), (what, error)
        return
    lower, upper = NUMBER_BOUNDS[field]  # no double holds it: the gate says the field's bound
    got = "a 401-digit number" if "**" in label else "a number past a double's range"
    sign = "-" if label.startswith("-") else ""
    assert error["message"].endswith(f" must be {lower if sign else upper} (got {sign}{got})"), (what, error)


async def test_red25_r1_a_number_past_float_range_in_any_job_field_is_a_400_naming_it(api: Any,
                                                                                        tmp_path: Path) -> None:
    script = tmp_path / "job.py"
    script.write_text("print('hi')\n")
    status, made = await api("POST", "definitions", {"name": "r1-def", "script": str(script), "gpus": 0})
    assert status == 201, made
    definition = made["id"]
    routes = (("POST", "jobs", {"command": ["true"]}), ("POST", "dryrun", {"command": ["true"]}),
              ("POST", "definitions", {"name": "r1-x", "script": str(script)}),
              ("PATCH", f"definitions/{definition}", {}))
    for method, path, body in routes:
        for field in FIELDS:
            for label, value in HUGE:
                for nested in (False, True) if path in ("jobs", "dryrun") else (False,):
                    what = f"{method} {path} {'resources.' if nested else ''}{field}={label}"
                    status, answer = await api(method, path, raw=_raw(body, field, value, nested=nested))
                    _check(status, answer, field, label, what)


@pytest.mark.parametrize("path", ["jobs/j-nope/progress", "quotas"])
async def test_red25_r1_the_gate_holds_for_every_route_that_reads_a_body(api: Any, path: str) -> None:
    method = "POST" if path.endswith("progress") else "PUT"
    status, answer = await api(method, path, raw=b'{"done": 1, "total": ' + str(10 ** 400).encode() + b"}",
                               token="boss-token-0000")
    assert status == 400, answer
    assert answer["error"]["field"] == "total" and "a 401-digit number" in answer["error"]["message"], answer
