"""verify27 V7 (/work/coord/notes/verify27.md): at 300,000 usage rows a non-admin's ``GET
telemetry/history?gpu=…&since=<30 days ago>`` took over 2 minutes. The readers (who held the GPU
when) were every usage row of the window, of every GPU, decoded in Python, and every step of the
answer asked about every one of them: O(steps x rows). Now the database merges the rows of the
GPU asked into spans, the caller's and the others' (``StoreTx.usage_spans``: gaps and islands),
the withheld time is worked out once as disjoint spans, and each step is a binary search; only the
drawn range is read (a month at one-minute steps draws its newest week). Also here: the stored
minutes of that week were left out — the read took the OLDEST 10,000 minutes of the month.
SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from benchmarks.per_request_bench import OldReaders  # the rule as it was: the reference answer
from jupyter_sched.engine import ManualClock
from jupyter_sched.engine.telemetry import TelemetryMonitor
from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.inventory.simulated import SimulatedInventory
from jupyter_sched.services import Services
from jupyter_sched.services.models import GetTelemetryHistoryRequest
from jupyter_sched.services.visibility import WITHHELD_NOTE, GpuReaders, Holding
from jupyter_sched.store import Store, StoreTx, schema
from jupyter_sched.store.codec import ts

NOW = datetime(2026, 12, 5, 12, 0, 30, tzinfo=timezone.utc)
MONTH = NOW - timedelta(days=30)


class _NoSamples:
    """A collector that never samples: the history is the stored minutes."""

    def collect(self, now: datetime) -> list[Any]:
        return []


@pytest.fixture
def services(db_url: str, tmp_path: Path) -> Iterator[Services]:
    clock = ManualClock(NOW)
    svc = Services(store=Store(db_url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                   executor=LocalExecutor(tmp_path / "jobs"), clock=clock)
    svc.telemetry.monitor = TelemetryMonitor(_NoSamples(), clock=clock)
    yield svc
    svc.store.close()


def _gpus(svc: Services) -> list[str]:
    return [g.uuid for g in svc.ctx.inventory().gpus()]


def _usage(tx: StoreTx, rows: Iterable[tuple[str, str, datetime, datetime | None]], *, start_id: int = 0,
           raw: dict[int, dict[str, Any]] | None = None) -> None:
    """Insert ``(user, gpu, start, end)`` rows (``raw``: columns set as given, by row number)."""
    values = []
    for i, (user, gpu, start, end) in enumerate(rows):
        values.append({"job_id": f"j-{start_id + i}", "attempt": 1, "user": user, "team": "t", "kind": "training",
                       "gpu_uuid": gpu, "gpu_model": "A100", "share": 1.0, "started_at": ts(start),
                       "ended_at": ts(end), **(raw or {}).get(i, {})})
    tx.conn.execute(schema.usage.insert(), values)


def _seed_month(svc: Services) -> None:
    """mal: 6,000 rows on GPU 0 over the month in chains of 20 overlapping rows (300 spans), some
    open; eve: 60 rows of 5 min on GPU 0 (some inside mal's chains); bo: 3,000 rows on GPU 1."""
    rng = random.Random(7)
    gpu0, gpu1 = _gpus(svc)[:2]
    rows: list[tuple[str, str, datetime, datetime | None]] = []
    for chain in range(300):
        at = MONTH + timedelta(seconds=chain * 8600 + rng.randrange(0, 600))
        for _ in range(20):
            rows.append(("mal", gpu0, at, at + timedelta(seconds=rng.randrange(20, 90))))
            at += timedelta(seconds=rng.randrange(5, 19))
    rows.append(("mal", gpu0, NOW - timedelta(hours=3), None))  # open: still his
    for k in range(60):
        at = MONTH + timedelta(minutes=k * 719 + rng.randrange(0, 300))
        rows.append(("eve", gpu0, at, at + timedelta(minutes=5)))
    rows.append(("eve", gpu0, NOW - timedelta(hours=1), None))
    rows += [("bo", gpu1, MONTH + timedelta(seconds=k * 860), MONTH + timedelta(seconds=k * 860 + 30))
             for k in range(3000)]
    with svc.store.transaction() as tx:
        _usage(tx, rows)


def test_verify27_v7_gpu_history_reads_merged_spans_not_rows(services: Services,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    _seed_month(services)
    gpu0 = _gpus(services)[0]
    mal = services.caller("mal", admin=False)
    request = GetTelemetryHistoryRequest(gpu=gpu0, since=MONTH.isoformat())
    # the reference: the old readers over the rows of the drawn week, asked at every step
    rows = services.store.usage_rows(since=NOW - timedelta(days=8), until=NOW + timedelta(seconds=1))
    old = OldReaders("mal", {gpu0: [(r.user, r.started_at, r.ended_at) for r in rows if r.gpu_uuid == gpu0]})

    def no_rows(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("telemetry/history read the usage rows in Python")

    handed: list[int] = []
    made = GpuReaders.__init__

    def counted(self: GpuReaders, user: str | None, holdings: Any) -> None:
        made(self, user, holdings)
        handed.append(sum(len(spans) for spans in self.holdings.values()))

    monkeypatch.setattr(StoreTx, "usage_rows", no_rows)
    monkeypatch.setattr(GpuReaders, "__init__", counted)
    answer = services.telemetry.history(mal, request).to_wire()

    points = answer["points"]
    assert len(points) == 7 * 24 * 60  # a month at one-minute steps draws its newest week
    assert handed and max(handed) <= 150, handed  # mal's ~70 chains of that week and eve's rows, merged; was 9,000+
    expected = [WITHHELD_NOTE if old.hides([gpu0], t, t + timedelta(minutes=1)) else "no telemetry"
                for t in (datetime.fromisoformat(p["t"]) for p in points)]
    assert [p["note"] for p in points] == expected
    assert expected.count(WITHHELD_NOTE) > 60  # eve's rows of the week, and her open one for the last hour


def test_verify27_v7_a_month_of_history_draws_its_newest_week_with_its_stored_minutes(services: Services) -> None:
    gpu0 = _gpus(services)[0]
    newest = NOW.replace(second=0) - timedelta(minutes=7 * 24 * 60 - 1)
    minutes = [MONTH + timedelta(minutes=m) for m in range(10_100)]  # the month's first week: not drawn
    minutes += [newest + timedelta(minutes=m) for m in range(7 * 24 * 60)]
    with services.store.transaction() as tx:
        tx.add_rollups([{"gpu_uuid": gpu0, "mig_instance": None, "minute": m, "samples": 60, "valid_samples": 60,
                         "utilization_avg": 50.0, "memory_used_max_mib": 1000.0} for m in minutes])
    admin = services.caller("root", admin=True)
    answer = services.telemetry.history(admin, GetTelemetryHistoryRequest(gpu=gpu0, since=MONTH.isoformat()))
    points = answer.to_wire()["points"]
    valid = [p for p in points if p["validity"] == "valid"]
    # every point of the drawn week is a stored minute; was none (the oldest 10,000 of the month were read)
    assert len(points) == len(valid) == 7 * 24 * 60, (len(valid), points[0], points[-1])
    assert {p["utilization_pct"] for p in valid} == {50.0}


def _union(spans: list[tuple[datetime, datetime | None]]) -> list[tuple[datetime, datetime | None]]:
    far = datetime.max.replace(tzinfo=timezone.utc)
    out: list[tuple[datetime, datetime]] = []
    for s, e in sorted((s, far if e is None else e) for s, e in spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return [(s, None if e == far else e) for s, e in out]


def test_verify27_v7_usage_spans_are_the_union_of_the_rows_read(services: Services) -> None:
    """The database's spans equal the union, per GPU and owner, of what ``usage_rows`` reads: touching
    and overlapping rows, open rows, rows around the window's ends, MIG uuids; quarantined rows hold nothing."""
    rng = random.Random(11)
    gpus = [*_gpus(services)[:2], "MIG-x-1"]
    base = NOW - timedelta(days=2)
    rows: list[tuple[str, str, datetime, datetime | None]] = []
    for _ in range(1500):
        at = base + timedelta(seconds=rng.randrange(0, 2 * 86400))
        end = None if rng.random() < 0.01 else at + timedelta(seconds=rng.choice([0, 1, 30, 90, 600, 5000]))
        rows.append((rng.choice(["mal", "eve", "bo"]), rng.choice(gpus), at, end))
    rows.append(("eve", gpus[0], base + timedelta(hours=3), base + timedelta(hours=4)))  # touching:
    rows.append(("eve", gpus[0], base + timedelta(hours=4), base + timedelta(hours=5)))  # one span
    raw = {0: {"started_at": "2026-12-0"}, 1: {"share": 1.5}, 2: {"ended_at": ts(base - timedelta(days=1))}}
    with services.store.transaction() as tx:
        _usage(tx, rows, raw=raw)
    lo, hi = base + timedelta(hours=10), base + timedelta(hours=30)
    got = services.store.usage_spans(since=lo, until=hi, user="eve")
    read = services.store.usage_rows(since=lo, until=hi)
    assert len(read) < len(rows) - 100 and {0, 1, 2}.isdisjoint(int(r.job_id[2:]) for r in read)
    want: list[tuple[str, bool, datetime, datetime | None]] = []
    for gpu in sorted(gpus):
        for own in (False, True):
            spans = [(r.started_at, r.ended_at) for r in read if r.gpu_uuid == gpu and (r.user == "eve") == own]
            want += [(gpu, own, s, e) for s, e in _union(spans)]
    assert got == want
    one = services.store.usage_spans(since=lo, until=hi, user="eve", gpu_uuids=[gpus[2]])
    assert one == [w for w in want if w[0] == gpus[2]] and one


def test_verify27_v7_the_readers_rule_is_unchanged() -> None:
    """The withheld spans answer every question as the old rule did: ranges, instants, now; MIG names."""
    rng = random.Random(5)
    t0 = datetime(2026, 12, 1, tzinfo=timezone.utc)

    def at() -> datetime:
        return t0 + timedelta(minutes=rng.randrange(0, 200))

    for _ in range(60):
        holdings: dict[str, list[Holding]] = {}
        for _ in range(rng.randrange(0, 25)):
            start = None if rng.random() < 0.05 else at()
            end = None if rng.random() < 0.15 else (start or t0) + timedelta(minutes=rng.choice([-3, 0, 1, 4, 30]))
            holdings.setdefault(rng.choice(["GPU-a", "MIG-a1"]), []).append((rng.choice(["ann", "cat", "bo"]), start, end))
        new, old = GpuReaders("cat", holdings), OldReaders("cat", holdings)
        for _ in range(80):
            names = rng.choice([["GPU-a"], ["GPU-a", "MIG-a1"], ["MIG-a1", None], ["GPU-b"]])
            lo = at()
            hi = rng.choice([None, lo, lo + timedelta(minutes=rng.randrange(1, 40))])
            question = (names,) if rng.random() < 0.1 else (names, lo, hi)
            assert new.hides(*question) == old.hides(*question), (holdings, question)
