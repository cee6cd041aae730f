"""Verify 20, V1: ``POST leases?wait_ms=…`` answered the decided lease as re-read (or as the engine's
event carried it), without the submit's ``warnings``, so ``%gpu request`` — which always waits —
never showed a lease's note (new user 20 N8's "mem_per_gpu 20 is read as 20 MiB" among them). The
waited answer now carries the notes the submit made. Through the real server (pytest-jupyter),
SQLite, simulated GPUs."""

from __future__ import annotations

from typing import Any


async def test_verify20_v1_a_waited_lease_answer_keeps_the_submit_s_warnings(sched_app: Any, api: Any) -> None:
    body = {"gpus": 1, "mem_per_gpu": "20"}
    status, waited = await api("POST", "leases", body, params={"wait_ms": "3000"})
    assert status == 201, waited
    assert waited["state"] in ("admitted", "running"), waited
    notes = waited.get("warnings") or []
    assert any("read as 20 MiB" in note for note in notes), waited
    status, plain = await api("POST", "leases", body)
    assert status == 201 and [n for n in plain["warnings"] if "MiB" in n] == [n for n in notes if "MiB" in n], plain
