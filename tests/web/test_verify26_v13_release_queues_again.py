"""verify26 V13 (REST half): a job held early and released late queues from its release, behind the work
submitted while it was held (Slurm's EligibleTime): GET queue's positions, the job's ``eligible_at`` (its
``submitted_at`` kept), what starts first when a GPU frees, and the words of the release."""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import BOSS_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for


async def test_verify26_v13_a_released_job_goes_behind_work_submitted_while_it_was_held(api: Any) -> None:
    fillers = [await running_job(api, 1, name=f"fill-{i}") for i in range(4)]
    status, early = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "early"})
    assert status == 201, early
    status, held = await api("PATCH", f"jobs/{early['id']}", {"held": True})
    assert status == 200, held
    await asyncio.sleep(0.05)  # judy submits after ivan's hold
    status, meanwhile = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "meanwhile"}, token=JUDY_TOKEN)
    assert status == 201, meanwhile
    await asyncio.sleep(0.05)
    status, released = await api("PATCH", f"jobs/{early['id']}", {"held": False})
    assert status == 200, released
    assert released["changed"][0].endswith("it queues again from now, behind work submitted while it was held"), released
    assert released["submitted_at"] == early["submitted_at"], "its submit time is kept for display"
    assert released["eligible_at"] > meanwhile["submitted_at"], released

    async def positions() -> dict[str, int]:
        status, queue = await api("GET", "queue", token=BOSS_TOKEN)
        assert status == 200, queue
        at = {entry["id"]: entry["position"] for entry in queue}
        return at if at.get(meanwhile["id"]) and at.get(early["id"]) else {}

    position = await wait_for(positions)  # the next cycle gives the released job its reason and place
    assert position[meanwhile["id"]] < position[early["id"]], position

    await api("DELETE", f"jobs/{fillers[0]}", token=BOSS_TOKEN)  # one GPU frees: judy's job takes it

    async def started() -> dict[str, str]:
        _, one = await api("GET", f"jobs/{meanwhile['id']}", token=JUDY_TOKEN)
        _, other = await api("GET", f"jobs/{early['id']}")
        return {"meanwhile": one["state"], "early": other["state"]} if one["state"] != "pending" else {}

    states = await wait_for(started)
    assert states["meanwhile"] in ("admitted", "running") and states["early"] == "pending", states
