"""red38 R1 through a forwarding user server: a lease body past the item bound (``MAX_BODY_ITEMS``) is not decoded
on the user server's loop for its ``kernel_id`` check; it is forwarded and the central service refuses it 413
(field ``body``), as it refuses it sent there directly — the kernel check is not skipped for anything the central
would take. Real parts as in :mod:`.test_forwarding`: a central jupyter_server subprocess (embedded mode) and
pytest-jupyter's user server forwarding to it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from jupyter_sched.extension.body_bounds import MAX_BODY_ITEMS

from .test_forwarding import forwarding_server_config, running_central


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_central(tmp_path_factory.mktemp("central-body")) as url:
        yield url


@pytest.fixture
def jp_server_config(central: str) -> dict[str, Any]:
    return forwarding_server_config(central)


async def test_red38_r1_a_lease_body_past_the_item_bound_is_refused_413_by_the_central_through_the_forward(
        sched_app: Any, jp_fetch: Any) -> None:
    body = b'{"gpus":1,"kernel_id":"k-typo","x":[' + b"{}," * (MAX_BODY_ITEMS + 10) + b"{}]}"
    for route in ("leases", "jobs"):
        response = await jp_fetch("api", "sched", route, method="POST", body=body, raise_error=False,
                                  headers={"Content-Type": "application/json"})
        error = json.loads(response.body)["error"]
        assert response.code == 413 and error["code"] == "too_large" and error["field"] == "body", error
    small = json.dumps({"gpus": 1, "kernel_id": "k-typo"})  # under the bound: still checked here
    response = await jp_fetch("api", "sched", "leases", method="POST", body=small, raise_error=False)
    error = json.loads(response.body)["error"]
    assert response.code == 400 and error["field"] == "kernel_id", error
