"""hubadmin25 B18 (REST half): ``PATCH jobs/{id}`` holds and releases a pending job, changes its time limit
and class, and (admins) puts it first in its class — with who may do what (403 audited), what the job's state
allows (409), every change audited with before/after, and the held job's reason, ETA and never starting."""

from __future__ import annotations

import asyncio
from typing import Any

from .conftest import BOSS_TOKEN, IVAN_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for


async def _audit(api: Any, job_id: str, action: str) -> list[dict[str, Any]]:
    status, rows = await api("GET", "audit", params={"job_id": job_id, "action": action}, token=BOSS_TOKEN)
    assert status == 200, rows
    return list(rows)


async def _fill(api: Any) -> list[str]:
    """Every simulated GPU busy (4 x 1-GPU sleepers), so what is submitted next waits."""
    return [await running_job(api, 1, name=f"fill-{i}") for i in range(4)]


async def test_hubadmin25_b18_hold_release_by_the_owner_and_an_admin_hold_only_an_admin_releases(api: Any) -> None:
    fillers = await _fill(api)
    status, job = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "waits"})
    assert status == 201, job
    jid = job["id"]

    status, held = await api("PATCH", f"jobs/{jid}", {"held": True})
    assert status == 200, held
    assert held["changed"] == [f"held (release with: jupyter-sched release {jid})"], held
    assert held["held"]["by"] == "ivan" and held["held"]["admin"] is False, held
    assert held["reason"]["code"] == "Held" and held["reason"]["text"]["eta"] == "ETA unknown: held", held["reason"]
    assert held["reason"]["message"].startswith("held by ivan at "), held["reason"]
    (row,) = await _audit(api, jid, "job_held")
    assert row["actor"] == "ivan" and row["details"]["before"] is None and row["details"]["after"]["by"] == "ivan"

    # the GPUs free up: a held job still never starts, and the cycle keeps its reason
    await api("DELETE", f"jobs/{fillers[0]}", token=BOSS_TOKEN)
    await asyncio.sleep(1.0)
    _, seen = await api("GET", f"jobs/{jid}")
    assert seen["state"] == "pending" and seen["reason"]["code"] == "Held", seen

    status, again = await api("PATCH", f"jobs/{jid}", {"held": True})
    assert status == 200 and again["changed"][0].startswith("already held by you since "), again

    # an admin's hold on it: its owner can no longer release it (403, audited), an admin can
    status, boss = await api("PATCH", f"jobs/{jid}", {"held": True}, token=BOSS_TOKEN)
    assert status == 200 and boss["held"] == {**boss["held"], "by": "boss", "admin": True}, boss
    assert boss["changed"] == ["held (an admin's hold: only an admin releases it)"], boss
    status, refused = await api("PATCH", f"jobs/{jid}", {"held": False})
    assert status == 403, refused
    assert refused["error"]["field"] == "held" and "only an admin may release it" in refused["error"]["message"], refused
    assert refused["error"]["hint"].startswith("ask boss to release it, or cancel it: jupyter-sched cancel "), refused
    assert await _audit(api, jid, "refused"), "the refused release is audited"

    status, released = await api("PATCH", f"jobs/{jid}", {"held": False}, token=BOSS_TOKEN)
    assert status == 200 and released["changed"][0].startswith("released (held by you since "), released
    assert "held" not in released, released
    (row,) = await _audit(api, jid, "job_released")
    assert row["actor"] == "boss" and row["details"]["before"]["by"] == "boss" and row["details"]["after"] is None

    async def started() -> bool:
        _, now = await api("GET", f"jobs/{jid}")
        return bool(now["state"] == "running")

    await wait_for(started)  # released: it takes the freed GPU
    status, running = await api("PATCH", f"jobs/{jid}", {"held": True})
    assert status == 409 and running["error"]["field"] == "held", running
    assert "only a pending job can be held" in running["error"]["message"], running
    assert running["error"]["hint"] == f"cancel it if it must stop (jupyter-sched cancel {jid})", running

    # newuser40 n12: an admin re-holding their own held job read "held (…)" as if it had just been held
    status, mine = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4, "name": "boss-own"}, token=BOSS_TOKEN)
    assert status == 201, mine
    status, first = await api("PATCH", f"jobs/{mine['id']}", {"held": True}, token=BOSS_TOKEN)
    assert status == 200 and first["changed"] == [f"held (release with: jupyter-sched release {mine['id']})"], first
    status, twice = await api("PATCH", f"jobs/{mine['id']}", {"held": True}, token=BOSS_TOKEN)
    assert status == 200 and twice["changed"][0].startswith("already held by you since "), twice
    await api("DELETE", f"jobs/{mine['id']}", token=BOSS_TOKEN)

    status, hidden = await api("PATCH", f"jobs/{jid}", {"time_limit": "1h"}, token=JUDY_TOKEN)
    assert status == 403, hidden  # another user's live job: as its DELETE (newuser29 n5: forbidden, as the words say)
    assert hidden["error"]["message"] == (f"{jid} is another user's job: you may hold, release or change only your own "
                                          "(an admin changes anyone's)"), hidden


async def test_hubadmin25_b18_time_limit_owner_shortens_only_an_admin_lengthens_a_running_job(api: Any) -> None:
    jid = await running_job(api, 1, name="limits")  # 10m limit
    status, shorter = await api("PATCH", f"jobs/{jid}", {"time_limit": "-5m"})
    assert status == 200, shorter
    assert shorter["time_limit_s"] == 300 and shorter["changed"][0].startswith(
        "time limit 10m → 5m: it is stopped at "), shorter
    (row,) = await _audit(api, jid, "job_updated")
    assert row["details"] == {"field": "time_limit_s", "before": 600.0, "after": 300.0}, row

    status, longer = await api("PATCH", f"jobs/{jid}", {"time_limit": "2h"})
    assert status == 403 and longer["error"]["field"] == "time_limit", longer
    assert longer["error"]["message"].startswith("only an admin lengthens a running job's time limit (time limit 5m "
                                                 "→ 2h00m)"), longer
    status, boss = await api("PATCH", f"jobs/{jid}", {"time_limit_s": 7200}, token=BOSS_TOKEN)
    assert status == 200 and boss["time_limit_s"] == 7200, boss

    for body, field in (({}, "held"), ({"time_limit": "soon"}, "time_limit"), ({"time_limit": "1h", "time_limit_s": 60},
                        "time_limit_s"), ({"priority": "urgent"}, "priority"), ({"held": "yes"}, "held"),
                        ({"color": "red"}, "color"), ({"time_limit": "+400d"}, "time_limit"), ({"time_limit": 1e300},
                        "time_limit"), ({"time_limit": "-3h"}, "time_limit"), ({"top": 1}, "top"),
                        ({"time_limit_s": True}, "time_limit_s")):
        status, bad = await api("PATCH", f"jobs/{jid}", body)
        assert status == 400 and bad["error"]["field"] == field and bad["error"]["hint"], (body, bad)

    status, klass = await api("PATCH", f"jobs/{jid}", {"priority": "low"})
    assert status == 409 and klass["error"]["field"] == "priority", klass
    assert "only a pending job's class can change" in klass["error"]["message"], klass

    # the engine stops it at a limit already passed
    await asyncio.sleep(1.2)
    status, done = await api("PATCH", f"jobs/{jid}", {"time_limit": "1s"})
    assert status == 200 and done["changed"][0].endswith("so it is stopped at once"), done

    async def stopped() -> bool:
        _, now = await api("GET", f"jobs/{jid}")
        return bool(now["state"] in ("failed", "cancelled", "succeeded") or now.get("stop_requested"))

    await wait_for(stopped)


async def test_hubadmin25_b18_class_and_top_of_a_pending_job(api: Any) -> None:
    await _fill(api)
    status, first = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "first"})
    assert status == 201
    status, second = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 1, "name": "second"}, token=JUDY_TOKEN)
    assert status == 201

    status, high = await api("PATCH", f"jobs/{first['id']}", {"priority": "high"})
    assert status == 403 and high["error"]["field"] == "priority", high
    assert "not granted to ivan" in high["error"]["message"], high
    status, low = await api("PATCH", f"jobs/{first['id']}", {"priority": "low"})
    assert status == 200 and low["priority"] == "low" and low["changed"] == ["priority normal → low"], low
    (row,) = await _audit(api, first["id"], "job_updated")
    assert row["details"] == {"field": "priority", "before": "normal", "after": "low"}, row

    status, longer = await api("PATCH", f"jobs/{first['id']}", {"time_limit": "+1h"})  # pending: no queue maximum here
    assert status == 200 and longer["changed"] == ["time limit 10m → 1h10m"], longer

    status, top = await api("PATCH", f"jobs/{second['id']}", {"top": True}, token=JUDY_TOKEN)
    assert status == 403 and top["error"]["field"] == "top", top
    status, top = await api("PATCH", f"jobs/{second['id']}", {"top": True}, token=BOSS_TOKEN)
    assert status == 200 and top["changed"] == ["put first in its class (normal)"] and top["top_at"], top
    (row,) = await _audit(api, second["id"], "job_topped")
    assert row["actor"] == "boss", row

    status, lease = await api("PATCH", f"leases/{second['id']}", {"held": True}, token=BOSS_TOKEN)
    assert status == 405, lease  # leases are released, not changed
    assert IVAN_TOKEN
