"""Session 21: a capacity wait on idle leases has an ETA, end to end — the job's REST answer and the
queue's (tests/core/test_s21_capacity_wait_on_idle_leases.py has the core's cases). Against a real
embedded server (2 simulated GPUs; its idle policy reclaims leases after 30m idle)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.onboarding.test_cli_firsthour import api, clear, module_server, submit, wait_state
from tests.reliability.harness import OWNER_TOKEN, EmbeddedServer

USERS = {"tok-ann": "ann", "tok-boss": "boss", OWNER_TOKEN: "boss"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedServer]:
    yield from module_server(tmp_path_factory, "s21idle", USERS)


def test_s21_capacity_wait_on_idle_leases_has_eta_through_rest(server: EmbeddedServer) -> None:
    ann = api(server, "tok-ann")
    try:
        leases = [ann.post("leases", json={"gpus": 1}).json() for _ in range(2)]
        for lease in leases:
            wait_state(server, "tok-ann", lease["id"], "running", "admitted")
        job = submit(server, "tok-ann", gpus=2)  # both GPUs are held: a capacity wait, no quota line
        ids = sorted(lease["id"] for lease in leases)
        deadline = time.monotonic() + 90
        while True:  # once the idle monitor has seen both idle (samples away), the plan ends them at their reclaim
            seen: dict[str, Any] = ann.get(f"jobs/{job['id']}").json()
            details = (seen.get("reason") or {}).get("details") or {}
            if "eta_idle_at" in details:
                break
            assert time.monotonic() < deadline, seen
            time.sleep(0.2)
        reason = seen["reason"]
        assert reason["code"] == "WaitingForCapacity", reason
        assert details["eta_code"] == "Projected" and reason["eta"], reason
        assert sorted(details["eta_waits_on"]) == ids, details
        eta = reason["text"]["eta"]
        assert eta.startswith("ETA ") and "unknown" not in eta, eta
        said = [f"if your own leases {a} and {b} (held for no kernel) stay idle (they are then reclaimed)"
                for a, b in (ids, ids[::-1])]
        assert any(s in eta for s in said), eta
        rows = ann.get("queue").json()
        rows = rows["queue"] if isinstance(rows, dict) else rows
        queued = next(r for r in rows if r["id"] == job["id"])["reason"]
        assert queued["eta"] == reason["eta"] and any(s in queued["text"]["eta"] for s in said), queued
    finally:
        clear(server)
