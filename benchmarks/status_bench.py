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
   store (simulated inventory of 4 GPUs; retention off so the history stays).
3. **Baseline, idle**: ``--samples`` times the three requests ``jupyter-sched status`` makes
   (``GET config``, ``GET me``, ``GET inventory``), one after the other, nothing else running —
   after ``--settle-s`` of the same requests, not counted, so the server's first cycles over the
   backlog and its first requests are not part of the idle figure (they made it higher, and the
   ratio easier, in runs sampled right after start).
4. **Loaded**: ``--pollers`` clients (threads in ``--procs`` worker processes) each loop over
   ``GET jobs?limit=50``, ``GET queue?limit=50`` and ``GET me``, waiting ``--poll-interval-s``
   between rounds (default 1 s, as a panel refreshes; 0 = a closed loop that saturates the
   server, where the status waits behind every queued request), and ``--submitters`` clients
   loop over ``POST jobs`` (1 GPU, pending behind the first four) with the same pause;
   meanwhile the same status samples are taken again.
   The loaded phase runs twice (``--phases``): **phase-locked**, every client starting at once,
   so the fifty pollers' 150 requests arrive in one burst each second and a status sample that
   meets the burst waits behind all of them; then **random phase**, each client first waiting a
   random part of its pause (seeded), as panels opened at different moments poll. Both are
   printed, each with its own verdict; the exit status is 0 only when every phase run meets it.
   With ``--revalidate`` each phase runs again with pollers that revalidate as the panel's client
   does (``labextension/src/client.ts``): the last ETag of each route goes back in
   ``If-None-Match`` and an unchanged answer is a ``304 Not Modified`` without a body — the
   panel's real cost; the pollers reading every answer in full stay the first run of each phase.
5. Prints p50/p95/p99 of status idle and loaded, their ratio (target p99 <= 3x), the pollers'
   and submitters' request rates and any non-2xx answers, the server's CPU time per answered
   request (user + system, from the process: less sensitive to other work on the machine than
   any latency), and a bootstrap 90 % interval of each p99 and of the ratio. Also, per status
   sample, the CPU the server's event-loop thread ran while that sample was in flight
   (``/proc/<pid>/task/<pid>/schedstat``, in ns): the work the status waited behind, with its
   own loaded/idle p99 ratio — on a machine other work keeps busy, latencies stretch with that
   load and this figure barely does. Stops the server and the jobs.

Why 1,000 samples a phase: the p99 of 100 samples is their second-highest value, which falls
anywhere between about the 96th and the 100th percentile of the true distribution; the target
divides two such values, and session 4's misses (3.02x, 4.66x) were the runs whose idle p99
happened to be lowest. With 1,000 the p99 is the tenth-highest value, about the 98.5th to 99.5th
percentile, and the bootstrap interval printed beside it says how far to trust it.

Run: ``.venv/bin/python benchmarks/status_bench.py [--jobs 20000] [--pollers 50] [--samples 100]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
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


def _worker(base: str, threads: int, submit: bool, stop: Any, counts: Any, pause_s: float,
            phase_seed: int | None = None, revalidate: bool = False) -> None:
    """One load process: ``threads`` clients polling (or submitting) until ``stop`` is set; with
    ``phase_seed``, each client first waits a random part of ``pause_s`` (random phase); with
    ``revalidate``, each poller sends back the ETag of its last 200 answer of each route in
    ``If-None-Match``, as the panel's client does (``labextension/src/client.ts``), and an
    unchanged answer comes back ``304 Not Modified`` without a body (counted in ``counts[2]``)."""
    offsets = [0.0] * threads if phase_seed is None else \
        [random.Random(phase_seed * 1000 + n).uniform(0, pause_s) for n in range(threads)]

    def loop(n: int) -> None:
        ok = bad = unchanged = 0
        etags: dict[str, str] = {}

        def get(client: httpx.Client, route: str, **params: Any) -> httpx.Response:
            kept = etags.get(route) if revalidate else None
            answer = client.get(route, params=params or None, headers={"If-None-Match": kept} if kept else None)
            if revalidate and answer.status_code == 200 and answer.headers.get("ETag"):
                etags[route] = answer.headers["ETag"]
            return answer

        with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
            i = 0
            if offsets[n]:
                stop.wait(offsets[n])
            while not stop.is_set():
                i += 1
                try:
                    if submit:
                        answers = [client.post("api/sched/jobs", json={"name": f"load-{os.getpid()}-{n}-{i}",
                                                                        "gpus": 1, "command": ["sleep", "600"]})]
                    else:
                        answers = [get(client, "api/sched/jobs", limit=50), get(client, "api/sched/queue", limit=50),
                                   get(client, "api/sched/me")]
                except httpx.HTTPError:
                    bad += 1
                    continue
                for answer in answers:
                    if answer.status_code < 300 or answer.status_code == 304:
                        ok += 1
                        unchanged += answer.status_code == 304
                    else:
                        bad += 1
                with counts.get_lock():  # counted as they come: the loaded phase reads its own share
                    counts[0] += ok
                    counts[1] += bad
                    counts[2] += unchanged
                ok = bad = unchanged = 0
                if pause_s:
                    stop.wait(pause_s)
        with counts.get_lock():
            counts[0] += ok
            counts[1] += bad

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


def cpu_s(pid: int) -> float:
    """User + system CPU seconds the process ``pid`` has used so far."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


PHASES = ("locked", "random")


@dataclass
class Loaded:
    """One loaded phase's status samples and what the server did meanwhile."""

    samples: list[float]
    loop: list[float]
    answered: int
    errors: int
    unchanged: int
    elapsed_s: float
    cpu_s: float
    load: float


def loaded_phase(ctx: Any, base: str, pid: int, args: argparse.Namespace, per_proc: int, phase: str,
                 workers: list[Any], stops: list[Any], *, revalidate: bool = False) -> Loaded:
    """Status samples under the pollers and submitters, started phase-locked (``locked``: all at
    once) or each at a random point of its pause (``random``), the pollers revalidating their
    answers with ``If-None-Match`` as the panel does or not; the load is stopped at the end."""
    stop, counts = ctx.Event(), ctx.Array("l", [0, 0, 0])
    stops.append(stop)
    seeds = [None] * (args.procs + 1) if phase == "locked" else list(range(1, args.procs + 2))
    mine = [ctx.Process(target=_worker, args=(base, per_proc, False, stop, counts, args.poll_interval_s, seeds[i],
                                              revalidate)) for i in range(args.procs)]
    mine.append(ctx.Process(target=_worker, args=(base, args.submitters, True, stop, counts, args.poll_interval_s,
                                                  seeds[-1])))
    workers.extend(mine)
    for worker in mine:
        worker.start()
    time.sleep(args.warmup_s)
    started, cpu_before, answered_before = time.perf_counter(), cpu_s(pid), counts[0] + counts[1]
    errors_before, unchanged_before = counts[1], counts[2]
    spy = None if args.profile is None else subprocess.Popen(
        [os.environ.get("PY_SPY", "py-spy"), "record", "--gil", "-f", "raw",
         "-r", "100", "-o", f"{args.profile}.{phase}{'.revalidate' if revalidate else ''}", "-p", str(pid)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    samples, loop = sample_status(base, args.samples, pid)
    if spy is not None:
        spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
        spy.wait(60)
    elapsed, cpu = time.perf_counter() - started, cpu_s(pid) - cpu_before
    answered, load = counts[0] + counts[1] - answered_before, os.getloadavg()[0]
    stop.set()
    for worker in mine:
        worker.join(60)
    return Loaded(samples, loop, answered, counts[1] - errors_before, counts[2] - unchanged_before, elapsed, cpu, load)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=20_000, help="jobs stored first (default 20000)")
    parser.add_argument("--pending", type=int, default=1_000, help="of which pending (default 1000)")
    parser.add_argument("--pollers", type=int, default=50, help="clients polling jobs, queue and me (default 50)")
    parser.add_argument("--submitters", type=int, default=5, help="clients submitting (default 5)")
    parser.add_argument("--procs", type=int, default=5, help="worker processes the pollers share (default 5)")
    parser.add_argument("--poll-interval-s", type=float, default=1.0,
                        help="pause of each load client between rounds (default 1; 0 = closed loop)")
    parser.add_argument("--samples", type=int, default=1000,
                        help="status samples per phase (default 1000: see the module docstring)")
    parser.add_argument("--settle-s", type=float, default=3.0,
                        help="seconds of uncounted status requests before the idle samples (default 3)")
    parser.add_argument("--warmup-s", type=float, default=5.0, help="seconds of load before sampling (default 5)")
    parser.add_argument("--profile", metavar="PATH", default=None,
                        help="record the server's GIL-holding stacks during the loaded phase with py-spy "
                             "(on PATH, or $PY_SPY) into PATH.<phase> (collapsed stacks); off by default")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help="loaded phases to run, in order: locked (all clients start at once), random "
                             "(each starts at a random point of its pause); default locked,random")
    parser.add_argument("--revalidate", action="store_true",
                        help="run each loaded phase twice: pollers as before (every answer in full), then "
                             "pollers revalidating as the panel does (If-None-Match with the last ETag of each "
                             "route; 304 without a body while unchanged); both printed, each with its verdict")
    args = parser.parse_args(argv)
    phases = [p.strip() for p in args.phases.split(",") if p.strip()]
    if not phases or any(p not in PHASES for p in phases):
        parser.error(f"--phases: give one or more of {', '.join(PHASES)}")
    with tempfile.TemporaryDirectory(prefix="status-bench-") as tmp:
        root = Path(tmp)
        db_url = sqlite_url(root / "sched.sqlite")
        seed_s = seed(db_url, args.jobs, args.pending)
        print(f"stored {args.jobs:,} jobs ({args.pending:,} pending) in {seed_s:.1f} s")
        port = free_port()
        proc = start_server(root, port, db_url)
        base = f"http://127.0.0.1:{port}/"
        ctx = multiprocessing.get_context("fork")
        workers: list[Any] = []
        stops: list[Any] = []
        results: dict[tuple[str, bool], Loaded] = {}
        try:
            with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
                wait_ready(client, proc, root)
            settle_until = time.monotonic() + args.settle_s
            with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=60) as client:
                while time.monotonic() < settle_until:
                    status_once(client)
            load_idle = os.getloadavg()[0]
            cpu_before = cpu_s(proc.pid)
            idle, idle_loop = sample_status(base, args.samples, proc.pid)
            cpu_idle = cpu_s(proc.pid) - cpu_before
            per_proc = max(1, args.pollers // args.procs)
            for phase in phases:
                for revalidate in (False, True) if args.revalidate else (False,):
                    results[phase, revalidate] = loaded_phase(ctx, base, proc.pid, args, per_proc, phase, workers,
                                                              stops, revalidate=revalidate)
        finally:
            for stop in stops:
                stop.set()
            for worker in workers:
                worker.join(60)
            stop_server(proc, root)
    i50, i95, i99 = pct(idle, 0.5), pct(idle, 0.95), pct(idle, 0.99)
    print(f"status (GET config + me + inventory) x{args.samples}, idle server   : p50 {i50:8.1f} ms  "
          f"p95 {i95:8.1f} ms  p99 {i99:8.1f} ms  (load average {load_idle:.1f})")
    ia, ib = interval(idle, 0.99)
    print(f"server CPU per request, idle: {cpu_idle / (3 * len(idle)) * 1000:.2f} ms; bootstrap 90 % interval "
          f"of the idle p99 {ia:.1f}-{ib:.1f} ms")
    j50, j99, schedstat = pct(idle_loop, 0.5), pct(idle_loop, 0.99), any(idle_loop)
    if schedstat:
            print(f"event-loop CPU while a status was in flight, idle: p50 {j50:.1f} ms  p99 {j99:.1f} ms")
    met_all = True
    for (phase, revalidate), run in results.items():
        loaded = run.samples
        l50, l95, l99 = pct(loaded, 0.5), pct(loaded, 0.95), pct(loaded, 0.99)
        ratio = l99 / i99
        met = ratio <= TARGET_RATIO and run.errors == 0
        met_all = met_all and met
        how = ("PHASE-LOCKED: every client started at once (one burst of requests per pause)" if phase == "locked"
               else "RANDOM PHASE: each client started at a random point of its pause (seeded)")
        polls = ("pollers REVALIDATE (If-None-Match, as the panel)" if revalidate
                 else "pollers read every answer in full")
        print(f"-- loaded, {how}; {polls}")
        print(f"status under {per_proc * args.procs} pollers + {args.submitters} submitters "
              f"(pause {args.poll_interval_s:g} s): p50 {l50:8.1f} ms  "
              f"p95 {l95:8.1f} ms  p99 {l99:8.1f} ms  (load average {run.load:.1f} on {os.cpu_count()} CPUs)")
        print(f"load requests answered while sampling: {run.answered:,} ({run.errors:,} errors"
              f"{f', {run.unchanged:,} of them 304 Not Modified' if revalidate else ''}) in {run.elapsed_s:.0f} s")
        print(f"ratio loaded/idle ({phase}{', revalidating' if revalidate else ''}): p50 {l50 / i50:.2f}x  p99 {ratio:.2f}x (target p99 <= "
              f"{TARGET_RATIO:.0f}x: {'met' if ratio <= TARGET_RATIO else 'NOT met'})")
        (la, lb), (ra, rb) = interval(loaded, 0.99), interval(idle, 0.99, other=loaded)
        print(f"bootstrap 90 % intervals: loaded p99 {la:.1f}-{lb:.1f} ms, ratio {ra:.2f}-{rb:.2f}x")
        # server CPU per answered request: the status samples (3 requests each) and the load clients'
        # answers while they were taken
        print(f"server CPU per request, loaded: {run.cpu_s / (3 * len(loaded) + run.answered) * 1000:.2f} ms "
              f"({run.cpu_s / run.elapsed_s * 100:.0f} % of one CPU while loaded)")
        if not schedstat:
            continue
        m50, m99 = pct(run.loop, 0.5), pct(run.loop, 0.99)
        ma, mb = interval(idle_loop, 0.99, other=run.loop)
        print(f"event-loop CPU while a status was in flight, loaded: p50 {m50:.1f} ms  p99 {m99:.1f} ms; "
              f"p99 ratio loaded/idle {m99 / max(j99, 1e-3):.2f}x (bootstrap 90 % {ma:.2f}-{mb:.2f}x): the server "
              f"work each status waited behind, which the machine's other load barely moves")
    return 0 if met_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
