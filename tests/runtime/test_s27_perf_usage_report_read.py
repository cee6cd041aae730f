"""s27-perf (red26 R1 leftover): ``GET usage/report`` over a flood of usage rows. Two costs grew with the rows:

* the overlap resolution (hubadmin25 B7) compared each row of a GPU with every row of that GPU accepted before it
  once one pair overlapped — quadratic in the GPU's rows (47 of 66 s of a 20,000-row report with overlaps, on
  this loaded box); it now looks only at the rows still held when the row starts, with the same answer;
* each row's two timestamps were parsed twice (the soundness check, then the decode); now once.

No timing: the rows looked at and the parses are counted; the answers are compared with the old path's
(``benchmarks/usage_rows_bench.py`` keeps it as the baseline it measures)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest import mock

import pytest
import sqlalchemy as sa

from benchmarks.usage_rows_bench import old_decoded_row, old_resolve_overlaps
from jupyter_sched.accounting import overlaps, report
from jupyter_sched.accounting.store_report import usage_report_for
from jupyter_sched.store import Store, schema, sqlite_url
from jupyter_sched.store import store as store_module
from jupyter_sched.store.codec import ts
from jupyter_sched.store.store import StoreTx
from tests.runtime.builders import T0

NOW = T0 + timedelta(days=10)
PEOPLE = (("ana", "vision"), ("bob", "nlp"), ("cy", "vision"))


def mixed_store(url: str, rows: int) -> Store:
    """``rows`` closed usage rows of 3 users in 2 teams on 4 GPUs of 2 models over 8 days (short rows, many
    overlapping on their GPU), a few open ones, and rows that start before / end after the windows asked."""
    store = Store(url)
    rng = random.Random(27)
    batch: list[dict[str, Any]] = []
    for i in range(rows):
        user, team = PEOPLE[i % 3]
        start = T0 + timedelta(seconds=rng.uniform(0, 8 * 86400))
        end = None if i % 97 == 0 else start + timedelta(seconds=rng.choice((0.3, 30, 600, 7200)))
        batch.append({"job_id": f"j-{i // 2}", "attempt": i % 2, "user": user, "team": team,
                      "kind": "training" if i % 5 else "inference", "gpu_uuid": f"GPU-{i % 4}",
                      "gpu_model": "A100" if i % 4 < 2 else "H100", "share": 1.0 if i % 3 else 0.5,
                      "started_at": ts(start), "ended_at": ts(end)})
    with store.transaction() as tx:
        tx.conn.execute(schema.usage.insert(), batch)
    return store


def _report(store: Store, *, user: str | None, by: tuple[str, ...], since: datetime, until: datetime,
            old: bool = False) -> list[dict[str, Any]]:
    service = SimpleNamespace(store=store, clock=SimpleNamespace(now=lambda: NOW))
    with mock.patch.object(report, "resolve_overlaps", old_resolve_overlaps if old else report.resolve_overlaps), \
            mock.patch.object(StoreTx, "_usage_decoded_row", old_decoded_row if old else StoreTx._usage_decoded_row):
        return usage_report_for(service, user=user, by=by, since=since, until=until, now=NOW, period="day",
                                prices={"A100": 2.0, "H100": 4.5}, cost_unit="USD")


def test_s27_perf_report_overlaps_look_only_at_rows_still_held(tmp_path: Path) -> None:
    store = mixed_store(sqlite_url(tmp_path / "s.sqlite"), 2000)
    looked: list[int] = []
    fit = overlaps._fit

    def counted(iv: Any, end: datetime, accepted: Any) -> Any:
        looked.append(len(accepted))
        return fit(iv, end, accepted)

    with mock.patch.object(overlaps, "_fit", counted):
        rows = _report(store, user=None, by=("user",), since=T0, until=NOW)
    assert any("overlaps job" in w for row in rows for w in row.get("warnings", []))  # the path was taken
    assert len(looked) >= 100 and max(looked) <= 40, max(looked)  # was every earlier row of the GPU: up to ~500
    store.close()


@pytest.mark.parametrize("by", [("user",), ("team",), ("gpu_model",), ("job_id",), ("kind",), ("team", "period"),
                                ("user", "gpu_model", "period")])
def test_s27_perf_report_answers_as_before(tmp_path: Path, by: tuple[str, ...]) -> None:
    store = mixed_store(sqlite_url(tmp_path / "s.sqlite"), 1500)
    # windows cut mid-row (a row over the window's start counts only its overlap), everyone's and one user's
    for user, since, until in ((None, T0 + timedelta(days=2, seconds=17.25), T0 + timedelta(days=6, hours=3)),
                               ("bob", T0 + timedelta(hours=30, seconds=0.1), NOW), (None, T0, NOW)):
        new = _report(store, user=user, by=by, since=since, until=until)
        assert new == _report(store, user=user, by=by, since=since, until=until, old=True)
        assert new and sum(r["allocated_gpu_seconds"] for r in new) > 0
    store.close()


def test_s27_perf_usage_rows_parse_each_timestamp_once(tmp_path: Path) -> None:
    store = mixed_store(sqlite_url(tmp_path / "s.sqlite"), 300)
    with store.engine.begin() as conn:  # two unreadable rows: still skipped and quarantined, in the same words
        conn.execute(sa.text("UPDATE usage SET ended_at = 'yesterday' WHERE id = 5"))
        conn.execute(sa.text("UPDATE usage SET share = 1.5 WHERE id = 6"))
    parse = store_module.parse_ts
    calls: list[str] = []

    def counted(value: str | None) -> datetime | None:
        calls.append(str(value))
        return parse(value)

    with mock.patch.object(store_module, "parse_ts", counted), \
            mock.patch("jupyter_sched.store.quarantine.parse_ts", counted):
        rows = store.usage_rows()
    assert len(rows) == 298
    assert len(calls) <= 2 * 300 + 4, len(calls)  # was 4 a row: the check parsed both, the decode again
    said = {q.key: q.error for q in store.quarantined(table="usage")}
    assert said["5"] == "usage row 5 (job j-2 attempt 0 GPU GPU-0): ended_at 'yesterday' is unreadable (truncated or " \
                        "not an ISO 8601 UTC time)"
    assert said["6"] == "usage row 6 (job j-2 attempt 1 GPU GPU-1) has share 1.5 GPUs (must be in (0, 1])"
    store.close()
