"""Submit latency through the REST API with 10,000 jobs already stored (issue 2 target: p95 <= 20 ms).

What it does, in one run:

1. Makes temp dirs (root, Jupyter data/runtime/config) and a SQLite store in them.
2. Stores 10,000 finished jobs (the history a busy server accumulates: succeeded, failed,
   cancelled; 50 users) **directly through the store** (``jupyter_sched.store.Store``, one
   transaction) — loading them through the API would take minutes and measure the same path.
3. Starts a real ``jupyter server`` subprocess on a random free loopback port with
   jupyter_sched enabled (simulated inventory of 4 GPUs, the default).
4. Measures the **baseline**: 1,000 ``GET /api/status`` (jupyter_server's own trivial handler,
   same auth, same event loop) — what any request costs on this machine right now.
5. Submits 1,000 jobs with ``POST /api/sched/jobs`` (1 GPU each, ``sleep``): the first four
   run, the rest pend for capacity, so the scheduler cycles over a growing queue *while* the
   submissions are measured, as in real use.
6. Prints p50/p95/p99 of both and the ratio submit/baseline; stops the server and ends the
   process groups of the jobs it started (found by this run's temp dir in their command line).

Before the server starts, 200 ``SchedulerService.submit`` calls are also timed in-process on
the same store (no HTTP, engine idle) to split the REST latency into service and web costs.

Latency is wall-clock per request from a keep-alive httpx client on loopback, one request at
a time. Run: ``.venv/bin/python benchmarks/submit_bench.py [--history 10000] [--submits 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx

from jupyter_sched.model import Allocation, Job, JobSpec, JobState, ResourceRequest
from jupyter_sched.store import JobRecord, Store, sqlite_url

TOKEN = "bench-token-0123456789"
TERMINAL = (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def store_history(db_url: str, count: int) -> float:
    """Insert ``count`` finished jobs in one transaction; return the seconds it took."""
    started = time.perf_counter()
    store = Store(db_url, sqlite_synchronous="NORMAL")
    # recent history (one a minute, ending an hour ago): the server's retention prunes finished
    # jobs older than retention_finished_jobs_days at start, which would empty a fixed old date
    base = datetime.now(timezone.utc) - timedelta(minutes=count + 60)
    with store.transaction() as tx:
        for i in range(count):
            submitted = base + timedelta(minutes=i)
            spec = JobSpec(name=f"hist-{i}", user=f"user{i % 50}", team=f"team{i % 5}",
                           resources=ResourceRequest(gpus=1 + i % 2), command=("python", "train.py"))
            job = Job(id=f"hist-{i:06d}", spec=spec, state=TERMINAL[i % 3], submitted_at=submitted,
                      admitted_at=submitted, started_at=submitted + timedelta(seconds=5),
                      finished_at=submitted + timedelta(minutes=30), exit_code=0 if i % 3 == 0 else 1,
                      allocation=Allocation(node="hist-node", gpu_uuids=(f"GPU-hist-{i % 8}",)), attempts=1)
            tx.insert_job(JobRecord(job=job, executor="local"))
    store.close()
    return time.perf_counter() - started


def start_server(root: Path, port: int, db_url: str, **sched: object) -> subprocess.Popen[bytes]:
    """``jupyter server`` with jupyter_sched on ``port`` over ``db_url`` (``sched``: more
    ``c.SchedApp`` settings)."""
    env = dict(os.environ)
    env.update({"JUPYTER_DATA_DIR": str(root / "data"), "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
                "JUPYTER_CONFIG_DIR": str(root / "config"), "JUPYTER_PLATFORM_DIRS": "1"})
    (root / "work").mkdir()
    config = {"ServerApp": {"jpserver_extensions": {"jupyter_sched": True}},
              "IdentityProvider": {"token": TOKEN},
              # the history is older than the default retention: keep it, or the server prunes it;
              # one user submits them all: the per-user backlog cap (1000 by default) is off here
              "SchedApp": {"db_url": db_url, "inventory_source": "simulated", "simulated_gpus": 4,
                           "retention_finished_jobs_days": 0, "max_unfinished_per_user": 0, **sched}}
    (root / "config").mkdir()
    (root / "config" / "jupyter_server_config.json").write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "jupyter_server", f"--port={port}", "--ip=127.0.0.1", "--no-browser",
           "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root / 'work'}", "--allow-root",
           "--log-level=WARN"]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=open(root / "server.log", "wb"),
                            start_new_session=True)


def wait_ready(client: httpx.Client, proc: subprocess.Popen[bytes], root: Path) -> None:
    deadline = time.monotonic() + 180  # a loaded 2-core machine starts a server slowly
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("server exited:\n" + (root / "server.log").read_text()[-3000:])
        try:
            if client.get("api/sched/config").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("server did not answer within 180 s:\n" + (root / "server.log").read_text()[-3000:])


def kill_leftover_jobs(root: Path) -> int:
    """Kill the process groups of job wrappers this run started (their ``--job-dir`` lies under ``root``).

    Local jobs outlive their server by design (re-adoption after a restart), so a benchmark that
    deletes its store ends them itself; cancelling through the API would only let the next
    pending jobs start. Returns how many process groups it ended.
    """
    import psutil

    killed = 0
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info.get("cmdline") or [])
        if "wrapper.py" in cmdline and str(root) in cmdline:
            try:
                os.killpg(os.getpgid(process.info["pid"]), signal.SIGKILL)
                killed += 1
            except (ProcessLookupError, PermissionError):
                pass
    return killed


def stop_server(proc: subprocess.Popen[bytes], root: Path) -> int:
    """Stop the server started by :func:`start_server` (SIGTERM, then SIGKILL to its process group
    after 15 s) and kill the jobs it left running; returns how many jobs were killed."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
    return kill_leftover_jobs(root)


def service_submit_latency(db_url: str, root: Path, count: int) -> list[float]:
    """Time ``SchedulerService.submit`` in-process (no HTTP, engine not ticking) on the same store.

    This splits the REST latency into the service's own cost and the HTTP + handler cost. The
    jobs are cancelled (withdrawn while pending) afterwards, so the server never runs them.
    """
    from jupyter_sched.services import SchedulerService

    service = SchedulerService.from_config({"db_url": db_url, "log_dir": str(root / "logs"),
                                            "inventory_source": "simulated", "simulated_gpus": 4})
    samples, ids = [], []
    for i in range(count):
        t0 = time.perf_counter()
        job = service.submit({"name": f"inproc-{i}", "gpus": 1, "command": ["sleep", "600"]}, user="bench")
        samples.append(time.perf_counter() - t0)
        ids.append(job["id"])
    for job_id in ids:
        service.cancel(job_id, user="bench")
    service.store.close()
    return samples


def percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    q = statistics.quantiles(ordered, n=100, method="inclusive")
    return {"p50": q[49] * 1000, "p95": q[94] * 1000, "p99": q[98] * 1000, "mean": statistics.fmean(ordered) * 1000}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", type=int, default=10_000, help="finished jobs stored first (default 10000)")
    parser.add_argument("--submits", type=int, default=1_000, help="jobs submitted and timed (default 1000)")
    parser.add_argument("--inproc", type=int, default=200,
                        help="in-process SchedulerService.submit calls timed first (default 200)")
    parser.add_argument("--profile", metavar="PATH", default=None,
                        help="record the server's stacks (per thread) during the REST submits with py-spy "
                             "(on PATH, or $PY_SPY) into PATH (collapsed stacks); off by default")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="submit-bench-") as tmp:
        root = Path(tmp)
        db_url = sqlite_url(root / "sched.sqlite")
        load_s = store_history(db_url, args.history)
        inproc = service_submit_latency(db_url, root, args.inproc)
        port = free_port()
        proc = start_server(root, port, db_url)
        base = f"http://127.0.0.1:{port}/"
        submitted: list[str] = []
        try:
            with httpx.Client(base_url=base, headers={"Authorization": f"token {TOKEN}"}, timeout=30) as client:
                wait_ready(client, proc, root)
                for _ in range(50):  # warm-up: connection, caches
                    client.get("api/status")
                baseline = []
                for _ in range(args.submits):
                    t0 = time.perf_counter()
                    response = client.get("api/status")
                    baseline.append(time.perf_counter() - t0)
                    response.raise_for_status()
                latencies = []
                spy = None if args.profile is None else subprocess.Popen(
                    [os.environ.get("PY_SPY", "py-spy"), "record", "--threads", "-f", "raw", "-r", "200",
                     "-o", args.profile, "-p", str(proc.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if spy is not None:
                    time.sleep(1)  # py-spy attaches
                for i in range(args.submits):
                    body = {"name": f"bench-{i}", "gpus": 1, "command": ["sleep", "600"]}
                    t0 = time.perf_counter()
                    response = client.post("api/sched/jobs", json=body)
                    latencies.append(time.perf_counter() - t0)
                    if response.status_code != 201:
                        raise SystemExit(f"submit {i} answered {response.status_code}: {response.text}")
                    submitted.append(response.json()["id"])
                if spy is not None:
                    spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                    spy.wait(60)
        finally:
            ended = stop_server(proc, root)
        store = Store(db_url)  # counted in the store: GET jobs answers pages of at most 1,000
        stored = len(store.list_jobs())
        store.close()
    b, s, i = percentiles(baseline), percentiles(latencies), percentiles(inproc)
    print(f"history stored directly through the store: {args.history} finished jobs in {load_s:.1f} s")
    print(f"jobs in the store after the run (history + in-process + REST): {stored}")
    print(f"job process groups ended after the server stopped: {ended} (the jobs that held the 4 GPUs)")
    print(f"baseline GET /api/status  x{len(baseline)}: p50 {b['p50']:.2f} ms  p95 {b['p95']:.2f} ms  "
          f"p99 {b['p99']:.2f} ms")
    print(f"submit POST api/sched/jobs x{len(latencies)}: p50 {s['p50']:.2f} ms  p95 {s['p95']:.2f} ms  "
          f"p99 {s['p99']:.2f} ms")
    print(f"in-process SchedulerService.submit x{len(inproc)} (no HTTP, engine idle): p50 {i['p50']:.2f} ms  "
          f"p95 {i['p95']:.2f} ms  p99 {i['p99']:.2f} ms")
    print(f"ratio submit/baseline: p50 {s['p50'] / b['p50']:.1f}x  p95 {s['p95'] / b['p95']:.1f}x")
    target = 10.0 if args.history >= 100_000 else 20.0  # issue 17: 10 ms with 100,000 stored; issue 2: 20 ms
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"target submit p95 <= {target:.0f} ms: {'met' if s['p95'] <= target else 'NOT met'} ({s['p95']:.2f} ms)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
