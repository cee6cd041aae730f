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

from .conftest import BOSS_TOKEN, EVE_TOKEN, TokenPerUserIdentityProvider, server_config, wait_for

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


async def test_s36_edges_usage_counter_never_goes_down_when_an_admin_corrects_an_end(sched_app: Any, api: Any) -> None:
    """s36-edges (closing note 35): correcting a claimed end took GPU-seconds off ``…_gpu_seconds_total``, a counter
    going down, which Prometheus reads as a reset (``increase()`` counts the whole total again). Now the amount moves
    into ``…_gpu_seconds_corrected_total``: both only grow, and their difference is the corrected usage. A job as the
    pre-bound engine settled it (its owner's exit.json claiming an end half a year ahead) is written into the
    server's store; the admin corrects it over REST and the scrapes are the server's text exposition."""
    from dataclasses import replace
    from datetime import datetime, timedelta, timezone

    from jupyter_sched.model import JobState
    from jupyter_sched.store import JobRecord
    from jupyter_sched.store.claimed_ends import CLAIM_MARK
    from tests.runtime.builders import make_job

    now = datetime.now(timezone.utc)
    start, settled = now - timedelta(hours=3), now - timedelta(hours=3) + timedelta(seconds=92)
    job = make_job("s36-edges-claim", user="ivan", gpus=2, state=JobState.SUCCEEDED, submitted_at=start)
    job = replace(job, started_at=start, finished_at=now + timedelta(days=180), attempts=1,
                  message=f"exited with code 0 {CLAIM_MARK}")
    with sched_app.services.store.transaction(now=settled) as tx:
        tx.insert_job(JobRecord(job=job))
        tx.open_usage(job_id=job.id, attempt=1, user="ivan", team=job.spec.team, kind="training",
                      gpus=[("GPU-s36-0", "S36-GPU", 1.0), ("GPU-s36-1", "S36-GPU", 1.0)], started_at=start)
        tx.close_usage(job.id, job.finished_at)
        tx.add_event(actor="scheduler", action="succeeded", job_id=job.id, user="ivan", message=job.message, at=settled)
    key = (job.spec.team, "S36-GPU")

    async def scrape() -> dict[str, dict[tuple[str, str], float]]:
        status, text = await api("GET", "metrics", token=BOSS_TOKEN)
        assert status == 200, text
        out: dict[str, dict[tuple[str, str], float]] = {}
        for family in text_string_to_metric_families(text):
            for s in family.samples:
                if "team" in s.labels and "model" in s.labels:
                    out.setdefault(s.name, {})[(s.labels["team"], s.labels["model"])] = s.value
        return out

    before = (await scrape())["jupyter_sched_team_gpu_seconds_total"][key]
    assert before > 2 * 3 * 3600 - 60  # the forged end charged so far: up to the scrape
    status, done = await api("POST", f"jobs/{job.id}/end", {"reason": "claimed while the service was down"},
                             token=BOSS_TOKEN)
    assert status == 200, done
    assert abs(done["gpu_hours_after"] * 3600 - 2 * 92) < 1.0  # the suggested end: when it was settled

    async def corrected() -> dict[str, dict[tuple[str, str], float]] | None:
        seen = await scrape()  # a scrape's text is served again for 1 s (SchedRegistry): wait for the new one
        return seen if key in seen.get("jupyter_sched_team_gpu_seconds_corrected_total", {}) else None

    after = await wait_for(corrected)
    usage = after["jupyter_sched_team_gpu_seconds_total"][key]
    back = after["jupyter_sched_team_gpu_seconds_corrected_total"][key]
    assert usage >= before, (usage, before)  # never down: what was charged up to the correction
    assert back >= before - 2 * 92, (back, before)  # what the correction took back of it
    assert abs((usage - back) - 2 * 92) < 1.0, (usage, back)  # the difference: the corrected usage, 2 GPUs x 92 s
