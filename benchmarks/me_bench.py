"""``GET me``'s usage figures: summed in the database (``Store.gpu_seconds``) against the old way
(load 31 days of everyone's usage rows, roll them up in Python), on the same store, same run.

Usage::

    python benchmarks/me_bench.py [--users 200] [--rows 40000] [--repeat 20] [--db sqlite|URL]

Prints the median time of each way and their ratio (old / new), and checks both give the same
GPU-hours. Run it on an idle machine, or read only the ratio (both ways run interleaved).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from jupyter_sched.accounting import budget_usage, rollup
from jupyter_sched.model import Budget
from jupyter_sched.store import Store, sqlite_url

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)


def fill(store: Store, *, users: int, rows: int, seed: int = 7) -> None:
    """``rows`` usage intervals of ``users`` users in 10 teams over the last 31 days."""
    rng = random.Random(seed)
    with store.transaction(now=NOW) as tx:
        for i in range(rows):
            user = f"u{rng.randrange(users)}"
            start = NOW - timedelta(seconds=rng.uniform(0, 31 * 86400))
            tx.open_usage(job_id=f"j{i}", attempt=0, user=user, team=f"t{int(user[1:]) % 10}", kind="training",
                          gpus=[(f"GPU-{i % 64}", "A100", 1.0)], started_at=start)
            if rng.random() < 0.95:
                tx.close_usage(f"j{i}", min(NOW, start + timedelta(seconds=rng.uniform(60, 36000))))


def old_way(store: Store, user: str, team: str) -> tuple[float, float]:
    """What ``me`` did before: everyone's rows of 31 days, rolled up in Python."""
    week = rollup(store.usage_rows(since=NOW - timedelta(days=31), user=user), now=NOW, by=("user",),
                  since=NOW - timedelta(days=7))
    used = budget_usage(store.usage_rows(since=NOW - timedelta(days=31)), [Budget(team=team, gpu_hours=100)], now=NOW)
    return (week[0]["gpu_hours"] if week else 0.0), used[(team, None)]


def new_way(store: Store, user: str, team: str) -> tuple[float, float]:
    """What ``me`` does now: two sums in the database."""
    week = store.gpu_seconds(since=NOW - timedelta(days=7), until=NOW, user=user) / 3600
    month = store.gpu_seconds(since=NOW.replace(day=1, hour=0), until=NOW, team=team) / 3600
    return week, month


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--db", default="sqlite", help="sqlite (a temporary file) or a SQLAlchemy URL")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(sqlite_url(Path(tmp) / "me.sqlite") if args.db == "sqlite" else args.db)
        fill(store, users=args.users, rows=args.rows)
        old_s, new_s = [], []
        for i in range(args.repeat):
            user, team = f"u{i % args.users}", f"t{i % 10}"
            t0 = time.perf_counter()
            old = old_way(store, user, team)
            t1 = time.perf_counter()
            new = new_way(store, user, team)
            t2 = time.perf_counter()
            old_s.append(t1 - t0)
            new_s.append(t2 - t1)
            if abs(old[0] - new[0]) > 1e-3 or abs(old[1] - new[1]) > 1e-3:
                print(f"MISMATCH for {user}/{team}: old {old} new {new}", file=sys.stderr)
                return 1
        store.close()
    old_ms, new_ms = statistics.median(old_s) * 1000, statistics.median(new_s) * 1000
    print(f"GET me usage figures, {args.rows} usage rows of {args.users} users, median of {args.repeat}:")
    print(f"  old (31 days of everyone's rows, Python rollup): {old_ms:8.1f} ms")
    print(f"  new (sums in the database):                      {new_ms:8.1f} ms")
    print(f"  ratio old/new: {old_ms / new_ms:.1f}x (same GPU-hours both ways)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
