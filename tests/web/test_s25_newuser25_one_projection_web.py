"""New user 25, N2/N4 through REST: the running job's own ``projected_end`` is the end its waiter's ETA reads.

A 5-s run's own line said "projected end … (in 59s), if it runs as long as similar past runs did" (a
minute's floor on every learnt end, ``END_MARGIN_S``), while the card of the job just admitted said its
limit and the waiter read "in 6s". Now the owner's line (GET queue, GET jobs/{id}) carries the learnt end
itself — start + what similar runs took — and the waiter's ETA is that same time.

Real parts: a jupyter_server with jupyter_sched, a real ``sleep`` on four simulated GPUs, the SQLite store;
the learnt runtime is put where the cycle's snapshot reads it (the engine's runtime feed: 40 s of runs of the
same work), as two finished 40-s runs would.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from jupyter_sched.wording.reasons import wire_time

from .conftest import JUDY_TOKEN, SLEEP_JOB, running_job, wait_for

LEARNT_S = 40.0


async def test_newuser25_n2_the_owners_line_says_the_learnt_end_its_waiter_reads(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    feed = sched_app.services.engine.decider.runtimes
    learnt_rows = feed.learnt_rows
    held: list[str] = []

    def with_learnt(records: Any) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
        learnt, typical, sources = learnt_rows(records)
        return {**learnt, **{j: LEARNT_S for j in held}}, typical, {**sources, **{j: "same" for j in held}}

    monkeypatch.setattr(feed, "learnt_rows", with_learnt)
    stuck = await running_job(api, gpus=4, name="short")
    held.append(stuck)
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4, "name": "behind"}, token=JUDY_TOKEN)
    assert status == 201, waiting

    async def told() -> dict[str, Any]:  # one queue page: the waiter's ETA and short's end of one cycle
        _, entries = await api("GET", "queue")
        by_id = {entry["id"]: entry for entry in entries}
        details = ((by_id.get(waiting["id"]) or {}).get("reason") or {}).get("details") or {}
        return by_id if details.get("eta_learned") and by_id.get(stuck, {}).get("projected_end") else {}

    entries = await wait_for(told)
    end = entries[stuck]["projected_end"]
    at, started = wire_time(end["at"]), wire_time(entries[stuck]["started_at"])
    assert at is not None and started is not None
    assert at == wire_time(entries[waiting["id"]]["eta"]), (end, entries[waiting["id"]]["eta"])
    # its start plus the 40 s similar runs took — not floored a minute from the cycle (the start is
    # stored to the second or finer; the engine's own start time may lead the stored one by a poll)
    assert abs((at - (started + timedelta(seconds=LEARNT_S))).total_seconds()) <= 2.0, (at, started)
    assert end["source"] == "history" and end["runs"] == "same"
    assert end["text"].endswith(", if it runs as long as similar past runs did"), end
    _, job = await api("GET", f"jobs/{stuck}")
    assert job["projected_end"]["at"] == end["at"]
    for job_id, token in ((waiting["id"], JUDY_TOKEN), (stuck, None)):  # nothing left running
        status, _ = await api("DELETE", f"jobs/{job_id}", **({"token": token} if token else {}))
        assert status == 200
