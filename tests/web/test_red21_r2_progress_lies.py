"""Red team 21, R2 (hostile): ``red21/a1_eta_lies.py`` — a user's running job reports 99 % then 1.1 %
alternately, each answered 200 ``stored: true``, and every flip moved the ETAs of other users' waiting
jobs and wrote one ``eta_moved`` audit record per waiting job in their owners' names.

Now a run whose reports contradict themselves (going backwards; a jump far past the run's own rate) is
ignored for ETAs (the engine's read leaves it out), said so in the answer and ``GET jobs/{id}``, and
audited once per run, in the liar's name; a new run is read again. The ``eta_moved`` bound per waiting
job is tests/core/test_red21_r2_eta_moved_bounded.py.

Real parts: a jupyter_server with jupyter_sched, ivan (the liar) and eve (waiting) with their own tokens,
real job processes (``sleep``) on simulated GPUs, the SQLite store on disk, the engine's own cycles.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.progress import fresh_progress, read_progress, record_report

from .conftest import BOSS_TOKEN, EVE_TOKEN, wait_for

SLEEP = {"command": ["sleep", "300"], "time_limit": "2h"}


async def test_red21_r2_progress_that_goes_backwards_is_ignored_for_etas_and_audited_once(
        sched_app: Any, api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sched_app.services.progress, "min_interval_s", 0.0)  # the liar's 10.2 s, without the wait
    status, liar = await api("POST", "jobs", {**SLEEP, "gpus": 4})
    assert status == 201, liar

    async def running() -> bool:
        _, seen = await api("GET", f"jobs/{liar['id']}")
        return bool(seen["state"] == "running")

    await wait_for(running)
    waiting = []
    for _ in range(3):  # another user's jobs wait for the liar's GPUs
        status, job = await api("POST", "jobs", {**SLEEP, "gpus": 1, "time_limit": "10m"}, token=EVE_TOKEN)
        assert status == 201, job
        waiting.append(job["id"])

    async def projected() -> bool:  # a cycle has run since the liar started: the pace below is minutes long
        _, job = await api("GET", f"jobs/{waiting[0]}", token=EVE_TOKEN)
        return bool(((job.get("reason") or {}).get("details") or {}).get("eta_code") == "Projected")

    await wait_for(projected)
    # two reports (a lone one from a run's first seconds is not read, new user 21 N4) at a pace whose end is
    # minutes ahead (99 % a second into the run ends it a second later: late at once, so not read either)
    for done in (15, 25):
        status, first = await api("POST", f"jobs/{liar['id']}/progress", {"done": done, "total": 1000})
        assert status == 200 and first["stored"] and first["progress"]["ignored"] == "", first

    async def eta_from_progress() -> Any:
        _, job = await api("GET", f"jobs/{waiting[0]}", token=EVE_TOKEN)
        return ((job.get("reason") or {}).get("details") or {}).get("eta_progress")

    # an honest-looking report is read (its figure, 2.5 %, is the liar's owner's: withheld from eve, red team 22 R2)
    assert await wait_for(eta_from_progress) == {liar["id"]: None}

    for k in range(6):  # the lies: back to 1.1 %, up to 99 %, …
        done = 11 if k % 2 == 0 else 990
        status, answer = await api("POST", f"jobs/{liar['id']}/progress", {"done": done, "total": 1000})
        assert status == 200, answer
        assert answer["progress"]["ignored"].startswith("its progress went backwards within one run: 2.5 % done at "), \
            answer
    _, job = await api("GET", f"jobs/{liar['id']}")
    assert "backwards" in job["progress"]["ignored"], job["progress"]

    async def eta_on_the_limit() -> bool:
        return await eta_from_progress() is None

    await wait_for(eta_on_the_limit)  # the waiting jobs' ETAs no longer read the liar's reports

    _, audit = await api("GET", "audit", params={"action": "progress_ignored"}, token=BOSS_TOKEN)
    rows = [r for r in audit if r.get("job_id") == liar["id"]]
    assert len(rows) == 1 and rows[0]["user"] == "ivan", audit  # once per run, in the liar's name
    assert "not read for ETAs" in rows[0]["message"], rows[0]


def test_red21_r2_contradictions_and_a_new_run(tmp_path: Path) -> None:
    """The store's check: backwards beyond 1 point, a jump of 25 points at over 100 times the run's own rate
    (but not a report that the run is done: early stopping), honest noise read; a new run is read again."""
    start = datetime(2026, 12, 5, 2, 0, tzinfo=timezone.utc)
    store = Store(sqlite_url(tmp_path / "sched.sqlite"))

    def report(job: str, minutes: float, done: float, run: datetime = start) -> str:
        with store.transaction() as tx:
            return record_report(tx, job, run_started_at=run, at=run + timedelta(minutes=minutes), done=done,
                                 total=100, min_interval_s=10)[2]

    assert [report("honest", m, d) for m, d in ((10, 10), (20, 20), (30, 19.5), (40, 40))] == ["", "", "", ""]
    assert [report("done-early", m, d) for m, d in ((10, 2), (20, 4), (30, 6), (31, 100))] == ["", "", "", ""]
    assert report("back", 10, 50) == "" and report("back", 20, 40).startswith("its progress went backwards")
    assert report("back", 30, 60) == ""  # audited once: already ignored
    jumps = [report("jump", m, d) for m, d in ((10, 2), (20, 4), (30, 6), (31, 60))]
    assert jumps[:3] == ["", "", ""] and "jumped from 6 % " in jumps[3] and "100 times its own rate" in jumps[3]
    with store.transaction(write=False) as tx:
        read = fresh_progress(tx, start)
        assert {"honest", "done-early"} <= set(read) and not {"back", "jump"} & set(read)
        assert read_progress(tx, ["back"])["back"].ignored.startswith("its progress went backwards")
    later = start + timedelta(hours=1)  # requeued: a new run is read again
    assert report("back", 5, 10, later) == ""
    with store.transaction(write=False) as tx:
        assert "back" in fresh_progress(tx, start) and read_progress(tx, ["back"])["back"].ignored == ""
    store.close()
