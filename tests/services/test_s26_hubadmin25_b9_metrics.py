"""hubadmin25 B9: ``GET metrics`` for a month's Grafana board. The team gauges summed two GPU models
(``jupyter_sched_team_guaranteed_gpus{team="nlp"} 3`` = 2 A100 + 1 L40S), and there was no usage
counter, no budget, no wait and no per-node health series. Now: per team and model
(``jupyter_sched_team_model_running_gpus``, ``jupyter_sched_team_line_*_gpus{team,model}``), waits
per priority class and team, ``jupyter_sched_node_gpus{node,model,state}``; and for an admin's (or a
``custom:jupyter-sched:metrics`` scraper's) scrape only, ``jupyter_sched_team_gpu_seconds_total{team,model}``
from the accounting and the team budgets' standing.

Real parts: the services on a SQLite store with hubadmin25's two-model static inventory, the engine's
decisions (leases hold GPUs, no process), the registries of the extension and prometheus_client's parser.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.engine import ManualClock
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.extension.events import EventHub
from jupyter_sched.extension.metrics import make_registry
from jupyter_sched.extension.metrics_accounting import make_admin_registry
from jupyter_sched.inventory.static import StaticInventory
from jupyter_sched.model import Budget, Quota, QuotaSet
from jupyter_sched.services import Services
from jupyter_sched.services.models import SubmitJobRequest
from jupyter_sched.store import Store, sqlite_url

A100, L40S = "A100-80GB", "L40S"
T0 = datetime(2026, 12, 5, 15, 0, tzinfo=timezone.utc)


def _gpu(uuid: str, model: str, **extra: Any) -> dict[str, Any]:
    return {"uuid": uuid, "model": model, "memory": "80GiB" if model == A100 else "48GiB", **extra}


@pytest.fixture
def services(tmp_path: Path) -> Iterator[Services]:
    static = tmp_path / "inventory.yaml"  # hubadmin25's hub: node-a 4 A100, node-b 4 L40S with GPU-b0 out (RMA)
    static.write_text(yaml.safe_dump({"nodes": [
        {"name": "node-a", "gpus": [_gpu(f"GPU-a{i}", A100) for i in range(4)]},
        {"name": "node-b", "gpus": [_gpu("GPU-b0", L40S, healthy=False, health_reason="ECC errors, RMA")]
         + [_gpu(f"GPU-b{i}", L40S) for i in range(1, 4)]}]}))
    clock = ManualClock(T0)
    svc = Services(store=Store(sqlite_url(tmp_path / "sched.sqlite"), now=clock.now), inventory=StaticInventory(static),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    with svc.store.transaction() as tx:
        tx.replace_quota_set(QuotaSet(quotas=(
            Quota(team="nlp", gpu_model=A100, guaranteed=2, borrowing_limit=2),
            Quota(team="nlp", gpu_model=L40S, guaranteed=1, borrowing_limit=1),
            Quota(team="vision", guaranteed=1, borrowing_limit=None)),
            budgets=(Budget(team="nlp", gpu_hours=400.0, period="month"),
                     Budget(team="nlp", user="bo", gpu_hours=5.0, period="month"))))
    yield svc
    svc.store.close()


def _samples(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out.setdefault(s.name, []).append((dict(s.labels), s.value))
    return out


def _by(samples: dict[str, list[tuple[dict[str, str], float]]], name: str, *labels: str) -> dict[tuple[str, ...], float]:
    return {tuple(lab[k] for k in labels): v for lab, v in samples.get(name, [])}


def _hold(svc: Services) -> None:
    """nlp: 2 A100 + 2 L40S (1 above its L40S guarantee); vision 1 A100; one nlp job waits."""
    bo = svc.caller("bo", admin=False, groups=("nlp",))
    ana = svc.caller("ana", admin=False, groups=("vision",))
    svc.leases.request(bo, SubmitJobRequest(gpus=2, gpu_models=[A100], kernel_id="k-1", team="nlp"))
    svc.leases.request(bo, SubmitJobRequest(gpus=2, gpu_models=[L40S], kernel_id="k-2", team="nlp"))
    svc.leases.request(ana, SubmitJobRequest(gpus=1, gpu_models=[A100], kernel_id="k-3", team="vision"))
    svc.engine.tick()
    svc.jobs.submit(bo, SubmitJobRequest(gpus=2, gpu_models=[L40S], team="nlp", priority="low", command=["true"]))
    svc.engine.tick()


def test_hubadmin25_b9_team_gauges_split_by_gpu_model_with_waits_and_node_health(services: Services) -> None:
    _hold(services)
    services.clock.advance(600)
    seen = _samples(generate_latest(make_registry(services, EventHub(16))).decode())

    assert _by(seen, "jupyter_sched_team_model_running_gpus", "team", "model") == {
        ("nlp", A100): 2.0, ("nlp", L40S): 2.0, ("vision", A100): 1.0}
    # per line, by the ledger's rule: a model's line counts that model, vision's "*" line every model
    assert _by(seen, "jupyter_sched_team_line_guaranteed_gpus", "team", "model") == {
        ("nlp", A100): 2.0, ("nlp", L40S): 1.0, ("vision", "*"): 1.0}
    assert _by(seen, "jupyter_sched_team_line_borrowing_limit_gpus", "team", "model") == {
        ("nlp", A100): 2.0, ("nlp", L40S): 1.0}, "an unlimited line has no limit sample"
    assert _by(seen, "jupyter_sched_team_line_running_gpus", "team", "model") == {
        ("nlp", A100): 2.0, ("nlp", L40S): 2.0, ("vision", "*"): 1.0}
    assert _by(seen, "jupyter_sched_team_line_borrowed_gpus", "team", "model") == {
        ("nlp", A100): 0.0, ("nlp", L40S): 1.0, ("vision", "*"): 0.0}
    # the summed gauge (kept for old boards) is the sum of the split one
    assert _by(seen, "jupyter_sched_team_running_gpus", "team")[("nlp",)] == 4.0

    # waits: one low job of 2 GPUs submitted 10 minutes ago
    assert _by(seen, "jupyter_sched_pending_gpus", "priority") == {("high",): 0.0, ("normal",): 0.0, ("low",): 2.0}
    assert _by(seen, "jupyter_sched_oldest_wait_seconds", "priority") == {
        ("high",): 0.0, ("normal",): 0.0, ("low",): 600.0}
    assert _by(seen, "jupyter_sched_team_oldest_wait_seconds", "team") == {("nlp",): 600.0}

    # health per node: GPU-b0 marked unhealthy; every state has a sample
    health = _by(seen, "jupyter_sched_node_gpus", "node", "model", "state")
    assert health[("node-b", L40S, "unhealthy")] == 1.0 and health[("node-b", L40S, "healthy")] == 3.0
    assert health[("node-a", A100, "healthy")] == 4.0 and health[("node-a", A100, "unhealthy")] == 0.0
    assert len(health) == 8

    # no accounting series for an ordinary scrape (a team's total is admin-only: red team 15, R14)
    assert not any(name.startswith(("jupyter_sched_team_gpu_seconds", "jupyter_sched_team_budget")) for name in seen)
    # labels: team, model, node, state, priority — never a user, never a string a user typed
    for name, rows in seen.items():
        for labels, _ in rows:
            assert "user" not in labels, name
            if "model" in labels:
                assert labels["model"] in (A100, L40S, "*"), (name, labels)


def test_hubadmin25_b9_usage_counter_and_budget_standing_for_an_admin_scrape(services: Services) -> None:
    _hold(services)
    public = make_registry(services, EventHub(16))
    admin = make_admin_registry(public, services)
    services.clock.advance(3600)
    first = _samples(generate_latest(admin).decode())
    usage = _by(first, "jupyter_sched_team_gpu_seconds_total", "team", "model")
    assert usage == {("nlp", A100): 7200.0, ("nlp", L40S): 7200.0, ("vision", A100): 3600.0}, usage
    # the admin's scrape has every public family too
    assert _by(first, "jupyter_sched_team_model_running_gpus", "team", "model")[("nlp", L40S)] == 2.0
    # a team budget only (bo's own budget would label a user)
    assert _by(first, "jupyter_sched_team_budget_gpu_hours", "team", "period") == {("nlp", "month"): 400.0}
    assert _by(first, "jupyter_sched_team_budget_used_gpu_hours", "team", "period") == {("nlp", "month"): 4.0}
    assert _by(first, "jupyter_sched_team_budget_resets_timestamp_seconds", "team", "period") == {
        ("nlp", "month"): datetime(2027, 1, 1, tzinfo=timezone.utc).timestamp()}

    # monotonic: ending the leases closes their usage; later scrapes never go down, and grow with running work
    services.clock.advance(1800)
    services.leases.release_kernel("k-3", reason="kernel shut down")  # vision's lease ends
    services.engine.tick()
    services.clock.advance(3600)
    later = _by(_samples(generate_latest(admin).decode()), "jupyter_sched_team_gpu_seconds_total", "team", "model")
    assert later == {("nlp", A100): 7200.0 + 2 * 5400, ("nlp", L40S): 7200.0 + 2 * 5400,
                     ("vision", A100): 3600.0 + 1800}, later


def test_hubadmin25_b9_store_sums_gpu_seconds_per_team_and_model_on_both_databases(db_url: str) -> None:
    store = Store(db_url, now=lambda: T0)
    try:
        with store.transaction() as tx:
            tx.open_usage(job_id="j-1", attempt=1, user="bo", team="nlp", kind="training",
                          gpus=[("GPU-a0", A100, 1.0), ("GPU-b1", L40S, 0.5)], started_at=T0)
            tx.open_usage(job_id="j-2", attempt=1, user="ana", team="vision", kind="training",
                          gpus=[("GPU-a1", A100, 1.0)], started_at=T0)
            tx.close_usage("j-2", T0.replace(minute=30))
        sums = store.gpu_seconds_by_team_model(until=T0.replace(hour=16))
        # j-1's half of GPU-b1, alone there, is charged the whole L40S (red40 R1)
        assert sums == {("nlp", A100): 3600.0, ("nlp", L40S): 3600.0, ("vision", A100): 1800.0}, sums
    finally:
        store.close()
