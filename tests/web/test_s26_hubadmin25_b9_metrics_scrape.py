"""hubadmin25 B9 over HTTP: an admin's ``GET metrics`` has the accounting series (the usage counter per team
and model, the team budgets' standing); an ordinary user's scrape of the same route has none of them
(a team's total is admin-only, as ``GET usage/report?all``), and both have the public families."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from .conftest import BOSS_TOKEN, EVE_TOKEN

ACCOUNTING = ("jupyter_sched_team_gpu_seconds", "jupyter_sched_team_budget_gpu_hours",
              "jupyter_sched_team_budget_used_gpu_hours", "jupyter_sched_team_budget_resets_timestamp_seconds")


async def test_hubadmin25_b9_accounting_series_only_in_an_admins_scrape(sched_app: Any, api: Any) -> None:
    status, _ = await api("PUT", "quotas", {"budgets": [{"team": "default", "gpu_hours": 10, "period": "week"}]},
                          token=BOSS_TOKEN)
    assert status == 200
    status, text = await api("GET", "metrics", token=BOSS_TOKEN)
    assert status == 200, text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert families["jupyter_sched_team_gpu_seconds"].type == "counter"
    assert {s.labels["team"] for s in families["jupyter_sched_team_budget_gpu_hours"].samples} == {"default"}
    assert "jupyter_sched_queue_length" in families and "jupyter_sched_node_gpus" in families
    status, text = await api("GET", "metrics", token=EVE_TOKEN)
    assert status == 200, text
    names = {f.name for f in text_string_to_metric_families(text)}
    assert "jupyter_sched_queue_length" in names and "jupyter_sched_team_model_running_gpus" in names
    assert not names & set(ACCOUNTING), names & set(ACCOUNTING)
