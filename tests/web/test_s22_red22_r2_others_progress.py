"""Red team 22, R2: another user's job progress — owner-only on its own routes (``GET jobs/{id}`` is refused
to others) — was shown to everyone through the public queue: a waiter's reason read "when ivan's job …
ends, from its progress (2 % done, reported …)" in ``GET queue`` for any user. Now a blocker's progress
figure (and report time) is said only to a reader who may see it — its owner, an admin — and everyone
else, the waiter's own owner included, reads the ETA with a neutral cause ("from its reported progress").

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan owns the running job; eve waits;
judy is a third user; boss an admin), real job processes (``sleep``) on simulated GPUs, the SQLite store.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import BOSS_TOKEN, EVE_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for


def _private(reason: dict[str, Any], holder: str) -> list[str]:
    """What of ``holder``'s progress a reason shows: its figure and report time, in words or data."""
    details = reason.get("details") or {}
    found = [f"figure {details['eta_progress'][holder]}"] if (details.get("eta_progress") or {}).get(holder) else []
    found += [f"{key}" for key in ("eta_progress_at", "eta_progress_capped", "eta_progress_lapsed")
              if holder in (details.get(key) or {})]
    text = reason.get("text") or {}
    found += [f"words {part!r}" for part in (text.get("eta", ""), text.get("line", "")) if "% done" in part]
    return found


async def test_s22_red22_r2_another_users_progress_is_not_in_the_waiters_reason(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Failed before the fix: eve's own reason and judy's GET queue read "from its progress (2 % done, …)"."""
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # two reports without the 10 s wait
    holder = await running_job(api, gpus=4, name="a0")  # ivan's
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4}, token=EVE_TOKEN)
    assert status == 201, waiting

    async def projected() -> bool:  # a cycle has run since the holder started: its pace below is minutes long
        _, job = await api("GET", f"jobs/{waiting['id']}", token=EVE_TOKEN)
        return bool(((job.get("reason") or {}).get("details") or {}).get("eta_code") == "Projected")

    await wait_for(projected)
    for done in (15, 25):
        status, answer = await api("POST", f"jobs/{holder}/progress", {"done": done, "total": 1000})
        assert status == 200 and answer["stored"], answer

    async def read_from_progress() -> Any:  # the admin reads what the cycle read: ivan's 2.5 %
        _, job = await api("GET", f"jobs/{waiting['id']}", token=BOSS_TOKEN)
        reason = job.get("reason") or {}
        return reason if (reason.get("details") or {}).get("eta_progress") else None

    seen_by_admin = await wait_for(read_from_progress)
    assert seen_by_admin["details"]["eta_progress"] == {holder: 0.025}, seen_by_admin["details"]
    assert "from its progress (2 % done, reported " in seen_by_admin["text"]["eta"], seen_by_admin["text"]

    # the waiter's owner: when the wait ends, and that it comes from the blocker's reports — not its figure
    _, mine = await api("GET", f"jobs/{waiting['id']}", token=EVE_TOKEN)
    reason = mine["reason"]
    assert _private(reason, holder) == [], reason
    assert reason["eta"] and reason["text"]["eta"].startswith("ETA "), reason["text"]
    assert f'when ivan\'s job "a0" ({holder}) ends, from its reported progress' in reason["text"]["eta"], reason["text"]
    assert reason["details"]["eta_withheld"] == [holder] and reason["details"]["eta_progress"] == {holder: None}

    # a third user: the queue's line of eve's job says the same, and ivan's job itself stays 404 to her
    status, queue = await api("GET", "queue", token=JUDY_TOKEN)
    assert status == 200, queue
    [line] = [e for e in queue if e["id"] == waiting["id"]]
    assert _private(line["reason"], holder) == [], line["reason"]
    assert "from its reported progress" in line["reason"]["text"]["eta"], line["reason"]["text"]
    status, _ = await api("GET", f"jobs/{holder}", token=JUDY_TOKEN)
    assert status == 403  # another user's live job (newuser29 n5)

    # a dry run of eve's reads the same blocker: its reason withholds the figure too
    status, dry = await api("POST", "dryrun", {**SLEEP_JOB, "gpus": 4}, token=EVE_TOKEN)
    assert status == 200 and dry["reason"], dry
    assert _private(dry["reason"], holder) == [], dry["reason"]
