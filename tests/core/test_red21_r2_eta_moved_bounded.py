"""Red team 21, R2: one user's progress lies flipped the ETAs of other users' waiting jobs every 10 s,
each flip one ``eta_moved`` audit record per waiting job in its owner's name. A move is now measured from
the ETA last recorded and recorded at most once per :data:`ETA_MOVE_MIN_INTERVAL_S` per waiting job; a
move still standing when the interval has passed is recorded then; the record names whose job's
progress moved it.

``train`` (bob, 2 GPUs, 5 h limit) started an hour ago; ann's ``w0``..``w4`` wait for its GPUs.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import ProgressReport
from jupyter_sched.scheduling import Snapshot, run_cycle
from jupyter_sched.scheduling.eta import ETA_MOVE_MIN_INTERVAL_S

WAITING = [f"w{i}" for i in range(5)]


def _t(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _cycles(fractions: list[float | None], *, every_s: float = 10.0) -> list[list[str]]:
    """Run a cycle every ``every_s`` seconds, ``train`` having just reported each fraction (None: no
    report); the pending reasons carry over as the engine carries them. Returns each cycle's eta_moved
    records as ``"job: message"``."""
    jobs = [running(make_job("train", gpus=2, user="bob", time_limit_s=300 * 60), "n1", started=-60)]
    jobs += [make_job(w, gpus=2, user="ann", time_limit_s=3600) for w in WAITING]
    snap: Snapshot = snapshot([make_node("n1", gpus=2)], jobs)
    out: list[list[str]] = []
    for i, fraction in enumerate(fractions):
        now = _t(i * every_s)
        progress = {} if fraction is None else {
            "train": ProgressReport(fraction=fraction, at=now, ran_s=3600 + i * every_s)}
        snap = replace(snap, now=now, progress=progress)
        result = run_cycle(snap)
        reasons = {p.job_id: p.reason for p in result.pending}
        snap = replace(snap, jobs=tuple(replace(j, reason=reasons.get(j.id, j.reason)) for j in snap.jobs))
        out.append([f"{a.job_id}: {a.message}" for a in result.audit if a.action == "eta_moved"])
    return out


def test_red21_r2_progress_lies_flipping_etas_write_at_most_one_record_per_waiting_job_per_interval() -> None:
    flips = int(2 * ETA_MOVE_MIN_INTERVAL_S / 10) + 1  # twenty minutes of 99 % / 1.1 % every 10 s
    records = _cycles([None] + [0.99 if i % 2 == 0 else 0.011 for i in range(flips)])
    moved = [r for cycle in records for r in cycle]
    per_job = {w: [r for r in moved if r.startswith(f"{w}:")] for w in WAITING}
    # before: one record per waiting job per flip (≈ 120 each); now: the first move, then at most one per interval
    assert all(1 <= len(rows) <= 3 for rows in per_job.values()), {w: len(r) for w, r in per_job.items()}
    assert "bob's job train is projected to end from its progress (99 % done)" in per_job["w0"][0], per_job["w0"]
    for w in WAITING[1:]:  # queued behind w0: the report moved the work ahead of them, and the record says whose
        assert "bob's job train's progress report (99 % done) moved the work ahead" in per_job[w][0], per_job[w]


def test_red21_r2_a_move_held_back_by_the_interval_is_recorded_once_it_has_passed() -> None:
    steps = int(ETA_MOVE_MIN_INTERVAL_S / 10)
    # 99 % at once (recorded), then the report goes stale-free but says 1.1 % and stays: the ETA is back on
    # the limit within the interval (held back), then recorded when the interval has passed
    records = _cycles([None, 0.99] + [0.011] * (steps + 2))
    w0 = [(i, r) for i, cycle in enumerate(records) for r in cycle if r.startswith("w0:")]
    assert [i for i, _ in w0] == [1, 1 + steps], w0
    assert "progress" in w0[1][1], w0


def test_red21_r2_an_eta_that_does_not_move_writes_nothing() -> None:
    assert [r for cycle in _cycles([None] + [0.5] * 30) for r in cycle if r.startswith("w0:")][:1] and \
        sum(len(c) for c in _cycles([None] + [0.5] * 30)[2:]) == 0
