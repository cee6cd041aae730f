"""The local executor's tick (``LocalExecutor.poll``) with many running jobs: what the looks from outside the
jobs' account cost (red30 R3: a stat of each log, a read of each wrapper's state, the folders walked round
robin, a statvfs per log disk; red30 R9: the jobs' open files, round robin).

Starts ``--jobs`` real jobs (each a ``sleep``, with a few files in its folder), polls the executor
``--polls`` times and prints the CPU time (user + system of this process) and wall time per poll, then stops
the jobs. Run it on two trees one after the other to compare (``PYTHONPATH=<tree>``): the tree without the
looks gives the baseline.

Run: ``.venv/bin/python benchmarks/outside_caps_bench.py [--jobs 100] [--polls 200]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from jupyter_sched.executors.local import LocalExecutor
from jupyter_sched.model import Allocation, Job, JobSpec


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=100, help="running jobs (default 100)")
    parser.add_argument("--polls", type=int, default=200, help="polls timed (default 200)")
    parser.add_argument("--files", type=int, default=8, help="files each job leaves in its folder (default 8)")
    parser.add_argument("--log-mib", type=int, default=1024,
                        help="c.SchedApp.max_log_mib (default 1024; 0: no cap, so no folder bound, red30 R9)")
    parser.add_argument("--tracking", default="auto", choices=("auto", "marker"), help="job groups (default auto)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="outside-caps-") as tmp:
        ex = LocalExecutor(Path(tmp) / "jobs", min_log_free_bytes=16 << 20, max_log_bytes=args.log_mib << 20,
                           tracking=args.tracking)
        ids = [f"j-{i}" for i in range(args.jobs)]
        try:
            for job_id in ids:
                ex.start(Job(id=job_id, spec=JobSpec(name=job_id, user="bench", command=("sleep", "3600"))),
                         Allocation("n1", ()))
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and not all((ex.job_dir(i) / "output.log").exists() for i in ids):
                time.sleep(0.2)
            for job_id in ids:
                for n in range(args.files):
                    (ex.job_dir(job_id) / f"out{n}.txt").write_text("x" * 1000)
            ex.poll()
            before_cpu, before = time.process_time(), time.perf_counter()
            for _ in range(args.polls):
                if ex.poll():
                    print("a job ended during the timing", file=sys.stderr)
                    return 1
            cpu, wall = time.process_time() - before_cpu, time.perf_counter() - before
            looks = "yes" if hasattr(ex, "writes") else "no"
            print(f"jobs {args.jobs} polls {args.polls} outside looks: {looks}: "
                  f"{1000 * cpu / args.polls:.2f} ms CPU, {1000 * wall / args.polls:.2f} ms wall per poll")
        finally:
            for job_id in ids:
                ex.stop(job_id, grace_s=0)
            deadline = time.monotonic() + 120
            while ex.tracked() and time.monotonic() < deadline:
                ex.poll()
                time.sleep(0.1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
