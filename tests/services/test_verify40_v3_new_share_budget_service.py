"""verify40 V3 through the service: under ``c.SchedApp.budget_admission = "safe"`` a NEW GPU share is fitted at
what it will be charged where it lands (red40 R1's rule: alone on its GPU, the whole GPU).

Was: a ``{"gpus": 0.1, "mem_per_gpu": "70GiB", "time_limit": "5m"}`` share on a budget with 0.01 GPU-hours left
started at once (0.1 x 5 min = 0.008) and was charged 0.083 GPU-hours (8x what was left).

Real parts: the scheduler service from its config on a SQLite store, the engine, the local executor (``sleep``);
the GPUs are the simulated inventory's (no GPU here).
"""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url
from tests.in_process import cancel_all_and_close, tick_until


def test_verify40_v3_safe_budget_holds_a_lone_new_share_at_the_whole_gpu(tmp_path: Path) -> None:
    svc = SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                        "simulated_gpus": 2, "telemetry_source": "off", "budget_admission": "safe"})
    try:
        svc.set_quotas({"budgets": [{"team": "teamc", "gpu_hours": 0.01}], "user_teams": {"r40c": "teamc"}},
                       actor="boss")
        share = {"gpus": 0.1, "mem_per_gpu": "70GiB", "command": ["sleep", "600"]}
        lone = svc.submit({**share, "time_limit": "5m", "name": "lone"}, user="r40c")["id"]
        tick_until(svc, "a reason for the lone share", lambda: lone in svc.services.engine.reasons)
        job = svc.services.store.get_job(lone)
        assert job is not None and not job.job.state.holds_gpus, job  # was: running on a GPU of its own
        reason = svc.services.engine.reasons[lone]
        assert reason.code == "BudgetExhausted", reason
        assert reason.message == (
            "teamc has 0.01 GPU-hours of its budget left this month (0 of 0.01); this job may use up to 0.08 "
            "GPU-hours (a GPU only its team's shares would hold counts whole: 1 GPU for its 5m time limit) "
            "(c.SchedApp.budget_admission is safe)"), reason.message
        assert reason.unblock.startswith("resubmit with a time limit of at most 36s"), reason.unblock
        short = svc.submit({**share, "time_limit": "30s", "name": "short"}, user="r40c")["id"]  # 1 GPU x 30 s fits
        tick_until(svc, "the 30 s share to run",
                   lambda: svc.services.store.get_job(short).job.state.holds_gpus)  # type: ignore[union-attr]
    finally:
        cancel_all_and_close(svc)
