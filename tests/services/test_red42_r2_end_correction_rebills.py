"""Red team 42, R2: ``POST jobs/{id}/end`` (an admin's end correction) rewrote the corrected share's own usage rows but
never charged anew the shares beside it on its GPU: those had been charged at the old end as if it left then, so one
GPU was billed 1.5 over the stretch the end moved later by and 0.5 over the stretch it moved earlier by. A corrected end
charges the GPU's other holdings anew over the moved stretch by the rule usage charges by everywhere (a GPU one
team's shares hold is billed whole between them), in the correction's transaction; its audit record names them.

Real parts: a SQLite store (usage rows as admission and the engine write them: ``open_usage`` / ``close_usage``),
the correction as ``POST jobs/{id}/end`` runs it in the store (:func:`correct_end`), a manual clock.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from jupyter_sched.engine import ManualClock
from jupyter_sched.model import Allocation, JobState, ResourceRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url
from jupyter_sched.store.claimed_ends import END_CORRECTED_ACTION, correct_end, taken_back
from tests.runtime.builders import make_job

T0 = datetime(2026, 12, 7, 23, 49, 36, tzinfo=timezone.utc)
GPU = "GPU-sim-vm-5"


def _share(store: Store, job_id: str, *, team: str = "teamc", at: datetime = T0, gpu: str = GPU) -> None:
    """A running 0.1 share of r42c's on ``gpu``, its usage opened at ``at`` as admission opens it."""
    job = make_job(job_id, user="r42c", team=team, state=JobState.RUNNING, submitted_at=at,
                   allocation=Allocation(node="vm", gpu_uuids=(gpu,), gpu_milli=100))
    job = replace(job, started_at=at, spec=replace(job.spec, resources=ResourceRequest(gpus=1, gpu_milli=100)))
    store.insert_job(JobRecord(job=job))
    with store.transaction(now=at) as tx:
        tx.open_usage(job_id=job_id, attempt=1, user="r42c", team=team, kind="training", gpus=[(gpu, "sim", 0.1)],
                      started_at=at)


def _settle(store: Store, job_id: str, at: datetime) -> None:
    """``job_id`` ended at ``at`` (settled as the engine settles: its row and its usage in one transaction)."""
    with store.transaction(now=at) as tx:
        record = tx.get_job(job_id)
        tx.update_job(replace(record, job=replace(record.job, state=JobState.SUCCEEDED, finished_at=at,
                                                  message="exited with code 0")))
        tx.close_usage(job_id, at)


def _billed(store: Store, gpu: str, until: datetime) -> list[tuple[datetime, datetime, float]]:
    """The GPU's billed sum over every stretch between two changes of it, up to ``until``."""
    with store.transaction(write=False) as tx:
        rows = [r for r in tx.usage_rows() if r.gpu_uuid == gpu]
    cuts = sorted({r.started_at for r in rows} | {r.ended_at or until for r in rows})
    out: list[tuple[datetime, datetime, float]] = []
    for a, b in itertools.pairwise(cuts):
        held = [r for r in rows
                if r.started_at <= a and (r.ended_at or until) >= b and r.started_at < (r.ended_at or until)]
        billed = round(sum(r.charged for r in held), 9)
        if held and out and out[-1][1] == a and out[-1][2] == billed:
            out[-1] = (out[-1][0], b, billed)
        elif held:
            out.append((a, b, billed))
    return out


def _correct(store: Store, job_id: str, end: datetime, now: datetime) -> dict[str, Any]:
    with store.transaction(now=now) as tx:
        done = correct_end(tx, job_id, end, "claimed while the service was down", actor="boss", now=now)
        record = tx.list_events(job_id=job_id, action=END_CORRECTED_ACTION, newest_first=True, limit=1)[0]
    assert done.after == end
    return {"text": done.text, **record.details}


def test_red42_r2_an_end_correction_recharges_the_shares_beside_it(db_url: str) -> None:
    """On SQLite and on PostgreSQL (the rows are cut and compared by their fixed-width time text on both)."""
    clock = ManualClock(T0)
    store = Store(db_url, now=clock.now)
    try:
        _share(store, "j-c-e1")
        _share(store, "j-c-e2")
        _settle(store, "j-c-e1", T0 + timedelta(seconds=25))
        now = T0 + timedelta(seconds=60)
        clock.advance(60)
        assert {s for _, _, s in _billed(store, GPU, now)} == {1.0}  # as settled: 0.5 + 0.5, then e2 alone 1.0

        later = _correct(store, "j-c-e1", T0 + timedelta(seconds=49), now)
        stretches = _billed(store, GPU, now)
        assert {s for _, _, s in stretches} == {1.0}, stretches  # was 1.5 from +25 s to +49 s
        assert stretches[0][0] == T0 and stretches[-1][1] == now
        assert [b["job_id"] for b in later["beside"]] == ["j-c-e2"], later
        assert "j-c-e2" in str(later["text"]) and "charged anew" in str(later["text"])
        # the team's usage is what the GPU was billed: the corrected share's half and its neighbour's half over
        # the moved stretch, the whole GPU before and after: nothing taken back (the counter must not move)
        assert later["gpu_seconds_taken_back_by_team"] == {}, later

        earlier = _correct(store, "j-c-e1", T0 + timedelta(seconds=4), now)
        stretches = _billed(store, GPU, now)
        assert {s for _, _, s in stretches} == {1.0}, stretches  # was 0.5 from +4 s to +49 s
        assert [b["job_id"] for b in earlier["beside"]] == ["j-c-e2"], earlier
        with store.transaction(write=False) as tx:
            assert taken_back(tx) == {}
            rows = sorted((r.job_id, r.started_at, r.ended_at, r.charged) for r in tx.usage_rows())
        # e2's holding, its stretches of one charge joined: 0.5 beside e1, then 1.0 alone, one after the other
        profile: list[tuple[datetime, datetime | None, float]] = []
        for _, start, end, charge in (r for r in rows if r[0] == "j-c-e2"):
            if profile and profile[-1][1] == start and profile[-1][2] == charge:
                profile[-1] = (profile[-1][0], end, charge)
            else:
                profile.append((start, end, charge))
        assert profile == [(T0, T0 + timedelta(seconds=4), 0.5), (T0 + timedelta(seconds=4), None, 1.0)], rows
    finally:
        store.close()


def test_red42_r2_a_shortened_share_beside_another_teams_takes_back_its_own_part_only(tmp_path: Path) -> None:
    """Two teams on one GPU keep nothing whole from each other: each is charged its fraction while both hold it, and a
    share left alone is charged the whole GPU. Shortened, teamc's share takes its own fraction back (the usage counter
    counts it as corrected) and teamb's, alone on the GPU from the corrected end, is charged whole from there."""
    clock = ManualClock(T0)
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now)
    try:
        _share(store, "j-c-e1", team="teamc")
        _share(store, "j-b-e2", team="teamb")
        _settle(store, "j-c-e1", T0 + timedelta(seconds=40))
        now = T0 + timedelta(seconds=60)
        clock.advance(60)
        done = _correct(store, "j-c-e1", T0 + timedelta(seconds=10), now)
        assert done["beside"] == [{"job_id": "j-b-e2", "gpu_hours_before": round((0.1 * 40 + 20) / 3600, 6),
                                   "gpu_hours_after": round((0.1 * 10 + 50) / 3600, 6)}], done
        assert done["gpu_seconds_taken_back_by_team"] == {"teamc": {"sim": 3.0}}, done  # 0.1 x 30 s
        assert [(a - T0, b - T0, s) for a, b, s in _billed(store, GPU, now)] == [
            (timedelta(0), timedelta(seconds=10), 0.2), (timedelta(seconds=10), timedelta(seconds=60), 1.0)]
        with store.transaction(write=False) as tx:
            assert taken_back(tx) == {("teamc", "sim"): 3.0}
    finally:
        store.close()
