"""``jupyter-sched status`` latency with 20,000 jobs stored, idle and under polling load (issue 17).

Issue 17 target: with 20,000 jobs stored and 50 clients polling jobs, queue and me while others
submit, the status p99 is at most 3x its value on an idle server. Before issue 17 every service
call ran synchronous SQL on the tornado loop, and with ~220 jobs stored on a busy 2-core machine
``jupyter-sched status`` took 3-4 s (0.3 s on an empty, idle server).

What it does, in one run:

1. A SQLite store in a temp dir with ``--jobs`` jobs written directly through the store (one
   transaction): all but ``--pending`` finished (50 users, 5 teams), the rest pending behind a
   team quota of zero GPUs (a backlog the queue lists and every cycle visits).
2. A real ``jupyter server`` subprocess with jupyter_sched on a free loopback port over that
   store (simulated inventory of 4 GPUs; retention off so the history stays), and the load
   clients, started once and parked until a loaded round lets them go: ``--pollers`` clients
   (threads in ``--procs`` worker processes) each loop over ``GET jobs?limit=50``,
   ``GET queue?limit=50`` and ``GET me``, waiting ``--poll-interval-s`` between rounds (default
   1 s, as a panel refreshes; 0 = a closed loop that saturates the server), and ``--submitters``
   clients loop over ``POST jobs`` (1 GPU, pending behind the first four) with the same pause.
3. ``--rounds`` rounds, each sampling ``--samples`` times the three requests ``jupyter-sched
   status`` makes (``GET config``, ``GET me``, ``GET inventory``, one after the other):

   - **idle**: the load clients parked, after their last requests are answered and the server's
     CPU has fallen below 15 % of one core (engine cycles after the submits done) — nothing but
     the server's own periodic work running; the first idle round comes after ``--settle-s`` of
     uncounted status requests (the server's first cycles over the backlog are not idle);
   - **loaded**, once per phase (``--phases``), ``--warmup-s`` after the clients were let go:
     **phase-locked**, every client starting at once, so the fifty pollers' 150 requests arrive
     in one burst each pause and a status sample that meets the burst waits behind them; **random
     phase**, each client first waiting a random part of its pause (seeded per round), as panels
     opened at different moments poll. With ``--revalidate`` each phase runs again with pollers
     that revalidate as the panel's client does (``labextension/src/client.ts``): the last ETag
     of each route goes back in ``If-None-Match`` and an unchanged answer is a ``304`` without a
     body.

   Idle and loaded rounds alternate (odd rounds in reverse order), so the machine's other work,
   which drifts over minutes on a shared host, weighs on both sides alike.
4. Per phase, THE figure: the median over rounds of the loaded rounds' p99 divided by the median
   over rounds of the idle rounds' p99 (target <= 3x), with a 90 % bootstrap interval that
   resamples rounds and, within each, its samples (two levels: the spread between rounds — the
   machine — and within a round — the p99 of a few hundred samples). Beside it: every round's
   p99, the pooled p99 of all samples, p50s, the load clients' answers and errors, the server's
   CPU time per answered request (user + system: less sensitive to other work on the machine
   than any latency) split into the event-loop thread and the others (engine, request threads),
   and per status sample the CPU the event-loop thread ran while it was in flight
   (``/proc/<pid>/task/<pid>/schedstat``): the work the status waited behind, with the same
   median-of-rounds ratio — the machine's load stretches latencies, and this figure barely.

5. A/B in one run (``--compare TREE``, e.g. ``/work/main``; or ``--compare-setting NAME=VALUE``
   for a ``c.SchedApp`` setting): a second server B, over a copy of the same store, with its own
   load clients, runs the jupyter_sched of TREE; its rounds are interleaved with this tree's (A)
   in the same minutes, both sides are printed in full, then B's ratio over A's with a bootstrap
   interval drawn over their shared rounds. Only A's verdict decides the exit status.

Why rounds: one long idle phase and one long loaded phase, minutes apart, gave p99 ratios of 2.4x
to 8.9x on the same commit on a quiet machine (session 13): a p99 divides two tail values, each
set by whatever else ran on two shared cores in its own minute. Interleaved rounds put both sides
in the same minutes, the median of per-round p99s is not moved by one unlucky round, and the
interval says how far to trust the ratio; two runs of one commit should land inside each other's
intervals.

Run: ``.venv/bin/python benchmarks/status_bench.py [--rounds 10] [--samples 300] [--revalidate] [--compare TREE]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
import psutil
from submit_bench import TOKEN, free_port, start_server, stop_server, wait_ready

from jupyter_sched.model import Allocation, Job, JobSpec, JobState, Quota, QuotaSet, ResourceRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url

TARGET_RATIO = 3.0
STATUS_ROUTES = ("api/sched/config", "api/sched/me", "api/sched/inventory")
TERMINAL = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


def seed(db_url: str, jobs: int, pending: int) -> float:
    """Store ``jobs`` jobs (``pending`` of them pending behind a zero quota); return seconds taken."""
    started = time.perf_counter()
    store = Store(db_url)
    now = datetime.now(timezone.utc)
    with store.transaction(now=now) as tx:
        tx.replace_quota_set(QuotaSet(quotas=(Quota(team="backlog", guaranteed=0, borrowing_limit=0),)))
        for i in range(jobs - pending):
            at = now - timedelta(days=30) + timedelta(seconds=i)
            spec = JobSpec(name=f"hist-{i}", user=f"user{i % 50}", team=f"team{i % 5}",
                           resources=ResourceRequest(gpus=1), command=("python", "train.py"))
            job = Job(id=f"hist-{i:06d}", spec=spec, state=TERMINAL[i % 3], submitted_at=at, admitted_at=at,
                      started_at=at, finished_at=at + timedelta(minutes=30), exit_code=0 if i % 3 == 0 else 1,
                      allocation=Allocation(node="hist-node", gpu_uuids=(f"GPU-hist-{i % 8}",)), attempts=1)
            tx.insert_job(JobRecord(job=job, executor="local"), savepoint=False)
        for i in range(pending):
            spec = JobSpec(name=f"backlog-{i}", user=f"user{i % 50}", team="backlog",
                           resources=ResourceRequest(gpus=1), command=("python", "train.py"))
            tx.insert_job(JobRecord(job=Job(id=f"p-{i:06d}", spec=spec, submitted_at=now - timedelta(seconds=i))),
                          savepoint=False)
    store.close()
    return time.perf_counter() - started


def status_once(client: httpx.Client) -> float:
    """Seconds for the three requests of ``jupyter-sched status``."""
    t0 = time.perf_counter()
    for route in STATUS_ROUTES:
        client.get(route).raise_for_status()
    return time.perf_counter() - t0


def loop_cpu_s(pid: int) -> float:
    """CPU seconds the main thread of process ``pid`` (the server's event loop) has run so far, to
    the nanosecond (``/proc/<pid>/task/<pid>/schedstat``); 0 where that file cannot be read."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat") as stats:
            return int(stats.read().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        return 0.0


def sample_status(base: str, samples: int, pid: int) -> tuple[list[float], list[float]]:
    """``samples`` status latencies (s), and for each the event-loop CPU the server spent while it
    was in flight (:func:`loop_cpu_s`): the work the status waited behind or did itself, which
    other processes' load on the machine barely moves (the latency it does)."""
    walls, loop = [], []
    with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
        status_once(client)  # connection
        for _ in range(samples):
            before = loop_cpu_s(pid)
            walls.append(status_once(client))
            loop.append(loop_cpu_s(pid) - before)
    return walls, loop


RANDOM, REVALIDATE = 1, 2
"""Bits of the load clients' shared ``mode``: start at a random point of the pause; revalidate."""


def _worker(base: str, threads: int, submit: bool, stop: Any, go: Any, mode: Any, counts: Any, pause_s: float,
            seed: int) -> None:
    """One load process: ``threads`` clients polling (or submitting) while ``go`` is set, parked
    while it is clear, until ``stop`` is set. Each time ``go`` lets them go, ``mode`` says how:
    with :data:`RANDOM`, each client first waits a random part of ``pause_s`` (seeded by ``seed``,
    the client and the round in ``mode``'s upper bits); with :data:`REVALIDATE`, each poller sends
    back the ETag of its last 200 answer of each route in ``If-None-Match``, as the panel's client
    does (``labextension/src/client.ts``), and an unchanged answer comes back ``304 Not Modified``
    without a body (counted in ``counts[2]``)."""

    def loop(n: int) -> None:
        etags: dict[str, str] = {}
        revalidate = active = False

        def get(client: httpx.Client, route: str, **params: Any) -> httpx.Response:
            kept = etags.get(route) if revalidate else None
            answer = client.get(route, params=params or None, headers={"If-None-Match": kept} if kept else None)
            if revalidate and answer.status_code == 200 and answer.headers.get("ETag"):
                etags[route] = answer.headers["ETag"]
            return answer

        with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
            i = 0
            while not stop.is_set():
                if not go.is_set():
                    active = False
                    go.wait(0.2)
                    continue
                if not active:  # let go: a new round
                    active, how = True, mode.value
                    revalidate = bool(how & REVALIDATE) and not submit
                    etags.clear()
                    if how & RANDOM:
                        stop.wait(random.Random(f"{seed}/{n}/{how >> 2}").uniform(0, pause_s))
                        if not go.is_set():
                            continue
                i += 1
                ok = bad = unchanged = 0
                try:
                    if submit:
                        answers = [client.post("api/sched/jobs", json={"name": f"load-{os.getpid()}-{n}-{i}",
                                                                        "gpus": 1, "command": ["sleep", "600"]})]
                    else:
                        answers = [get(client, "api/sched/jobs", limit=50), get(client, "api/sched/queue", limit=50),
                                   get(client, "api/sched/me")]
                except httpx.HTTPError:
                    answers, bad = [], 1
                for answer in answers:
                    if answer.status_code < 300 or answer.status_code == 304:
                        ok += 1
                        unchanged += answer.status_code == 304
                    else:
                        bad += 1
                with counts.get_lock():  # counted as they come: each round reads its own share
                    counts[0] += ok
                    counts[1] += bad
                    counts[2] += unchanged
                if pause_s:
                    stop.wait(pause_s)

    pool = [threading.Thread(target=loop, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))] * 1000


def interval(values: list[float], q: float, *, other: list[float] | None = None, rounds: int = 1000,
             seed: int = 17) -> tuple[float, float]:
    """Bootstrap 90 % interval of ``pct(values, q)`` (ms) — or, with ``other``, of the ratio
    ``pct(other, q) / pct(values, q)`` — from ``rounds`` resamples with replacement."""
    rng = random.Random(seed)
    found = []
    for _ in range(rounds):
        base = pct(rng.choices(values, k=len(values)), q)
        found.append(pct(rng.choices(other, k=len(other)), q) / max(base, 1e-6) if other is not None else base)
    found.sort()
    return found[int(0.05 * rounds)], found[int(0.95 * rounds) - 1]


def median_ratio(idle: list[list[float]], loaded: list[list[float]], q: float = 0.99) -> float:
    """THE figure: the median over rounds of ``loaded``'s per-round ``q`` percentile divided by
    the median over rounds of ``idle``'s (one list of samples per round)."""
    return statistics.median(pct(r, q) for r in loaded) / max(statistics.median(pct(r, q) for r in idle), 1e-6)


def round_interval(idle: list[list[float]], loaded: list[list[float]], q: float = 0.99, *, resamples: int = 1000,
                   seed: int = 17) -> tuple[float, float]:
    """90 % bootstrap interval of :func:`median_ratio`, two levels: rounds drawn with replacement
    (round ``i``'s idle and loaded samples together: they shared their minutes), then each drawn
    round's samples drawn with replacement (the p99 of a few hundred samples moves by itself)."""
    rng = random.Random(seed)
    count, found = min(len(idle), len(loaded)), []
    for _ in range(resamples):
        drawn = [rng.randrange(count) for _ in range(count)]
        idle_p = [pct(rng.choices(idle[i], k=len(idle[i])), q) for i in drawn]
        loaded_p = [pct(rng.choices(loaded[i], k=len(loaded[i])), q) for i in drawn]
        found.append(statistics.median(loaded_p) / max(statistics.median(idle_p), 1e-6))
    found.sort()
    return found[int(0.05 * resamples)], found[int(0.95 * resamples) - 1]


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


def loop_thread_cpu_s(pid: int) -> float:
    """User + system CPU seconds of the main thread of ``pid`` (the event loop); 0 where unread."""
    try:
        with open(f"/proc/{pid}/task/{pid}/stat") as stats:
            fields = stats.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


PHASES = ("locked", "random")


@dataclass
class Round:
    """One round's status samples (idle or under one phase's load) and what the server did meanwhile."""

    samples: list[float]
    loop: list[float]
    answered: int
    errors: int
    unchanged: int
    elapsed_s: float
    cpu_s: float
    loop_cpu_s: float
    load: float


@dataclass
class Load:
    """The load clients: processes started once, let go (``go`` set) for each loaded round."""

    stop: Any
    go: Any
    mode: Any
    counts: Any
    workers: list[Any]
    pause_s: float

    def park(self) -> None:
        """Clear ``go`` and wait until every client finished its round of requests and its pause."""
        if self.go.is_set():
            self.go.clear()
            time.sleep(self.pause_s + 0.5)


def take_round(base: str, pid: int, samples: int, load: Load | None = None) -> Round:
    """``samples`` status samples and the server's CPU and the load's answers meanwhile."""
    counts = load.counts if load is not None else None
    before = (0, 0, 0) if counts is None else (counts[0], counts[1], counts[2])
    started, cpu_before, loop_before = time.perf_counter(), cpu_s(pid), loop_thread_cpu_s(pid)
    walls, loop = sample_status(base, samples, pid)
    after = (0, 0, 0) if counts is None else (counts[0], counts[1], counts[2])
    return Round(walls, loop, after[0] + after[1] - before[0] - before[1], after[1] - before[1], after[2] - before[2],
                 time.perf_counter() - started, cpu_s(pid) - cpu_before, loop_thread_cpu_s(pid) - loop_before,
                 os.getloadavg()[0])


def wait_quiet(pid: int, *, below: float = 0.15, window_s: float = 0.5, limit_s: float = 15.0) -> None:
    """Wait until the server used less than ``below`` of one CPU over ``window_s`` (at most ``limit_s``)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        before = cpu_s(pid)
        time.sleep(window_s)
        if cpu_s(pid) - before < below * window_s:
            return


@dataclass
class Side:
    """One server under test, its load clients and its rounds (``A``: this tree; ``B``: ``--compare``)."""

    name: str
    proc: Any
    root: Path
    base: str
    load: Load | None = None
    idle: list[Round] = field(default_factory=list)
    loaded: dict[tuple[str, bool], list[Round]] = field(default_factory=dict)


def run_rounds(sides: list[Side], args: argparse.Namespace, configs: list[tuple[str, bool]]) -> None:
    """``args.rounds`` rounds; in each, every side takes an idle round and one loaded round per
    config, alternated (odd rounds in reverse order, sides too): the other sides' load parked."""
    steps: list[tuple[str, bool] | None] = [None, *configs]
    for number in range(args.rounds):
        for side in sides if number % 2 == 0 else sides[::-1]:
            load, pid = side.load, side.proc.pid
            assert load is not None
            for step in steps if number % 2 == 0 else steps[::-1]:
                load.park()
                if step is None:
                    wait_quiet(pid)
                    side.idle.append(take_round(side.base, pid, args.samples))
                    continue
                phase, revalidate = step
                load.mode.value = (RANDOM if phase == "random" else 0) | (REVALIDATE if revalidate else 0) | number << 2
                load.go.set()
                time.sleep(args.warmup_s)
                side.loaded.setdefault(step, []).append(take_round(side.base, pid, args.samples, load))
            load.park()
        print(f"round {number + 1}/{args.rounds} done (load average {os.getloadavg()[0]:.1f})", file=sys.stderr)


def start_load(ctx: Any, base: str, args: argparse.Namespace, per_proc: int) -> Load:
    """The load clients' processes, parked (see :class:`Load`)."""
    load = Load(ctx.Event(), ctx.Event(), ctx.Value("l", 0), ctx.Array("l", [0, 0, 0]), [], args.poll_interval_s)
    for i in range(args.procs + 1):
        submit = i == args.procs
        load.workers.append(ctx.Process(target=_worker, args=(
            base, args.submitters if submit else per_proc, submit, load.stop, load.go, load.mode, load.counts,
            args.poll_interval_s, i + 1)))
    for worker in load.workers:
        worker.start()
    return load


def report(idle: list[Round], config: tuple[str, bool], rounds: list[Round], args: argparse.Namespace,
           per_proc: int) -> bool:
    """Print one loaded config's figures beside the idle rounds'; True when it meets the target."""
    phase, revalidate = config
    idle_s, loaded_s = [r.samples for r in idle], [r.samples for r in rounds]
    ratio, (ra, rb) = median_ratio(idle_s, loaded_s), round_interval(idle_s, loaded_s)
    errors = sum(r.errors for r in rounds)
    met = ratio <= TARGET_RATIO and errors == 0
    how = ("PHASE-LOCKED: every client let go at once (one burst of requests per pause)" if phase == "locked"
           else "RANDOM PHASE: each client let go at a random point of its pause (seeded per round)")
    polls = "pollers REVALIDATE (If-None-Match, as the panel)" if revalidate else "pollers read every answer in full"
    loads = [r.load for r in rounds]
    print(f"-- loaded, {how}; {polls}")
    print(f"status under {per_proc * args.procs} pollers + {args.submitters} submitters (pause "
          f"{args.poll_interval_s:g} s), {len(rounds)} rounds x {args.samples}: median of per-round p50 "
          f"{statistics.median(pct(s, 0.5) for s in loaded_s):.1f} ms, p99 {statistics.median(pct(s, 0.99) for s in loaded_s):.1f} ms"
          f" (load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs)")
    print("  per-round p99 ms: " + " ".join(f"{pct(s, 0.99):.0f}" for s in loaded_s))
    answered, elapsed = sum(r.answered for r in rounds), sum(r.elapsed_s for r in rounds)
    print(f"  load requests answered while sampling: {answered:,} ({errors:,} errors"
          f"{f', {sum(r.unchanged for r in rounds):,} of them 304 Not Modified' if revalidate else ''}) "
          f"in {elapsed:.0f} s")
    word = "met" if met else "NOT met"
    side = ("the whole interval is below it" if rb <= TARGET_RATIO else "the whole interval is above it"
            if ra > TARGET_RATIO else "the interval straddles it")
    print(f"RATIO loaded/idle ({phase}{', revalidating' if revalidate else ''}), median of per-round p99s: "
          f"{ratio:.2f}x, bootstrap 90 % {ra:.2f}-{rb:.2f}x (target p99 <= {TARGET_RATIO:.0f}x: {word}; {side})")
    pooled = pct([x for s in loaded_s for x in s], 0.99) / pct([x for s in idle_s for x in s], 0.99)
    print(f"  p50 ratio {median_ratio(idle_s, loaded_s, 0.5):.2f}x; pooled p99 of all samples: ratio {pooled:.2f}x")
    cpu, loop_cpu, requests = sum(r.cpu_s for r in rounds), sum(r.loop_cpu_s for r in rounds), \
        3 * sum(len(s) for s in loaded_s) + answered
    print(f"  server CPU per request, loaded: {cpu / requests * 1000:.2f} ms (event loop {loop_cpu / requests * 1000:.2f}"
          f" ms); {cpu / elapsed * 100:.0f} % of one CPU while loaded (event loop {loop_cpu / elapsed * 100:.0f} %, "
          f"other threads {(cpu - loop_cpu) / elapsed * 100:.0f} %)")
    idle_loop, loop = [r.loop for r in idle], [r.loop for r in rounds]
    if any(x for s in idle_loop for x in s):
        la, lb = round_interval(idle_loop, loop)
        print(f"  event-loop CPU while a status was in flight: median of per-round p99 "
              f"{statistics.median(pct(s, 0.99) for s in loop):.1f} ms (idle "
              f"{statistics.median(pct(s, 0.99) for s in idle_loop):.1f} ms), ratio {median_ratio(idle_loop, loop):.2f}x "
              f"(bootstrap 90 % {la:.2f}-{lb:.2f}x): the server work each status waited behind, which the "
              "machine's other load barely moves")
    return met


def ab_interval(a_idle: list[list[float]], a_loaded: list[list[float]], b_idle: list[list[float]],
                b_loaded: list[list[float]], *, resamples: int = 1000, seed: int = 23) -> tuple[float, float]:
    """90 % bootstrap interval of B's :func:`median_ratio` over A's, rounds drawn together (round
    ``i`` of A and of B shared their minutes), then each round's samples (as :func:`round_interval`)."""
    rng = random.Random(seed)
    count, found = min(len(a_idle), len(a_loaded), len(b_idle), len(b_loaded)), []

    def ratio(idle: list[list[float]], loaded: list[list[float]], drawn: list[int]) -> float:
        idle_p = [pct(rng.choices(idle[i], k=len(idle[i])), 0.99) for i in drawn]
        loaded_p = [pct(rng.choices(loaded[i], k=len(loaded[i])), 0.99) for i in drawn]
        return statistics.median(loaded_p) / max(statistics.median(idle_p), 1e-6)

    for _ in range(resamples):
        drawn = [rng.randrange(count) for _ in range(count)]
        found.append(ratio(b_idle, b_loaded, drawn) / max(ratio(a_idle, a_loaded, drawn), 1e-6))
    found.sort()
    return found[int(0.05 * resamples)], found[int(0.95 * resamples) - 1]


def print_idle(side: Side, args: argparse.Namespace) -> None:
    """The idle rounds' figures of ``side``."""
    idle_s = [r.samples for r in side.idle]
    pooled = [x for s in idle_s for x in s]
    ia, ib = interval(pooled, 0.99)
    requests = 3 * len(pooled)
    print(f"status (GET config + me + inventory), idle server, {len(idle_s)} rounds x {args.samples}: median of "
          f"per-round p50 {statistics.median(pct(s, 0.5) for s in idle_s):.1f} ms, p99 "
          f"{statistics.median(pct(s, 0.99) for s in idle_s):.1f} ms (load average "
          f"{min(r.load for r in side.idle):.1f}-{max(r.load for r in side.idle):.1f})")
    print("  per-round p99 ms: " + " ".join(f"{pct(s, 0.99):.0f}" for s in idle_s))
    print(f"  server CPU per request, idle: {sum(r.cpu_s for r in side.idle) / requests * 1000:.2f} ms (event loop "
          f"{sum(r.loop_cpu_s for r in side.idle) / requests * 1000:.2f} ms); pooled p99 of all idle samples "
          f"{pct(pooled, 0.99):.1f} ms (bootstrap 90 % {ia:.1f}-{ib:.1f} ms)")


def setting(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` of ``--compare-setting`` (VALUE read as JSON, else as text)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"give NAME=VALUE (got {text!r})")
    try:
        return name, json.loads(value)
    except ValueError:
        return name, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs stored first (default 20000)")
    parser.add_argument("--pending", type=int, default=1_000, help="of which pending (default 1000)")
    parser.add_argument("--pollers", type=int, default=50, help="clients polling jobs, queue and me (default 50)")
    parser.add_argument("--submitters", type=int, default=5, help="clients submitting (default 5)")
    parser.add_argument("--procs", type=int, default=5, help="worker processes the pollers share (default 5)")
    parser.add_argument("--poll-interval-s", type=float, default=1.0,
                        help="pause of each load client between rounds (default 1; 0 = closed loop)")
    parser.add_argument("--rounds", type=int, default=10,
                        help="interleaved rounds of idle and loaded samples (default 10: see the module docstring)")
    parser.add_argument("--samples", type=int, default=300,
                        help="status samples per round and phase (default 300: 3,000 a phase over 10 rounds)")
    parser.add_argument("--settle-s", type=float, default=3.0,
                        help="seconds of uncounted status requests before the first round (default 3)")
    parser.add_argument("--warmup-s", type=float, default=2.0,
                        help="seconds of load before each loaded round's samples (default 2)")
    parser.add_argument("--profile", metavar="PATH", default=None,
                        help="record the (first) server's GIL-holding stacks with py-spy (on PATH, or $PY_SPY) over "
                             "the whole run into PATH (collapsed stacks); off by default")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help="loaded phases of each round, in order: locked (all clients let go at once), random "
                             "(each at a random point of its pause); default locked,random")
    parser.add_argument("--revalidate", action="store_true",
                        help="each round also runs each phase with pollers revalidating as the panel does "
                             "(If-None-Match with the last ETag of each route; 304 without a body while "
                             "unchanged); both printed, each with its verdict")
    parser.add_argument("--compare", metavar="TREE", default=None,
                        help="A/B in one run: a second server B runs the jupyter_sched of TREE (a checkout, put "
                             "first on its PYTHONPATH; e.g. /work/main) over a copy of the same store, its rounds "
                             "interleaved with this tree's (A); both sides printed, then B's ratio over A's")
    parser.add_argument("--compare-setting", metavar="NAME=VALUE", type=setting, action="append", default=[],
                        help="a c.SchedApp setting of server B only (repeatable; B runs this tree unless --compare)")
    args = parser.parse_args(argv)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if not phases or any(p not in PHASES for p in phases):
        parser.error(f"--phases: give one or more of {', '.join(PHASES)}")
    if args.rounds < 1 or args.samples < 1:
        parser.error("--rounds and --samples: at least 1")
    configs = [(phase, revalidate) for phase in phases for revalidate in ((False, True) if args.revalidate else (False,))]
    per_proc = max(1, args.pollers // args.procs)
    compare = args.compare is not None or bool(args.compare_setting)
    sides: list[Side] = []
    spy = None
    with tempfile.TemporaryDirectory(prefix="status-bench-") as tmp:
        store_file = Path(tmp) / "seed.sqlite"
        seed_s = seed(sqlite_url(store_file), args.jobs, args.pending)
        print(f"stored {args.jobs:,} jobs ({args.pending:,} pending) in {seed_s:.1f} s")
        try:
            for name in ("A", "B") if compare else ("A",):
                root = Path(tmp) / name
                root.mkdir()
                shutil.copyfile(store_file, root / "sched.sqlite")
                tree = args.compare if name == "B" else None
                # the load's submitters are in team default, which has no quota line beside the backlog's:
                # since red team 19 R3 such a team gets 0 GPUs by default, and every submit would be a cheap
                # 422 (lighter load, counted as errors); None keeps it unlimited, as the load was measured before
                settings = {"unlisted_team_borrowing_limit": None, **(dict(args.compare_setting) if name == "B" else {})}
                old_path, old_cwd = os.environ.get("PYTHONPATH"), os.getcwd()
                if tree is not None:  # the server imports jupyter_sched from TREE: first on its path, and
                    # its working directory (``python -m`` puts that first, before PYTHONPATH)
                    os.environ["PYTHONPATH"] = os.pathsep.join(x for x in (str(Path(tree).resolve()), old_path) if x)
                    os.chdir(tree)
                try:
                    port = free_port()
                    proc = start_server(root, port, sqlite_url(root / "sched.sqlite"), **settings)
                finally:
                    os.chdir(old_cwd)
                    if old_path is None:
                        os.environ.pop("PYTHONPATH", None)
                    else:
                        os.environ["PYTHONPATH"] = old_path
                sides.append(Side(name, proc, root, f"http://127.0.0.1:{port}/"))
            for side in sides:
                with httpx.Client(base_url=side.base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
                    wait_ready(client, side.proc, side.root)
                side.load = start_load(multiprocessing.get_context("fork"), side.base, args, per_proc)
                settle_until = time.monotonic() + args.settle_s
                with httpx.Client(base_url=side.base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
                    while time.monotonic() < settle_until:
                        status_once(client)
            if args.profile is not None:
                spy = subprocess.Popen([os.environ.get("PY_SPY", "py-spy"), "record", "--gil", "-f", "raw", "-r", "100",
                                        "-o", args.profile, "-p", str(sides[0].proc.pid)],
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            run_rounds(sides, args, configs)
        finally:
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                spy.wait(60)
            for side in sides:
                if side.load is not None:
                    side.load.stop.set()
                    side.load.go.set()
                    for worker in side.load.workers:
                        worker.join(60)
                stop_server(side.proc, side.root)
    met_all = True
    for side in sides:
        if compare:
            what = f"jupyter_sched of {args.compare}" if side.name == "B" and args.compare else "this tree"
            extra = f", settings {dict(args.compare_setting)}" if side.name == "B" and args.compare_setting else ""
            print(f"==== server {side.name}: {what}{extra}")
        print_idle(side, args)
        for config, rounds in side.loaded.items():
            met = report(side.idle, config, rounds, args, per_proc)
            met_all = met_all and (met or side.name == "B")  # the verdict is this tree's
    if compare:
        a, b = sides
        print("==== A/B (rounds of both servers interleaved in this run)")
        for config in configs:
            args_ab = ([r.samples for r in a.idle], [r.samples for r in a.loaded[config]],
                       [r.samples for r in b.idle], [r.samples for r in b.loaded[config]])
            ra, rb = median_ratio(*args_ab[:2]), median_ratio(*args_ab[2:])
            lo, hi = ab_interval(*args_ab)
            print(f"{config[0]}{', revalidating' if config[1] else ''}: ratio loaded/idle A {ra:.2f}x, B {rb:.2f}x; "
                  f"B/A {rb / max(ra, 1e-6):.2f} (bootstrap 90 % {lo:.2f}-{hi:.2f}); loaded p99 (median of rounds) "
                  f"A {statistics.median(pct(s, 0.99) for s in args_ab[1]):.1f} ms, B "
                  f"{statistics.median(pct(s, 0.99) for s in args_ab[3]):.1f} ms; idle p99 A "
                  f"{statistics.median(pct(s, 0.99) for s in args_ab[0]):.1f} ms, B "
                  f"{statistics.median(pct(s, 0.99) for s in args_ab[2]):.1f} ms")
    return 0 if met_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
