"""Server CPU per polled request with 20,000 jobs stored (issue 17: make the polling cheaper).

``status_bench`` judges the target (status p99 under fifty pollers against idle), but on a busy
shared machine its latencies mostly measure the machine. This measures what the code spends:
one client, one request at a time, the panel's polling mix (``GET jobs?limit=50``,
``GET queue?limit=50``, ``GET me``) with one ``POST jobs`` every ``--submit-every`` requests —
status_bench's ratio of submits to polls (5 a second against 150), so pages change as often as
there — and the server process's user + system CPU time over the run, divided by the requests
answered. CPU time is far less sensitive than wall time to other work on the machine (it does
not count the time the server waits for a core), so two trees measured one after the other in
the same minutes compare their work.

Run: ``.venv/bin/python benchmarks/poll_cost_bench.py [--jobs 20000] [--requests 3000]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from status_bench import cpu_s, seed
from submit_bench import TOKEN, free_port, start_server, stop_server, wait_ready

from jupyter_sched.store import sqlite_url

POLLS = (("api/sched/jobs", {"limit": 50}), ("api/sched/queue", {"limit": 50}), ("api/sched/me", None))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs stored first (default 20000)")
    parser.add_argument("--pending", type=int, default=1_000, help="of which pending (default 1000)")
    parser.add_argument("--requests", type=int, default=3_000, help="polled requests timed (default 3000)")
    parser.add_argument("--submit-every", type=int, default=30, help="one submit per this many polls (default 30)")
    parser.add_argument("--settle-s", type=float, default=5.0, help="seconds after start before timing (default 5)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="poll-cost-") as tmp:
        root = Path(tmp)
        db_url = sqlite_url(root / "sched.sqlite")
        seed(db_url, args.jobs, args.pending)
        port = free_port()
        proc = start_server(root, port, db_url)
        walls: list[float] = []
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}/", headers={"Authorization": f"token {TOKEN}"},
                              timeout=60) as client:
                wait_ready(client, proc, root)
                time.sleep(args.settle_s)
                for route, params in POLLS:  # connection, first pages
                    client.get(route, params=params).raise_for_status()
                before, started, submits = cpu_s(proc.pid), time.perf_counter(), 0
                for i in range(args.requests):
                    if i % args.submit_every == 0:
                        client.post("api/sched/jobs", json={"name": f"cost-{i}", "gpus": 1,
                                                            "command": ["sleep", "600"]}).raise_for_status()
                        submits += 1
                    route, params = POLLS[i % len(POLLS)]
                    t0 = time.perf_counter()
                    client.get(route, params=params).raise_for_status()
                    walls.append(time.perf_counter() - t0)
                elapsed, used = time.perf_counter() - started, cpu_s(proc.pid) - before
        finally:
            stop_server(proc, root)
    answered = args.requests + submits
    print(f"{args.requests} polls + {submits} submits in {elapsed:.1f} s; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    print(f"server CPU per request: {used / answered * 1000:.2f} ms ({used:.1f} s in all); "
          f"poll wall p50 {statistics.median(walls) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
