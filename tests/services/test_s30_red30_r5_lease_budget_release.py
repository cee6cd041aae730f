"""red30 R5 at the service: under ``c.SchedApp.budget_admission = "safe"`` a kernel's running GPU lease ran on past
its team's spent budget (55 % over in 3 minutes) and teammates were not told whose lease spent it. Now a lease
holds its horizon ahead (a teammate's lease that does not fit names it), and once the budget is spent the engine
releases it: stop intent ``budget``, the lease ``cancelled`` with the words its kernel is told, audited
``budget_release``."""

from __future__ import annotations

from pathlib import Path

from jupyter_sched.services import SchedulerService
from jupyter_sched.store import sqlite_url
from tests.in_process import cancel_all_and_close, tick_until


def test_red30_r5_a_running_lease_past_the_spent_budget_is_released_by_the_engine_and_named(tmp_path: Path) -> None:
    svc = SchedulerService.from_config({"db_url": sqlite_url(tmp_path / "s.sqlite"), "log_dir": str(tmp_path),
                                        "simulated_gpus": 4, "telemetry_source": "off", "budget_admission": "safe"})
    try:
        svc.set_quotas({"budgets": [{"team": "vision", "gpu_hours": 2.5}],
                        "user_teams": {"r30ana": "vision", "r30bob": "vision"}}, actor="boss")
        lease = svc.submit({"gpus": 1, "kernel_id": "k-r30ana"}, user="r30ana", kind="lease")["id"]
        store = svc.services.store
        tick_until(svc, "ana's lease to be granted", lambda: store.get_job(lease).job.state.holds_gpus)
        # 2.5 left, 1 held ahead by ana's running lease (1 GPU x 1 h): bob's 2-GPU lease needs 2 and waits, named
        other = svc.submit({"gpus": 2, "kernel_id": "k-r30bob"}, user="r30bob", kind="lease")["id"]
        tick_until(svc, "a reason for bob's lease", lambda: other in svc.services.engine.reasons)
        reason = svc.services.engine.reasons[other]
        assert reason.code == "BudgetExhausted", reason
        assert f"among it r30ana's running lease {lease} (1 GPU until it is released or the budget is spent)" \
            in reason.message, reason.message
        assert "this lease needs 2 GPU-hours left to start (2 GPUs for the 1h00m lease horizon" in reason.message
        svc.cancel(other, user="r30bob")
        # the budget is spent (an admin lowers it under what was used): the running lease is released
        svc.set_quotas({"budgets": [{"team": "vision", "gpu_hours": 0.0001}],
                        "user_teams": {"r30ana": "vision", "r30bob": "vision"}}, actor="boss")
        tick_until(svc, "ana's lease to be released", lambda: store.get_job(lease).job.state.terminal)
        ended = store.get_job(lease).job
        assert ended.state.value == "cancelled", ended
        assert ended.message is not None and ended.message.startswith(
            "released: team vision's GPU-hour budget is spent ("), ended.message
        assert ended.message.endswith("this month) and c.SchedApp.budget_admission is safe; the kernel keeps running "
                                      "without its 1 GPU"), ended.message
        rows = svc.audit(action="budget_release", job_id=lease)
        assert len(rows) == 1 and rows[0]["user"] == "r30ana", rows
        assert rows[0]["details"]["budget_gpu_hours"] == 0.0001 and rows[0]["details"]["kernel_id"] == "k-r30ana", rows
    finally:
        cancel_all_and_close(svc)
