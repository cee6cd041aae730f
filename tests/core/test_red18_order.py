"""The fair order inside a team and a user's own history (red team 18, R2).

A user's learnt runtimes come from their own runs, which are theirs to write: red18a ran a script
twice for 1 s, then the same script slept 50 min; learnt as a 1-s job, it went ahead of teammate
red18c's job (51 against 326 GPU-seconds of recent usage, same 3600-s limit), and nothing corrected
the order afterwards: the next job learnt the same way went first again. Now, while a user has a
job running longer than its similar past runs typically take (``Snapshot.runtime_typical``), their
jobs are charged their time limits in the order (Slurm/Maui charge requested walltime); ETAs and
backfill keep the learnt runtimes.
"""

from __future__ import annotations

from dataclasses import replace

from core_builders import T0, make_job, make_node, quotas, running, snapshot

from jupyter_sched.model import Quota
from jupyter_sched.queues.order import QueueContext, fair_order
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.scheduling.snapshot import Snapshot, UsageHistory


def _world(*, overrun: bool) -> Snapshot:
    # a-real: the first poisoned job, running for 10 min (learnt: 1 s); a-real2: the next one
    fills = [running(make_job(f"a-fill{i}", team="teama", user="red18x", time_limit_s=3600), "n1", [i], started=-10)
             for i in range(3)]
    fills.append(running(make_job("a-real", team="teama", user="red18a", time_limit_s=3600), "n1", [3], started=-10))
    waiting = [make_job("c-victim", team="teama", user="red18c", time_limit_s=3600, submitted=0),
               make_job("a-real2", team="teama", user="red18a", time_limit_s=3600, submitted=0.03),
               make_job("a-control", team="teama", user="red18a", time_limit_s=3600, submitted=0.05)]
    usage = UsageHistory(decayed_gpu_seconds_by_user={"red18a": 326.0, "red18c": 51.0, "red18x": 40_000.0})
    snap = snapshot([make_node("n1", gpus=4)], [*fills, *waiting],
                    quota=quotas(Quota(team="teama", guaranteed=4)), usage=usage, now=T0)
    # the running a-real is expected to run to its limit now, having outrun its similar runs' 1 s
    return replace(snap, runtime_estimates={"a-real2": 1.0, "a-real": 3000.0},
                   runtime_typical={"a-real": 1.0} if overrun else {})


def test_red18_r2_a_user_whose_job_outran_its_history_is_charged_limits_so_the_next_poisoned_job_waits() -> None:
    result = run_cycle(_world(overrun=True))
    assert {p.job_id: p.reason.position for p in result.pending} == {"c-victim": 1, "a-real2": 2, "a-control": 3}
    # ETAs keep the learnt runtime: a-real2's start is projected behind c-victim's, not at a-real's limit
    eta = {p.job_id: p.reason.eta for p in result.pending}
    assert eta["c-victim"] is not None and eta["a-real2"] is not None and eta["c-victim"] <= eta["a-real2"]


def test_red18_r2_without_an_overrun_learnt_runtimes_still_order_the_team() -> None:
    """What learning buys (loaded replay: +6 % of SJF with learnt runtimes, +14 % charging limits):
    a user with no job outrunning its history keeps the learnt runtime in the order."""
    result = run_cycle(_world(overrun=False))
    assert [p.job_id for p in result.pending] == ["a-real2", "c-victim", "a-control"]


def test_red18_r2_the_order_reads_the_charged_runtime_where_one_is_given() -> None:
    pending = [j for j in _world(overrun=True).jobs if j.state.value == "pending"]
    usage = {"red18a": 326.0, "red18c": 51.0}
    learnt = {"a-real2": 1.0}
    charged = QueueContext(now=T0, team_share=lambda team: 0.0, user_usage=usage,
                           expected_runtime=lambda j: learnt.get(j.id, 3600.0), charged_runtime=lambda j: 3600.0)
    assert [j.id for j in fair_order(pending, charged)] == ["c-victim", "a-real2", "a-control"]
    learnt_only = replace(charged, charged_runtime=None)  # a plugin's own context: the learnt runtime orders
    assert [j.id for j in fair_order(pending, learnt_only)] == ["a-real2", "c-victim", "a-control"]
