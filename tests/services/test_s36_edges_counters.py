"""s36-edges (closing note 35): every ``*_total`` of ``GET metrics`` only grows (a restart excepted, a reset
Prometheus handles). The usage counter went down twice over: an admin's end correction took GPU-seconds off it
(tests/web/test_s26_hubadmin25_b9_metrics_scrape.py, over HTTP), and an end the engine records when it notices it,
at the job's own earlier end, took back what a scrape between the two had counted. What corrections took back is
summed from their audit records, which retention therefore keeps.

Real parts: a SQLite store, the :class:`AccountingCollector` in a prometheus_client registry read through its text
exposition, retention's own ``prune``.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from jupyter_sched.engine import ManualClock
from jupyter_sched.extension.metrics_accounting import AccountingCollector
from jupyter_sched.store import Store, sqlite_url
from jupyter_sched.store.claimed_ends import END_CORRECTED_ACTION, taken_back
from jupyter_sched.store.retention import RetentionPolicy, prune

T0 = datetime(2026, 12, 7, 4, 0, tzinfo=timezone.utc)


def _scrape(registry: CollectorRegistry, name: str) -> dict[tuple[str, str], float]:
    out: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(generate_latest(registry).decode()):
        for s in family.samples:
            if s.name == name:
                out[(s.labels["team"], s.labels["model"])] = s.value
    return out


def test_s36_edges_usage_counter_never_below_an_earlier_scrape_when_an_end_is_recorded_earlier(tmp_path: Path) -> None:
    clock = ManualClock(T0)
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=clock.now)
    try:
        registry = CollectorRegistry()
        registry.register(AccountingCollector(SimpleNamespace(store=store, clock=clock)))
        with store.transaction() as tx:
            tx.open_usage(job_id="j-1", attempt=1, user="bo", team="nlp", kind="training",
                          gpus=[("GPU-a0", "A100", 1.0)], started_at=T0)
        clock.advance(3600)
        assert _scrape(registry, "jupyter_sched_team_gpu_seconds_total") == {("nlp", "A100"): 3600.0}
        with store.transaction() as tx:  # the job's own end, 30 min before the engine noticed it (and a scrape)
            tx.close_usage("j-1", T0 + timedelta(minutes=30))
        clock.advance(3600)
        assert _scrape(registry, "jupyter_sched_team_gpu_seconds_total") == {("nlp", "A100"): 3600.0}, \
            "a counter below an earlier scrape reads as a reset: increase() would count the whole total again"
        with store.transaction() as tx:  # more work: it grows again from there on, as the store's figure does
            tx.open_usage(job_id="j-2", attempt=1, user="bo", team="nlp", kind="training",
                          gpus=[("GPU-a0", "A100", 1.0)], started_at=clock.now())
        clock.advance(7200)
        assert _scrape(registry, "jupyter_sched_team_gpu_seconds_total") == {("nlp", "A100"): 1800.0 + 7200.0}
    finally:
        store.close()


def test_s36_edges_retention_keeps_end_corrections_so_the_corrected_counter_stays(tmp_path: Path) -> None:
    """A correction recorded before its details said what it took back per model (session 34's records) counts
    from its before, after and time; retention past the audit horizon keeps it (its usage is never pruned)."""
    now = T0 + timedelta(days=400)
    store = Store(sqlite_url(tmp_path / "s.sqlite"), now=lambda: now)
    try:
        start = T0 - timedelta(hours=3)
        with store.transaction() as tx:
            tx.open_usage(job_id="j-old", attempt=1, user="bo", team="nlp", kind="training",
                          gpus=[("GPU-a0", "A100", 1.0), ("GPU-a1", "A100", 1.0)], started_at=start)
            tx.close_usage("j-old", start + timedelta(seconds=92))  # as corrected: the claim was T0 + 180 days
            tx.add_event(actor="doctor:root", action=END_CORRECTED_ACTION, job_id="j-old", user="bo", message="x",
                         details={"team": "nlp", "before": (T0 + timedelta(days=180)).isoformat(),
                                  "after": (start + timedelta(seconds=92)).isoformat(),
                                  "gpu_hours_before": 8641.0, "gpu_hours_after": 0.05}, at=T0)
            tx.add_event(actor="bo", action="submitted", job_id="j-other", user="bo", message="x", at=T0)
        with store.transaction(write=False) as tx:
            # the counter had charged up to the correction (T0): 2 GPUs from start to T0, less the 92 s kept
            assert taken_back(tx) == {("nlp", "A100"): 2 * (3 * 3600.0 - 92)}
        with store.transaction(now=now) as tx:
            report = prune(tx.conn, RetentionPolicy(events_days=365), now=now)
        assert report.events == 1  # the submit record went; the correction stays
        assert [e.action for e in store.list_events()] == [END_CORRECTED_ACTION]
        with store.transaction(write=False) as tx:
            assert taken_back(tx) == {("nlp", "A100"): 2 * (3 * 3600.0 - 92)}
    finally:
        store.close()
