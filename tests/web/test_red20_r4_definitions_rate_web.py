"""Red team 20, R4, through the real server (pytest-jupyter, SQLite): a definition change past
``c.SchedApp.max_submits_per_user_minute`` is answered 429 ``busy`` with ``Retry-After`` (as a submit
over the rate), so the clients wait and resend it; before the fix every change was 200 and an audit row.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import API, IVAN_TOKEN, server_config


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    return server_config(tmp_path, max_submits_per_user_minute=2)


async def test_red20_r4_a_definition_change_past_the_rate_is_429_with_retry_after(
        sched_app: Any, api: Any, jp_fetch: Any, jp_root_dir: Path) -> None:
    # fails before the fix: the PATCH was 200 (and a third audit row)
    (jp_root_dir / "r.ipynb").write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    status, created = await api("POST", "definitions", {"name": "r", "notebook": "r.ipynb", "timezone": "UTC"})
    assert status == 201, created
    status, paused = await api("POST", f"definitions/{created['id']}/pause", {})
    assert status == 200, paused
    response = await jp_fetch(*f"{API}/definitions/{created['id']}".split("/"), method="PATCH", raise_error=False,
                              body=json.dumps({"name": "r2"}), headers={"Authorization": f"token {IVAN_TOKEN}"})
    assert response.code == 429, response.body
    error = json.loads(response.body)["error"]
    after = int(response.headers["Retry-After"])
    assert 1 <= after <= 30 and error["details"]["retry_after_s"] == after, (after, error)
    assert error["field"] == "max_submits_per_user_minute", error
    assert error["message"].startswith("ivan is changing job definitions faster than 2 a minute"), error
    status, kept = await api("GET", f"definitions/{created['id']}")
    assert status == 200 and kept["name"] == "r", kept
