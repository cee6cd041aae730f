"""The discrete-event simulator around the production ``run_cycle``: invariants, idle ladder, scenarios."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from jupyter_sched.errors import NotFoundError, ValidationError
from jupyter_sched.model import GPU, Inventory, JobKind, Node, ResourceRequest
from jupyter_sched.reclaim import IdlePolicies, IdlePolicy
from jupyter_sched.scheduling import SchedulingProfile
from jupyter_sched.sim.scenario import load_scenario, parse_scenario
from jupyter_sched.sim.simulator import Activity, SimJob, Simulator, simulate

BENCH_SCENARIO = Path(__file__).resolve().parents[2] / "benchmarks" / "scenarios" / "idle_leases.yaml"


def make_inventory(nodes: int = 2, gpus: int = 4) -> Inventory:
    return Inventory(nodes=tuple(
        Node(name=f"n{i}", gpus=tuple(GPU(uuid=f"GPU-{i}-{j}", index=j, node=f"n{i}", model="A100", memory_mib=81920,
                                          simulated=True) for j in range(gpus)))
        for i in range(nodes)), source="simulated")


def make_job(name: str, *, gpus: float = 1, submit: float = 0, runtime: float | None = 600,
             kind: JobKind = JobKind.TRAINING, activity: tuple[Activity, ...] = (),
             limit: float | None = None) -> SimJob:
    whole = int(gpus) if gpus >= 1 else 1
    milli = 1000 if gpus >= 1 else int(gpus * 1000)
    return SimJob(name=name, user="ana", submit_s=submit, runtime_s=runtime,
                  resources=ResourceRequest(gpus=whole, gpu_milli=milli), kind=kind, activity=activity,
                  time_limit_s=limit)


def burst(n: int = 12) -> list[SimJob]:
    return [make_job(f"j{i}", gpus=(1, 2, 4, 0.5)[i % 4], submit=30.0 * i, runtime=300.0 + 50 * (i % 3),
                     limit=600.0) for i in range(n)]


def occupancy_never_exceeds_capacity(sim: Simulator) -> None:
    """Replay the decision log per GPU: milli-GPUs in use never pass 1000."""
    used: dict[str, int] = defaultdict(int)
    held: dict[str, list[tuple[str, int]]] = {}
    for _, kind, job_id, detail in sorted(sim.decisions, key=lambda d: (d[0], d[1] != "finish")):
        if kind == "admit":
            taken = []
            for part in detail.split(";"):
                node_gpus, milli = part.rsplit("@", 1)
                for uuid in node_gpus.split(":", 1)[1].split(","):
                    used[uuid] += int(milli)
                    taken.append((uuid, int(milli)))
                    assert used[uuid] <= 1000, f"{uuid} over-allocated by {job_id}"
            held[job_id] = taken
        elif kind in ("finish", "preempt", "idle_release", "idle_stop", "idle_requeue"):
            for uuid, milli in held.pop(job_id, []):
                used[uuid] -= milli


def test_every_job_runs_once_for_its_runtime_after_it_arrives() -> None:
    sim = Simulator(make_inventory(), burst())
    res = sim.run()
    jobs = res.jobs
    assert (jobs["outcome"] == "succeeded").all()
    assert (jobs["start_s"] >= jobs["submit_s"]).all()
    runtimes = {j.name: j.runtime_s for j in burst()}
    for row in jobs.itertuples():
        assert row.finish_s - row.start_s == pytest.approx(runtimes[row.name])
    assert res.summary["avg_jct_s"] >= res.summary["avg_queue_s"]
    occupancy_never_exceeds_capacity(sim)
    assert (res.timeseries["utilization_pct"] <= 100.0 + 1e-9).all()


def test_a_run_is_deterministic() -> None:
    a = simulate(make_inventory(), burst())
    b = simulate(make_inventory(), burst())
    assert a.jobs.equals(b.jobs) and a.timeseries.equals(b.timeseries)


def test_a_job_that_can_never_fit_is_rejected_not_queued_forever() -> None:
    res = simulate(make_inventory(1, 2), [make_job("huge", gpus=8)])
    assert res.jobs.loc[0, "outcome"] == "rejected"


def test_a_waiting_job_gets_an_eta_from_the_running_jobs_time_limits() -> None:
    jobs = [make_job("a", gpus=4, runtime=600, limit=600), make_job("b", gpus=4, submit=10, runtime=60, limit=60)]
    res = simulate(make_inventory(1, 4), jobs)
    b = res.jobs.set_index("name").loc["b"]
    assert b["first_reason"] == "WaitingForCapacity"
    assert b["eta_s"] == pytest.approx(600.0)
    assert b["start_s"] == pytest.approx(600.0)
    assert b["eta_err_s"] == pytest.approx(0.0)


IDLE = IdlePolicies(default=IdlePolicy(window_s=1800.0, warning_s=300.0, busy_kernel_window_s=7200.0))


@dataclass(frozen=True)
class IdleCase:
    id: str
    activity: tuple[Activity, ...]
    want_reclaimed: bool


IDLE_CASES = [
    IdleCase("an idle tail is reclaimed after window and warning",
             (Activity(1200, 80, "busy"),), True),
    IdleCase("a data-loading dip with a busy kernel is not idle",
             (Activity(600, 80, "busy"), Activity(3000, 0, "busy"), Activity(3600 * 3, 70, "busy")), False),
    IdleCase("a pause shorter than the window is not reclaimed",
             (Activity(600, 80, "busy"), Activity(1500, 0, "idle"), Activity(3600 * 3, 70, "busy")), False),
]


@pytest.mark.parametrize("case", IDLE_CASES, ids=[c.id for c in IDLE_CASES])
def test_the_idle_ladder_reclaims_idle_tails_only(case: IdleCase) -> None:
    lease = make_job("lease", kind=JobKind.LEASE, runtime=4 * 3600.0, activity=case.activity)
    res = simulate(make_inventory(1, 2), [lease], idle=IDLE, tick_s=60.0, horizon_s=4 * 3600.0)
    row = res.jobs.iloc[0]
    reclaimed = row["reclaimed_s"] is not None and row["reclaimed_s"] == row["reclaimed_s"]
    assert reclaimed == case.want_reclaimed
    if reclaimed:
        assert row["reclaimed_s"] >= lease.active_until_s() + IDLE.default.window_s
        assert row["idle_warnings"] == 1


def test_the_benchmark_scenario_has_no_false_reclaims() -> None:
    sc = load_scenario(BENCH_SCENARIO)
    res = simulate(sc.inventory, sc.jobs, **sc.simulator_kwargs())
    by_name = {j.name: j for j in sc.jobs}
    reclaimed = res.jobs[res.jobs["reclaimed_s"].notna()]
    assert len(reclaimed) > 0
    for row in reclaimed.itertuples():
        assert row.reclaimed_s >= row.start_s + by_name[row.name].active_until_s()


def _doc(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": "t", "cluster": {"nodes": 1, "gpus_per_node": 2},
                           "jobs": [{"name": "a", "gpus": 1, "submit": "0m", "runtime": "10m"}]}
    doc.update(over)
    return doc


@dataclass(frozen=True)
class BadDoc:
    id: str
    doc: dict[str, Any]
    field: str


BAD_DOCS = [
    BadDoc("no jobs", _doc(jobs=[]), "jobs"),
    BadDoc("GPUs that are not a number", _doc(jobs=[{"name": "a", "gpus": "two"}]), "jobs[0].gpus"),
    BadDoc("an unknown kind", _doc(jobs=[{"name": "a", "kind": "batch"}]), "jobs[0].kind"),
    BadDoc("an activity without a length", _doc(jobs=[{"name": "a", "activity": [{"util": 5}]}]),
           "jobs[0].activity[0].for"),
    BadDoc("a malformed runtime", _doc(jobs=[{"name": "a", "runtime": "soon"}]), "jobs[0].runtime"),
    BadDoc("a naive start time", _doc(start="2026-03-02T08:00:00"), "start"),
]


@pytest.mark.parametrize("case", BAD_DOCS, ids=[c.id for c in BAD_DOCS])
def test_a_bad_scenario_names_the_field(case: BadDoc) -> None:
    with pytest.raises(ValidationError) as info:
        parse_scenario(case.doc)
    assert info.value.field == case.field


def test_a_scenario_expands_repeats_and_reads_activity(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("name: x\ncluster: {nodes: 1, gpus_per_node: 4}\njobs:\n"
                    "  - {name: l, kind: lease, gpus: 0.5, submit: 5m, repeat: {count: 3, every: 10m},\n"
                    "     activity: [{for: 10m, util: 50, kernel: busy}]}\n", encoding="utf-8")
    sc = load_scenario(path)
    assert [j.name for j in sc.jobs] == ["l-1", "l-2", "l-3"]
    assert [j.submit_s for j in sc.jobs] == [300.0, 900.0, 1500.0]
    assert sc.jobs[0].resources.gpu_milli == 500 and sc.jobs[0].activity[0].duration_s == 600.0
    with pytest.raises(NotFoundError):
        load_scenario(tmp_path / "missing.yaml")


def test_a_job_is_stopped_at_its_effective_time_limit_and_learned_runtimes_feed_etas() -> None:
    from jupyter_sched.queues.limits import TimeLimitRule
    from jupyter_sched.scheduling import SchedulingProfile
    inv = Inventory(nodes=(Node(name="n", gpus=(GPU(uuid="G0", index=0, node="n", model="A100", memory_mib=1),)),))
    profile = SchedulingProfile(time_limits=(TimeLimitRule(default_s=600),))
    jobs = [SimJob(name="over", user="u", submit_s=0, runtime_s=3600, resources=ResourceRequest(gpus=1)),
            SimJob(name="ok", user="u", submit_s=1, runtime_s=300, resources=ResourceRequest(gpus=1))]
    result = simulate(inv, jobs, profile=profile)
    rows = result.jobs.set_index("name")
    assert rows.loc["over", "outcome"] == "timeout" and rows.loc["over", "finish_s"] == 600
    assert rows.loc["ok", "outcome"] == "succeeded" and rows.loc["ok", "start_s"] == 600
    assert result.summary["timeouts"] == 1 and result.summary["eta_coverage"] == 1.0


def test_a_job_started_at_a_fractional_arrival_time_did_not_wait() -> None:
    """The replay's clock stamps times in microseconds: a job started at its arrival at 200/3 s
    (stamped 66.666667 s) waited 0 s, not 3e-7 s — which counted it among the jobs that waited,
    with a zero ETA error and a zero wait, in every replay with fractional arrival times (about
    half of the jobs that started at once: ``benchmarks/jct_loaded.py``'s dev and held-out replays)."""
    inv = make_inventory(nodes=1, gpus=1)
    jobs = [SimJob(name="now", user="u", submit_s=200 / 3, runtime_s=100, resources=ResourceRequest(gpus=1),
                   time_limit_s=200),
            SimJob(name="queued", user="u", submit_s=100, runtime_s=100, resources=ResourceRequest(gpus=1),
                   time_limit_s=200)]
    result = simulate(inv, jobs)
    queue = dict(zip(result.jobs["name"], result.jobs["queue_s"], strict=True))
    assert queue["now"] == 0.0
    assert queue["queued"] == pytest.approx(200 / 3 + 100 - 100, abs=1e-5)
    assert result.summary["eta_waited_jobs"] == 1  # "queued" only


def test_eta_accuracy_with_history_leaves_out_the_jobs_submitted_before_any_run_finished() -> None:
    """``steady_*``: the replay's warm-up (jobs submitted before the first run finished, whose ETAs
    could only use declared limits) runs and is learnt from but is not scored; the whole replay's
    figure stays beside it."""
    inv = Inventory(nodes=(Node(name="n", gpus=(GPU(uuid="G0", index=0, node="n", model="A100", memory_mib=1),)),))
    jobs = [SimJob(name="first", user="u", submit_s=0, runtime_s=1000, resources=ResourceRequest(gpus=1),
                   time_limit_s=1000),
            SimJob(name="early", user="u", submit_s=10, runtime_s=1000, resources=ResourceRequest(gpus=1),
                   time_limit_s=2000),
            SimJob(name="late", user="u", submit_s=1500, runtime_s=100, resources=ResourceRequest(gpus=1),
                   time_limit_s=200)]
    summary = simulate(inv, jobs).summary
    assert summary["eta_waited_jobs"] == 2 and summary["steady_first_finish_s"] == 1000.0
    assert summary["steady_eta_waited_jobs"] == 1  # "late" only: "early" waited before anything finished
    assert summary["steady_median_wait_s"] == 500.0 and summary["median_wait_s"] == 745.0
    cut = simulate(inv, jobs, horizon_s=900).summary  # nothing finished: nothing is scored with history
    assert cut["steady_first_finish_s"] is None and cut["steady_eta_waited_jobs"] == 0
    assert cut["steady_eta_mae_rel"] is None
    # a run stopped at its limit is not learnt from: the warm-up lasts until the first success
    stopped = [replace(jobs[0], runtime_s=5000), *jobs[1:]]
    summary = simulate(inv, stopped).summary
    assert summary["timeouts"] == 1 and summary["steady_first_finish_s"] == 2000.0
    assert summary["eta_waited_jobs"] == 2 and summary["steady_eta_waited_jobs"] == 0  # "late" (1500) is warm-up too


def test_eta_readings_beside_the_figure_score_every_eta_shown_over_the_wait() -> None:
    """Issue 16's figure is the ETA shown at submit; the readings beside it (session 18): each error
    over its own wait, the share within 15 % of it, and every ETA shown while the job waited,
    time-weighted. One GPU, ETAs from limits: ``a`` runs 100 s (limit 1,000), ``b`` arrives at 10 s
    (limit 500, runs 50 s), ``c`` at 20 s: shown 1,500 until ``a`` ends at 100 s, then 600 (``b``'s
    limit) until it starts at 150 s."""
    inv = make_inventory(nodes=1, gpus=1)
    jobs = [SimJob(name=n, user="u", submit_s=t, runtime_s=rt, resources=ResourceRequest(gpus=1), time_limit_s=lim)
            for n, t, rt, lim in (("a", 0, 100, 1000), ("b", 10, 50, 500), ("c", 20, 100, 1000))]
    result = simulate(inv, jobs, profile=SchedulingProfile(eta_source="limits"))
    c = result.jobs.set_index("name").loc["c"]
    assert (c["predicted_s"], c["start_s"]) == (pytest.approx(1500.0), pytest.approx(150.0))
    assert c["shown_avg_err_s"] == pytest.approx((1350.0 * 80 + 450.0 * 50) / 130)
    b = result.jobs.set_index("name").loc["b"]
    assert b["shown_avg_err_s"] == pytest.approx(900.0)  # shown 1,000 the whole wait, started at 100
    s = result.summary
    assert s["eta_waited_jobs"] == 2 and s["median_wait_s"] == pytest.approx(110.0)
    assert s["eta_mae_rel"] == pytest.approx((900.0 + 1350.0) / 2 / 110.0)  # the figure: at submit
    assert s["eta_per_job_rel"] == pytest.approx((900.0 / 90 + 1350.0 / 130) / 2)
    assert s["eta_within_15"] == 0.0
    assert s["eta_every_shown_rel"] == pytest.approx((900.0 + (1350.0 * 80 + 450.0 * 50) / 130) / 2 / 110.0)


@pytest.mark.parametrize(("doc", "said", "field"), [
    (_doc(jobs=[{"name": "a", "user": "u", "gpus": 1, "submit": "0m", "runtme": "10m"}]),
     "jobs[0]: unknown key 'runtme' — did you mean 'runtime'?", "jobs[0].runtme"),
    (_doc(cluster={"nodes": 1, "gpus_per_node": 8, "modle": "H100"}),
     "cluster: unknown key 'modle' — did you mean 'model'?", "cluster.modle"),
    (_doc(profle={"backfill": False}), "unknown key 'profle' — did you mean 'profile'?", "profle"),
    (_doc(jobs=[{"name": "a", "colour": "red"}]), "jobs[0]: unknown key 'colour'", "jobs[0].colour"),
    (_doc(jobs=[{"name": "a", "activity": [{"for": "1m", "utl": 5}]}]),
     "jobs[0].activity[0]: unknown key 'utl' — did you mean 'util'?", "jobs[0].activity[0].utl"),
])
def test_newuser17_n19_an_unknown_scenario_key_is_refused_naming_the_nearest(doc: dict[str, Any], said: str,
                                                                            field: str) -> None:
    """A misspelt ``runtme`` made a job run forever and ``modle``/``profle``/``colour`` were ignored,
    rc 0 (new user 17, N19): each unknown key is refused, naming it and the nearest key read there."""
    with pytest.raises(ValidationError) as info:
        parse_scenario(doc)
    assert str(info.value.message if hasattr(info.value, "message") else info.value).startswith(said)
    assert info.value.field == field


def test_newuser17_n19_a_job_running_to_the_horizon_is_counted_to_the_horizon(tmp_path: Path) -> None:
    """One 1-GPU job with no runtime, horizon 1h: the summary said "1 still running at the 1h horizon"
    and "GPU-hours allocated 0.0", end_s 0.0 — the clock stopped at the last event (new user 17, N19)."""
    from jupyter_sched.sim.cli import main

    path = tmp_path / "s.yaml"
    path.write_text("name: x\ncluster: {nodes: 1, gpus_per_node: 8}\nhorizon: 1h\n"
                    "jobs:\n  - {name: a, user: u, gpus: 1, submit: 0m}\n  - {name: b, user: u, gpus: 0.5, submit: 30m}\n",
                    encoding="utf-8")
    sc = load_scenario(path)
    res = simulate(sc.inventory, sc.jobs, **sc.simulator_kwargs())
    assert res.summary["running_at_end"] == 2
    assert res.summary["gpu_h_allocated"] == pytest.approx(1.0 + 0.25)  # 1 GPU for 1 h, 0.5 GPU for 30 min
    assert res.summary["end_s"] == 3600.0
    import io
    out = io.StringIO()
    assert main(["simulate", str(path), "--out", str(tmp_path / "sim")], out=out, err=io.StringIO()) == 0
    assert "GPU-hours allocated 1.2" in out.getvalue()  # 1.25, as the CLI rounds it
    typo = tmp_path / "typo.yaml"
    typo.write_text(path.read_text(encoding="utf-8").replace("submit: 0m}", "submit: 0m, runtme: 10m}"),
                    encoding="utf-8")
    err = io.StringIO()
    assert main(["simulate", str(typo)], out=io.StringIO(), err=err) == 2  # bad input (newuser38 n2)
    assert "unknown key 'runtme' — did you mean 'runtime'?" in err.getvalue()
