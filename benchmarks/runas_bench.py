"""What running each job as its owner costs: start latency and cancel latency of the local executor.

Issue 15 (run-as): in hub mode every job starts as its owner's OS account — a per-user 0700
directory, a clean environment, the wrapper passed as source to an interpreter the account can run,
a cgroup to hold every process — and a cancel ends only when every process of the job is gone.
This script times both against the embedded path measured in the same run:

* **start**: ``LocalExecutor.start()`` until the job's first line is in its log, ``--repeat``
  times — embedded (the service's own account, wrapper by file) vs. as a real account made with
  ``useradd`` (removed after), with the machine's job groups (cgroup here) and with the marker;
* **cancel**: ``stop(grace_s=0)`` of a job holding a ``setsid()`` child until :class:`Exited`
  (reported only once nothing of the job is left) — cgroup vs. marker tracking.

Prints medians in seconds, each ratio to the embedded baseline, and the load average. Needs root
(accounts); without it, prints why and exits 0.

Run: ``.venv/bin/python benchmarks/runas_bench.py [--repeat 9]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.executors.base import Exited  # noqa: E402
from jupyter_sched.executors.local import LocalExecutor  # noqa: E402
from jupyter_sched.executors.runas import AccountMapping, RunAs  # noqa: E402
from jupyter_sched.model import Allocation, Job, JobSpec, ResourceRequest  # noqa: E402
from tests.accounts import account_python, os_accounts, shared_dir, skip_reason  # noqa: E402

GPU = Allocation("n1", ("GPU-bench-0",))
HELLO = "print('ready', flush=True)\nimport time\ntime.sleep(30)\n"
SETSID = ("import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
          "start_new_session=True)\nprint('ready', flush=True)\ntime.sleep(60)\n")


def job(job_id: str, user: str, source: str) -> Job:
    spec = JobSpec(name=job_id, user=user, resources=ResourceRequest(gpus=1), script=f"{job_id}.py", source=source)
    return Job(id=job_id, spec=spec)


def wait(predicate: Callable[[], object], limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError("timed out")
        time.sleep(0.005)


def start_latency(ex: LocalExecutor, run_as: RunAs | None, user: str, n: int) -> float:
    job_id = f"s{n}-{os.getpid()}"
    began = time.perf_counter()
    ex.start(job(job_id, user, HELLO), GPU, run_as)
    wait(lambda: "ready" in ex.logs(job_id)[0])
    took = time.perf_counter() - began
    ex.stop(job_id, grace_s=0)
    wait(lambda: any(isinstance(e, Exited) for e in ex.poll()) or job_id not in ex.tracked())
    return took


def cancel_latency(ex: LocalExecutor, run_as: RunAs | None, user: str, n: int) -> float:
    job_id = f"c{n}-{os.getpid()}"
    ex.start(job(job_id, user, SETSID), GPU, run_as)
    wait(lambda: "ready" in ex.logs(job_id)[0])
    began = time.perf_counter()
    ex.stop(job_id, grace_s=0)
    wait(lambda: any(isinstance(e, Exited) for e in ex.poll()) or job_id not in ex.tracked())
    return time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    reason = skip_reason()
    if reason:
        print(f"runas_bench: skipped: {reason}")
        return 0
    python = account_python() or sys.executable
    with os_accounts(1, prefix="jsb") as (account,), shared_dir("jsched-bench-") as root, \
            tempfile.TemporaryDirectory() as private:
        owner = AccountMapping().resolve(account.name)
        embedded = LocalExecutor(Path(private) / "jobs")
        as_owner = LocalExecutor(root / "jobs", job_python=python, clean_env=True, require_run_as=True)
        as_owner_marker = LocalExecutor(root / "jobs-m", job_python=python, clean_env=True, require_run_as=True,
                                        tracking="marker")
        rows = {
            "start, embedded (baseline)": [start_latency(embedded, None, "bench", i) for i in range(args.repeat)],
            f"start, as {account.name} ({as_owner.tracker.kind})":
                [start_latency(as_owner, owner, account.name, i) for i in range(args.repeat)],
            f"start, as {account.name} (marker)":
                [start_latency(as_owner_marker, owner, account.name, i) for i in range(args.repeat)],
        }
        cancels = {
            "cancel with a setsid child, embedded (baseline)":
                [cancel_latency(embedded, None, "bench", i) for i in range(args.repeat)],
            f"cancel with a setsid child, as {account.name} ({as_owner.tracker.kind})":
                [cancel_latency(as_owner, owner, account.name, i) for i in range(args.repeat)],
            f"cancel with a setsid child, as {account.name} (marker)":
                [cancel_latency(as_owner_marker, owner, account.name, i) for i in range(args.repeat)],
        }
    load = os.getloadavg()
    print(f"runas_bench: {args.repeat} runs each, load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          f"on {os.cpu_count()} CPUs; interpreter for the account: {python}")
    for table in (rows, cancels):
        baseline = statistics.median(next(iter(table.values())))
        for name, values in table.items():
            median = statistics.median(values)
            print(f"  {name:<62} median {median:6.3f} s  best {min(values):6.3f} s  ratio {median / baseline:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
