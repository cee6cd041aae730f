"""Red team 20, R3: an id holding a control character (``GET jobs/j-%00abc``, ``DELETE
leases/l-%00x``, ``GET definitions/d-%00``, logs, notebook, keepalive, the bulk cancel's ``ids``)
reached the store; PostgreSQL cannot hold NUL in text, so every such request was answered 503
"the scheduler's database failed to answer" and logged at ERROR with the SQL — a database outage to
an admin's alerting, caused by any user. Now every path part and query argument with a control
character, and every id of the bulk cancel, is a 400 naming the field before any service or store
sees it. Through the real server (pytest-jupyter) on a real PostgreSQL server (tests/pg.py) and on
SQLite; simulated GPUs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import server_config

ROUTES = [("GET", "jobs/j-\x00abc", "job_id"), ("DELETE", "jobs/j-\x01", "job_id"),
          ("GET", "jobs/j-\x00/logs", "job_id"), ("GET", "jobs/j-\x00/notebook", "job_id"),
          ("DELETE", "leases/l-\x00x", "lease_id"), ("POST", "leases/l-\x00/keepalive", "lease_id"),
          ("GET", "definitions/d-\x00", "definition_id"), ("GET", "jobs/j-\nx", "job_id")]


@pytest.fixture(params=["postgresql", "sqlite"])
def jp_server_config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "sqlite":
        return server_config(tmp_path)
    return server_config(tmp_path, db_url=request.getfixturevalue("pg_url"))


@pytest.mark.parametrize("method, path, field", ROUTES)
async def test_red20_r3_an_id_with_a_control_character_is_a_400_naming_it(
        sched_app: Any, api: Any, method: str, path: str, field: str) -> None:
    status, body = await api(method, path)
    assert status == 400, (path, status, body)
    error = body["error"]
    assert error["code"] == "validation_error" and error["field"] == field, body
    assert "control characters" in error["message"] and "database" not in error["message"], body


async def test_red20_r3_query_arguments_and_bulk_cancel_ids_too(sched_app: Any, api: Any) -> None:
    status, body = await api("GET", "jobs", params={"user": "ivan\x00"})
    assert status == 400 and body["error"]["field"] == "user", body
    status, body = await api("POST", "jobs/cancel", {"ids": ["j-1", "j-a\x00b"]})
    assert status == 400 and body["error"]["field"] == "ids[1]", body
    assert "control characters" in body["error"]["message"], body
    status, body = await api("GET", "jobs/j-doesnotexist")  # a well-formed unknown id is still the 404
    assert status == 404, body
