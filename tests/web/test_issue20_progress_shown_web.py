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

from .conftest import EVE_TOKEN, IVAN_TOKEN, JUDY_TOKEN, SLEEP_JOB, running_job, wait_for


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
    reporting = await running_job(api, name="train")
    quiet = await running_job(api, name="quiet")
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
    ids = [await running_job(api, name=f"r{i}") for i in range(3)]
    for job_id in ids:
        status, _ = await api("POST", f"jobs/{job_id}/progress", {"done": 1, "total": 4})
        assert status == 200
    status, waiting = await api("POST", "jobs", {**SLEEP_JOB, "gpus": 4, "name": "waits"})  # a new row: no kept page
    assert status == 201, waiting
    with progress_reads(sched_app) as seen:
        status, rows = await api("GET", "jobs")
    assert status == 200 and [row["id"] for row in rows] == [waiting["id"], *reversed(ids)]
    assert all(row["progress"]["text"].startswith("25 % done") for row in rows[1:]) and "progress" not in rows[0]
    assert len(seen) == 1, seen
    with progress_reads(sched_app) as seen:
        status, rows = await api("GET", "jobs", params={"state": "pending"})
    assert status == 200 and [row["id"] for row in rows] == [waiting["id"]] and seen == []


async def test_issue20_progress_shown_at_once_a_stored_report_is_a_progress_event_for_its_owner(
        sched_app: Any, api: Any, http_server_port: Any, jp_base_url: str) -> None:
    """The panel re-reads its jobs on events only while its stream is up: a report made no event,
    so My work kept the first report it read ("reported 02:10 (40m ago)" while the job reported
    since). A stored report is a ``progress`` event with the words; its owner gets it, another user
    does not, and a coalesced report (stored: false) makes none."""
    from .test_events import open_stream, read_event

    job_id = await running_job(api, name="train")
    port = http_server_port[1]
    mine = await open_stream(port, jp_base_url, IVAN_TOKEN)
    theirs = await open_stream(port, jp_base_url, JUDY_TOKEN)
    try:
        for reader, _ in (mine, theirs):
            assert " 200 " in (await reader.readline()).decode()
        status, answer = await api("POST", f"jobs/{job_id}/progress", {"done": 3, "total": 4})
        assert status == 200 and answer["stored"], answer
        data = await read_event(mine[0], "progress")
        assert (data["id"], data["user"], data["state"]) == (job_id, "ivan", "running")
        at = wire_time(answer["progress"]["at"])
        assert at is not None and data["progress"]["text"] == f"75 % done, reported {clock_text(at, None)}"
        status, again = await api("POST", f"jobs/{job_id}/progress", {"done": 3, "total": 4})  # within 10 s
        assert status == 200 and not again["stored"], again
        # each one's next job event: judy's stream never carried ivan's progress event before it, and
        # ivan's carried none for the coalesced report
        for token, (reader, _) in ((JUDY_TOKEN, theirs), (IVAN_TOKEN, mine)):
            status, _job = await api("POST", "jobs", {"gpus": 1, "command": ["true"], "name": "next"}, token=token)
            assert status == 201
            seen = await _events_until(reader, "job")
            assert "progress" not in seen, seen
    finally:
        for _, writer in (mine, theirs):
            writer.close()


async def _events_until(reader: Any, wanted: str) -> list[str]:
    """The SSE event types read up to and including the first ``wanted`` one."""
    import asyncio

    types: list[str] = []
    while not types or types[-1] != wanted:
        line = (await asyncio.wait_for(reader.readline(), 20)).decode().strip()
        if line.startswith("event: "):
            types.append(line[len("event: "):])
    return types
