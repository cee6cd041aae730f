"""Reliability figures of one run: chaos kills, load, fuzz (issue 10's closing figures).

What it does, each part on real ``jupyter server`` subprocesses (loopback, temp dirs, simulated
GPUs, SQLite unless ``--postgres``), reusing the reliability tests' drivers
(``tests/reliability/{chaos,load,fuzz}.py``):

1. **Chaos**: clients submit, cancel and request leases while the server is SIGKILLed
   ``--kills`` times at random (seeded) moments and restarted on the same store; prints kills
   survived, requests accepted vs found afterwards, unanswered requests, 5xx, integrity problems.
2. **Load**: ``--clients`` concurrent clients (threads, one user token each of 10 users) each
   submit 2 jobs, list, cancel one and read the queue, all at once. Baseline in the same run: the
   same script by ONE client, alone. Prints requests/s held and p50/p99 latency under load, and
   the ratios to the baseline; 5xx; quota overruns and double allocations from the usage intervals.
3. **Fuzz**: schemathesis over every operation of ``openapi.yaml`` (``--examples`` positive and
   negative cases each); prints cases run, failures, 5xx.

Run: ``.venv/bin/python benchmarks/load_bench.py [--kills 5] [--clients 100] [--examples 10] [--postgres]``.
Takes a few minutes (each server start costs seconds). Exit status 1 when any promise broke
(5xx, a lost or duplicated job, a quota overrun, a failed fuzz check).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.store import Store  # noqa: E402
from tests.reliability.chaos import run_chaos  # noqa: E402
from tests.reliability.fuzz import hold_leadership, run_fuzz  # noqa: E402
from tests.reliability.harness import EmbeddedServer, kill_strays, overlapping_allocations  # noqa: E402
from tests.reliability.load import LoadOutcome, quota_overruns, run_load, user_tokens  # noqa: E402

TEAM_LIMIT = 3


def database(args: argparse.Namespace, name: str) -> tuple[str | None, object]:
    """``(db_url, pg_server)``: a fresh PostgreSQL database with ``--postgres``, else None (SQLite)."""
    if not args.postgres:
        return None, None
    from tests.pg import PostgresServer

    server = PostgresServer.start()
    return server.create_database(name), server


def chaos(args: argparse.Namespace, work: Path) -> bool:
    url, pg = database(args, "chaos")
    try:
        out = run_chaos(work / "chaos", db_url=url, kills=args.kills, seed=args.seed)
    finally:
        if pg is not None:
            pg.stop()  # type: ignore[attr-defined]
    accepted = out.accepted
    found = sum(1 for job_id in accepted if job_id in out.jobs)
    problems = out.problems()
    print(f"chaos  kills survived        {out.kills}")
    print(f"chaos  requests accepted     {len(accepted)} (jobs+leases answered 2xx); found afterwards {found}")
    print(f"chaos  unanswered submits    {len(out.unknown_names)} (server died mid-request); of them stored "
          f"{len(out.jobs) - found} (each at most once)")
    print(f"chaos  requests made         {len(out.calls)}; 5xx {len(out.server_errors)}; running jobs re-adopted "
          f"{out.adopted}, settled from exit files {out.settled_while_down}; leader terms {out.leader_terms}; {out.seconds:.0f} s")
    print(f"chaos  broken promises       {len(problems)}" + "".join(f"\n         {p}" for p in problems[:10]))
    return not problems


def load(args: argparse.Namespace, work: Path) -> bool:
    url, pg = database(args, "load")
    server = EmbeddedServer.start(work / "load", db_url=url, users=user_tokens(), admin_users=["boss"],
                                  quotas=[{"team": "default", "guaranteed": TEAM_LIMIT, "borrowing_limit": 0}])
    try:
        baseline = run_load([server], clients=1)
        for _ in range(3):  # the baseline is one client's 5 requests: take the best of a few
            again = run_load([server], clients=1)
            baseline = again if again.percentile_s(0.99) < baseline.percentile_s(0.99) else baseline
        loaded: LoadOutcome = run_load([server], clients=args.clients)
        time.sleep(1.0)
        store = Store(server.db_url)
        try:
            intervals = store.usage_rows()
        finally:
            store.close()
    finally:
        server.terminate()
        if pg is not None:
            pg.stop()  # type: ignore[attr-defined]
    overruns = quota_overruns(intervals, {"default": TEAM_LIMIT}) + overlapping_allocations(intervals)
    dup = len(loaded.job_ids) - len(set(loaded.job_ids))
    p50, p99 = loaded.percentile_s(0.5), loaded.percentile_s(0.99)
    b99 = baseline.percentile_s(0.99)
    print(f"load   concurrent clients    {loaded.clients} ({loaded.requests} requests, 10 users)")
    print(f"load   requests/s held       {loaded.requests_per_s:.1f} (one client alone: {baseline.requests_per_s:.1f}; "
          f"ratio {loaded.requests_per_s / max(baseline.requests_per_s, 1e-9):.1f}x)")
    print(f"load   latency under load    p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms (alone p99 {b99 * 1000:.0f} ms; "
          f"ratio {p99 / max(b99, 1e-9):.1f}x)")
    print(f"load   5xx or no answer      {loaded.server_errors}; other errors {len(loaded.errors)}; duplicate ids {dup}")
    print(f"load   quota overruns        {len(overruns)}" + "".join(f"\n         {p}" for p in overruns[:5]))
    return loaded.server_errors == 0 and not loaded.errors and dup == 0 and not overruns


def fuzz(args: argparse.Namespace, work: Path) -> bool:
    url, pg = database(args, "fuzz")
    url = url or f"sqlite:///{work / 'fuzz.sqlite'}"
    hold_leadership(url)
    server = EmbeddedServer.start(work / "fuzz", db_url=url)
    try:
        out = run_fuzz(server, examples=args.examples, seed=args.seed)
    finally:
        server.kill()
        if pg is not None:
            pg.stop()  # type: ignore[attr-defined]
    print(f"fuzz   cases run             {out.cases} over {len(out.operations)} operations "
          f"(statuses {dict(sorted(out.by_status.items()))})")
    print(f"fuzz   5xx seen              {out.server_errors}; failed checks {len(out.failures)}"
          + "".join(f"\n         {f}" for f in out.failures[:5]))
    return out.server_errors == 0 and not out.failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=5, help="SIGKILLs in the chaos part (default 5)")
    parser.add_argument("--clients", type=int, default=100, help="concurrent clients in the load part (default 100)")
    parser.add_argument("--examples", type=int, default=10, help="fuzz examples per operation and mode (default 10)")
    parser.add_argument("--seed", type=int, default=20, help="RNG seed (default 20)")
    parser.add_argument("--postgres", action="store_true", help="use a throw-away PostgreSQL server, not SQLite")
    parser.add_argument("--only", choices=["chaos", "load", "fuzz"], help="run one part")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="jsched-load-bench-"))
    ok = True
    try:
        for name, part in (("chaos", chaos), ("load", load), ("fuzz", fuzz)):
            if args.only in (None, name):
                ok = part(args, work) and ok
    finally:
        kill_strays(work)
    print("result " + ("every promise kept" if ok else "BROKEN PROMISES (see above)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
