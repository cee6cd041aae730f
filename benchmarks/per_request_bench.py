"""Per-request readers at scale (verify27 V7): a non-admin's ``GET telemetry/history?gpu=…&since=<30 days ago>``
on a store of ``--rows`` usage rows, the old path and the new one in the same run, and whether the answers are equal.

The seed is verify27's shape (red26's ins_usage.sh): ``--rows`` closed 0.3-s intervals of mal over the last 30
days on 4 GPUs, plus eve's (one for each 100 of mal's, 10 minutes each) so that steps are withheld from mal.

- ``history``: ``TelemetryService.history`` as mal, GPU 0, since 30 days ago, one-minute steps (the answer draws
  the newest week: 10,080 points). Old path (patched in for that measurement): the readers of every GPU's usage rows
  of the 30 days decoded in Python (``Store.usage_rows``), and the old rule asking every holding of the GPU at every
  step. New: the rows merged into spans by the database (``Store.usage_spans``), the withheld spans worked out once,
  a binary search a step.

- ``usage``: ``AccountingService.usage`` as mal (``GET usage``, his own, the default 7 days, by user). Old path: every
  billed row of the window decoded in Python (``Store.billed_usage``), then rolled up. New: summed by the database
  (``Store.usage_sums``: exact microseconds per group and share, distinct jobs).

- ``unattributed``: the admin's ``GET usage/waste`` unattributed part (``unattributed_for``, the default 24 h; every
  GPU-minute of the day has a rollup, active on 3 GPUs of 4 — seeded with ``--parts unattributed``). Old path
  (patched in): every usage row of the window decoded in Python (``Store.usage_rows``) and each active minute
  filtering every interval of its GPU (O(minutes x rows)). New (s29): the rows merged into spans per GPU by the
  database (``Store.usage_spans``), a binary search a minute.

Run: ``.venv/bin/python benchmarks/per_request_bench.py [--rows 30000 300000] [--old-up-to 300000]``: wall s and
CPU s (this process) of one call each; the old path only on stores of at most ``--old-up-to`` rows.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.accounting import store_report, waste  # noqa: E402
from jupyter_sched.accounting.usage import UsageSums  # noqa: E402
from jupyter_sched.engine import ManualClock  # noqa: E402
from jupyter_sched.engine.telemetry import TelemetryMonitor  # noqa: E402
from jupyter_sched.executors.local import LocalExecutor  # noqa: E402
from jupyter_sched.inventory.simulated import SimulatedInventory  # noqa: E402
from jupyter_sched.services import Services  # noqa: E402
from jupyter_sched.services.models import GetTelemetryHistoryRequest, GetUsageRequest  # noqa: E402
from jupyter_sched.services.telemetry import TelemetryService  # noqa: E402
from jupyter_sched.store import Store, schema, sqlite_url  # noqa: E402
from jupyter_sched.store.codec import ts  # noqa: E402

NOW = datetime(2026, 12, 5, 12, 0, 30, tzinfo=timezone.utc)
MONTH = NOW - timedelta(days=30)


def seed(path: Path, rows: int) -> str:
    """A SQLite store of ``rows`` closed 0.3-s intervals of mal over 30 days on 4 GPUs, and eve's."""
    url = sqlite_url(path)
    store = Store(url)
    rng = random.Random(28)
    gpus = [f"GPU-sim-vm-{i}" for i in range(4)]
    with store.transaction() as tx:
        batch: list[dict[str, object]] = []
        for i in range(rows + rows // 100):
            user, length = ("mal", 0.3) if i < rows else ("eve", 600.0)
            start = NOW - timedelta(seconds=rng.uniform(1, 30 * 86400))
            batch.append({"job_id": f"j-{i}", "attempt": 1, "user": user, "team": "vision", "kind": "batch",
                          "gpu_uuid": gpus[i % 4], "gpu_model": "A100", "share": 1.0,
                          "started_at": ts(start), "ended_at": ts(start + timedelta(seconds=length))})
            if len(batch) == 5000:
                tx.conn.execute(schema.usage.insert(), batch)
                batch = []
        if batch:
            tx.conn.execute(schema.usage.insert(), batch)
    store.close()
    return url


class _NoSamples:
    def collect(self, now: datetime) -> list[Any]:
        return []


@contextmanager
def services(url: str, tmp: Path) -> Iterator[Services]:
    clock = ManualClock(NOW)
    svc = Services(store=Store(url, now=clock.now), inventory=SimulatedInventory(4, node="vm"),
                   executor=LocalExecutor(tmp / "jobs"), clock=clock)
    svc.telemetry.monitor = TelemetryMonitor(_NoSamples(), clock=clock)
    try:
        yield svc
    finally:
        svc.store.close()


Holding = tuple[str, datetime | None, datetime | None]


class OldReaders:
    """:class:`jupyter_sched.services.visibility.GpuReaders` before verify27 V7: every holding at every question."""

    def __init__(self, user: str | None, holdings: dict[str, list[Holding]]) -> None:
        self.user, self.holdings = user, holdings

    def hides(self, names: Iterable[str | None], start: datetime | None = None, end: datetime | None = None) -> bool:
        if self.user is None:
            return False
        spans = [h for n in dict.fromkeys(names) if n for h in self.holdings.get(n, ())]
        own = [(s, e) for u, s, e in spans if u == self.user]
        for user, s, e in spans:
            if user == self.user:
                continue
            if start is None:
                if e is None and not any(oe is None for _, oe in own):
                    return True
            elif end is None or end <= start:
                inside = (s is None or s <= start) and (e is None or start < e)
                if inside and not any((os is None or os <= start) and (oe is None or start < oe) for os, oe in own):
                    return True
            else:
                lo = start if s is None else max(start, s)
                hi = end if e is None else min(end, e)
                if lo < hi and old_uncovered(lo, hi, own):
                    return True
        return False


def old_uncovered(lo: datetime, hi: datetime, own: list[tuple[datetime | None, datetime | None]]) -> bool:
    cursor = lo
    for s, e in sorted(own, key=lambda span: (span[0] is not None, span[0] or lo)):
        if s is not None and s > cursor:
            return True
        cursor = hi if e is None else max(cursor, e)
        if cursor >= hi:
            return False
    return cursor < hi


def old_readers(self: TelemetryService, caller: Any, since: datetime, until: datetime, inv: Any,
                gpus: Any = None) -> Any:
    """``TelemetryService.readers`` before verify27 V7: every GPU's rows of the whole range asked, decoded in Python."""
    by_uuid = inv.gpu_by_uuid()
    holdings: dict[str, list[Holding]] = {}
    for row in self.ctx.store.usage_rows(since=min(since, MONTH), until=until + timedelta(seconds=1)):
        gpu = by_uuid.get(row.gpu_uuid)
        for name in dict.fromkeys((row.gpu_uuid, gpu.uuid if gpu is not None else row.gpu_uuid)):
            holdings.setdefault(name, []).append((row.user, row.started_at, row.ended_at))
    return OldReaders(caller.user, holdings)


def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, out


def history(svc: Services) -> Any:
    mal = svc.caller("mal", admin=False)
    request = GetTelemetryHistoryRequest(gpu="GPU-sim-vm-0", since=MONTH.isoformat())
    return svc.telemetry.history(mal, request).to_wire()


def usage(svc: Services) -> Any:
    return svc.accounting.usage(svc.caller("mal", admin=False), GetUsageRequest()).to_wire()


def old_usage_sums(self: Store, *, since: datetime, until: datetime, now: datetime, by: Any,
                   user: str | None = None) -> Any:
    """``GET usage``'s read before verify27 V7: every billed row of the window, decoded in Python."""
    return UsageSums(), self.billed_usage(since=since, until=until, user=user)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=[30_000, 300_000])
    parser.add_argument("--old-up-to", type=int, default=300_000, help="run the old path on stores up to this size")
    parser.add_argument("--parts", nargs="+", choices=["history", "usage", "unattributed"],
                        default=["history", "usage"])
    args = parser.parse_args()
    print("telemetry/history?gpu=GPU 0&since=30 days ago, and GET usage, as mal (non-admin); one call each, wall / CPU s")
    with tempfile.TemporaryDirectory(prefix="per_request_bench_") as folder:
        tmp = Path(folder)
        for rows in args.rows:
            url = seed(tmp / f"s{rows}.sqlite", rows)
            if "unattributed" in args.parts:
                seed_rollups(url)
            with services(url, tmp) as svc:
                if "history" in args.parts:
                    history_runs(svc, rows, args.old_up_to)
                if "usage" in args.parts:
                    usage_runs(svc, rows, args.old_up_to)
                if "unattributed" in args.parts:
                    unattributed_runs(svc, rows, args.old_up_to)


def history_runs(svc: Services, rows: int, old_up_to: int) -> None:
    """One history call, new path, then old (on stores up to ``old_up_to`` rows); prints one line."""
    new_wall, new_cpu, new = timed(lambda: history(svc))
    line = f"{rows:,} rows: new {new_wall:.2f} / {new_cpu:.2f} s"
    if rows <= old_up_to:
        with mock.patch.object(TelemetryService, "readers", old_readers):
            old_wall, old_cpu, old = timed(lambda: history(svc))
        withheld = sum(1 for p in new["points"] if p["note"].startswith("withheld"))
        line += (f"; old {old_wall:.2f} / {old_cpu:.2f} s — {old_cpu / max(new_cpu, 1e-9):.0f}x less CPU; "
                 f"same answer: {old == new} ({len(new['points']):,} points, {withheld:,} withheld)")
    print(line, flush=True)


def usage_runs(svc: Services, rows: int, old_up_to: int) -> None:
    """One ``GET usage`` call, new path, then old (on stores up to ``old_up_to`` rows); prints one line."""
    usage(svc)  # each statement built once per shape and process (lru_cache): not this call's cost
    new_wall, new_cpu, new = timed(lambda: usage(svc))
    line = f"  GET usage (mal's 7 days): new {new_wall:.2f} / {new_cpu:.2f} s"
    if rows <= old_up_to:
        with mock.patch.object(Store, "usage_sums", old_usage_sums):
            usage(svc)
            old_wall, old_cpu, old = timed(lambda: usage(svc))
        line += (f"; old {old_wall:.2f} / {old_cpu:.2f} s — {old_cpu / max(new_cpu, 1e-9):.0f}x less CPU; "
                 f"same answer: {old == new} ({new[0]['gpu_seconds']} GPU-s, {new[0]['jobs']:,} jobs)")
    print(line, flush=True)


def seed_rollups(url: str) -> None:
    """A rollup for every GPU-minute of the last day: active (60 %) on GPUs 0-2, idle on GPU 3."""
    store = Store(url)
    start = (NOW - timedelta(days=1)).replace(second=0, microsecond=0)
    store.add_rollups([{"gpu_uuid": f"GPU-sim-vm-{g}", "minute": start + timedelta(minutes=m), "samples": 12,
                        "activity_max": 60.0 if g < 3 else 0.0, "utilization_avg": 60.0 if g < 3 else 0.0}
                       for m in range(24 * 60) for g in range(4)], node="vm")
    store.close()


def old_held_spans(store: Any, *, since: datetime, until: datetime, now: datetime) -> list[tuple[str, datetime, datetime]]:
    """``unattributed_for``'s read before s29: every usage row of the window, decoded in Python."""
    return [(iv.gpu_uuid, iv.started_at, iv.ended_at or now) for iv in store.usage_rows(since=since, until=until)]


def old_merged_spans(held: Iterable[tuple[str, datetime, datetime]]) -> dict[str, list[tuple[datetime, datetime]]]:
    """Before s29: each GPU's intervals as they came (not merged)."""
    by_gpu: dict[str, list[tuple[datetime, datetime]]] = {}
    for gpu, lo, hi in held:
        by_gpu.setdefault(gpu, []).append((lo, hi))
    return by_gpu


def old_seconds_uncovered(start: datetime, end: datetime, held: Iterable[tuple[datetime, datetime]]) -> float:
    """``waste._uncovered`` before s29: every interval of the GPU filtered for each minute."""
    spans = sorted((max(lo, start), min(hi, end)) for lo, hi in held if lo < end and hi > start)
    covered, reach = 0.0, start
    for lo, hi in spans:
        lo = max(lo, reach)
        if hi > lo:
            covered += (hi - lo).total_seconds()
            reach = hi
    return max(0.0, (end - start).total_seconds() - covered)


@contextmanager
def old_unattributed() -> Iterator[None]:
    """The unattributed report's path before s29, patched in."""
    with mock.patch.object(store_report, "held_spans", old_held_spans), \
            mock.patch.object(waste, "merged_spans", old_merged_spans), \
            mock.patch.object(waste, "_uncovered", old_seconds_uncovered):
        yield


def unattributed_runs(svc: Services, rows: int, old_up_to: int) -> None:
    """One ``unattributed_for`` call (the default 24 h), new path, then old; prints one line."""
    def call() -> Any:
        return [r.to_dict() for r in store_report.unattributed_for(svc.store, now=NOW)]
    call()
    new_wall, new_cpu, new = timed(call)
    line = f"  unattributed (24 h): new {new_wall:.2f} / {new_cpu:.2f} s"
    if rows <= old_up_to:
        with old_unattributed():
            old_wall, old_cpu, old = timed(call)
        line += (f"; old {old_wall:.2f} / {old_cpu:.2f} s — {old_cpu / max(new_cpu, 1e-9):.0f}x less CPU; "
                 f"same answer: {old == new} ({[round(r['active_gpu_hours'], 4) for r in new]} GPU-h)")
    print(line, flush=True)


if __name__ == "__main__":
    main()
