"""Red team 20, R5: a timestamp whose conversion to UTC overflows (``0001-01-01T00:00:00+14:00`` is
before year 1 in UTC; ``9999-12-31T23:59:59-14:00`` after 9999) answered 500 "please report it"
with a 3 KB traceback per request on every parameter that takes one; year 1 or 9999 in UTC did too
(the window built from it, until - 1 h, overflowed). Now a time outside 1970 to 8999 UTC is a 400
``invalid_timestamp`` naming the parameter, and the edges of that range are answered, not a 500.
Through one real server for the module (tests/reliability/harness.py: its subprocess), SQLite, simulated GPUs
— every case only reads, so none needs a fresh server (session 34: one server per case was 63 start-ups)."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

from .conftest import BOSS_TOKEN

OVERFLOWING = ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00Z",
               "9999-12-31T23:59:59Z", "1969-12-31T23:59:59Z"]
EDGES = ["1970-01-01T00:00:00Z", "8999-12-31T23:59:59Z"]
PARAMETERS = [("telemetry", "since"), ("telemetry/history", "since"), ("telemetry/history", "until"),
              ("usage", "since"), ("usage", "until"), ("usage/report", "since"), ("usage/waste", "since"),
              ("audit", "since"), ("audit", "until")]


@pytest.fixture(scope="module")
def boss(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """The admin ``boss``'s client of one server for the module."""
    srv = EmbeddedServer.start(tmp_path_factory.mktemp("red20r5"), users={OWNER_TOKEN: "boss", BOSS_TOKEN: "boss"},
                               admin_users=["boss"])
    try:
        with httpx.Client(base_url=srv.api, headers=srv.headers(BOSS_TOKEN), timeout=30) as client:
            yield client
    finally:
        srv.kill()


def _extra(boss: httpx.Client, route: str) -> dict[str, str]:
    """telemetry/history needs one of gpu, job, lease: the first GPU of the inventory."""
    if route != "telemetry/history":
        return {}
    inventory = boss.get("inventory")
    assert inventory.status_code == 200, inventory.text
    return {"gpu": inventory.json()["nodes"][0]["gpus"][0]["uuid"]}


@pytest.mark.parametrize("value", OVERFLOWING)
@pytest.mark.parametrize("route, name", PARAMETERS)
def test_red20_r5_a_timestamp_out_of_range_in_utc_is_a_400_naming_it(
        boss: httpx.Client, route: str, name: str, value: str) -> None:
    answer = boss.get(route, params={name: value, **_extra(boss, route)})
    assert answer.status_code == 400, (route, name, answer.status_code, answer.text)
    body = answer.json()
    assert body["error"]["field"] == name and "out of range" in body["error"]["message"], body


@pytest.mark.parametrize("value", EDGES)
@pytest.mark.parametrize("route, name", PARAMETERS)
def test_red20_r5_the_first_and_last_utc_instants_are_no_500(
        boss: httpx.Client, route: str, name: str, value: str) -> None:
    answer = boss.get(route, params={name: value, **_extra(boss, route)})
    assert answer.status_code < 500, (route, name, answer.status_code, answer.text)
