"""Wall time of ``jupyter-sched status``, ``queue`` and ``cancel`` against a server holding 1,000 jobs.

Issue 20: with ~220 jobs stored, ``status`` took 3-4 s and ``queue`` 2.3 s on a busy 2-core
machine. Each CLI call is a new process, so its cost is interpreter start + imports + HTTP
round trips + rendering. This script starts a real ``jupyter server`` with the extension
(loopback, temp dirs, simulated GPUs, SQLite; the reliability tests' harness), submits
``--jobs`` jobs (1 GPU each: a few run, the rest wait), then times, as subprocesses, each
command ``--repeat`` times beside two baselines measured in the same run:

* ``python -c pass`` — the interpreter alone (what any Python CLI pays);
* ``jupyter-sched --help`` — interpreter + the CLI's own imports, no server.

The CLI finds the server as it does in a user's terminal, through the server's runtime file
(``--env``: through ``JUPYTER_SCHED_URL``, as in kernels). ``cancel`` cancels a different
pending job each time. The commands run with Python's bytecode cache as an installed package has
it (pip compiles it at install): ``PYTHONDONTWRITEBYTECODE``, which some shells and CI images set,
is left out of their environment, and one untimed run of each writes the cache first — without it
every call compiles every module it imports, ~0.1 s of CPU that no user's install pays. Prints median and best seconds, the ratio
of each median to ``python -c pass``, the load average while it ran, and whether each median
meets the issue's target (0.5 s). Exit status 1 when a target is missed.

``--against DIR`` times the same three commands run from another checkout's ``jupyter_sched``
(e.g. ``git worktree add /tmp/base main``) against the same server, interleaved with these, so a
change is measured beside what it changes in the same minutes.

Run: ``.venv/bin/python benchmarks/cli_bench.py [--jobs 1000] [--repeat 7] [--against DIR]``.
"""

from __future__ import annotations

import argparse
import os
import resource
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

TARGET_S = 0.5
CLI = str(Path(sys.executable).parent / "jupyter-sched")


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one run of ``argv`` (it must succeed). CPU time (user +
    system of the finished child, from ``RUSAGE_CHILDREN``; the server is a child too but counts
    only once it exits) is what the command itself costs; wall time adds the wait for a CPU,
    which on a shared machine can be most of it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr.strip()}")
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def fill(server: EmbeddedServer, jobs: int) -> list[str]:
    """Submit ``jobs`` jobs; return the ids (newest last)."""
    client = httpx.Client(base_url=server.api, headers={"Authorization": f"token {server.token}"}, timeout=60)
    ids = []
    for i in range(jobs):
        answer = client.post("jobs", json={"gpus": 1, "name": f"bench-{i}", "time_limit": "1h",
                                           "command": ["sleep", "3600"]})
        answer.raise_for_status()
        ids.append(str(answer.json()["id"]))
    return ids


def stop_running(server: EmbeddedServer, wait_s: float = 120) -> None:
    """Cancel every live job — pending first, so none starts on the GPUs the running ones free —
    and wait until none holds GPUs: the server is then killed, and jobs outlive their server by
    design (they would sleep on for an hour)."""
    client = httpx.Client(base_url=server.api, headers={"Authorization": f"token {server.token}"}, timeout=60)

    def live(states: str) -> list[str]:
        page = client.get("jobs", params={"state": states, "all": "true", "limit": 1000}).json()
        return [str(job["id"]) for job in (page["jobs"] if isinstance(page, dict) else page)]

    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for job_id in live("pending,preempted") + live("admitted,running"):
            client.delete(f"jobs/{job_id}")
        if not live("pending,preempted,admitted,running"):
            return
        time.sleep(0.5)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000, help="jobs the server holds (default 1000)")
    parser.add_argument("--repeat", type=int, default=7, help="runs per command (default 7)")
    parser.add_argument("--env", action="store_true",
                        help="find the server through JUPYTER_SCHED_URL/TOKEN (as kernels do) instead of the "
                             "runtime-file discovery a user's terminal goes through")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="also time status, queue and cancel with DIR's jupyter_sched (another checkout)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="cli-bench-"))
    server = EmbeddedServer.start(work, simulated_gpus=4)
    try:
        t0 = time.perf_counter()
        ids = fill(server, args.jobs)
        print(f"server holds {len(ids)} jobs (submitted in {time.perf_counter() - t0:.1f} s)")
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("JUPYTER_SCHED") and k != "PYTHONDONTWRITEBYTECODE"}
        if args.env:
            env.update({"JUPYTER_SCHED_URL": server.url, "JUPYTER_SCHED_TOKEN": server.token})
        else:  # as a user at a terminal: the CLI finds the server through its runtime file
            env["JUPYTER_RUNTIME_DIR"] = str(work / "server-runtime")
        pending = iter(reversed(ids))  # the newest are surely still pending
        env["PYTHONPATH"] = str(ROOT)  # this checkout's jupyter_sched, whatever the venv has installed
        other = {**env, "PYTHONPATH": str(args.against.resolve())} if args.against else env
        commands: dict[str, tuple[list[str] | None, dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], env),
            "jupyter-sched --help": ([CLI, "--help"], env),
            "jupyter-sched status": ([CLI, "status"], env),
            "jupyter-sched queue": ([CLI, "queue"], env),
            "jupyter-sched cancel JOB": (None, env),  # a new job id each run
        }
        if args.against:
            commands.update({f"{name} (against)": (argv, other) for name, (argv, _) in list(commands.items())[2:]})
        for argv, where in commands.values():  # untimed: writes the bytecode cache (docstring)
            timed(argv if argv is not None else [CLI, "cancel", next(pending)], where)
        load_before = os.getloadavg()[0]
        results: dict[str, list[tuple[float, float]]] = {}
        for _ in range(args.repeat):  # interleaved, so load changes hit every command alike
            for name, (argv, where) in commands.items():
                run = argv if argv is not None else [CLI, "cancel", next(pending)]
                results.setdefault(name, []).append(timed(run, where))
        load_after = os.getloadavg()[0]
    finally:
        stop_running(server)
        server.kill()

    base = statistics.median(wall for wall, _ in results["python -c pass"])
    print(f"load average (1 min) {load_before:.2f} before, {load_after:.2f} after; {os.cpu_count()} CPUs; "
          f"{args.repeat} runs each")
    if args.against:
        print(f"(against): the same command with {args.against.resolve()}'s jupyter_sched")
    print(f"{'command':36s} {'wall s':>7s} {'best':>6s} {'x pass':>7s} {'CPU s':>6s}  target (median wall)")
    missed = False
    for name, runs in results.items():
        walls = [wall for wall, _ in runs]
        median = statistics.median(walls)
        cpu = statistics.median(c for _, c in runs)
        verdict = ""
        if name.startswith("jupyter-sched") and name != "jupyter-sched --help" and "(against)" not in name:
            ok = median <= TARGET_S
            missed |= not ok
            verdict = f"{'met' if ok else 'MISSED'} (<= {TARGET_S} s)"
        print(f"{name:36s} {median:7.3f} {min(walls):6.3f} {median / base:7.1f} {cpu:6.3f}  {verdict}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
