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
- ``--rlock`` adds a third kind, alternating with the other two: the process lock as a plain
  ``threading.RLock`` (before the lock was made first come, first served,
  ``jupyter_sched/store/writers.py``). It differs when the engine writes back to back
  (``--gap-ms 0``, as a cycle writes its pending reasons in batches): an ``RLock`` is taken again
  by the releasing thread before the woken waiter runs, so the API waits for the whole run of
  batches. ``--cpu-hold`` holds the lock by Python work instead of a sleep (the engine encodes
  rows while it holds it: the GIL stays with it).

Run: ``.venv/bin/python benchmarks/writer_wait_bench.py [--writes 300] [--rounds 3]``; the engine's
reason batches: ``--gap-ms 0 --hold-ms 5 --cpu-hold --rlock``.
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


def _hold(seconds: float, cpu: bool) -> None:
    """Hold for ``seconds``: asleep, or (``cpu``) running Python, which keeps the GIL."""
    if not cpu:
        time.sleep(seconds)
        return
    until = time.perf_counter() + seconds
    while time.perf_counter() < until:
        sum(range(200))


def one_round(url: str, *, kind: str, writes: int, hold_s: float, gap_s: float, pause_s: float,
              cpu_hold: bool = False) -> list[float]:
    """Seconds each of the API's ``writes`` write transactions took beside a busy engine writer
    (``kind``: ``baseline`` no process lock, ``rlock`` a plain ``threading.RLock``, ``lock`` as shipped)."""
    engine, api = Store(url), Store(url)
    if kind == "baseline":
        engine._writers = api._writers = None  # the baseline: SQLite's busy handler alone
    elif kind == "rlock":
        engine._writers = api._writers = threading.RLock()  # type: ignore[assignment]
    stop = threading.Event()

    def decide() -> None:
        while not stop.is_set():
            with engine.transaction() as tx:
                tx.add_event(actor="engine", action="decide", message="a decision")
                _hold(hold_s, cpu_hold)
            if gap_s:
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
    parser.add_argument("--rlock", action="store_true", help="also rounds with a plain threading.RLock")
    parser.add_argument("--cpu-hold", action="store_true", help="the engine holds the lock running Python")
    args = parser.parse_args(argv)
    kinds = ["baseline", "rlock", "lock"] if args.rlock else ["baseline", "lock"]
    found: dict[str, list[float]] = {kind: [] for kind in kinds}
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="writer-wait-") as tmp:
        url = sqlite_url(Path(tmp) / "sched.sqlite")
        Store(url).close()  # created and migrated once
        for _ in range(args.rounds):
            for kind in kinds:
                found[kind] += one_round(url, kind=kind, writes=args.writes, hold_s=args.hold_ms / 1000,
                                         gap_s=args.gap_ms / 1000, pause_s=args.pause_ms / 1000,
                                         cpu_hold=args.cpu_hold)
    print(f"engine writer: {args.hold_ms:g} ms ({'running Python' if args.cpu_hold else 'asleep'}) in each write "
          f"transaction, {args.gap_ms:g} ms between; API: "
          f"{args.writes} writes x {args.rounds} rounds each way, alternating; load average "
          f"{load_before:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    rows = {}
    names = {"baseline": "baseline (SQLite busy handler)", "rlock": "process RLock (before)",
             "lock": "process FairLock (shipped)"}
    for kind in kinds:
        took = found[kind]
        rows[kind] = [pct(took, 0.5), pct(took, 0.95), pct(took, 0.99), max(took) * 1000]
        p50, p95, p99, top = rows[kind]
        print(f"{names[kind]:32s}: API write p50 {p50:7.2f} ms  p95 {p95:7.2f} ms  p99 {p99:7.2f} ms  "
              f"max {top:7.2f} ms  mean {statistics.fmean(took) * 1000:6.2f} ms")
    for other in kinds[:-1]:
        ratios = [a / b if b else float("nan") for a, b in zip(rows["lock"], rows[other], strict=True)]
        print(f"ratio shipped/{other}: " + "p50 {:.2f}x  p95 {:.2f}x  p99 {:.2f}x  max {:.2f}x".format(*ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
