"""hubadmin24 B11: a minutely definition of a team whose GPU-hour budget is spent piled up one held
run a minute (heading for the pending cap). Now its one held run shows the budget reason and later
firings are skipped while it waits — no run, no job — with one ``definition_skipped`` record naming
the budget. Real services on a real store (SQLite and PostgreSQL, as the module's fixtures give), the
engine's own cycle, a manual clock.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from def_builders import Server, at

from jupyter_sched.engine.clock import ManualClock
from jupyter_sched.services.models import SetQuotasRequest
from jupyter_sched.store.definitions import list_runs

EVERY_MINUTE_GPU = {"notebook": "report.ipynb", "schedule": "* * * * *", "timezone": "UTC", "gpus": 1,
                    "time_limit": "10m"}


def test_hubadmin24_b11_a_definition_firing_into_a_spent_budget_keeps_one_held_run(
        db_url: str, tmp_path: Path) -> None:
    """Failed before the fix: 6 firings made 6 pending runs, each held by the spent budget."""
    clock = ManualClock(at("2026-12-04T10:00:30+00:00"))
    server = Server(db_url, clock, tmp_path / "jobs")
    services = server.services
    with server.store.transaction(now=clock.now()) as tx:  # 1 GPU-hour of team default this month
        tx.open_usage(job_id="j-old", attempt=1, user="ha24s", team="default", kind="training",
                      gpus=[("GPU-0", "A100", 1.0)], started_at=clock.now() - timedelta(hours=3))
        tx.close_usage("j-old", clock.now() - timedelta(hours=2))
    services.quotas.set(services.caller("boss", admin=True), SetQuotasRequest.model_validate(
        {"budgets": [{"team": "default", "gpu_hours": 0.12}]}))
    definition = server.create({**EVERY_MINUTE_GPU, "name": "tick"}, user="ha24s")
    for _ in range(6):  # 10:01 ... 10:06
        clock.advance(60)
        server.fire_due()
        services.engine.tick()  # the cycle gives the run its reason (BudgetExhausted)
    with server.store.transaction(write=False) as tx:
        runs = list_runs(tx, [definition["id"]], limit=100)
    assert len(runs) == 1, [(r.scheduled_for, r.job_id) for r in runs]
    held = server.store.get_job(runs[0].job_id).job
    assert held.state.value == "pending" and held.reason is not None and held.reason.code == "BudgetExhausted"
    (record,) = server.store.list_events(action="definition_skipped", limit=100)
    assert record.details["cause"] == "budget", record.details
    assert f"its run {held.id} still waits: default has spent its GPU-hour budget: 1 of 0.12 GPU-hours this " \
           "month" in record.message, record.message
