"""The idle deadline a user is shown is the one the server keeps, and it holds only the numbers the
admin set (new user 4, finding 23: with ``idle_window_s = 60`` a lease was said to be released
11 minutes after it went idle — a 600 s grace default nobody set — and ``GET idle`` showed a
deadline the ladder did not keep when its warning went out late)."""

from __future__ import annotations

from jupyter_sched.reclaim import IdlePolicy, ReclaimMode, idle_policies_from_settings
from jupyter_sched.wording.jobs import idle_note

from .idle_harness import at, gpu_sample, make_job, run_ladder


def _busy_then_idle(m: float) -> list:
    return [gpu_sample("GPU-d", at(m), 95.0 if m < 60 else 0.0, mem=1024, pids=[4000])]


def test_a_window_the_admin_set_is_the_whole_idle_limit_with_no_grace_added() -> None:
    policies = idle_policies_from_settings({"idle_window_s": 3600, "idle_job_action": "stop"})
    run = run_ladder([make_job("J", ["GPU-d"])], _busy_then_idle, policies, until=130)
    # idle from minute 60; 60 min later it is reclaimed, warned the default 10 min before
    assert run.stages("J") == [(110, "warn"), (120, "reclaim")]
    warn = run.of("J", "warn")
    assert warn.deadline == at(120) and "(limit 60 min)" in warn.reason and "+" not in warn.reason
    shown = {c.deadline for m, cands in run.candidates.items() if m >= 60 for c in cands}
    assert shown == {at(120)}  # what GET idle says from the first idle minute on
    assert all(c.grace_s == 0 for cands in run.candidates.values() for c in cands)


def test_the_deadline_shown_after_a_late_warning_is_the_one_kept() -> None:
    # window 60, warned 10 min before: due at 50, but the cycles run every 15 min, so it goes out
    # at 60 and the owner still gets the full 10 min: reclaim at 70, not at the 60 first computed
    policy = IdlePolicy(threshold_pct=5, window_s=60 * 60, warning_s=10 * 60, grace_s=0, job_mode=ReclaimMode.STOP,
                        max_gap_s=20 * 60)  # samples 15 min apart still count
    idle_all_along = lambda m: [gpu_sample("GPU-d", at(m), 0.0, mem=1024, pids=[4000])]  # noqa: E731
    run = run_ladder([make_job("J", ["GPU-d"])], idle_all_along, policy, until=80, every=15)
    assert run.stages("J") == [(60, "warn"), (75, "reclaim")]
    warn, reclaim = run.of("J", "warn"), run.of("J", "reclaim")
    assert warn.deadline == reclaim.deadline == at(70)
    (before_reclaim,) = run.candidates[75]
    assert before_reclaim.stage == "warned" and before_reclaim.deadline == at(70)


def test_the_warning_says_a_grace_only_when_one_is_set() -> None:
    # (new user 6, F16: the rule is said as a rule, "(rule: … for 30 min)", not as time that has passed)
    entry = {"job_id": "l-1", "kind": "lease", "stage": "warned", "action": "release",
             "idle_since": "2026-12-02T09:58:00Z", "deadline": "2026-12-02T10:28:00Z",
             "reason": "kernel idle and GPU < 5 % for 30 min", "grace_s": 0.0}
    assert "grace" not in idle_note(entry, None)
    assert "(rule: kernel idle and GPU < 5 % for 30 min): its GPUs are released at" in idle_note(entry, None)
    with_grace = idle_note({**entry, "grace_s": 600.0}, None)
    assert "(rule: kernel idle and GPU < 5 % for 30 min, then a 10m grace): its GPUs are released at" in with_grace, with_grace


def test_newuser5_finding_20_the_idle_reason_states_the_idle_time_and_the_deadline_not_the_window() -> None:
    """New user 5 #20 (wording half): ``GET idle`` said ``reason "kernel idle and GPU < 5 % for 30 min"``
    for a lease idle 6 min — the policy's window, read as time that had passed. The reason now says
    the idle time so far, the rule as the limit, and when the warning and the reclaim are due."""
    policies = idle_policies_from_settings({"idle_window_s": 3600, "idle_job_action": "stop"})
    run = run_ladder([make_job("J", ["GPU-d"])], _busy_then_idle, policies, until=130)
    (six,) = run.candidates[66]
    base = at(0)
    warn, due = at(110), at(120)
    assert six.reason == (f"idle for 6 min (limit: GPU < 5 % for 60 min): warning at {warn:%H:%M} UTC, "
                          f"it is stopped at {due:%H:%M} UTC"), six.reason
    assert six.rule == "GPU < 5 % for 60 min" and six.to_dict()["rule"] == six.rule
    assert base.date() == due.date()  # the harness stays on one day: clocks without a date
    (warned,) = run.candidates[115]
    assert warned.stage == "warned" and warned.reason.startswith("idle for 55 min (limit: GPU < 5 % for 60 min): "
                                                                 f"warned at {warn:%H:%M} UTC"), warned.reason
    # the owner's warning sentence (CLI, %gpu) names the rule once and the times once
    note = idle_note(warned.to_dict(), base)
    assert "(rule: GPU < 5 % for 60 min): it is stopped at" in note and "idle for" not in note, note


def test_the_idle_reason_counts_whole_minutes_and_says_a_grace_and_another_day() -> None:
    from datetime import timedelta

    from jupyter_sched.reclaim.candidates import standing_text

    now = at(0)
    kw = {"rule": "kernel idle and GPU < 5 % for 30 min", "stage": "idle", "action": "release",
          "warn_at": now + timedelta(minutes=20), "now": now}
    said = standing_text(idle_s=59.9, grace_s=0.0, deadline=now + timedelta(minutes=30), **kw)
    assert said.startswith("idle for less than a minute (limit: kernel idle and GPU < 5 % for 30 min): warning at ")
    assert "its GPUs are released at" in said
    said = standing_text(idle_s=7530, grace_s=600.0, deadline=now + timedelta(days=1), **kw)
    tomorrow = now + timedelta(days=1)
    assert said.startswith("idle for 2 h 5 min (limit: kernel idle and GPU < 5 % for 30 min, then a 10 min grace)")
    assert said.endswith(f"released at {tomorrow:%b} {tomorrow.day} {tomorrow:%H:%M} UTC"), said
