"""newuser37 N3: an older job of a team waited behind later jobs of its team (the fair order: within a team the
member with less recent GPU use goes first) and its line never said so, nor why.

Hub of 4 GPUs, quotas vision 2 (+1), nlp 1 (+1). n37c's c-big (2 GPUs) runs; n37a (the heavier user: past usage)
submits a-two (2 GPUs), which waits on vision's limit (2 + 2 > 3); n37c then submits c-small1..3 (1 GPU each).
The fair order puts n37c's later jobs ahead of a-two: c-small1 starts, c-small2 and c-small3 are queued ahead of
it. a-two's line says so, naming them and their owner, and why. A real engine snapshot sequence (pure core:
run_cycle, apply_result), 2 s apart as the hub's.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, quotas, snapshot

from jupyter_sched.model import Job, JobState, PendingReason, Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import apply_result, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory
from jupyter_sched.wording.reasons import render_reason


def _submissions(smalls: int = 3, *, each_own_user: bool = False) -> list[tuple[int, Job]]:
    return [(0, make_job("c-big", gpus=2, user="n37c", team="vision", time_limit_s=240)),
            (8, make_job("a-two", gpus=2, user="n37a", team="vision", time_limit_s=300))] + \
        [(12 + 2 * i, make_job(f"c-small{i + 1}", user=f"n38s{i + 1}" if each_own_user else "n37c", team="vision",
                               time_limit_s=900)) for i in range(smalls)]


def _replay(until: int, smalls: int = 3, *, each_own_user: bool = False) -> tuple[set[str], PendingReason]:
    """``(jobs started, a-two's pending reason at second ``until``)``, n37c (or, ``each_own_user``, one new user
    each) submitting ``smalls`` small jobs."""
    q = quotas(Quota(team="vision", guaranteed=2, borrowing_limit=1), Quota(team="nlp", guaranteed=1, borrowing_limit=1))
    snap = snapshot([make_node(gpus=4)], [], quota=q)
    used = {"n37a": 1_440.0}  # n37a has ~0.4 GPU-h of past usage, n37c none: n37c's jobs go first in vision
    started: set[str] = set()
    reason: PendingReason | None = None
    subs = _submissions(smalls, each_own_user=each_own_user)
    for t in range(0, until + 2, 2):
        now = T0 + timedelta(seconds=t)
        new = [replace(j, submitted_at=now) for at, j in subs if at == t]
        snap = replace(snap, now=now, jobs=(*snap.jobs, *new), usage=UsageHistory(decayed_gpu_seconds_by_user=dict(used)))
        result = run_cycle(snap)
        started |= {a.job_id for a in result.admits}
        reason = next((p.reason for p in result.pending if p.job_id == "a-two"), reason)
        snap = apply_result(snap, result, stop_at_once=True)
        snap = replace(snap, jobs=tuple(replace(j, state=JobState.RUNNING, started_at=j.admitted_at)
                                        if j.state.holds_gpus and j.started_at is None else j for j in snap.jobs))
    assert reason is not None
    return started, reason


def test_newuser37_n3_the_older_jobs_line_says_its_teams_later_jobs_go_first_and_why() -> None:
    started, reason = _replay(20)
    assert {"c-big", "c-small1"} <= started and "a-two" not in started, started  # the case is reproduced
    assert reason.code == "BorrowingLimitReached", reason
    fair = reason.details["eta_fair_ahead"]
    # the order when GPUs next free (c-big's end), which positions follow (newuser38 N2): by then n37c's running
    # jobs have added to n37c's use, and c-small3 comes after a-two — c-small2 alone goes first
    assert fair["jobs"] == ["c-small2"] and fair["team"] == "vision" and reason.position == 2, (fair, reason.position)
    said = reason_to_dict(reason)
    assert said is not None
    text = render_reason(said, now=T0 + timedelta(seconds=20), relative=True)
    assert ("vision's jobs queued after it go first: c-small2 (n37c) — within a team the member with less "
            "recent GPU use goes first (fair order)") in text.summary, text.summary
    # its ETA was 12:04 (when c-big ends) before they came; the audit's eta_moved said so, now its line does too
    assert fair["eta_before"] == (T0 + timedelta(seconds=240)).isoformat(), fair
    assert text.summary.endswith("(fair order); its ETA was 12:04 UTC before they were submitted"), text.summary
    assert text.summary.rstrip(".") in text.line, text.line  # the one renderer: CLI, panel and magics


def test_newuser37_n3_no_fair_clause_where_no_later_teammate_goes_first() -> None:
    """Before the later jobs come (a-two waits on c-big alone), and for the later jobs themselves (nothing of
    the team submitted after them goes first), the line says nothing of the fair order."""
    _, reason = _replay(10)
    assert "eta_fair_ahead" not in reason.details, reason.details
    said = reason_to_dict(reason)
    assert said is not None
    assert "fair order" not in render_reason(said, now=T0 + timedelta(seconds=10)).line


def test_s38_lead_the_reason_names_three_later_jobs_and_counts_the_rest() -> None:
    """Session 38 (lead): the reason held every later teammate's id, name and owner (32 on average, 173 at most
    in the 20,000-job cycle bench) and building them cost ~6 % of the cycle; the line names three. Now the
    reason lists three and counts the rest (``more``), and the line reads as before; a reason stored before,
    listing them all, reads the same."""
    _, reason = _replay(30, smalls=6, each_own_user=True)  # five new users, each holding nothing, go first
    fair = reason.details["eta_fair_ahead"]
    assert fair["jobs"] == ["c-small2", "c-small3", "c-small4"] and fair["more"] == 2, fair
    assert set(fair["owners"]) == set(fair["jobs"]), fair  # names and owners of the listed ones only
    said = reason_to_dict(reason)
    assert said is not None
    words = ("vision's jobs queued after it go first: c-small2 (n38s2); c-small3 (n38s3); c-small4 (n38s4) and 2 more"
             " — within a team")
    assert words in render_reason(said, now=T0 + timedelta(seconds=30)).summary
    stored_before = {**said, "details": {**said["details"], "eta_fair_ahead": {
        **{k: v for k, v in fair.items() if k != "more"},
        "jobs": [f"c-small{i}" for i in range(2, 7)], "owners": {f"c-small{i}": f"n38s{i}" for i in range(2, 7)}}}}
    assert words in render_reason(stored_before, now=T0 + timedelta(seconds=30)).summary
