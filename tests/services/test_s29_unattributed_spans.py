"""s29 (s28-perf "NOT done"): the admin's unattributed-GPU report (``GET usage/waste``'s ``unattributed``, case 021)
decoded every usage row of its window in Python (``Store.usage_rows``) and, for each active rollup minute, filtered
EVERY interval of the GPU — O(active minutes x rows of the GPU), the quadratic shape telemetry history's readers had.
Now the database merges the rows into spans per GPU (``Store.usage_spans``) and each minute is a binary search
(:func:`jupyter_sched.accounting.waste.merged_spans`). The answer is the old path's (patched in from
benchmarks/per_request_bench.py), on random rows: overlapping, touching, open, crossing the window's edges,
quarantined ones, a MIG slice — but for the old path's rows of no time at all (a float residue, below)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import sqlalchemy as sa

from benchmarks.per_request_bench import old_unattributed  # the path as it was: the reference answer
from jupyter_sched.accounting import waste
from jupyter_sched.accounting.store_report import unattributed_for
from jupyter_sched.store import Store, StoreTx, schema
from jupyter_sched.store.codec import ts

NOW = datetime(2026, 12, 6, 6, 0, 17, tzinfo=timezone.utc)
GPUS = ["GPU-a", "GPU-b", "GPU-c", "MIG-slice-1"]


@pytest.fixture
def store(db_url: str) -> Iterator[Store]:
    made = Store(db_url)
    try:
        yield made
    finally:
        made.close()


def _seed(store: Store, seed: int) -> None:
    rng = random.Random(seed)
    day = NOW - timedelta(days=1)
    rows: list[dict[str, Any]] = []
    for i in range(900):
        gpu = GPUS[i % 3] if i % 50 else GPUS[3]
        start = day - timedelta(hours=2) + timedelta(seconds=rng.uniform(0, 28 * 3600))
        length = rng.choice([0.3, 5.0, 60.0, 600.0, 3600.0, rng.uniform(0, 7200)])
        end: datetime | None = start + timedelta(seconds=length)
        if i % 97 == 0:
            end = None  # still held
        elif i % 31 == 0 and rows:
            start = datetime.fromisoformat(str(rows[-1]["ended_at"] or ts(start)))  # touching the row before
            end = start + timedelta(seconds=length)
        rows.append({"job_id": f"j{i // 3}", "attempt": 1, "user": ["amy", "mal", "eve"][i % 3], "team": "vision",
                     "kind": "batch", "gpu_uuid": gpu, "gpu_model": "A100", "share": [1.0, 0.5][i % 2],
                     "started_at": ts(start), "ended_at": None if end is None else ts(end)})
    with store.transaction() as tx:
        tx.conn.execute(schema.usage.insert(), rows)
        ids = [r[0] for r in tx.conn.execute(sa.select(schema.usage.c.id).order_by(schema.usage.c.id).limit(3))]
        tx.conn.execute(schema.usage.update().where(schema.usage.c.id == ids[0]).values(share=7.0))  # quarantined
        tx.conn.execute(schema.usage.update().where(schema.usage.c.id == ids[1]).values(started_at="2026-13-99"))
    first = (day - timedelta(hours=1)).replace(second=0, microsecond=0)
    store.add_rollups([{"gpu_uuid": gpu, "minute": first + timedelta(minutes=m), "samples": 12,
                        "activity_max": rng.choice([0.0, 3.0, 40.0, 90.0]), "utilization_avg": 10.0,
                        "processes_max": rng.randint(0, 3)}
                       for m in range(26 * 60) for gpu in GPUS[:3] if rng.random() < 0.9], node="n1")
    store.add_rollups([{"gpu_uuid": "GPU-d", "mig_instance": 1, "minute": first + timedelta(minutes=m),
                        "samples": 12, "activity_max": 70.0} for m in range(0, 26 * 60, 3)], node="n1")


WINDOWS = [(None, None), (NOW - timedelta(hours=20), NOW - timedelta(hours=3)),
           (NOW - timedelta(days=1, hours=1), NOW)]


@pytest.mark.parametrize("seed", [1, 2])
def test_s29_unattributed_reads_merged_spans_and_answers_as_before(store: Store, seed: int,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(store, seed)
    mig = {("GPU-d", 1): "MIG-slice-1"}
    old = {}
    for since, until in WINDOWS:
        with old_unattributed():
            old[since, until] = unattributed_for(store, now=NOW, since=since, until=until, mig_uuids=mig)
    assert any(old.values())  # the seed has unattributed minutes

    def no_rows(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("usage rows decoded in Python")
    monkeypatch.setattr(StoreTx, "usage_rows", no_rows)
    asked: list[int] = []
    real = waste._uncovered

    def counted(start: datetime, end: datetime, held: list[tuple[datetime, datetime]]) -> float:
        asked.append(len(held))
        return real(start, end, held)
    monkeypatch.setattr(waste, "_uncovered", counted)
    for (since, until), was in old.items():
        # the old sum of a fully covered minute's pieces could leave a float residue (1e-14 s): a GPU "busy while
        # nobody held it" for no time at all; the merged spans cover such a minute whole (0 left, no row)
        before = [r for r in was if r.active_gpu_hours * 3600 >= 1e-6]
        new = unattributed_for(store, now=NOW, since=since, until=until, mig_uuids=mig)
        assert [r.to_dict() for r in new] == [r.to_dict() for r in before], (since, until)
        for a, b in zip(new, before, strict=True):
            assert abs(a.active_gpu_hours - b.active_gpu_hours) < 1e-9
    assert asked and max(asked) < 300  # merged spans of one GPU (was: its every row, ~300 per GPU here)


def test_s29_merged_spans_are_the_union() -> None:
    t = NOW
    held = [("g", t, t + timedelta(seconds=10)), ("g", t + timedelta(seconds=5), t + timedelta(seconds=8)),
            ("g", t + timedelta(seconds=10), t + timedelta(seconds=12)), ("g", t + timedelta(seconds=20),
                                                                          t + timedelta(seconds=30)),
            ("h", t, t), ("h", t + timedelta(seconds=1), t + timedelta(seconds=2))]
    assert waste.merged_spans(held) == {"g": [(t, t + timedelta(seconds=12)),
                                              (t + timedelta(seconds=20), t + timedelta(seconds=30))],
                                        "h": [(t + timedelta(seconds=1), t + timedelta(seconds=2))]}
    spans = waste.merged_spans(held)["g"]
    assert waste._uncovered(t - timedelta(seconds=5), t + timedelta(seconds=25), spans) == 5 + 8 + 0
    assert waste._uncovered(t + timedelta(seconds=12), t + timedelta(seconds=20), spans) == 8
    assert waste._uncovered(t + timedelta(seconds=40), t + timedelta(seconds=50), spans) == 10
