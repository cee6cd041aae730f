"""New user 20, N13: a guessed ``POST jobs/dryrun`` was answered 405 "jobs/dryrun takes GET and
DELETE" — the id part read as part of the route's name, and no word that a dry run is ``POST
api/sched/dryrun``. A 405's hint now names the route as openapi.yaml writes it (``jobs/{job_id}``)
and, when the id part is itself a route taking that method, that route. Through the real server
(pytest-jupyter), SQLite, simulated GPUs."""

from __future__ import annotations

from typing import Any


async def test_newuser20_n13_a_405_names_the_route_pattern_and_the_route_meant(sched_app: Any, api: Any) -> None:
    status, body = await api("POST", "jobs/dryrun", {"gpus": 2, "command": ["true"]})
    assert status == 405, body
    error = body["error"]
    assert error["message"] == "POST is not a method of jobs/dryrun", error
    assert error["hint"].startswith("POST goes to api/sched/dryrun, a route of its own"), error
    assert "jobs/{job_id} takes GET, PATCH and DELETE" in error["hint"], error  # PATCH: hubadmin25 B18
    status, body = await api("PUT", "jobs/j-1abc", {})  # (PATCH is a method of it since hubadmin25 B18)
    assert status == 405 and body["error"]["hint"] == "jobs/{job_id} takes GET, PATCH and DELETE (see openapi.yaml)", body
    status, body = await api("PUT", "jobs", {})  # a route without an id: named as sent
    assert status == 405 and body["error"]["hint"] == "jobs takes GET and POST (see openapi.yaml)", body
