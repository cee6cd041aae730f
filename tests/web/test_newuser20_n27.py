"""New user 20, N27 (REST leftovers): a body naming one key twice (``{"gpus": 1, "gpus": 2, …}``) was
read as its last value without a word; ``model: ",,"`` meant "any model" silently; a mistyped route
(``POST definitions/{id}/run``) got no "did you mean" though an unknown body field does. Through
the real server (pytest-jupyter), SQLite, simulated GPUs."""

from __future__ import annotations

from typing import Any

import pytest


async def test_newuser20_n27_a_key_given_twice_is_a_400_naming_it(sched_app: Any, api: Any) -> None:
    raw = b'{"gpus": 1, "command": ["true"], "gpus": 2}'
    status, body = await api("POST", "jobs", raw=raw)
    assert status == 400, body
    assert body["error"]["field"] == "gpus" and "given twice" in body["error"]["message"], body
    status, body = await api("POST", "jobs", raw=b'{"gpus": 0, "command": ["true"], "env": {"A": "1", "A": "2"}}')
    assert status == 400 and body["error"]["field"] == "A", body
    status, jobs = await api("GET", "jobs")
    assert status == 200 and jobs == [], jobs  # neither was submitted


async def test_newuser20_n27_a_model_list_naming_nothing_is_a_400(sched_app: Any, api: Any) -> None:
    status, body = await api("POST", "jobs", {"gpus": 1, "model": ",,", "command": ["true"]})
    assert status == 400 and body["error"]["field"] == "model", body
    assert "names nothing" in body["error"]["message"], body


@pytest.mark.parametrize("path, meant", [("definitions/d-1/run", "definitions/d-1/runs"),
                                         ("job/j-1", "jobs/j-1"), ("usage/reprot", "usage/report")])
async def test_newuser20_n27_a_mistyped_route_says_the_route_meant(sched_app: Any, api: Any, path: str,
                                                                    meant: str) -> None:
    status, body = await api("POST", path, {})
    assert status == 404, body
    assert body["error"]["hint"].startswith(f"did you mean {meant}?"), body
