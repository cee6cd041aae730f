"""Issue 16 item 4: the simulator's progress reports — modelled, seeded, read for ETAs only."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from test_sim_simulator import make_inventory, make_job

from jupyter_sched.sim.progress import ProgressModel
from jupyter_sched.sim.simulator import Simulator

START = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _reports(model: ProgressModel, job_id: str, ran_s: float, runtime_s: float = 7200.0) -> list[float]:
    """The fractions of every report the job made by ``ran_s``."""
    out = []
    for k in range(1, int(ran_s // model.every_s) + 1):
        report = model.latest(job_id, attempt=1, start=START, ran_s=k * model.every_s, runtime_s=runtime_s)
        if report is not None:
            out.append(report.fraction)
    return out


def test_issue16_item4_the_progress_model_is_deterministic_by_seed() -> None:
    jobs = [f"sim-{i:05d}" for i in range(1, 41)]
    again = {j: _reports(ProgressModel(seed=3), j, 3600) for j in jobs}
    assert again == {j: _reports(ProgressModel(seed=3), j, 3600) for j in jobs}
    assert again != {j: _reports(ProgressModel(seed=4), j, 3600) for j in jobs}
    silent = [j for j in jobs if not ProgressModel(seed=3).reports(j)]
    assert 0 < len(silent) < len(jobs) // 2  # a quarter of the jobs, drawn per job
    assert all(again[j] == [] for j in silent)


def test_issue16_item4_start_up_is_no_progress_and_noise_stays_within_its_bound() -> None:
    model = ProgressModel(silent_share=0.0)
    fractions = _reports(model, "sim-00001", 7200)  # 24 reports over a 2 h run; 12 minutes of start-up
    assert len(fractions) == 24
    assert fractions[:2] == [0.0, 0.0]  # 5 and 10 minutes in: still starting up
    for k, f in enumerate(fractions, start=1):
        true = min(max((k * 300 - 720) / 6480, 0.0), 1.0)
        assert true * 0.85 - 1e-9 <= f <= min(true * 1.15, 1.0) + 1e-9, (k, f, true)
    assert fractions != [min(max((k * 300 - 720) / 6480, 0.0), 1.0) for k in range(1, 25)]  # not the truth


def test_issue16_item4_the_line_through_noiseless_reports_takes_the_start_up_out() -> None:
    model = ProgressModel(jitter=0.0, silent_share=0.0)
    report = model.latest("sim-00001", attempt=1, start=START, ran_s=3600, runtime_s=7200)
    assert report is not None and report.fit.n == 10  # 15 .. 60 minutes (the first two say 0)
    assert report.fit.total_s() == pytest.approx(7200.0)
    assert report.ran_s / report.fraction > 7200  # the latest report alone projects long: start-up counted as run
    later = model.latest("sim-00001", attempt=1, start=START, ran_s=4000, runtime_s=7200, previous=report)
    assert later is not None and later.fit == model.latest("sim-00001", attempt=1, start=START, ran_s=4000,
                                                          runtime_s=7200).fit  # carried on = made afresh


def test_issue16_item4_reports_move_the_eta_shown_and_no_decision() -> None:
    """``a`` (1 h, 2 h limit) holds the GPU; ``b`` arrives half an hour in. From the limit ``b`` is told
    2 h; ``a``'s reports (no start-up, no noise) say half done, so 1 h — when ``b`` does start."""
    jobs = [make_job("a", gpus=1, runtime=3600, limit=7200), make_job("b", gpus=1, submit=1800, runtime=600, limit=600)]
    plain = Simulator(make_inventory(1, 1), jobs)
    told = Simulator(make_inventory(1, 1), jobs, progress=ProgressModel(startup_share=0.0, jitter=0.0, silent_share=0.0))
    b_plain = plain.run().jobs.set_index("name").loc["b"]
    b_told = told.run().jobs.set_index("name").loc["b"]
    assert (b_plain["eta_s"], b_told["eta_s"]) == (pytest.approx(7200.0), pytest.approx(3600.0))
    assert b_told["start_s"] == b_plain["start_s"] == pytest.approx(3600.0)
    assert told.decisions == plain.decisions


@pytest.mark.parametrize("bad", [{"every_s": 0.0}, {"startup_share": 1.5}, {"silent_share": -0.1}, {"jitter": -1.0}])
def test_issue16_item4_a_bad_progress_model_names_its_field(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError, match=next(iter(bad))):
        ProgressModel(**bad)
