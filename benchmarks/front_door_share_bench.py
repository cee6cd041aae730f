"""The central service's front door: what a request costs through it, and verify 23 V5's shape.

Usage (as root: the service runs the local executor; PYTHONPATH at the checkout to measure — run
main's and a branch's in the same minutes, and read the load average printed beside the figures)::

    python benchmarks/front_door_share_bench.py cost [--requests 300]
    python benchmarks/front_door_share_bench.py v5 [--hold 15]

``cost``: ``jupyter-sched serve`` (SQLite, simulated GPUs, the hub double answering token checks), one
user's ``GET me`` and ``GET queue`` one after another on one keep-alive connection, interleaved; prints
the median and 90th percentile in ms of each (the first 20 of each left out: caches warming).

``v5``: the ceiling lowered to 30; alice opens 30 connections (2 KiB receive buffer) each pipelining
200 ``GET me`` and reads nothing; bob asks ``GET me`` on a new connection every second for ``--hold``
seconds; prints how many of bob's were answered 200 and how long they took (median, max).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import httpx

from tests.accounts import shared_dir
from tests.hub.hub_double import TOKEN
from tests.hub.test_red17_front_door import Service
from tests.hub.test_verify23_v5_pipelined_share import _hub, _me, _pipelining


def _ms(values: list[float]) -> str:
    ordered = sorted(values)
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p90 {ordered[int(0.9 * len(ordered))] * 1000:.2f} ms"


def cost(service: Service, requests: int) -> None:
    took: dict[str, list[float]] = {"me": [], "queue": []}
    with httpx.Client(headers={"Authorization": "token token-of-bob"}) as client:
        for i in range(requests + 20):
            for route in took:
                start = time.perf_counter()
                answer = client.get(service.base + f"api/sched/{route}", timeout=30)
                elapsed = time.perf_counter() - start
                assert answer.status_code == 200, answer.text[:300]
                if i >= 20:
                    took[route].append(elapsed)
    for route, values in took.items():
        print(f"GET {route}: {_ms(values)} ({len(values)} requests, one keep-alive connection)")


def v5(service: Service, hold_s: float) -> None:
    assert _me(service, "alice") == 200
    socks = _pipelining(service, "alice", 30, 200)
    ok, failed, took = 0, [], []
    try:
        end = time.monotonic() + hold_s
        while time.monotonic() < end:
            start = time.monotonic()
            status = _me(service, "bob")
            took.append(time.monotonic() - start)
            if status == 200:
                ok += 1
            else:
                failed.append(status)
            time.sleep(max(0.0, 1.0 - (time.monotonic() - start)))
    finally:
        for sock in socks:
            sock.close()
    print(f"V5 (ceiling 30, alice 30 x 200 pipelined GET me unread): bob {ok} ok / {len(failed)} refused or failed "
          f"{failed[:5]}; bob's requests took median {statistics.median(took):.2f} s, max {max(took):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["cost", "v5"])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--hold", type=float, default=15.0)
    args = parser.parse_args()
    options = ["--FrontDoor.log_interval_s=5"] + (["--FrontDoor.max_connections=30"] if args.what == "v5" else [])
    with shared_dir() as folder, _hub() as api:
        service = Service(folder, *options, hub_api=api, hub_token=TOKEN)
        try:
            print(f"load average {os.getloadavg()[0]:.2f} at start")
            (cost(service, args.requests) if args.what == "cost" else v5(service, args.hold))
            print(f"load average {os.getloadavg()[0]:.2f} at end")
        finally:
            service.stop()


if __name__ == "__main__":
    main()
