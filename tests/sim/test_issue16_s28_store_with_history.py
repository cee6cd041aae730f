"""Issue 16, session 28: the ETA error with a store that has history, beside the cold store's.

The loaded replay starts with an empty store: until the first run ends (about 2.5 h in) every running job is
projected to its limit, which a deployed scheduler — whose store holds the weeks before — never has to do.
``benchmarks/jct_loaded.py`` now also replays with the learner seeded from an earlier period's runs
(:meth:`Simulator.learn_earlier`; :func:`jct_loaded.earlier_runs`: each user's padding and everybody's runs of
each size, never a replayed job's own work), prints that figure beside the cold store's, and its target line
says that every verdict reads the cold store (the figure that misses is never dropped nor replaced)."""

from __future__ import annotations

import pytest

from jupyter_sched.backfill.history import run_key
from jupyter_sched.model import GPU, Inventory, JobSpec, Node, ResourceRequest
from jupyter_sched.sim.simulator import SimJob, Simulator
from tests.trace_data import FIXTURES


def _one_gpu() -> Inventory:
    return Inventory(nodes=(Node(name="n", gpus=(GPU(uuid="G0", index=0, node="n", model="A100", memory_mib=1),)),))


def test_issue16_s28_learn_earlier_seeds_the_learner_not_the_replay() -> None:
    # u runs 1000 s under a 4000-s limit; the job behind it (submitted at 10 s) starts when it ends (1000 s)
    jobs = [SimJob(name="train", user="u", submit_s=0, runtime_s=1000, resources=ResourceRequest(gpus=1),
                   time_limit_s=4000),
            SimJob(name="next", user="u", submit_s=10, runtime_s=100, resources=ResourceRequest(gpus=1),
                   time_limit_s=200)]
    cold = Simulator(_one_gpu(), jobs).run()
    # cold store: nothing of u's is known, the running job is projected to its limit -> ETA 4000 s: it
    # started 3000 s before it (actual - predicted)
    assert cold.jobs.set_index("name").loc["next", "predicted_err_s"] == pytest.approx(-3000.0)

    # u's earlier runs of other programs: a quarter of their limits, every time
    earlier = [SimJob(name=f"old{i}", user="u", submit_s=-10_000.0 + i, runtime_s=250, time_limit_s=1000,
                      resources=ResourceRequest(gpus=1)) for i in range(2)]
    seeded = Simulator(_one_gpu(), jobs)
    assert seeded.learn_earlier(earlier) == 2
    result = seeded.run()
    rows = result.jobs.set_index("name")
    # read with u's padding: 4000 x 0.25 = 1000 s, the true end
    assert rows.loc["next", "predicted_err_s"] == pytest.approx(0.0)
    # the earlier runs are learnt, not replayed: no row, no GPU time, the schedule unchanged
    assert sorted(rows.index) == ["next", "train"]
    assert list(rows["start_s"]) == list(cold.jobs.set_index("name")["start_s"])
    assert result.summary["makespan_s"] == cold.summary["makespan_s"]
    # a simulator that learns no runtimes learns none of them either
    assert Simulator(_one_gpu(), jobs, learn_runtimes=False).learn_earlier(earlier) == 0


def test_issue16_s28_earlier_runs_are_no_replayed_jobs_work(jct_loaded, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("JUPYTER_SCHED_DATA", str(FIXTURES))
    double = {1, 3}
    earlier = [run for seed in jct_loaded.EARLIER_SEEDS for run in jct_loaded.earlier_runs(double, seed)]
    replays = [jct_loaded.arrivals(jct_loaded.loaded_jobs(2.0), 4, double), *jct_loaded._replays("second")]

    def key(job: SimJob) -> tuple[object, ...]:
        return run_key(JobSpec(name=job.name, user=job.user, resources=job.resources))

    assert len(earlier) == 60 * len(jct_loaded.EARLIER_SEEDS) and all(r.name.startswith("earlier:") for r in earlier)
    replayed = {key(job) for sims in replays for job in sims}
    assert not replayed & {key(run) for run in earlier}  # never a replayed job's own runs
    # the users' habits are the replay's: the padding users declare twice the runtime rounded up to the hour
    for run in earlier:
        hours = -(-run.runtime_s // 3600)
        assert run.time_limit_s == hours * 3600 * (2 if int(run.user[-1]) in double else 1)
    # earlier periods, not replayed ones: their orders are none of the second workload's
    assert not set(jct_loaded.EARLIER_SEEDS) & set(jct_loaded.SHUFFLED)


def test_issue16_s28_target_line_judges_the_cold_store_and_prints_history_beside(jct_loaded) -> None:  # type: ignore[no-untyped-def]
    # cold store 16.7 % / 10.7 %; a store with history 12.1 % / 9.0 %, JCT +8.1 % vs SJF
    line = jct_loaded.verdict(vs_fifo=-0.353, vs_sjf=0.060, coverage=1.0, without=0.167, with_=0.107,
                              history=jct_loaded.StoreFigures(vs_sjf=0.081, without=0.121, with_=0.090))
    # the verdict stays on the cold store's figure, which misses: NOT MET, the figure printed
    assert line.startswith("target (main replay, default profile): NOT MET")
    assert "without progress reports 16.7% (NOT met), with them 10.7% (met)" in line
    assert "every verdict reads the cold store (the replay starts with no finished run)" in line
    # the store with history is printed beside it, judged never
    assert line.endswith("; beside it, not judged, a store with history: JCT +8.1% vs SJF, ETA error without "
                         "progress reports 12.1%, with them 9.0%")
    # without it, the line names the cold store all the same
    plain = jct_loaded.verdict(vs_fifo=-0.353, vs_sjf=0.060, coverage=1.0, without=0.167, with_=0.107)
    assert plain.endswith("every verdict reads the cold store (the replay starts with no finished run)")
