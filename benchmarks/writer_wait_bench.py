"""How long a write transaction waits for another writer of the same process (issue 17).

SQLite lets one writer in at a time. Without a lock of its own, a writer that finds the database
locked waits in SQLite's busy handler, which sleeps 1, 2, 5, 10, 15, 20, 25... ms between tries:
a submit that began while the engine committed a decision woke up to ~18 ms after a lock held for
well under one. :class:`~jupyter_sched.store.Store` now makes the writers of one process wait on
a lock per database file, woken by the release (``jupyter_sched/store/store.py``,
``_writers_lock``).

What it does, in one run, on one SQLite file in a temp dir:

- an "engine" thread loops over write transactions on its own :class:`Store` (an audit record,
  then ``--hold-ms`` of holding the write lock, as a decision's rows would; then ``--gap-ms``
  outside any transaction);
- the "API" thread, on a second :class:`Store` of the same file, times ``--writes`` write
  transactions (one audit record each, ``--pause-ms`` apart) from asking to commit;
- rounds alternate between **baseline** (both stores' process lock switched off: SQLite's busy
  handler arbitrates, as before) and **lock** (as shipped), ``--rounds`` of each, so both see the
  same machine load; prints p50/p95/p99/max of each and the ratios lock/baseline.

Run: ``.venv/bin/python benchmarks/writer_wait_bench.py [--writes 300] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from jupyter_sched.store import Store, sqlite_url


def one_round(url: str, *, locked: bool, writes: int, hold_s: float, gap_s: float, pause_s: float) -> list[float]:
    """Seconds each of the API's ``writes`` write transactions took beside a busy engine writer."""
    engine, api = Store(url), Store(url)
    if not locked:
        engine._writers = api._writers = None  # the baseline: SQLite's busy handler alone
    stop = threading.Event()

    def decide() -> None:
        while not stop.is_set():
            with engine.transaction() as tx:
                tx.add_event(actor="engine", action="decide", message="a decision")
                time.sleep(hold_s)
            time.sleep(gap_s)

    thread = threading.Thread(target=decide)
    thread.start()
    took = []
    try:
        for i in range(writes):
            t0 = time.perf_counter()
            with api.transaction() as tx:
                tx.add_event(actor="api", action="submit", message=f"submit {i}")
            took.append(time.perf_counter() - t0)
            time.sleep(pause_s)
    finally:
        stop.set()
        thread.join()
        engine.close()
        api.close()
    return took


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writes", type=int, default=300, help="API write transactions per round (default 300)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of each kind, alternating (default 3)")
    parser.add_argument("--hold-ms", type=float, default=0.5, help="engine's time in each write (default 0.5)")
    parser.add_argument("--gap-ms", type=float, default=2.0, help="engine's pause between writes (default 2)")
    parser.add_argument("--pause-ms", type=float, default=1.0, help="API's pause between writes (default 1)")
    args = parser.parse_args(argv)
    found: dict[bool, list[float]] = {False: [], True: []}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="writer-wait-") as tmp:
        url = sqlite_url(Path(tmp) / "sched.sqlite")
        Store(url).close()  # created and migrated once
        for _ in range(args.rounds):
            for locked in (False, True):
                found[locked] += one_round(url, locked=locked, writes=args.writes, hold_s=args.hold_ms / 1000,
                                           gap_s=args.gap_ms / 1000, pause_s=args.pause_ms / 1000)
    print(f"engine writer: {args.hold_ms:g} ms in each write transaction, {args.gap_ms:g} ms between; API: "
          f"{args.writes} writes x {args.rounds} rounds each way, alternating; load average "
          f"{load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    rows = {}
    for locked, name in ((False, "baseline (SQLite busy handler)"), (True, "process lock (shipped)")):
        took = found[locked]
        rows[locked] = [pct(took, 0.5), pct(took, 0.95), pct(took, 0.99), max(took) * 1000]
        p50, p95, p99, top = rows[locked]
        print(f"{name:32s}: API write p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  p99 {p99:7.2f} ms  max {top:7.2f} ms  "
              f"mean {statistics.fmean(took) * 1000:6.2f} ms")
    ratios = [a / b if b else float("nan") for a, b in zip(rows[True], rows[False], strict=True)]
    print("ratio lock/baseline: p50 {:.2f}x  p95 {:.2f}x  p99 {:.2f}x  max {:.2f}x".format(*ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
