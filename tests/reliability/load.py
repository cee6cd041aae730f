"""Concurrent clients against one or more servers: submit, cancel, list — timed.

:func:`run_load` starts ``clients`` threads at once (a barrier), each with its own user token and
httpx client, doing a fixed script: submit ``submits`` short jobs, list its jobs, cancel one job,
read the queue. Every answer's status and latency is recorded. ``test_concurrency.py`` asserts
on the outcome; ``benchmarks/load_bench.py`` prints requests/s and p99.

The quota check reads the usage intervals (every allocation, when it started and ended): the sum
of a team's GPUs is swept over time and must never exceed the team's guaranteed plus borrowing
limit.
"""

from __future__ import annotations

import math
import ssl
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from .harness import EmbeddedServer

USERS_PER_RUN = 10


def user_tokens(n: int = USERS_PER_RUN) -> dict[str, str]:
    """token → user for ``n`` users ``u0..u{n-1}`` plus the admin ``boss`` (the server token)."""
    from .harness import OWNER_TOKEN

    return {**{f"tok-u{i}": f"u{i}" for i in range(n)}, OWNER_TOKEN: "boss"}


@dataclass
class LoadOutcome:
    """Answers of a load run.

    Attributes:
        statuses: status per request (None: no answer).
        latencies_s: seconds per answered request.
        job_ids: ids from 201 answers, in order (duplicates kept, so they can be found).
        errors: non-2xx answers other than the expected 409 of a late cancel, with their bodies.
        seconds: wall time from the barrier to the last answer.
        clients: client threads.
    """

    statuses: list[int | None] = field(default_factory=list)
    latencies_s: list[float] = field(default_factory=list)
    job_ids: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    clients: int = 0

    @property
    def requests(self) -> int:
        return len(self.statuses)

    @property
    def server_errors(self) -> int:
        """5xx answers plus requests that got no answer at all."""
        return sum(1 for s in self.statuses if s is None or s >= 500)

    @property
    def requests_per_s(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0

    def percentile_s(self, q: float) -> float:
        """The ``q`` quantile (0..1) of the latencies, seconds (nearest rank)."""
        ordered = sorted(self.latencies_s)
        if not ordered:
            return 0.0
        return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def run_load(servers: list[EmbeddedServer], *, clients: int = 100, submits: int = 2,
             command: tuple[str, ...] = ("sleep", "0.3"), timeout_s: float = 60.0) -> LoadOutcome:
    """Run ``clients`` concurrent scripted clients, spread over ``servers`` and ``USERS_PER_RUN`` users.

    Args:
        servers: running servers sharing one store (client ``i`` uses ``servers[i % len]``).
        clients: concurrent client threads.
        submits: jobs each client submits (it cancels the first one).
        command: the jobs' command.
        timeout_s: per-request timeout, seconds.
    """
    out = LoadOutcome(clients=clients)
    lock = threading.Lock()
    tokens = [t for t, u in user_tokens().items() if u != "boss"]
    barrier = threading.Barrier(clients + 1)
    # one TLS context for every client (s41 speed): httpx builds one per client otherwise, ~20 ms of CPU each
    tls = ssl.create_default_context()

    def client(i: int) -> None:
        server = servers[i % len(servers)]
        with httpx.Client(base_url=server.api, headers=server.headers(tokens[i % len(tokens)]),
                          timeout=timeout_s, verify=tls) as http:
            def call(method: str, path: str, body: Any = None) -> tuple[int | None, Any]:
                t0 = time.monotonic()
                try:
                    r = http.request(method, path, json=body)
                    status, payload = r.status_code, (r.json() if r.content else None)
                except (httpx.HTTPError, ValueError) as exc:
                    status, payload = None, repr(exc)
                with lock:
                    out.statuses.append(status)
                    if status is not None:
                        out.latencies_s.append(time.monotonic() - t0)
                    if status == 201 and isinstance(payload, dict):
                        out.job_ids.append(payload["id"])
                    if status is None or (status >= 300 and not (method == "DELETE" and status == 409)):
                        out.errors.append(f"{method} {path}: {status} {payload}")
                return status, payload

            barrier.wait()
            mine = []
            for n in range(submits):
                status, job = call("POST", "jobs", {"gpus": 1, "name": f"load-{i}-{n}", "command": list(command)})
                if status == 201:
                    mine.append(job["id"])
            call("GET", "jobs")
            if mine:
                call("DELETE", f"jobs/{mine[0]}")
            call("GET", "queue")

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.monotonic()
    for t in threads:
        t.join(timeout=timeout_s * 6)
    out.seconds = time.monotonic() - started
    return out


def team_peaks(intervals: list[Any]) -> dict[str, float]:
    """Most GPUs each team held at one instant, swept over the usage intervals (open ones: still held)."""
    edges: dict[str, list[tuple[float, int, float]]] = {}
    for iv in intervals:
        rows = edges.setdefault(iv.team, [])
        rows.append((iv.started_at.timestamp(), 1, iv.share))
        if iv.ended_at is not None:
            rows.append((iv.ended_at.timestamp(), 0, iv.share))
    peaks = {}
    for team, rows in edges.items():
        held = peak = 0.0
        for _, opening, share in sorted(rows):  # at one instant, releases sort before grants
            held += share if opening else -share
            peak = max(peak, held)
        peaks[team] = peak
    return peaks


def quota_overruns(intervals: list[Any], limits: dict[str, float]) -> list[str]:
    """Teams that held more GPUs than ``limits[team]`` (guaranteed + borrowing limit) at some instant."""
    return [f"team {team} held {peak:g} GPUs at once (limit {limits[team]:g})"
            for team, peak in sorted(team_peaks(intervals).items()) if team in limits and peak > limits[team] + 1e-9]
