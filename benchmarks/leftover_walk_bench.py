"""How long a job's end takes to find and end what the job left, beside a crowd of other processes (red37 R2).

A crowd of ``--crowd`` idle processes outside the job (this account's), then a stand-in wrapper (the wrapper module's
own ``_end_leftovers``, in a process of its own session, as the real wrapper runs it at a job's end) whose job left
``--left`` sleeping children: the seconds ``_end_leftovers`` took, per way of finding them (``--mode``: ``group`` —
the job's tracking cgroup, root only; ``children`` — ``/proc/<pid>/task/*/children``; ``scan`` — one pass over
``/proc`` per look). ``--tree`` runs another checkout's wrapper (e.g. main's before the fix: its only way).

    python benchmarks/leftover_walk_bench.py --crowd 5000 --left 8 --mode children --mode scan [--tree /tmp/main]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
from pathlib import Path

_CROWD = r"""
import os, signal, sys
for _ in range(int(sys.argv[1])):
    if os.fork() == 0:
        signal.pause()
        os._exit(0)
print("ready", flush=True)
sys.stdin.read()
"""

_JOB = r"""
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from jupyter_sched.executors import wrapper
mode, left = sys.argv[2], int(sys.argv[3])
members = sys.stdin.readline().strip()
wrapper._become_subreaper()
signal.signal(signal.SIGTERM, wrapper._on_signal)
wrapper._child_started = True
r, w = os.pipe()
for _ in range(left):
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        os.write(w, b"x")
        signal.pause()
        os._exit(0)
got = b""
while len(got) < left:
    got += os.read(r, left)
if hasattr(wrapper, "_members_file") and mode == "group":
    wrapper._members_file[:] = [members]
if hasattr(wrapper, "_children_files") and mode == "scan":
    wrapper._children_files[:] = [False]
began = time.monotonic()
ended = wrapper._end_leftovers(3.0)
print(f"{time.monotonic() - began:.3f} {len(ended)}", flush=True)
"""


def _one(tree: Path, mode: str, left: int) -> str:
    from jupyter_sched.executors import tracking

    tracker = tracking.detect_tracker() if mode == "group" else None
    group = tracker.create(f"bench-{os.getpid()}", uid=None) if isinstance(tracker, tracking.CgroupTracker) else None
    job = subprocess.Popen([sys.executable, "-c", _JOB, str(tree), mode, str(left)], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        if group is not None and tracker is not None:
            tracker.enroll(group, job.pid)
        out, _ = job.communicate(((tracking.members_file(group) or "") if group else "") + "\n", timeout=600)
        return out.strip()
    finally:
        if group is not None and tracker is not None:
            tracker.kill(group)
            tracker.remove(group)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crowd", type=int, default=5000)
    parser.add_argument("--left", type=int, default=8)
    parser.add_argument("--mode", action="append", choices=["group", "children", "scan"])
    parser.add_argument("--tree", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    crowd = subprocess.Popen([sys.executable, "-S", "-c", _CROWD, str(args.crowd)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert crowd.stdout is not None
        crowd.stdout.readline()
        for mode in args.mode or ["group", "children", "scan"]:
            runs = [_one(args.tree, mode, args.left) for _ in range(args.runs)]
            print(f"tree={args.tree} crowd={args.crowd} left={args.left} mode={mode}: seconds, ended = {runs}")
    finally:
        os.killpg(crowd.pid, signal.SIGKILL)
        crowd.wait()


if __name__ == "__main__":
    main()
