"""Issue 20 / issue 16 item 4: the job answers the panel, the CLI and the magics read carry a running
job's progress report in words (``progress.text``), for one read of the store per page.

Real parts: a jupyter_server with jupyter_sched, per-user tokens (ivan owns the jobs; eve is another
user), real job processes (``sleep``) on simulated GPUs, the SQLite store on disk.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from jupyter_sched.model.units import clock_text
from jupyter_sched.wording.reasons import wire_time

from .conftest import EVE_TOKEN, wait_for

SLEEP = {"command": ["sleep", "300"], "time_limit": "10m"}


async def _running(api: Any, name: str) -> str:
    status, job = await api("POST", "jobs", {**SLEEP, "gpus": 1, "name": name})
    assert status == 201, job

    async def running() -> bool:
        _, seen = await api("GET", f"jobs/{job['id']}")
        return bool(seen["state"] == "running")

    await wait_for(running)
    return str(job["id"])


@contextmanager
def progress_reads(sched_app: Any) -> Iterator[list[str]]:
    """The statements that read ``job_progress`` rows by job id while the block runs."""
    seen: list[str] = []
    engine = sched_app.services.jobs.ctx.store.engine

    def capture(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        # a page's read by job id (the engine's own read each cycle, by report time, is not a page's)
        if "FROM job_progress" in statement and "job_progress.job_id IN" in statement:
            seen.append(statement)

    sa.event.listen(engine, "before_cursor_execute", capture)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", capture)


async def test_issue20_progress_shown_in_the_job_answers_the_panel_cli_and_magics_read(sched_app: Any, api: Any) -> None:
    reporting = await _running(api, "train")
    quiet = await _running(api, "quiet")
    status, answer = await api("POST", f"jobs/{reporting}/progress", {"done": 420, "total": 1000})
    assert status == 200 and answer["stored"], answer
    at = wire_time(answer["progress"]["at"])
    assert at is not None
    text = f"42 % done, reported {clock_text(at, None)}"  # the server's words carry the day: kept answers stay true

    async def listed() -> dict[str, Any]:
        _, rows = await api("GET", "jobs")
        by_id = {row["id"]: row for row in rows}
        return by_id if "progress" in by_id[reporting] else {}

    rows = await wait_for(listed)  # a kept page is made anew by the next cycle at the latest
    assert rows[reporting]["progress"]["text"] == text and rows[reporting]["progress"]["fraction"] == 0.42
    assert "progress" not in rows[quiet]  # never reported: nothing, not "no progress reported"
    _, job = await api("GET", f"jobs/{reporting}")
    assert job["progress"]["text"] == text
    _, entries = await api("GET", "queue")
    mine = {entry["id"]: entry for entry in entries}
    assert mine[reporting]["progress"]["text"] == text and "progress" not in mine[quiet]
    # another user's queue shows ivan's running jobs, not their progress (his job's words are his)
    _, theirs = await api("GET", "queue", token=EVE_TOKEN)
    assert {entry["id"] for entry in theirs} >= {reporting, quiet}
    assert all("progress" not in entry for entry in theirs)


async def test_issue20_progress_shown_for_one_store_read_per_page_not_one_per_row(sched_app: Any, api: Any) -> None:
    """status_bench's cost: a page of running jobs reads their reports in one statement; a page with
    no running job (all waiting or ended) reads none."""
    ids = [await _running(api, f"r{i}") for i in range(3)]
    for job_id in ids:
        status, _ = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 4})
        assert status == 200
    status, waiting = await api("POST", "jobs", {**SLEEP, "gpus": 4, "name": "waits"})  # a new row: no kept page
    assert status == 201, waiting
    with progress_reads(sched_app) as seen:
        status, rows = await api("GET", "jobs")
    assert status == 200 and [row["id"] for row in rows] == [waiting["id"], *reversed(ids)]
    assert all(row["progress"]["text"].startswith("25 % done") for row in rows[1:]) and "progress" not in rows[0]
    assert len(seen) == 1, seen
    with progress_reads(sched_app) as seen:
        status, rows = await api("GET", "jobs", params={"state": "pending"})
    assert status == 200 and [row["id"] for row in rows] == [waiting["id"]] and seen == []
