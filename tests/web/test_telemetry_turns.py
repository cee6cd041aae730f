"""A user's telemetry reads run one at a time (red-team 4 finding 3): sixteen concurrent loops of
eve's ``GET telemetry?since=…&limit=3600`` (or ``telemetry/history`` at step 1 s) made judy's
``GET me`` 76x-240x slower; one at a time, ~3x. Behaviour, not timing: while one of eve's reads
is held inside the service, her others wait their turn and judy's is answered."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from .conftest import EVE_TOKEN, JUDY_TOKEN, wait_for


async def test_redteam4_a_users_telemetry_reads_run_one_at_a_time(sched_app: Any, api: Any,
                                                                   monkeypatch: Any) -> None:
    service = sched_app.services.telemetry
    real = service.telemetry
    gate = threading.Event()
    lock = threading.Lock()
    inside: dict[str, int] = {"eve": 0, "judy": 0}
    most: dict[str, int] = {"eve": 0, "judy": 0}

    def held(caller: Any, request: Any) -> Any:
        with lock:
            inside[caller.user] += 1
            most[caller.user] = max(most[caller.user], inside[caller.user])
        try:
            if caller.user == "eve":
                gate.wait(30)  # eve's read stays inside until the test lets it go
            return real(caller, request)
        finally:
            with lock:
                inside[caller.user] -= 1

    monkeypatch.setattr(service, "telemetry", held)
    eves = [asyncio.ensure_future(api("GET", "telemetry", token=EVE_TOKEN)) for _ in range(4)]
    try:
        async def one_inside() -> bool:
            return inside["eve"] >= 1
        await wait_for(one_inside, timeout_s=20)
        status, _ = await api("GET", "telemetry", token=JUDY_TOKEN)  # another user does not wait for eve's turn
        assert status == 200 and most["judy"] == 1
        await asyncio.sleep(0.3)  # room for eve's other reads to get in, were they not waiting their turn
        assert inside["eve"] == 1, inside
    finally:
        gate.set()
        answers = await asyncio.gather(*eves)
    assert [status for status, _ in answers] == [200] * 4 and most["eve"] == 1, (most, answers)


async def test_redteam4_one_telemetry_answer_has_a_bounded_number_of_samples(sched_app: Any, api: Any,
                                                                             monkeypatch: Any) -> None:
    """Red-team 4 finding 3, the size half: ``limit`` is per device, so one answer for every GPU of
    a large cluster could hold GPUs x 3600 samples (116 MB on 64 GPUs). The service asks the sample
    store for at most MAX_RECENT_SAMPLES over all devices; a narrow read keeps the limit asked."""
    from jupyter_sched.services import telemetry as module

    service = sched_app.services.telemetry
    assert service.monitor is not None, "the web tests' server samples its simulated GPUs"
    asked: list[tuple[int, int]] = []
    real = service.monitor.recent

    def spy(keys: Any, *, since: Any, limit: int) -> Any:
        keys = list(keys)
        asked.append((len(keys), limit))
        return real(keys, since=since, limit=limit)

    async def sampled() -> bool:
        return len(service.monitor.latest()) >= 2
    await wait_for(sampled, timeout_s=20)  # the monitor has sampled the GPUs once
    monkeypatch.setattr(service.monitor, "recent", spy)
    status, body = await api("GET", "telemetry", token=EVE_TOKEN, params={"limit": "3600"})
    assert status == 200 and asked[-1] == (len(body["gpus"]), 3600), body  # 4 GPUs x 3600 fits whole
    devices = len(body["gpus"])
    assert devices >= 2
    monkeypatch.setattr(module, "MAX_RECENT_SAMPLES", devices * 10)  # as if the cluster were large
    status, body = await api("GET", "telemetry", token=EVE_TOKEN,
                             params={"limit": "3600", "since": "2020-01-01T00:00:00+00:00"})
    assert status == 200 and asked[-1] == (devices, 10), body
    assert all(len(gpu["recent"]) <= 10 for gpu in body["gpus"])
    assert module.recent_limit(3600, 1_000_000) == 1 and module.recent_limit(5, 2) == 5


async def test_redteam4_a_history_of_years_is_refused_naming_since_and_the_step_that_fits(api: Any) -> None:
    """Red-team 4 finding 3: ``telemetry/history`` answers every step, data or gap, so a ``since``
    years back at step 1 s asked for ~10^8 points per device; refused (400) naming ``since`` and
    the smallest step_s that fits, while an ordinary hour is answered."""
    status, inventory = await api("GET", "inventory", token=JUDY_TOKEN)
    assert status == 200
    gpu = inventory["nodes"][0]["gpus"][0]["uuid"]
    status, body = await api("GET", "telemetry/history", token=EVE_TOKEN,
                             params={"gpu": gpu, "since": "2020-01-01T00:00:00+00:00", "step_s": "1"})
    assert status == 400, body
    error = body["error"]
    assert error["field"] == "since" and error["message"].startswith("the answer would hold "), error
    assert "(1 device x steps of 1 s); at most 500,000" in error["message"], error
    assert "a step_s of at least" in error["hint"], error
    status, body = await api("GET", "telemetry/history", token=EVE_TOKEN, params={"gpu": gpu, "step_s": "60"})
    assert status == 200 and body["step_s"] == 60, body
