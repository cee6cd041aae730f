"""Issue 16, session 19: the 100-node x 1,000-job cycle back under 50 ms without deciding anything
differently. What the cycle no longer does is counted here (its speed lives in
``benchmarks/cycle_bench.py``: no timed assertions); that the shortcuts say what the longer forms
said is checked against those forms.

* The quota-ceiling check (:func:`~jupyter_sched.scheduling.cycle._above_ceiling`, new user 18 N12)
  memoised :func:`~jupyter_sched.quota.ceiling.binding_ceiling` per (team, user, GPUs, shape) — a
  key that mostly missed, ~5 % of the small cycle. It now reads the lines of the request's first
  GPU model and stops when none is exceeded: the memo is filled only for jobs above a ceiling there.
* Every job pending behind an EASY reservation built the same "cannot finish before …" clause
  again (:func:`~jupyter_sched.scheduling.pending._cannot_backfill`): it is kept per reservation,
  time limit and owner (``CycleContext.backfill_clauses``), each job given its own copy.
* The fair order charged every job through :func:`~jupyter_sched.scheduling.runtimes.charged_runtime`,
  which only differs from the expected runtime for users with an overrunning job (red team 18, R2):
  :func:`~jupyter_sched.scheduling.runtimes.charged_runtime_of` hands the order none when no user overruns.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

import pytest
from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.quota.ceiling import binding_ceiling
from jupyter_sched.quota.ledger import QuotaLedger
from jupyter_sched.scheduling import SchedulingProfile, Snapshot
from jupyter_sched.scheduling.context import CycleContext
from jupyter_sched.scheduling.cycle import run_on
from jupyter_sched.scheduling.runtimes import charged_runtime, charged_runtime_of, expected_runtime

MODELS = ("A100-80GB", "H100-80GB")
NODES = [make_node("a1", gpus=8, model=MODELS[0]), make_node("a2", gpus=8, model=MODELS[0]),
         make_node("h1", gpus=8, model=MODELS[1])]


def test_issue16_ceiling_check_keeps_no_memo_for_jobs_under_every_ceiling() -> None:
    q = quotas(Quota(team="a", guaranteed=4, borrowing_limit=4), Quota(team="b", guaranteed=2, borrowing_limit=2),
               Quota(team="b", user="bo", guaranteed=1, borrowing_limit=2))
    jobs = [make_job(f"j{i}", gpus=1 + i % 3, team="ab"[i % 2], user=f"u{i % 5}" if i % 4 else "bo",
                     models=() if i % 3 else (MODELS[i % 2],), submitted=i) for i in range(24)]
    ctx = CycleContext(snapshot(NODES, jobs, quota=q), SchedulingProfile())
    result = run_on(ctx)
    assert not [p.job_id for p in result.pending if p.reason.details.get("never") == "quota"]
    assert ctx.ceilings == {}  # before: one binding_ceiling answer per (team, user, GPUs, shape), all None


def _random_case(seed: int) -> tuple[list[Quota], list[tuple[str, str, int, tuple[str, ...]]]]:
    """Quota lines with ceilings (team and user lines, per model and any model) and requests around them."""
    rng = random.Random(seed)
    lines: dict[tuple[str, str | None, str], Quota] = {}
    for _ in range(rng.randint(1, 7)):
        team, user = rng.choice("ab"), rng.choice([None, "u1", "u2"])
        model = rng.choice(("*", *MODELS))
        lines[(team, user, model)] = Quota(team=team, user=user, gpu_model=model, guaranteed=rng.randint(0, 3),
                                           borrowing_limit=rng.choice([None, 0, 1, 3]))
    requests = [(rng.choice("abc"), rng.choice(["u1", "u2", "u3"]), rng.randint(1, 8),
                 rng.choice([(), (MODELS[0],), (MODELS[1],), MODELS, MODELS[::-1]])) for _ in range(12)]
    return list(lines.values()), requests


@pytest.mark.parametrize("seed", range(40))
def test_issue16_ceiling_check_pends_exactly_the_jobs_binding_ceiling_names(seed: int) -> None:
    lines, requests = _random_case(seed)
    jobs = [make_job(f"j{i}", gpus=gpus, team=team, user=user, models=models, submitted=i)
            for i, (team, user, gpus, models) in enumerate(requests)]
    ctx = CycleContext(snapshot(NODES, jobs, quota=quotas(*lines)), SchedulingProfile())
    result = run_on(ctx)
    ledger = QuotaLedger(quotas(*lines), {MODELS[0]: 16, MODELS[1]: 8})
    want = {j.id for j in jobs if binding_ceiling(ledger, j.spec.team, j.spec.user, j.spec.resources.total_milli,
                                                  dict.fromkeys(f.model for f in ctx.placer.flavors(j.spec.resources)))}
    assert {p.job_id for p in result.pending if p.reason.details.get("never") == "quota"} == want


def test_issue16_fair_order_gets_no_charged_runtime_while_no_user_overruns() -> None:
    job = make_job("q", gpus=1, user="al", time_limit_s=7200.0)
    run = running(make_job("r", gpus=1, user="al", time_limit_s=7200.0), "a1", started=-30.0)
    snap = replace(snapshot(NODES, [job, run]), runtime_typical={"r": 3600.0}, runtime_estimates={"q": 60.0})
    ctx = CycleContext(snap, SchedulingProfile())
    assert charged_runtime_of(ctx) is None  # 30 min run of a typical 60: every job charged as expected
    assert charged_runtime(ctx, job) == expected_runtime(ctx, job)
    later = CycleContext(replace(snap, now=T0 + timedelta(hours=3)), SchedulingProfile())  # 3.5 h run of a typical 1 h
    charged = charged_runtime_of(later)
    assert charged is not None and charged(job) == 7200.0 != expected_runtime(later, job)


class FreshClauses(CycleContext):
    """A context whose ``backfill_clauses`` memo never keeps a value: every job's clause worked out afresh."""

    @property  # type: ignore[override]
    def backfill_clauses(self) -> dict[object, object]:
        return {}

    @backfill_clauses.setter
    def backfill_clauses(self, value: object) -> None:
        pass


def _behind_a_reservation() -> Snapshot:
    """One 8-GPU node, 6 GPUs held for an hour more; a 8-GPU job reserves the node; jobs of 3 GPUs
    behind it (2 free) with various limits, of the reserved job's owner and of others."""
    held = running(make_job("r1", gpus=6, user="ro", time_limit_s=5400.0), "a1", started=-30.0)
    big = make_job("big", gpus=8, user="al", time_limit_s=3600.0, submitted=1)
    behind = [make_job(f"w{i}", gpus=3, user=("al", "bo", "cy")[i % 3], time_limit_s=(None, 7200.0, 900.0, 7200.0)[i % 4],
                       submitted=2 + i) for i in range(12)]
    return snapshot([make_node("a1", gpus=8, model=MODELS[0])], [held, big, *behind])


def test_issue16_backfill_clause_memo_says_what_each_job_worked_out_alone_says() -> None:
    snap = _behind_a_reservation()
    kept, fresh = CycleContext(snap, SchedulingProfile()), FreshClauses(snap, SchedulingProfile())
    result = run_on(kept)
    assert result == run_on(fresh)
    backfill = {p.job_id: p.reason.details.get("backfill") for p in result.pending}
    reserved = {info["reserved_for"] for info in backfill.values() if info}
    assert reserved == {"w2"}  # cy's 15-minute job goes first in the fair order and reserves the node
    said = {j: info for j, info in backfill.items() if info}
    assert len(said) == 9 and all(("reserved_for_owner" in info) == (snap_user(snap, j) != "cy")
                                  for j, info in said.items())
    assert backfill["w1"] == backfill["w7"] and backfill["w1"] is not backfill["w7"]  # bo's 2 h jobs: one copy each
    # one clause per (limit, another user's reservation) among the jobs behind it, not one per job
    behind = [j for j in snap.jobs if j.id not in ("r1", "w2")]
    assert len(kept.backfill_clauses) == len({(j.spec.time_limit_s, j.spec.user != "cy") for j in behind}) == 6


def snap_user(snap: Snapshot, job_id: str) -> str:
    return next(j.spec.user for j in snap.jobs if j.id == job_id)
