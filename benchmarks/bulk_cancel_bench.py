"""A bulk cancel (``POST jobs/cancel``) beside one ``DELETE jobs/{id}`` per job, in the same run.

Issue 20 F2: ``jupyter-sched cancel --mine`` sent one ``DELETE`` per job, ~20 ms of server time
each (clearing 122 pending jobs took a script; 1,000 took ~20 s). This script starts a real
``jupyter server`` with the extension (loopback, temp dirs, 2 simulated GPUs, SQLite; the
reliability tests' harness) and, ``--repeat`` times, submits ``2 x --jobs`` pending jobs (2 GPUs
each behind one that runs), then cancels half of them one ``DELETE`` at a time (the baseline:
what the CLI did) and the other half with one ``POST jobs/cancel {"ids": [...]}``, alternating
which goes first. Finally it times ``jupyter-sched cancel --mine --yes`` over ``--jobs`` pending
jobs beside ``python -c pass``. Prints wall seconds, ms per job and the ratio.

Run: ``.venv/bin/python benchmarks/bulk_cancel_bench.py [--jobs 500] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.reliability.harness import EmbeddedServer  # noqa: E402

CLI = str(Path(sys.executable).parent / "jupyter-sched")


def fill(client: httpx.Client, jobs: int) -> list[str]:
    ids = []
    for i in range(jobs):
        answer = client.post("jobs", json={"gpus": 2, "name": f"bulk-{i}", "time_limit": "1h",
                                           "command": ["sleep", "3600"]})
        answer.raise_for_status()
        ids.append(str(answer.json()["id"]))
    return ids


def one_by_one(client: httpx.Client, ids: list[str]) -> float:
    start = time.perf_counter()
    for job_id in ids:
        client.delete(f"jobs/{job_id}").raise_for_status()
    return time.perf_counter() - start


def in_one(client: httpx.Client, ids: list[str]) -> float:
    start = time.perf_counter()
    answer = client.post("jobs/cancel", json={"ids": ids})
    answer.raise_for_status()
    took = time.perf_counter() - start
    assert answer.json()["cancelled"] == len(ids), answer.text[:500]
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500, help="jobs cancelled each way per round (default 500)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds (default 3)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bulk-cancel-bench-"))
    server = EmbeddedServer.start(work, simulated_gpus=2)
    client = httpx.Client(base_url=server.api, headers={"Authorization": f"token {server.token}"}, timeout=600)
    delete_s: list[float] = []
    bulk_s: list[float] = []
    try:
        fill(client, 1)  # the one that runs: every later job waits behind it
        load_before = os.getloadavg()[0]
        for round_no in range(args.repeat):
            ids = fill(client, 2 * args.jobs)
            first, second = ids[:args.jobs], ids[args.jobs:]
            if round_no % 2 == 0:
                delete_s.append(one_by_one(client, first))
                bulk_s.append(in_one(client, second))
            else:
                bulk_s.append(in_one(client, first))
                delete_s.append(one_by_one(client, second))
        fill(client, args.jobs)
        env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER_SCHED")}
        env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": server.token})
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        pass_s = time.perf_counter() - start
        start = time.perf_counter()
        done = subprocess.run([CLI, "cancel", "--mine", "--yes"], env=env, capture_output=True, text=True, check=True)
        cli_s = time.perf_counter() - start
        load_after = os.getloadavg()[0]
    finally:
        client.post("jobs/cancel", json={"all": True})
        deadline = time.monotonic() + 120
        while client.get("jobs", params={"state": "admitted,running", "all": "true"}).json() and \
                time.monotonic() < deadline:
            time.sleep(0.5)
        server.kill()
    d, b = statistics.median(delete_s), statistics.median(bulk_s)
    print(f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after; {os.cpu_count()} CPUs; "
          f"{args.repeat} rounds of {args.jobs} jobs each way")
    print(f"one DELETE per job  : {d:7.2f} s median ({1000 * d / args.jobs:6.2f} ms/job)  runs {delete_s}")
    print(f"one POST jobs/cancel: {b:7.2f} s median ({1000 * b / args.jobs:6.2f} ms/job)  runs {bulk_s}")
    print(f"bulk / one-by-one   : {b / d:.3f}  ({d / b:.1f}x faster)")
    print(f"jupyter-sched cancel --mine --yes ({args.jobs} pending): {cli_s:.2f} s wall; python -c pass {pass_s:.2f} s;"
          f" said: {done.stdout.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
