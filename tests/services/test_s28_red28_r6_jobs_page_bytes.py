"""red28 R6 (HIGH), the jobs half: ``GET jobs?limit=1000`` of 1,000 jobs with 120 KB requests (env 60 x 1 KB,
args 60 x 1 KB) answered 117 MiB each; four at once took the service 297 MiB → 1.8 GiB. A page now also ends once
its rows pass ``PAGE_BYTES`` (at least one row), with a next page (``next_cursor``, ``Link: rel=next``) that goes on
after it; the rows stay whole (``GET jobs/{id}`` and every list reader see the same fields)."""

from __future__ import annotations

import json
from datetime import timedelta

from jupyter_sched.model import Job, JobSpec, JobState
from jupyter_sched.services import Services
from jupyter_sched.services.models import ListJobsRequest
from jupyter_sched.services.models.base import PAGE_BYTES
from jupyter_sched.store import JobRecord
from tests.services.conftest import T0


def test_red28_r6_jobs_page_ends_at_its_bytes_and_the_next_goes_on(services: Services) -> None:
    heavy = {f"K{i}": "v" * 1000 for i in range(60)}
    with services.store.transaction() as tx:
        for k in range(90):
            at = T0 - timedelta(hours=1) + timedelta(seconds=k)
            tx.insert_job(JobRecord(job=Job(id=f"j-big{k:03d}", spec=JobSpec(
                name=f"big{k}", user="mal", command=("python", *["a" * 1000] * 60), env=heavy),
                state=JobState.PENDING, submitted_at=at)))  # waiting: a finished row keeps env as names (red30 R4)
        tx.insert_job(JobRecord(job=Job(id="j-small", spec=JobSpec(name="small", user="mal", command=("true",)),
                                        state=JobState.CANCELLED, submitted_at=T0, finished_at=T0)))
    mal = services.caller("mal", admin=False)
    seen: list[str] = []
    cursor = None
    pages = 0
    while True:
        page = services.jobs.list(mal, ListJobsRequest(limit=1000, cursor=cursor))
        rows = page.jobs.to_wire()
        assert rows and len(json.dumps(rows).encode()) <= PAGE_BYTES + 200_000
        assert all(len(row["env"]) == 60 for row in rows if row["id"] != "j-small")  # whole rows, never cut
        seen += [row["id"] for row in rows]
        pages += 1
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ["j-small", *[f"j-big{k:03d}" for k in reversed(range(90))]]  # newest first, each once
    assert pages >= 3  # 90 x ~125 KB: the bytes ended the pages, not limit=1000
    # small rows: the limit alone ends a page, as before
    two = services.jobs.list(mal, ListJobsRequest(limit=2))
    assert [row["id"] for row in two.jobs.to_wire()] == ["j-small", "j-big089"] and two.next_cursor is not None
