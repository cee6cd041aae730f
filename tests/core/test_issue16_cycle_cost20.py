"""Issue 16/17, session 20: the 100-node x 1,000-job cycle under 50 ms, deciding nothing differently.
What the cycle no longer does is counted here (its speed lives in ``benchmarks/cycle_bench.py``: no
timed assertions); that the shortcuts say what the longer forms said is checked against those forms.

* A full cluster's preemption attempts each explained "nothing is reclaimed for it" by walking every
  team's quota lines and saying who holds the rest
  (:func:`~jupyter_sched.scheduling.preempt.refusals._reclaim_note`), mostly the same sentence: what
  a team's guarantee lends is kept per quota version (:attr:`~jupyter_sched.quota.QuotaLedger.version`,
  moved by every charge and uncharge) and the sentence on the other teams per their numbers.
* A quota without a borrowing limit, user cap or unlisted-team limit has no ceiling to exceed: the
  cycle asks no job whether it is above one (:attr:`~jupyter_sched.quota.QuotaLedger.has_ceilings`).
"""

from __future__ import annotations

import pytest
from core_builders import make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota, QuotaSet
from jupyter_sched.quota.ledger import QuotaLedger
from jupyter_sched.scheduling import SchedulingProfile, Snapshot
from jupyter_sched.scheduling.context import CycleContext, Visit
from jupyter_sched.scheduling.cycle import run_on
from jupyter_sched.scheduling.preempt import refusals

A100, H100 = "A100-80GB", "H100-80GB"


class FreshNotes(CycleContext):
    """A context whose reclaim-note memos never keep a value: every attempt's note worked out afresh."""

    @property  # type: ignore[override]
    def lending(self) -> dict[object, object]:
        return {}

    @lending.setter
    def lending(self, value: object) -> None:
        pass

    @property  # type: ignore[override]
    def holders_said(self) -> dict[object, object]:
        return {}

    @holders_said.setter
    def holders_said(self, value: object) -> None:
        pass


def _borrowed_full() -> Snapshot:
    """Three teams guaranteed 4 GPUs each on 16 A100s and 8 H100s. The A100s are full: a and b
    borrow, c uses 3 of its 4; pending A100 jobs of a and b (above their guarantees: nothing is
    reclaimed for them) are visited between H100 jobs of b and c that are admitted — each
    admission moves the quota — and c's A100 jobs wait within its guarantee."""
    held = [running(make_job("ra", gpus=8, team="a", user="al"), "a1"),
            running(make_job("rb", gpus=5, team="b", user="bo"), "a2", range(5)),
            running(make_job("rc", gpus=3, team="c", user="cy"), "a2", range(5, 8))]
    waiting = []
    for i in range(18):
        team = "abc"[i % 3]
        if i % 2:  # fits on the H100s, moving the quota between the attempts of the A100 jobs
            waiting.append(make_job(f"h{i}", gpus=1, milli=500 if i % 4 == 1 else 1000, team=team, user=f"{team}{i % 2}",
                                    models=(H100,), submitted=i))
        else:
            waiting.append(make_job(f"w{i}", gpus=1 + i % 4, team=team, user=f"{team}{i % 5}", models=(A100,),
                                    submitted=i))
    lines = quotas(Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=4), Quota(team="c", guaranteed=4))
    return snapshot([make_node("a1", model=A100), make_node("a2", model=A100), make_node("h1", model=H100)],
                    [*held, *waiting], quota=lines)


def test_issue16_reclaim_note_memo_says_what_each_attempt_worked_out_alone_says() -> None:
    snap = _borrowed_full()
    kept, fresh = CycleContext(snap, SchedulingProfile()), FreshNotes(snap, SchedulingProfile())
    result = run_on(kept)
    assert result == run_on(fresh)
    notes = [p.reason.details["preemption_refused"] for p in result.pending
             if p.reason.details.get("preemption_rule", {}).get("rule") == "guarantee"]
    assert len(notes) >= 4 and any("it can start when" in n for n in notes)
    assert any("already uses" in n for n in notes)
    # admissions between the attempts moved the quota: the lines were read again per version, while
    # the other teams' numbers, each said once, repeat
    assert len({key[2] for key in kept.lending}) >= 2
    assert len(kept.holders_said) < len(notes)


def test_issue16_reclaim_note_reads_a_charge_made_between_two_attempts() -> None:
    snap = _borrowed_full()
    ctx = CycleContext(snap, SchedulingProfile())
    run_on(ctx)
    job = make_job("late", gpus=8, team="a", user="al", models=(A100,))
    flavor = ctx.placer.flavors(job.spec.resources)[0]
    visit = Visit(job, job.spec.resources, (flavor,))
    before = refusals._reclaim_note(ctx, visit, flavor)
    ctx.quota.charge("extra-c", "c", "cy", A100, 1000)  # c borrows one GPU more
    after = refusals._reclaim_note(ctx, visit, flavor)
    ctx.lending.clear()
    ctx.holders_said.clear()
    alone = refusals._reclaim_note(ctx, visit, flavor)  # worked out afresh
    assert after == alone and after != before
    assert "c uses 5 GPUs: its whole guarantee of 4 and 1 borrowed" in before[0]
    assert "c uses 6 GPUs: its whole guarantee of 4 and 2 borrowed" in after[0]


def test_issue16_quota_version_moves_with_every_charge_and_undo() -> None:
    ledger = QuotaLedger(quotas(Quota(team="a", guaranteed=2)), {A100: 8})
    seen = [ledger.version]
    ledger.charge("j1", "a", "al", A100, 1000)
    seen.append(ledger.version)
    with ledger.what_if():
        ledger.uncharge("j1")
        seen.append(ledger.version)
    seen.append(ledger.version)  # the undo charged it again
    assert ledger.usage[("a", None, "*")] == 1000
    assert seen == sorted(set(seen))  # strictly increasing: no two states share a version


@pytest.mark.parametrize(("lines", "unlisted", "want"), [
    ((), None, False),
    ((Quota(team="a", guaranteed=4), Quota(team="b", guaranteed=0)), None, False),
    ((Quota(team="a", guaranteed=4, borrowing_limit=2),), None, True),
    ((Quota(team="a", guaranteed=4), Quota(team="a", user="al", guaranteed=1, borrowing_limit=0)), None, True),
    ((Quota(team="a", guaranteed=4),), 2.0, True),
    ((), 2.0, False),  # no quota at all: nothing is limited
], ids=["no quota", "guarantees only", "team borrowing limit", "user cap", "unlisted team limit",
        "unlisted limit without lines"])
def test_issue16_quota_without_ceilings_asks_no_job_about_one(lines: tuple[Quota, ...], unlisted: float | None,
                                                               want: bool) -> None:
    ledger = QuotaLedger(QuotaSet(quotas=lines, unlisted_borrowing_limit=unlisted), {A100: 8})
    assert ledger.has_ceilings is want
    if not want:  # then no request of any size exceeds a ceiling, whoever asks
        for team, user in (("a", "al"), ("b", "bo"), ("z", "zed")):
            assert not ledger.exceeds_ceiling(team, user, A100, 10**9)


class FreshWaited(CycleContext):
    """A context whose ETA look-ups of waited-on jobs are never kept: each job's ETA looks afresh."""

    @property  # type: ignore[override]
    def waited(self) -> dict[object, object]:
        return {}

    @waited.setter
    def waited(self, value: object) -> None:
        pass


def test_issue16_eta_looks_each_waited_on_job_up_once_per_pass() -> None:
    # 8 GPUs held by two users' jobs; a queue of 1- to 4-GPU jobs behind them, some their owners' own
    held = [running(make_job("ra", gpus=4, user="al", time_limit_s=3600.0), "a1", range(4)),
            running(make_job("rb", gpus=4, user="bo", time_limit_s=7200.0), "a1", range(4, 8))]
    queue = [make_job(f"q{i}", gpus=1 + i % 4, user=("al", "bo", "cy")[i % 3], time_limit_s=1800.0, submitted=i)
             for i in range(12)]
    snap = snapshot([make_node("a1", model=A100)], [*held, *queue])
    kept, fresh = CycleContext(snap, SchedulingProfile()), FreshWaited(snap, SchedulingProfile())
    result = run_on(kept)
    assert result == run_on(fresh)
    waits = [p.reason.details["eta_waits_on"] for p in result.pending]
    assert sum(len(w) for w in waits) > len(kept.waited)  # the same jobs ahead, looked up once each
    assert set(kept.waited) == {w for ws in waits for w in ws}
    details = [p.reason.details for p in result.pending]
    assert any(d.get("eta_waits_on_queued") for d in details)  # jobs queued ahead, holding nothing yet
    assert any(d.get("eta_waits_on_own") for d in details) and any(d.get("eta_waits_on_owners") for d in details)
