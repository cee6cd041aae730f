"""red28 R3, the rest (s28-budget "Left"): with ``c.SchedApp.budget_admission = "safe"`` the gate counts what the
budget's running work may still spend by its limits, but the submit's warning compared the job with the
GPU-hours spent only — a job the gate then held got no word at submit. Both now ask one function
(:func:`jupyter_sched.scheduling.budget_fit.budget_fit`, with :func:`~.running_holds`)."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url
from tests.in_process import cancel_all_and_close, tick_until


def test_red28_r3_the_submit_warning_counts_running_jobs_limits_as_safe_admission_does(tmp_path: Path) -> None:
    """Failed before: 2 GPU-hours left, 1.5 of them held by a running 1-GPU 1h30m job; a 1-GPU 1h30m job was
    accepted with no word, then pended BudgetExhausted."""
    svc = SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                        "simulated_gpus": 2, "telemetry_source": "off", "budget_admission": "safe"})
    try:
        svc.set_quotas({"budgets": [{"team": "vision", "gpu_hours": 2}], "user_teams": {"ana": "vision"}},
                       actor="boss")
        sleep = ["sleep", "600"]
        first = svc.submit({"gpus": 1, "time_limit": "1h30m", "command": sleep, "name": "first"}, user="ana")["id"]
        tick_until(svc, "the first job to run",
                   lambda: svc.services.store.get_job(first).job.state.holds_gpus)  # type: ignore[union-attr]
        second = svc.submit({"gpus": 1, "time_limit": "1h30m", "command": sleep, "name": "second"}, user="ana")
        said = [w for w in second.get("warnings") or [] if "budget" in w]
        assert len(said) == 1, second
        assert said[0].startswith("this job may use up to 1.5 GPU-hours (1 GPU for its 1h30m time limit) but team "
                                  "vision has 2 GPU-hours of its budget left ("), said  # (<0.01 of 2 …): it ran
        assert said[0].endswith(
            "of 2 GPU-hours this month), 1.5 of them held by running jobs' limits: it waits until running work leaves "
            "enough of it or the budget resets (c.SchedApp.budget_admission is safe) — give it a time limit of at most "
            "30m to stay within, or ask an admin to raise the budget"), said
        # what the gate then decides: the same
        tick_until(svc, "a reason for the second job", lambda: second["id"] in svc.services.engine.reasons)
        reason = svc.services.engine.reasons[second["id"]]
        assert reason.code == "BudgetExhausted" and "1.5 of them held by running jobs' limits" in reason.message, reason
        # one that fits what running work leaves: no word, and it starts
        small = svc.submit({"gpus": 1, "time_limit": "20m", "command": sleep, "name": "small"}, user="ana")
        assert not [w for w in small.get("warnings") or [] if "budget" in w], small
        tick_until(svc, "the small job to run",
                   lambda: svc.services.store.get_job(small["id"]).job.state.holds_gpus)  # type: ignore[union-attr]
    finally:
        cancel_all_and_close(svc)
