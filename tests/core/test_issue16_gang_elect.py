"""A gang waiting past its promised wait is elected: it gets its model's EASY reservation ahead of
lighter, later jobs of other users (issue 16; :func:`jupyter_sched.queues.order.elect_overdue`).

Under the fair order an 8-GPU gang is charged 8 x its runtime, so later jobs of lighter users went
ahead of it again and again and took GPUs as they freed: it waited for two whole nodes to be free
at once, far past its ETA. Once it has waited longer than ``elect_overdue`` x the wait predicted
when it was queued, it is visited first in its class: a later job may start only where it does not
delay the gang's reserved start (it ends before it, as EASY backfill allows).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import pytest
from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.progress import ProgressReport
from jupyter_sched.errors import ValidationError
from jupyter_sched.model import PendingReason
from jupyter_sched.queues.order import PROMISE, overdue
from jupyter_sched.scheduling import SchedulingProfile, run_cycle
from jupyter_sched.scheduling.snapshot import UsageHistory


def _promise(at: datetime, minutes: float) -> dict[str, str]:
    """A promise made at ``at`` of a start ``minutes`` later (queues.order.PROMISE)."""
    return {"at": at.isoformat(), "start": (at + timedelta(minutes=minutes)).isoformat()}


def _cluster(light_limit_min: float, *, waited_min: float = 120.0):  # type: ignore[no-untyped-def]
    """Two 4-GPU nodes: n1 held to T0+160 min, n2's GPUs 0-2 to T0+150 min, n2's GPU 3 free; a
    heavy user's 2 x 4 gang queued at T0 and promised a 30-minute wait; a light user's 1-GPU job
    queued 10 minutes before now, with a limit of ``light_limit_min`` minutes."""
    now = T0 + timedelta(minutes=waited_min)
    r1 = running(make_job("r1", gpus=4, user="other", time_limit_s=100 * 60), "n1", [0, 1, 2, 3], started=60)
    r2 = running(make_job("r2", gpus=3, user="other", time_limit_s=90 * 60), "n2", [0, 1, 2], started=60)
    promised = PendingReason(code="WaitingForCapacity", message="8 GPUs requested", eta=T0 + timedelta(minutes=30),
                             predicted_start=T0 + timedelta(minutes=30), details={PROMISE: _promise(T0, 30)})
    gang = replace(make_job("gang", gpus=4, workers=2, user="heavy", time_limit_s=600 * 60), reason=promised)
    light = make_job("light", user="light", submitted=waited_min - 10, time_limit_s=light_limit_min * 60)
    return snapshot([make_node("n1", gpus=4), make_node("n2", gpus=4)], [r1, r2, gang, light], now=now,
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"heavy": 1e7}))


def test_issue16_gang_overdue_is_not_overtaken_past_its_reservation() -> None:
    snap = _cluster(light_limit_min=120)  # the light job would run to T0+240, past the gang's T0+160
    result = run_cycle(snap, SchedulingProfile())
    assert [a.job_id for a in result.admits] == []
    reasons = {p.job_id: p.reason for p in result.pending}
    assert reasons["light"].details["reserved_for"] == "gang" and reasons["light"].details["reserved_for_elected"]
    assert "which goes first because it waited past the wait promised when it was queued (elected): the plan keeps " \
        "A100-80GB GPUs for it from " in reasons["light"].message, reasons["light"].message  # newuser30 N4
    assert "it goes first: it has waited 2h00m, past 0.75 x the 30m wait promised when it was queued" in reasons["gang"].message
    assert reasons["gang"].eta == T0 + timedelta(minutes=160)
    # off (elect_overdue=0): the light user's job sorts first and takes the free GPU, as before
    before = run_cycle(snap, SchedulingProfile(elect_overdue=0.0))
    assert [a.job_id for a in before.admits] == ["light"]


def test_issue16_gang_lighter_later_job_still_backfills_when_it_ends_before_the_reservation() -> None:
    result = run_cycle(_cluster(light_limit_min=20), SchedulingProfile())  # ends T0+140 < T0+160
    assert [a.job_id for a in result.admits] == ["light"]
    assert {p.job_id for p in result.pending} == {"gang"}


def test_issue16_gang_not_elected_before_its_promised_wait_is_overrun() -> None:
    snap = _cluster(light_limit_min=120, waited_min=25)  # waited 25 of the 30 minutes promised
    gang = next(j for j in snap.jobs if j.id == "gang")
    assert not overdue(gang, snap.now, 1.0) and overdue(gang, T0 + timedelta(minutes=31), 1.0)
    assert not overdue(gang, T0 + timedelta(minutes=59), 2.0) and overdue(gang, T0 + timedelta(minutes=61), 2.0)
    assert not overdue(gang, T0 + timedelta(days=9), 0.0)  # 0: off
    # a job promised "now" counts as promised OVERDUE_FLOOR_S (10 min)
    now_promised = replace(gang, reason=replace(gang.reason, details={PROMISE: _promise(T0, 0)}))  # type: ignore[type-var]
    assert not overdue(now_promised, T0 + timedelta(minutes=9), 1.0)
    assert overdue(now_promised, T0 + timedelta(minutes=11), 1.0)
    result = run_cycle(snap, SchedulingProfile())
    assert [a.job_id for a in result.admits] == ["light"]  # not overdue yet: the fair order holds


def _hostile(report: ProgressReport | None = None, learnt: float | None = None, *, now_min: float = 0.0,
             promised: PendingReason | None = None):  # type: ignore[no-untyped-def]
    """One 4-GPU node held since T0-10 min by the hostile user's job "own" (10 h limit); their 4-GPU
    job "next" queued at T0 (with ``promised``: the reason the first cycle gave it); a light user's
    4-GPU job "other" queued a minute later. ``report`` / ``learnt``: what "own" claims of its end
    (a learnt runtime is also its typical one, as the edge says once it ran past it)."""
    own = running(make_job("own", gpus=4, user="hostile", time_limit_s=10 * 3600), "n1", started=-10)
    nxt = replace(make_job("next", gpus=4, user="hostile", time_limit_s=3600), reason=promised)
    other = make_job("other", gpus=4, user="light", time_limit_s=3600, submitted=1)
    snap = snapshot([make_node("n1", gpus=4)], [own, nxt, other], now=T0 + timedelta(minutes=now_min),
                    usage=UsageHistory(decayed_gpu_seconds_by_user={"hostile": 1e6}))
    ran_past = learnt is not None and now_min + 10 > learnt / 60
    return replace(snap, progress={"own": report} if report else {},
                   runtime_estimates={"own": learnt} if learnt else {},
                   runtime_typical={"own": learnt} if learnt and ran_past else {})


def test_issue16_s26_gang_own_reports_and_history_do_not_make_a_job_overdue_sooner() -> None:
    """The promise an election compares with reads what admission reads: no progress report (a
    hostile user claiming their running job is nearly done would be promised a start within minutes
    and jump the fair order soon after), and a user whose running job outran its learnt runtime — a
    history they wrote themselves — is not elected while it runs."""
    profile = SchedulingProfile(elect_overdue=1.0)
    claims: dict[str, dict[str, Any]] = {
        "plain": {}, "reported": {"report": ProgressReport(fraction=0.5, at=T0 - timedelta(minutes=1), ran_s=540)},
        "learnt": {"learnt": 11 * 60.0}}
    first = {k: {p.job_id: p.reason for p in run_cycle(_hostile(**kw), profile).pending} for k, kw in claims.items()}
    # the ETAs shown believe the claims ("own" ends within minutes) ...
    assert first["reported"]["next"].eta < first["plain"]["next"].eta  # type: ignore[operator]
    assert first["learnt"]["next"].eta < first["plain"]["next"].eta  # type: ignore[operator]
    # ... the promise does not read the report: "own" runs to its 10 h limit, then "other" 1 h, then "next"
    promise = first["plain"]["next"].details[PROMISE]
    assert promise == {"at": T0.isoformat(), "start": (T0 + timedelta(hours=10, minutes=50)).isoformat()}
    assert first["reported"]["next"].details[PROMISE] == promise
    # (the learnt runtime is read, as the fair order reads it: promised at 13:01)
    assert first["learnt"]["next"].details[PROMISE]["start"] == (T0 + timedelta(minutes=61)).isoformat()
    # two hours later, with the same claims: nobody is elected, the light user's job stays first — "own"
    # outran the history that promised 13:01 (its user is charged limits, and not elected)
    for k, kw in claims.items():
        later = run_cycle(_hostile(**kw, now_min=120, promised=first[k]["next"]), profile)
        assert [p.job_id for p in later.pending] == ["other", "next"], k
        assert "elected" not in {p.job_id: p.reason for p in later.pending}["next"].details


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf"), 101.0, True, "0.75"])
def test_issue16_s26_gang_elect_overdue_knob_is_validated(bad: Any) -> None:
    """``elect_overdue`` (``c.SchedApp.elect_overdue``): a number from 0 (off) to 100; anything else
    is refused naming the field and a value that works, by the profile and by the server's setting."""
    with pytest.raises(ValidationError) as caught:
        SchedulingProfile(elect_overdue=bad)
    assert caught.value.field == "elect_overdue" and "0.75" in caught.value.hint
    if not isinstance(bad, (bool, str)):
        from traitlets import TraitError

        from jupyter_sched.extension.config_access import AccessConfig

        with pytest.raises(TraitError, match="elect_overdue"):
            AccessConfig(elect_overdue=bad)
    assert SchedulingProfile().elect_overdue == 0.75 and SchedulingProfile(elect_overdue=0).elect_overdue == 0
