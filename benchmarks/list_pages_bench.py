"""``GET definitions`` and ``GET jobs`` of one user with ``--rows`` heavy rows: time and answer bytes, old vs new (red28 R6).

red28 measured ~1,570 definitions of one user (env, args and parameters each ~60 KB, under their 64 KiB caps):
each ``GET definitions`` 120 s and 272 MiB, the service 339 MiB → 4.75 GiB; and ``GET jobs?limit=1000`` of 1,000
jobs with 120 KB requests: 24 s and 117 MiB each. This script builds one SQLite store with ``--rows`` such
definitions of one user (each with ``--runs`` runs) and ``--rows`` such cancelled jobs, then times (median of
``--repeat``, wall ms, with the answer's bytes as the web layer writes them):

- definitions, old: the list before red28 R6, in the same run on the same store — every definition of the user
  read, every run of them read to keep the newest, each built and written into one answer;
- definitions, new: :meth:`DefinitionsService.list` (one page: ``limit`` 100, ended at ``PAGE_BYTES``);
- jobs, old: :meth:`JobsService.list` with ``limit=1000`` and the page's byte bound lifted (what it did before);
- jobs, new: the same call with the byte bound (``PAGE_BYTES``).

Run: ``.venv/bin/python benchmarks/list_pages_bench.py [--rows 1500] [--runs 3] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from jupyter_sched.definitions.model import DefinitionRun, JobDefinition, MissedPolicy, RunTrigger  # noqa: E402
from jupyter_sched.engine.clock import ManualClock  # noqa: E402
from jupyter_sched.executors.local import LocalExecutor  # noqa: E402
from jupyter_sched.inventory.simulated import SimulatedInventory  # noqa: E402
from jupyter_sched.model import Job, JobSpec, JobState  # noqa: E402
from jupyter_sched.services import Services  # noqa: E402
from jupyter_sched.services import definitions as defs_service  # noqa: E402
from jupyter_sched.services import jobs as jobs_service  # noqa: E402
from jupyter_sched.services.models import ListJobsRequest  # noqa: E402
from jupyter_sched.services.models.base import wire_json  # noqa: E402
from jupyter_sched.services.models.definitions import (  # noqa: E402
    Definition,
    ListDefinitionsRequest,
    ListDefinitionsResponse,
)
from jupyter_sched.services.readcache import ReadCache  # noqa: E402
from jupyter_sched.store import JobRecord, Store, sqlite_url  # noqa: E402
from jupyter_sched.store import definitions as stored  # noqa: E402

NOW = datetime(2026, 12, 6, 2, 0, tzinfo=timezone.utc)
KB60 = {f"k{i}": "v" * 1000 for i in range(60)}


def seed(services: Services, rows: int, runs: int) -> None:
    """``rows`` heavy definitions of mal's with ``runs`` runs each, and ``rows`` heavy cancelled jobs of his."""
    base = JobDefinition(id="d-0", name="big", user="mal", team="default", notebook="report.ipynb", script=None,
                         args=tuple(["a" * 1000] * 60), parameters=dict(KB60), job={"gpus": 0, "env": dict(KB60)},
                         schedule="0 3 1 1 *", timezone="UTC", paused=True, missed=MissedPolicy.RUN_ONCE,
                         created_at=NOW, updated_at=NOW, cursor=NOW)
    with services.store.transaction() as tx:
        for i in range(rows):
            at = NOW - timedelta(seconds=rows - i)
            d = stored.insert_definition(tx, replace(base, id=f"d-{i:05d}", name=f"big{i}", created_at=at))
            for k in range(runs):
                when = at - timedelta(days=k + 1)
                job = Job(id=f"j-d{i:05d}-{k}", spec=JobSpec(name=f"run{k}", user="mal"), state=JobState.SUCCEEDED,
                          submitted_at=when, finished_at=when)
                stored.insert_run(tx, DefinitionRun(definition_id=d.id, job_id=job.id, trigger=RunTrigger.SCHEDULE,
                                                    scheduled_for=when, parameters={}, created_at=when),
                                  JobRecord(job=job))
            tx.insert_job(JobRecord(job=Job(id=f"j-big{i:05d}", spec=JobSpec(
                name=f"big{i}", user="mal", command=("python", *["a" * 1000] * 60), env=dict(KB60)),
                state=JobState.CANCELLED, submitted_at=at, finished_at=at)))


def old_definitions(services: Services) -> Any:
    """The list before red28 R6: every row, every run of them, one answer."""
    svc, caller = services.definitions, services.caller("mal", admin=False)
    with services.store.transaction(write=False) as tx:
        definitions = stored.list_definitions(tx, user="mal")
        latest: dict[str, DefinitionRun] = {}
        for run in stored.list_runs(tx, [d.id for d in definitions]):
            latest.setdefault(run.definition_id, run)
    now = services.ctx.clock.now()
    out = []
    for d in definitions:
        last = latest.get(d.id)
        last_run = svc._run(caller, last, d.timezone) if last else None
        out.append(Definition.model_validate({**defs_service._definition_dict(d, now), "last_run": last_run}))
    return ListDefinitionsResponse(out)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, int]:
    """Median wall ms of ``fn`` and its answer's bytes."""
    times, size = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        size = len(wire_json(fn()))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3, help="runs per definition")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        clock = ManualClock(NOW)
        services = Services(store=Store(sqlite_url(Path(tmp) / "s.sqlite"), now=clock.now),
                            inventory=SimulatedInventory(4, node="n1"), executor=LocalExecutor(Path(tmp) / "jobs"),
                            clock=clock)
        started = time.perf_counter()
        seed(services, args.rows, args.runs)
        print(f"{args.rows} definitions ({args.runs} runs each) and {args.rows} jobs of one user, ~180 KB / ~120 KB "
              f"each: seeded in {time.perf_counter() - started:.1f} s")
        mal = services.caller("mal", admin=False)
        results = {
            "GET definitions, old (every row and run)": timed(lambda: old_definitions(services), args.repeat),
            "GET definitions, new (one page)": timed(lambda: services.definitions.list(mal, ListDefinitionsRequest())
                                                     .definitions, args.repeat),
        }

        def jobs_page() -> Any:
            services.jobs.answers = ReadCache()  # each call computes its page (no kept answer)
            return services.jobs.list(mal, ListJobsRequest(limit=1000)).jobs

        bound = jobs_service.PAGE_BYTES
        jobs_service.PAGE_BYTES = 1 << 62  # the old page: limit alone
        try:
            results["GET jobs?limit=1000, old (limit alone)"] = timed(jobs_page, args.repeat)
        finally:
            jobs_service.PAGE_BYTES = bound
        results["GET jobs?limit=1000, new (ends at PAGE_BYTES)"] = timed(jobs_page, args.repeat)
        for what, (ms, size) in results.items():
            print(f"{what:48} {ms:9.0f} ms  {size / 2**20:8.1f} MiB")
        services.store.close()


if __name__ == "__main__":
    main()
