"""New user 25, N6 and hubadmin25 B11: a learnt end only from runs like this one.

N6: after an hour of short runs under 1-5 min limits, ``--time-limit 366d`` read "projected end ~Jan 23
(in 49d02h), if it ends at ~13 % of its time limit, as your other runs did", and the job waiting on it got
that as its ETA: a share of the limit learnt at minutes, extrapolated to a year. A share is now read only
for a limit within ``LIMIT_REACH`` (4x) of the range of the limits it was learnt under; further out the
job keeps its limit — no estimate, "no similar past runs".

B11: after 16 CPU-only ``sleep 30`` runs (10 % of 5m limits), the running 2-GPU 3-hour jobs of users
without runs read "projected end … in 11m24s, if it ends at ~10 % of its time limit, as other users'
runs of its size did": the population prior's last class held every run, 0-GPU ones included. It now
reads runs of the job's own size (its GPU request) under limits within reach of its own — "of its size" —
and, where none is known, GPU runs of any size under limits like its own, said so ("as other users' GPU
runs under similar time limits did"); never a CPU-only run for a GPU job.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from core_builders import T0, make_job, make_node, running, snapshot

from jupyter_sched.backfill.history import (
    LIMIT_REACH,
    OTHER_RUNS,
    POPULATION_GPU_RUNS,
    POPULATION_RUNS,
    RuntimeHistory,
    within_reach,
)
from jupyter_sched.model import JobSpec, ResourceRequest
from jupyter_sched.model.codec import reason_to_dict
from jupyter_sched.scheduling import run_cycle
from jupyter_sched.wording import render_reason
from jupyter_sched.wording.projected import projected_end_text

DAY = 86400.0


def _spec(user: str, command: tuple[str, ...], gpus: int = 1) -> JobSpec:
    return JobSpec(name=command[-1], user=user, command=command, resources=ResourceRequest(gpus=gpus))


def _short_runs(history: RuntimeHistory, user: str = "nu") -> None:
    """An hour of tries: other programs under 1-5 min limits, each ~13 % of its limit."""
    for i, limit in enumerate((60.0, 120.0, 300.0, 180.0, 300.0)):
        history.learn(_spec(user, ("python", f"try{i}.py")), 0.13 * limit + 15.0 * (limit == 60.0), limit)


def test_newuser25_n6_a_share_learnt_at_minutes_is_not_read_at_a_year() -> None:
    history = RuntimeHistory()
    _short_runs(history)
    exp = _spec("nu", ("python", "sleep.py", "600"))
    for ran in (0.0, 30.0):  # queued and running: no projection, so no "49 days" and no ETA behind it
        assert history.predict(exp, 366 * DAY, ran_s=ran) is None, ran
        assert history.origin(exp, 366 * DAY, ran_s=ran) is None
        assert history.predict(exp, 3600.0, ran_s=ran) is None  # 1 h: 12x the longest of them
    # a limit inside the reach of the runs' limits is read as before: 10 min (2x the longest)
    assert history.predict(exp, 600.0, ran_s=30.0) is not None
    assert history.origin(exp, 600.0, ran_s=30.0) == OTHER_RUNS


def test_newuser25_n6_the_same_work_keeps_its_own_runtimes_at_any_limit() -> None:
    """The key's own runs: their runtimes (not scaled) still predict; their shares only within reach."""
    history = RuntimeHistory()
    spec = _spec("nu", ("python", "sleep.py", "600"))
    for _ in range(3):
        history.learn(spec, 600.0, 1200.0)
    assert history.predict(spec, 366 * DAY) == 600.0  # 10 min, as it ran: never 366 d x 50 %
    assert history.predict(spec, 2400.0) == 600.0


def test_newuser25_n6_reach_is_a_factor_each_way_of_the_learnt_limits_range() -> None:
    assert LIMIT_REACH == 4.0
    assert within_reach(1200.0, (60.0, 300.0)) and within_reach(15.0, (60.0, 300.0))
    assert not within_reach(1201.0, (60.0, 300.0)) and not within_reach(14.0, (60.0, 300.0))
    assert not within_reach(60.0, ())


def test_newuser25_n6_the_waiter_behind_a_year_long_job_is_not_given_its_extrapolation() -> None:
    history = RuntimeHistory()
    _short_runs(history)
    exp = running(make_job("exp", user="nu", time_limit_s=366 * DAY), "n1", started=-0.5)
    spec = replace(exp.spec, command=("python", "sleep.py", "600"))
    exp = replace(exp, spec=spec)
    learnt = history.predict(spec, 366 * DAY, ran_s=30.0)
    waiter = make_job("waiter", gpus=1, user="nu", time_limit_s=3600)
    snap = snapshot([make_node("n1", gpus=1)], [exp, waiter], now=T0)
    snap = replace(snap, runtime_estimates={"exp": learnt} if learnt else {},
                   runtime_sources={"exp": OTHER_RUNS} if learnt else {})
    result = run_cycle(snap)
    reason = {p.job_id: p.reason for p in result.pending}["waiter"]
    assert "exp" not in result.projected  # its own line: its limit only
    assert reason.eta == T0 - timedelta(seconds=30) + timedelta(seconds=366 * DAY), reason.eta  # its limit's end


def test_hubadmin25_b11_cpu_only_runs_never_teach_a_gpu_job() -> None:
    history = RuntimeHistory()
    for k in range(16):  # 16 users' CPU-only sleeps: 30 s of 5m limits
        history.learn(_spec(f"cpu{k}", ("sleep", "30"), gpus=0), 30.0, 300.0)
    train = _spec("h25fabd47", ("python", "train.py"), gpus=2)
    assert history.predict(train, 3 * 3600.0, ran_s=60.0) is None  # 2 GPUs, 3 h: nothing of its size
    assert history.origin(train, 3 * 3600.0, ran_s=60.0) is None
    # a 0-GPU job of a newcomer is still read from them (its size), and so is a 2-GPU one from 2-GPU runs
    assert history.origin(_spec("new", ("sleep", "60"), gpus=0), 300.0, ran_s=5.0) == POPULATION_RUNS
    history.learn(_spec("ann", ("python", "big.py"), gpus=2), 3600.0, 4 * 3600.0)
    assert history.predict(train, 3 * 3600.0, ran_s=60.0) == 0.25 * 3 * 3600.0
    assert history.origin(train, 3 * 3600.0, ran_s=60.0) == POPULATION_RUNS
    # of its size but under limits far from its own: no prior either (N6's rule)
    assert history.predict(train, 366 * DAY, ran_s=60.0) is None


def test_hubadmin25_b11_the_words_say_what_was_matched() -> None:
    """Where no run of its size is known, a GPU job of a newcomer is read from GPU runs of any size under
    limits like its own — and its line and its waiter's ETA say that, not "of its size"."""
    history = RuntimeHistory()
    for k in range(3):  # 1-GPU runs of three users, 10 % of 3-hour limits
        history.learn(_spec(f"u{k}", ("python", "a.py")), 1080.0, 3 * 3600.0)
    train = _spec("h25fabd47", ("python", "train.py"), gpus=2)
    assert history.predict(train, 3 * 3600.0, ran_s=60.0) == 1080.0
    assert history.origin(train, 3 * 3600.0, ran_s=60.0) == POPULATION_GPU_RUNS
    v_train = running(make_job("v-train", gpus=2, user="h25fabd47", time_limit_s=3 * 3600.0), "n1", started=-1)
    waiter = make_job("v-wait", gpus=2, user="h25f0", time_limit_s=3600)
    snap = replace(snapshot([make_node("n1", gpus=2)], [v_train, waiter], now=T0),
                   runtime_estimates={"v-train": 1080.0}, runtime_sources={"v-train": POPULATION_GPU_RUNS})
    result = run_cycle(snap)
    end = result.projected["v-train"]
    assert end.runs == POPULATION_GPU_RUNS and end.share == 0.1
    said = projected_end_text({"at": end.at.isoformat(), "source": "history", "runs": end.runs, "share": end.share},
                              None)
    assert said.endswith(", if it ends at ~10 % of its time limit, as other users' GPU runs under similar time "
                         "limits did"), said
    reason = {p.job_id: p.reason for p in result.pending}["v-wait"]
    assert reason.details["eta_learned_gpu_runs"] == ["v-train"] and "eta_learned_population" not in reason.details
    eta = render_reason(reason_to_dict(reason), now=T0).eta
    assert eta.endswith("(if it ends at ~10 % of its time limit, as other users' GPU runs under similar time "
                        "limits did)"), eta
    assert "of its size" not in eta
