"""hubadmin25 B9 over HTTP: an admin's ``GET metrics`` has the accounting series (the usage counter per team
and model, the team budgets' standing); an ordinary user's scrape of the same route has none of them
(a team's total is admin-only, as ``GET usage/report?all``), and both have the public families."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jupyter_server.auth import User
from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.extension.metrics_accounting import METRICS_SCOPE

from .conftest import BOSS_TOKEN, EVE_TOKEN, TokenPerUserIdentityProvider, server_config

SCRAPER_TOKEN = "scraper-token-0000"


class ScopedTokens(TokenPerUserIdentityProvider):
    """The test server's tokens, plus a scraper's whose user carries the metrics scope (as a hub token's
    :class:`~jupyter_sched.hub.identity.HubUser` carries its scopes)."""

    async def get_user_token(self, handler: Any) -> User | None:
        if self.get_token(handler) == SCRAPER_TOKEN:
            user = User(username="prometheus", name="prometheus")
            user.scopes = frozenset({METRICS_SCOPE})  # type: ignore[attr-defined]
            return user
        return await super().get_user_token(handler)


@pytest.fixture
def jp_server_config(tmp_path: Path) -> dict[str, Any]:
    config = server_config(tmp_path)
    config["ServerApp"]["identity_provider_class"] = ScopedTokens
    return config

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


async def test_hubadmin25_b9_a_token_with_the_metrics_scope_reads_the_accounting_series(api: Any) -> None:
    status, text = await api("GET", "metrics", token=SCRAPER_TOKEN)
    assert status == 200, text
    names = {f.name for f in text_string_to_metric_families(text)}
    assert "jupyter_sched_team_gpu_seconds" in names and "jupyter_sched_queue_length" in names, names
    status, _ = await api("GET", "usage/report", token=SCRAPER_TOKEN, params={"all": "true"})
    assert status == 403  # the scope reads the metrics, nothing an admin reads elsewhere
