"""New user 17, N11, through a forwarding user server: the central service's 429 for a user over
``max_submits_per_user_minute`` reaches the user with its ``Retry-After`` header (the forward
passed only its listed headers). Real parts as in :mod:`.test_forwarding`: a central jupyter_server
subprocess (embedded mode) and pytest-jupyter's user server forwarding to it."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from .test_forwarding import forwarding_server_config, running_central


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_central(tmp_path_factory.mktemp("central-rate"), "--SchedApp.max_submits_per_user_minute=2") as url:
        yield url


@pytest.fixture
def jp_server_config(central: str) -> dict[str, Any]:
    return forwarding_server_config(central)


async def test_newuser17_n11_the_rate_429_keeps_its_retry_after_through_the_forward(
        sched_app: Any, jp_fetch: Any) -> None:
    """Failed before the fix: no limit (201); Retry-After was not among the forwarded headers."""
    body = json.dumps({"gpus": 0, "command": [sys.executable, "-c", "pass"]})
    codes = []
    for _ in range(3):
        response = await jp_fetch("api", "sched", "jobs", method="POST", body=body, raise_error=False)
        codes.append(response.code)
    assert codes == [201, 201, 429], codes
    error = json.loads(response.body)["error"]
    assert error["field"] == "max_submits_per_user_minute", error
    assert int(response.headers["Retry-After"]) == error["details"]["retry_after_s"] >= 1, dict(response.headers)
