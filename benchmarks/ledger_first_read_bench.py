"""red37 R5: the usage ledger's first read (each service start) over N closed usage rows of one
user's flood of instant jobs, on SQLite: the database's sums (now) against decoding every row (before).

    PYTHONPATH=. python benchmarks/ledger_first_read_bench.py [rows=300000]
"""

from __future__ import annotations

import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.engine.usage_ledger import UsageLedger
from jupyter_sched.model import Budget
from jupyter_sched.store import Store, StoreTx, schema
from jupyter_sched.store.codec import ts

NOW = datetime(2026, 12, 5, 18, 30, 7, 250000, tzinfo=timezone.utc)


def main(n: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = Store(f"sqlite:///{Path(folder) / 'bench.db'}")
        rows = []
        for i in range(n):  # 5 s rows, one every ~0.5 s over ~2 days (red37's measurement)
            start = NOW - timedelta(seconds=0.5 * (n - i) + 5)
            rows.append({"job_id": f"j-{i}", "attempt": 1, "user": "flood", "team": "t", "kind": "batch",
                         "gpu_uuid": f"GPU-{i % 8}", "gpu_model": "A100", "share": 1.0,
                         "started_at": ts(start), "ended_at": ts(start + timedelta(seconds=5))})
        with store.transaction() as tx:
            for s in range(0, n, 10_000):
                tx.conn.execute(schema.usage.insert(), rows[s:s + 10_000])
        budgets = [Budget(team="t"), Budget(team="t", user="flood", period="day")]
        for label in ("sums in the database (now)", "every row decoded (before)"):
            if label.startswith("every"):
                StoreTx.usage_ledger_first = lambda self, **kw: None  # type: ignore[assignment,method-assign]
            ledger = UsageLedger(store, half_life_s=7 * 86400.0)
            began = time.perf_counter()
            ledger.read(NOW, budgets)
            print(f"{n} rows, first read, {label}: {time.perf_counter() - began:.2f} s, {ledger.decoded} rows decoded")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300_000)
