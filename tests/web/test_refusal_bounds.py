"""A refusal echoes and records user input bounded (red-team 3 finding 6): an unknown field's name
is user input of any length; a 5 MB key used to come back whole as ``error.field`` and was stored
whole in the audit log by every refused request (any user could fill the shared store's disk)."""

from __future__ import annotations

import json
from typing import Any

from .conftest import BOSS_TOKEN, EVE_TOKEN, JUDY_TOKEN, wait_for


async def test_redteam3_a_huge_unknown_field_is_neither_echoed_nor_audited_whole(sched_app: Any, api: Any) -> None:
    key = "gpus" * 250_000  # 1 MB, close to a real field name (the did-you-mean guess must not choke on it)
    raw = json.dumps({"gpus": 1, "command": ["true"], key: 1}).encode()
    status, body = await api("POST", "jobs", raw=raw, token=EVE_TOKEN)
    assert status == 400, body
    error = body["error"]
    assert error["message"].startswith("unknown field 'gpusgpus") and len(error["message"]) < 200, error["message"]
    assert error["field"] == key[:77] + "...", len(error["field"])
    assert len(json.dumps(body)) < 2_000

    async def refusals() -> list[dict[str, Any]]:  # written off the loop after the answer
        status, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "20"})
        assert status == 200
        return [r for r in rows if r["action"] == "refused" and r["user"] == "eve"]

    refused = await wait_for(refusals)
    assert refused[0]["details"]["field"] == error["field"]
    assert len(json.dumps(refused[0])) < 2_000, "the audit row holds the key whole"


async def test_redteam4_a_refused_cancel_of_another_users_job_is_audited_as_a_cancel(sched_app: Any, api: Any) -> None:
    """eve's DELETE of judy's job or lease is refused to her, and the admin's audit log says she
    tried to cancel it (it said "read job", like a harmless look)."""
    _, judys = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "judy-own"}, token=JUDY_TOKEN)
    for path in (f"jobs/{judys['id']}", f"leases/{judys['id']}"):
        status, _ = await api("DELETE", path, token=EVE_TOKEN)
        assert status in (403, 404)  # live: forbidden (newuser29 n5); ended: not shown

    async def refused() -> list[dict[str, Any]]:
        _, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "20"})
        mine = [r for r in rows if r["action"] == "refused" and r["user"] == "eve" and r["job_id"] == judys["id"]]
        return mine if len(mine) >= 2 else []  # both written (off the loop, after the answers)
    rows = await wait_for(refused)
    assert sorted(r["details"]["request"] for r in rows) == ["cancel job", "cancel lease"], rows


async def test_redteam5_one_users_loop_of_refused_requests_writes_a_bounded_number_of_audit_rows(
        sched_app: Any, api: Any) -> None:
    """eve's loop of refused requests wrote one audit row each, without bound (66 a second here;
    millions of rows slowed every scheduling cycle, red-team 5 finding 1). At most
    REFUSAL_RECORDS_PER_MINUTE are written one by one per minute; the rest are counted, and one
    record says how many once the minute is over. judy's refusals in the same minute are hers."""
    from jupyter_sched.admission.gate import REFUSAL_RECORDS_PER_MINUTE

    admission = sched_app.services.admission
    now = [1_000.0]
    admission.refusals.monotonic = lambda: now[0]  # one minute, whatever the machine's speed
    asked = REFUSAL_RECORDS_PER_MINUTE + 40
    for _ in range(asked):
        status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "priority": "high"}, token=EVE_TOKEN)
        assert status == 403
    status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "priority": "high"}, token=JUDY_TOKEN)
    assert status == 403
    now[0] += 61.0  # the minute is over: eve's next refusal is written, and the count of the others
    status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "priority": "high"}, token=EVE_TOKEN)
    assert status == 403

    async def rows_of(user: str, enough: int) -> list[dict[str, Any]]:  # written off the loop after the answers
        _, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "1000", "user": user})
        mine = [r for r in rows if r["action"] == "refused"]
        return mine if len(mine) >= enough else []

    one_kind = REFUSAL_RECORDS_PER_MINUTE // 2  # one kind of refusal takes at most half the places (red team 18, R1)
    eves = await wait_for(lambda: rows_of("eve", one_kind + 2))
    summaries = [r for r in eves if r["details"].get("suppressed")]
    assert len(eves) == one_kind + 2, len(eves)  # 30 + the count + the next minute's first
    assert [s["details"]["suppressed"] for s in summaries] == [asked - one_kind]
    assert f"{asked - one_kind} more refused request(s) of eve" in summaries[0]["message"]
    assert summaries[0]["details"]["by_kind"] == {"403 submit job (priority)": asked - one_kind}, summaries[0]
    assert len(await wait_for(lambda: rows_of("judy", 1))) == 1  # another user's refusal is never counted in eve's


async def test_red18_r1_a_flood_of_cheap_refusals_does_not_hide_a_probe_of_another_users_job(
        sched_app: Any, api: Any) -> None:
    """red18b sent 70 refused submits into another team, then tried to cancel and read the logs of
    red18a's job: the audit said only "25 more refused request(s) … were counted", no job id, and
    only once a later refusal came (red team 18, R1). Now one kind takes at most half of a minute's
    places, the first probe of each object is written by name, and the count says which kinds and
    targets it holds — written by the engine's tick once the minute ends."""
    from jupyter_sched.admission.gate import REFUSAL_RECORDS_PER_MINUTE

    admission = sched_app.services.admission
    now = [5_000.0]
    admission.refusals.monotonic = lambda: now[0]
    _, judys = await api("POST", "jobs", {"gpus": 1, "command": ["sleep", "30"], "name": "judy-own"}, token=JUDY_TOKEN)
    for body in ({"priority": "high"}, {"team": "someone-elses"}):  # two kinds spend every untargeted place
        for _ in range(REFUSAL_RECORDS_PER_MINUTE // 2 + 10):
            status, _ = await api("POST", "jobs", {"gpus": 1, "command": ["true"], **body}, token=EVE_TOKEN)
            assert status == 403
    for _ in range(3):
        assert (await api("DELETE", f"jobs/{judys['id']}", token=EVE_TOKEN))[0] == 403
    assert (await api("GET", f"jobs/{judys['id']}/logs", token=EVE_TOKEN))[0] == 403

    async def eves(enough: int) -> list[dict[str, Any]]:
        _, rows = await api("GET", "audit", token=BOSS_TOKEN, params={"limit": "1000", "user": "eve"})
        mine = [r for r in rows if r["action"] == "refused"]
        return mine if len(mine) >= enough else []

    rows = await wait_for(lambda: eves(REFUSAL_RECORDS_PER_MINUTE + 2))
    probes = sorted(r["details"]["request"] for r in rows if r["job_id"] == judys["id"])
    assert probes == ["cancel job", "read logs"], rows  # each kind of probe of judy's job, by name
    now[0] += 61.0  # the minute ends with no refusal after it: the engine's tick writes its count

    async def summary() -> dict[str, Any] | None:
        found = [r for r in await eves(1) if r["details"].get("suppressed")]
        return found[0] if found else None

    counted = await wait_for(summary)
    assert counted["details"]["by_kind"] == {"403 submit job (priority)": 10, "403 submit job (team)": 10,
                                             f"403 cancel job (job_id) {judys['id']}": 2}, counted
    assert f"403 cancel job (job_id) {judys['id']}: 2" in counted["message"]
