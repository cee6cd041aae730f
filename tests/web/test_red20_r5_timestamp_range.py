"""Red team 20, R5: a timestamp whose conversion to UTC overflows (``0001-01-01T00:00:00+14:00`` is
before year 1 in UTC; ``9999-12-31T23:59:59-14:00`` after 9999) answered 500 "please report it"
with a 3 KB traceback per request on every parameter that takes one; year 1 or 9999 in UTC did too
(the window built from it, until - 1 h, overflowed). Now a time outside 1970 to 8999 UTC is a 400
``invalid_timestamp`` naming the parameter, and the edges of that range are answered, not a 500.
Through the real server (pytest-jupyter), SQLite, simulated GPUs."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import BOSS_TOKEN

OVERFLOWING = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z",
               "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z"]
EDGES = ["1970-01-01T00:00:00Z", "8999-12-31T23:59:59Z"]
PARAMETERS = [("telemetry", "since"), ("telemetry/history", "since"), ("telemetry/history", "until"),
              ("usage", "since"), ("usage", "until"), ("usage/report", "since"), ("usage/waste", "since"),
              ("audit", "since"), ("audit", "until")]


async def _extra(api: Any, route: str) -> dict[str, str]:
    """telemetry/history needs one of gpu, job, lease: the first GPU of the inventory."""
    if route != "telemetry/history":
        return {}
    status, inventory = await api("GET", "inventory")
    assert status == 200, inventory
    return {"gpu": inventory["nodes"][0]["gpus"][0]["uuid"]}


@pytest.mark.parametrize("value", OVERFLOWING)
@pytest.mark.parametrize("route, name", PARAMETERS)
async def test_red20_r5_a_timestamp_out_of_range_in_utc_is_a_400_naming_it(
        sched_app: Any, api: Any, route: str, name: str, value: str) -> None:
    status, body = await api("GET", route, params={name: value, **await _extra(api, route)}, token=BOSS_TOKEN)
    assert status == 400, (route, name, status, body)
    assert body["error"]["field"] == name and "out of range" in body["error"]["message"], body


@pytest.mark.parametrize("value", EDGES)
@pytest.mark.parametrize("route, name", PARAMETERS)
async def test_red20_r5_the_first_and_last_utc_instants_are_no_500(
        sched_app: Any, api: Any, route: str, name: str, value: str) -> None:
    status, body = await api("GET", route, params={name: value, **await _extra(api, route)}, token=BOSS_TOKEN)
    assert status < 500, (route, name, status, body)
