"""New user 22, N8: the preempted job's reason nested brackets ("(cv uses its whole guarantee (2
GPUs))"), opened with "no preemption" for a job just preempted, and said five clauses before the
ETA. A requeued job now leads with what happened; no reason the wording builds nests brackets."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from jupyter_sched.model import Quota
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.reasons import unnested
from tests.core.core_builders import T0, Scenario, make_job, make_node, quotas, running, snapshot

NOW = datetime(2026, 12, 5, 5, 21, 9, tzinfo=timezone.utc)


def depth(text: str) -> int:
    """The deepest bracket nesting of ``text`` outside quoted names."""
    most = level = 0
    quoted = False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            level += 1
            most = max(most, level)
        elif not quoted and ch == ")":
            level = max(0, level - 1)
    return most


def test_newuser22_n8_the_reported_reason_leads_with_the_requeue_and_nests_nothing() -> None:
    """The reason as newuser22 saw it (core words and details): the requeue first, with its time; the
    "no preemption" clause gone but when the GPUs come back kept; no "((" or "))"."""
    refused = ("ml is guaranteed 2 GPUs but this job needs 4, above the guarantee, so nothing is reclaimed for it; "
               "it can start when cv's jobs free 2 GPUs (cv uses its whole guarantee (2 GPUs))")
    reason = {"code": "WaitingForCapacity", "position": 1, "eta": "2026-12-05T05:24:07Z",
              "message": f"needs 4 Simulated GPU 80GB GPUs, 2 free; no preemption: {refused}; requeued after "
                         "preemption by cvtake (j-1m92ac8vm-epjfx2), to return borrowed quota to cv.",
              "details": {"preemption_refused": refused, "preemption_rule": {"rule": "guarantee", "guaranteed": 2000},
                          "preempted_by": "j-1m92ac8vm-epjfx2", "preempted_by_name": "cvtake",
                          "preempted_at": "2026-12-05T05:21:03Z", "model": "Simulated GPU 80GB",
                          "eta_waits_on": ["j-1m92ac8vm-epjfx2"], "eta_waits_on_names": {"j-1m92ac8vm-epjfx2": "cvtake"}}}
    text = render_reason(reason, now=NOW, relative=True)
    assert text.summary == ("requeued at 05:21 UTC after preemption by cvtake (j-1m92ac8vm-epjfx2), to return borrowed "
                            "quota to cv; needs 4 Simulated GPU 80GB, 2 free; it can start when cv's jobs free 2 GPUs "
                            "(cv uses its whole guarantee, 2 GPUs)."), text.summary
    assert text.line.startswith("queued #1 · requeued at 05:21 UTC after preemption by cvtake"), text.line
    assert "no preemption" not in text.line and depth(text.line) <= 1, text.line


def test_newuser22_n8_a_job_preempted_to_return_borrowed_quota_says_so_first() -> None:
    """N8's steps in the core: ml (2 guaranteed, borrows 2) runs lowml on 4 GPUs; cv (2 guaranteed)
    submits cvtake for 2; lowml is preempted and requeued. Its reason: the requeue first, then the wait."""
    q = quotas(Quota(team="ml", guaranteed=2, borrowing_limit=2), Quota(team="cv", guaranteed=2, borrowing_limit=0))
    s = Scenario([make_node("n1", gpus=4)], quota=q)
    s.submit(running(make_job("lowml", gpus=4, team="ml", priority="low"), "n1"),
             make_job("cvtake", gpus=2, team="cv", submitted=1))
    first = s.at(2).cycle()
    assert [p.job_id for p in first.preemptions] == ["lowml"]
    later = s.at(2.1).cycle()
    reason = next(p.reason for p in later.pending if p.job_id == "lowml")
    text = render_reason(reason_to_dict(reason), now=T0 + timedelta(minutes=2.1))
    assert text.summary.startswith("requeued") and "after preemption by cvtake, to return borrowed quota to cv; " \
        "needs 4 A100-80GB GPUs" in text.summary, text.summary
    assert "no preemption" not in text.summary and depth(text.line) <= 1, text.line
    assert "cv uses its whole guarantee of 2 GPUs" in text.summary, text.summary


def _random_reasons(seed: int) -> list[dict[str, Any]]:
    """The pending reasons of one random cluster: teams with and without guarantees, priorities,
    running and waiting work, jobs requeued by a preemption (named after their preemptor)."""
    rng = random.Random(seed)
    teams = rng.sample(["ml", "cv", "nlp", "research"], rng.randint(1, 3))
    q = quotas(*(Quota(team=t, guaranteed=rng.randint(0, 4), borrowing_limit=rng.choice([0, 1, 2, None]))
                 for t in teams)) if rng.random() < 0.8 else None
    nodes = [make_node(f"n{i}", gpus=rng.choice([2, 4, 8])) for i in range(rng.randint(1, 2))]
    jobs = []
    free = {n.name: list(range(len(n.gpus))) for n in nodes}
    for i in range(rng.randint(2, 9)):
        team, gpus = rng.choice(teams), rng.choice([1, 1, 2, 4])
        job = make_job(f"j{i}", gpus=gpus, team=team, user=rng.choice(["ana", "bob"]),
                       priority=rng.choice(["low", "normal", "high"]), submitted=i,
                       time_limit_s=rng.choice([None, 600.0]))
        node = rng.choice(nodes).name
        if rng.random() < 0.5 and len(free[node]) >= gpus:
            jobs.append(running(job, node, [free[node].pop() for _ in range(gpus)]))
        else:
            jobs.append(replace(job, preempted_by="j0") if rng.random() < 0.3 else job)
    result = run_cycle(snapshot(nodes, jobs, quota=q))
    return [reason_to_dict(p.reason) for p in result.pending]  # type: ignore[misc]


@pytest.mark.parametrize("seed", range(0, 240, 40))
def test_newuser22_n8_no_rendered_reason_nests_brackets(seed: int) -> None:
    """Property over many clusters: every surface's text of every pending reason (summary, ETA,
    unblock, the queue line; for its owner and others) has no brackets inside brackets."""
    said = 0
    for s in range(seed, seed + 40):
        for reason in _random_reasons(s):
            for mine in (False, True):
                text = render_reason(reason, now=T0, relative=True, mine=mine)
                for part in text:
                    assert depth(part) <= 1, (s, part)
                    assert "((" not in part and "))" not in part.replace('"))', ""), (s, part)
                said += 1
    assert said > 40  # the clusters do make jobs wait


@pytest.mark.parametrize(("text", "want"), [
    ("(cv uses its whole guarantee (2 GPUs))", "(cv uses its whole guarantee, 2 GPUs)"),
    ("ETA 05:24 (when cvtake (j-1) ends)", "ETA 05:24 (when cvtake, j-1, ends)"),
    ('(bob\'s job "a (1)" (j-1))', '(bob\'s job "a (1)", j-1)'),
    ("a (b (c (d))) e", "a (b, c, d) e"),
    ("plain (one) text; two (2)", "plain (one) text; two (2)"),
])
def test_newuser22_n8_unnested(text: str, want: str) -> None:
    assert unnested(text) == want
    assert depth(unnested(text)) <= 1
